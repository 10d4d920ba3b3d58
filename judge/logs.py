"""Logging, configured once per process: every command of `judge` and the web server.

One format (time, level, logger) on stderr for the judge's own loggers and uvicorn's: `judge
serve` hands the same dictionary to uvicorn, which applies it again when it starts, so its
start-up, error and access lines look like everything else. What a command prints for its
user (a report, a table, progress) stays on print; logs are for the operator.
"""

from __future__ import annotations

import logging
import logging.config
from typing import Any

LOG_LEVELS = ("debug", "info", "warning", "error")
DEFAULT_LEVEL = "info"
FORMAT = "%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
# Ours, and uvicorn's: these follow --log-level all the way down to debug.
OWN_LOGGERS = ("judge", "sandbox", "web", "uvicorn")


def logging_config(level: str = DEFAULT_LEVEL) -> dict[str, Any]:
    """The dictConfig of a process logging at `level` (one of LOG_LEVELS)."""
    if level not in LOG_LEVELS:
        raise ValueError(f"log level {level!r} is not one of {', '.join(LOG_LEVELS)}")
    name = level.upper()
    # Libraries (alembic, the Docker SDK's urllib3, asyncio, ...) log a step quieter than ours:
    # warnings and errors, and at debug their info too, never their debug (the Docker SDK's
    # is every HTTP connection to the engine, which drowns what --log-level debug is for).
    floor = logging.INFO if level == "debug" else logging.WARNING
    library = logging.getLevelName(max(logging.getLevelName(name), floor))
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": FORMAT, "datefmt": DATE_FORMAT}},
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stderr"}
        },
        "loggers": {
            **{logger: {"level": name} for logger in OWN_LOGGERS},
            # uvicorn's own config would give these handlers of their own; ours propagate to root.
            "uvicorn.error": {"level": name, "handlers": [], "propagate": True},
            "uvicorn.access": {"level": name, "handlers": [], "propagate": True},
        },
        "root": {"level": library, "handlers": ["stderr"]},
    }


def configure_logging(level: str = DEFAULT_LEVEL) -> None:
    logging.config.dictConfig(logging_config(level))
