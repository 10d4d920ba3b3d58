"""The web platform (FastAPI pages and /api, accounts, the submission queue, workers).

Empty until the web-platform issue lands; it will call `judge/` and own the database.
"""
