"""Settings of the judge, from JUDGE_* environment variables."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent


class JudgeSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="JUDGE_", extra="ignore")

    problems_dir: Path = REPO_ROOT / "problems"
    # Reference and wrong-solution observations, keyed by package hash and runtime.
    cache_dir: Path = Path.home() / ".cache" / "llm-judge"
    backend: Literal["auto", "local", "docker"] = "auto"
    # Seconds the runner may take to become ready (interpreter and torch loaded).
    startup_s: float = 30.0
    # A shared server refuses to run on the local backend (no security boundary) unless this is set.
    allow_unsandboxed: bool = False
