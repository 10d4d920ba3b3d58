"""What judging stores in a submission's `report` column, as versioned records.

One column holds two kinds of result, told apart by `kind`: the judge's report of a run or a
submit (`StoredReport`, no `kind`: judge.core.report.Report.to_dict()) and a scratch run's
result (`StoredScratch`, `kind` "scratch": judge.scratch.Scratch.to_dict()). Each is validated
when the worker writes it (`stored_report`, `stored_scratch`: the row holds `model_dump`) and
when it is read back (`read_report`, `read_scratch`), so no reader looks a key up by its name.

Rows written before the records had a version are upgraded here, as they are read, not by a
migration: a migration rewrites every row once, but a worker of the old release still running on
another host (workers and servers are restarted one by one) goes on writing old rows after it,
and a reader has to take them either way. Old reports kept texts as one string ("中文\nEnglish"
for a warning, one string for both languages elsewhere) and said where an error was only inside
its message (`_line_in`, `_missing_problem_in`: the one place that still reads it out of text).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from judge.core.errors import JudgeError
from judge.core.report import Report
from judge.core.texts import Text, split_pair
from judge.core.verdicts import Verdict

REPORT_VERSION: Literal[2] = 2
SCRATCH_VERSION: Literal[1] = 1


class UnreadableRecord(JudgeError):
    """A stored result that is not what the records say (a bug, or a row edited by hand)."""


class OnHiddenCases:
    """Marks a case field that a learner reads as stored on a hidden case too (the others hold
    expected values, indices or inputs, or are shown only in part: web.submissions.views)."""


ON_HIDDEN = OnHiddenCases()


class Record(BaseModel):
    # Fields a newer release adds are ignored by an older reader (a rolling restart runs both).
    model_config = ConfigDict(frozen=True, extra="ignore")


class StoredText(Record):
    """A text in both of the site's languages (judge.core.texts.Text, as stored)."""

    zh: str = ""
    en: str = ""

    @classmethod
    def of(cls, text: Text) -> StoredText:
        return cls(zh=text.zh, en=text.en)

    def get(self, lang: str) -> str:
        return self.en if lang == "en" else self.zh


NO_TEXT = StoredText()


class StoredDiagnosis(Record):
    kind: str
    strength: float = 0.0
    label: StoredText | None = None  # the kind in a few words (reports since labels were kept)
    message: StoredText = NO_TEXT


class StoredCase(Record):
    name: Annotated[str, ON_HIDDEN]
    public: Annotated[bool, ON_HIDDEN]
    verdict: Annotated[Verdict, ON_HIDDEN]
    score: Annotated[int, ON_HIDDEN]
    max_score: Annotated[int, ON_HIDDEN]
    time_ms: float | None = None
    ran: Annotated[bool, ON_HIDDEN] = True  # False: never ran, so its time is 0 by construction
    message: StoredText = NO_TEXT
    hint: StoredText = NO_TEXT
    description: StoredText = NO_TEXT
    diagnoses: list[StoredDiagnosis] = []
    error_map: dict[str, Any] | None = None
    # The line of the learner's code (this editor's file, not a part's) an error points at.
    line: int | None = None
    # The problem whose solution the code needs first (a part it imports that is not solved).
    missing_problem: str | None = None
    # A failing public case's inputs and first differing positions (judge.core.report); the judge
    # never writes them on a hidden case, and a learner's view shows them on public cases only.
    inputs: list[dict[str, Any]] | None = None
    compared: list[dict[str, Any]] | None = None


class StoredPart(Record):
    problem: str
    module: str
    origin: str  # reference, learner, file or missing
    used: bool


class StoredReport(Record):
    """judge.core.report.Report as the database keeps it."""

    version: Literal[2] = REPORT_VERSION
    problem: str
    verdict: Verdict
    score: int
    max_score: int
    backend: str = ""
    time_ms: float = 0.0
    elapsed_ms: float = 0.0
    log: str = ""
    # "public": `log` is the output of the job that held the public cases only. None: a report
    # from before hidden cases ran apart, whose log may echo hidden inputs.
    log_scope: str | None = None
    warnings: list[StoredText] = []
    parts: list[StoredPart] = []
    cases: list[StoredCase] = []

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, raw: Any) -> Any:
        return _report_v1_to_v2(raw) if isinstance(raw, dict) and "version" not in raw else raw

    @property
    def blocked_by(self) -> str | None:
        """The one problem whose missing part failed every case at load (a CE), else None."""
        missing = {c.missing_problem for c in self.cases}
        if (
            self.verdict != Verdict.CE
            or len(missing) != 1
            or not all(c.verdict == Verdict.CE for c in self.cases)
        ):
            return None
        return missing.pop()


class StoredCall(Record):
    """One call a scratch snippet made to an entry point, beside the reference's answer."""

    call: str = ""
    learner: str = ""
    reference: str | None = None
    match: bool | None = None
    difference: float | None = None
    detail: StoredText | None = None  # the comparison in words
    reason: StoredText | None = None  # why the reference was not asked


class StoredScratch(Record):
    """judge.scratch.Scratch as the database keeps it: never scored."""

    kind: Literal["scratch"]
    version: Literal[1] = SCRATCH_VERSION
    verdict: Verdict
    score: int = 0
    max_score: int = 0
    status: str  # ok, error, memory, forbidden, ce (the snippet), load (the solution), stopped
    message: str = ""  # a traceback or the load error, as the runner wrote it
    text: StoredText | None = None  # the judge's own words, where the message is not a traceback
    line: int | None = None
    log: str = ""
    value: dict[str, Any] | None = None
    calls: list[StoredCall] = []
    note: StoredText | None = None
    skipped: int = 0
    time_ms: float = 0.0
    elapsed_ms: float = 0.0
    replayed: int = Field(0, ge=0)  # calls the reference answered: what the reveal budget counts

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, raw: Any) -> Any:
        return _scratch_v0_to_v1(raw) if isinstance(raw, dict) and "version" not in raw else raw


def _kind(raw: Any) -> str:
    if isinstance(raw, dict):
        return str(raw.get("kind", "report"))
    return "scratch" if isinstance(raw, StoredScratch) else "report"


StoredResult = Annotated[
    Annotated[StoredReport, Tag("report")] | Annotated[StoredScratch, Tag("scratch")],
    Discriminator(_kind),
]
_RESULT: TypeAdapter[StoredReport | StoredScratch] = TypeAdapter(StoredResult)

# What a learner reads of a hidden case as it is stored (the fields marked ON_HIDDEN). Beside
# them a hidden case shows its description, the kinds of its diagnoses and a listed mistake's
# hint (web.submissions.views); never its message (it holds expected values and indices), the
# picture of its error, its diagnoses' sentences (they name shapes and indices), where the error
# is, nor its time: the code chooses how long a case takes, so a time could spell out what it
# read of the hidden case, a number per case per submission.
HIDDEN_CASE_FIELDS = tuple(
    name for name, field in StoredCase.model_fields.items() if ON_HIDDEN in field.metadata
)


def read_result(raw: Any) -> StoredReport | StoredScratch:
    """The stored result of a row, whichever kind; UnreadableRecord when it is neither."""
    try:
        return _RESULT.validate_python(raw)
    except ValidationError as exc:
        raise UnreadableRecord(f"a stored result is not readable: {_first_problem(exc)}") from exc


def read_report(raw: Any) -> StoredReport:
    """A run's or a submit's stored report (old rows upgraded)."""
    found = read_result(raw)
    if not isinstance(found, StoredReport):
        raise UnreadableRecord("a scratch run's result where a report was expected")
    return found


def read_scratch(raw: Any) -> StoredScratch:
    """A scratch run's stored result (old rows upgraded)."""
    found = read_result(raw)
    if isinstance(found, StoredScratch):
        return found
    if found.verdict == Verdict.SE and not found.cases:
        # A scratch run the judge failed on was stored as the judge's system error, before
        # each kind of job had a result of its own.
        return _failed_scratch(found.warnings)
    raise UnreadableRecord("a report where a scratch run's result was expected")


def system_error(problem_id: str, message: Text, scratch: bool) -> StoredReport | StoredScratch:
    """A judgement that could not be made (the judge failed, never the learner's code), as the
    result of the job's kind: nothing scored, `message` saying why."""
    if scratch:
        return _failed_scratch([StoredText.of(message)])
    return stored_report(Report.system_error(problem_id, message).to_dict())


def _failed_scratch(why: list[StoredText]) -> StoredScratch:
    text = StoredText(zh="\n".join(w.zh for w in why), en="\n".join(w.en for w in why))
    return StoredScratch(kind="scratch", verdict=Verdict.SE, status="stopped", text=text)


def stored_report(report: dict[str, Any]) -> StoredReport:
    """Report.to_dict() checked against the record, before it is written."""
    return read_report(report)


def stored_scratch(result: dict[str, Any]) -> StoredScratch:
    """Scratch.to_dict() checked against the record, before it is written."""
    return read_scratch(result)


def _first_problem(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "(the whole record)"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first.get('msg', '')}{more}"


# --------------------------------------------------------------------------- old rows


def _both(raw: Any) -> Any:
    """A text of an old row: one string read the same in both languages, or already apart."""
    if raw is None:
        return NO_TEXT.model_dump()
    if isinstance(raw, str):
        return {"zh": raw, "en": raw}
    return raw


def _warning(raw: Any) -> Any:
    """Old warnings put both languages in one string, Chinese first."""
    return split_pair(raw).to_dict() if isinstance(raw, str) else raw


# Where a traceback's innermost frame is (the runner cut it to the learner's own frames), or a
# syntax error's "line N". A frame in one of their parts (File "qwen/norm.py") is another file.
_FRAME = re.compile(r'File "([^"]*)", line (\d+)')
_LINE = re.compile(r"\bline (\d+)")
# A part's message named the problem to solve first by its path.
_PROBLEM_PATH = re.compile(r"/problems/(\d+)")


def _message_of(case: dict[str, Any]) -> str:
    message = case.get("message")
    if isinstance(message, dict):
        return str(message.get("en") or message.get("zh") or "")
    return message if isinstance(message, str) else ""


def _line_in(case: dict[str, Any]) -> int | None:
    if case.get("verdict") not in ("CE", "RE"):
        return None
    message = _message_of(case)
    frames = _FRAME.findall(message)
    if frames:
        file, line = frames[-1]
        return None if "/" in file else int(line)
    plain = _LINE.search(message)
    return int(plain.group(1)) if plain else None


def _missing_problem_in(case: dict[str, Any]) -> str | None:
    found = _PROBLEM_PATH.search(_message_of(case))
    return found.group(1) if found else None


def _case_v1_to_v2(case: Any) -> Any:
    if not isinstance(case, dict):
        return case  # validation says what is wrong with it
    diagnoses = case.get("diagnoses") or []
    return {
        **case,
        "message": _both(case.get("message")),
        "hint": _both(case.get("hint")),
        "description": _both(case.get("description")),
        "diagnoses": [
            {**d, "message": _both(d.get("message")), "label": _both(d["label"]) if d.get("label") else None}
            if isinstance(d, dict)
            else d
            for d in diagnoses
        ]
        if isinstance(diagnoses, list)
        else diagnoses,
        "line": _line_in(case),
        "missing_problem": _missing_problem_in(case),
    }


def _report_v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    """A report stored before it had a version: texts apart, the line and the missing part as
    fields, and `log_scope` None where it said nothing."""
    warnings = raw.get("warnings") or []
    cases = raw.get("cases") or []
    return {
        **raw,
        "version": REPORT_VERSION,
        "problem": raw.get("problem", ""),
        "log_scope": raw.get("log_scope"),
        "warnings": [_warning(w) for w in warnings] if isinstance(warnings, list) else warnings,
        "cases": [_case_v1_to_v2(c) for c in cases] if isinstance(cases, list) else cases,
    }


def _maybe_both(raw: Any) -> Any:
    return {"zh": raw, "en": raw} if isinstance(raw, str) else raw


def _call_v0_to_v1(call: Any) -> Any:
    if not isinstance(call, dict):
        return call
    return {**call, "detail": _maybe_both(call.get("detail")), "reason": _maybe_both(call.get("reason"))}


def _scratch_v0_to_v1(raw: dict[str, Any]) -> dict[str, Any]:
    """A scratch result stored before it had a version. Before the reveal budget kept its count,
    the calls that show a reference value are the reference's answers."""
    calls = raw.get("calls") or []
    if not isinstance(calls, list):
        return raw  # validation says what is wrong with it
    replayed = raw.get("replayed")
    if replayed is None:
        replayed = sum(1 for c in calls if isinstance(c, dict) and c.get("reference") is not None)
    return {
        **raw,
        "version": SCRATCH_VERSION,
        "text": _maybe_both(raw.get("text")),
        "note": _maybe_both(raw.get("note")),
        "calls": [_call_v0_to_v1(c) for c in calls],
        "replayed": replayed,
    }
