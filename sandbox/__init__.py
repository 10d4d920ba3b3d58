"""Sandboxes that run the judge's runner: processes and containers, not problems or users.

They implement the backend interface the judge's core declares (judge/core/backend.py) and take
nothing else from the judge."""
