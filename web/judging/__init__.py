"""Judging: the submissions table as a durable queue (queue), the workers that claim and judge its
jobs (worker; the judge function of each mode: judges), the notices that wake workers and waiting
readers (notices), long-polling for a result (waiting) and the stored results as records (records)."""
