"""The job the judge sends to the runner on stdin: code to load and cases to run. No expected values."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from judge.protocol import PROTOCOL_VERSION

LEARNER_FILE = "solution.py"
MAX_JOB_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class SolutionSource:
    name: str  # "solution" for a learner; "reference", "wrong/bf16_stats", ... in trusted runs
    source: str
    filename: str = LEARNER_FILE


@dataclass(frozen=True)
class RunnerJob:
    problem: str
    entry_points: list[str]
    cases_source: str
    case_names: list[str]
    solutions: list[SolutionSource]
    forbidden: list[str] = field(default_factory=list)
    threads: int = 1
    protocol: int = PROTOCOL_VERSION

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self), ensure_ascii=False).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> RunnerJob:
        raw: dict[str, Any] = json.loads(data.decode("utf-8"))
        if raw.get("protocol") != PROTOCOL_VERSION:
            raise ValueError(f"runner speaks protocol {PROTOCOL_VERSION}, job has {raw.get('protocol')!r}")
        raw["solutions"] = [SolutionSource(**s) for s in raw["solutions"]]
        return cls(**raw)
