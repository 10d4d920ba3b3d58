"""Settings of the judge, from JUDGE_* environment variables."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
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


class SandboxSettings(BaseSettings):
    """How the Docker backend gets its containers (JUDGE_SANDBOX_MODE and friends).

    - cold: a new container per run; torch is imported inside it every time (about 2 s).
    - warm: containers started ahead of time with torch imported, each used for one run
      and replaced in the background.
    - fork: warm containers whose server forks a child per run, under a user of the run's
      own, with rlimits, a seccomp filter and a fresh folder; replaced after
      `recycle_after` runs or anything unusual.
    """

    model_config = SettingsConfigDict(env_prefix="JUDGE_", extra="ignore")

    sandbox_mode: Literal["cold", "warm", "fork"] = "fork"
    # Ready containers kept by each process that judges (size it to its judging threads).
    pool_size: int = Field(default=2, ge=1, le=64)
    recycle_after: int = Field(default=100, ge=1, le=4000)
    # The most memory a pooled run may ask for; runs of problems that ask for more go cold.
    pool_memory_mb: int = Field(default=1024, ge=64)
