"""Where the checks of `judge validate` write what they found: a sink of named findings.

A check reports through the sink instead of returning a verdict, so that one check may report
several findings (one per wrong solution), a finding can be a warning that does not fail the
package, and the orchestration never builds a record by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# error: the package is not sound; warning: sound, but the author should look (a gap that is
# not enforced yet, a hint shown for too many mistakes); note: what the check saw, for the record.
Level = Literal["error", "warning", "note"]


@dataclass(frozen=True)
class Check:
    """One finding, as `judge validate` prints it and `--json` lists it."""

    name: str
    level: Level
    detail: str

    @property
    def ok(self) -> bool:
        return self.level != "error"

    def to_dict(self) -> dict[str, Any]:
        # name, ok, detail as the admin page reads them; the level is added after them.
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "level": self.level}


@dataclass
class Diagnostics:
    """The findings of the checks, in the order they ran."""

    checks: list[Check] = field(default_factory=list)

    def error(self, name: str, detail: str) -> None:
        self.checks.append(Check(name, "error", detail))

    def warning(self, name: str, detail: str) -> None:
        self.checks.append(Check(name, "warning", detail))

    def note(self, name: str, detail: str) -> None:
        self.checks.append(Check(name, "note", detail))

    def outcome(self, name: str, ok: bool, detail: str) -> bool:
        """An error when not `ok`, else a note; returns `ok`, for checks that later ones need."""
        if ok:
            self.note(name, detail)
        else:
            self.error(name, detail)
        return ok

    @property
    def ok(self) -> bool:
        """Sound: some check ran and none found an error."""
        return bool(self.checks) and all(c.ok for c in self.checks)
