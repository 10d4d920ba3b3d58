"""Sandboxes that run the judge's runner: processes and containers, not problems or users."""

from sandbox.backend import Backend, Limits, Outcome

__all__ = ["Backend", "Limits", "Outcome"]
