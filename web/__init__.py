"""The web platform: FastAPI (JSON API and, later, pages), accounts, the submission queue
judged by workers, and scores. It owns the database and calls `judge/` to judge."""
