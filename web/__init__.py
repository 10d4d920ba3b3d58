"""The web platform: FastAPI (the pages and the JSON API), accounts, the submission queue
judged by workers, and scores. It owns the database and calls `judge/` to judge."""
