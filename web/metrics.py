"""Prometheus metrics: queue depth (read from the database at scrape time), judge latency, verdicts.

In one process the counts live in memory. With several processes on a host (`judge serve
--processes N`, `judge worker`s beside it) PROMETHEUS_MULTIPROC_DIR is set before
prometheus_client is imported: every process then counts in its own files in that folder, and
a scrape adds up the files of all of them, so /metrics is whole whichever process answers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"


class _QueueDepth(Collector):
    def __init__(self, read: Callable[[], dict[str, int]]) -> None:
        self.read = read

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("judge_queue_depth", "Submissions by status", labels=["status"])
        for status, n in sorted(self.read().items()):
            family.add_metric([status], n)
        yield family


class Metrics:
    def __init__(self, queue_depth: Callable[[], dict[str, int]]) -> None:
        # One registry per app, so several apps in one process (tests) do not collide.
        self.registry = CollectorRegistry()
        self.verdicts = Counter(
            "judge_verdicts", "Judged submissions by verdict", ["mode", "verdict"], registry=self.registry
        )
        self.latency = Histogram(
            "judge_latency_seconds",
            "Time to judge one submission (claim to result)",
            ["mode"],
            buckets=(0.25, 0.5, 1, 2, 3, 5, 8, 13, 21, 34, 60),
            registry=self.registry,
        )
        self._depth = _QueueDepth(queue_depth)
        self.registry.register(self._depth)
        self.multiprocess = bool(os.environ.get(MULTIPROCESS_ENV))

    def observe_judgement(self, mode: str, verdict: str, seconds: float) -> None:
        self.verdicts.labels(mode=mode, verdict=verdict).inc()
        self.latency.labels(mode=mode).observe(seconds)

    def render(self) -> bytes:
        if not self.multiprocess:
            return generate_latest(self.registry)
        # Every process's files, read at each scrape (a registry of its own: the metrics objects
        # above would give this process's share alone).
        whole = CollectorRegistry()
        MultiProcessCollector(whole)  # type: ignore[no-untyped-call]
        whole.register(self._depth)
        return generate_latest(whole)
