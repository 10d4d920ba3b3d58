"""The problems a reader sees, with their progress: what the API answers and the pages render."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel
from sqlalchemy import Integer, and_, bindparam, cast, exists, func, select
from sqlalchemy.orm import Session

from web.auth.models import User
from web.errors import not_found
from web.problems.models import ProblemVersion
from web.problems.sync import current_version
from web.scores.models import Score
from web.statements import Statements
from web.submissions.models import Mode, Submission, SubmissionStatus

# A reader's progress on a problem, as the list shows and filters it.
Progress = Literal["solved", "attempted", "new"]
PROGRESS_STATES: tuple[Progress, ...] = get_args(Progress)


class Title(BaseModel):
    zh: str
    en: str


# Below this many learners who submitted, a rate says more about chance than about the problem.
MIN_SUBMITTERS = 5


class CourseChapter(BaseModel):
    """The problem's chapter of the course (problems/course.toml)."""

    number: int | None  # null for a chapter label outside the course
    title: Title
    position: int  # the chapter's place in the course, 0 first; lists are sorted by it


class Acceptance(BaseModel):
    """Of the learners who submitted this problem (a judged Submit; Runs do not count), how many
    got it accepted (a full score at least once)."""

    submitters: int
    accepted: int
    rate: float | None  # accepted / submitters; null below MIN_SUBMITTERS submitters


NO_ACCEPTANCE = Acceptance(submitters=0, accepted=0, rate=None)


class ChangeNote(BaseModel):
    """What one version of the package changed (problem.toml's `[changes.N]`)."""

    version: int
    note: Title


class ChangedSince(BaseModel):
    """The reader's best score is an accepted Submit judged on an older version of the package:
    it stays theirs, and this says what changed since (a re-submit judges the current version)."""

    accepted_version: int
    current_version: int
    changes: list[ChangeNote]  # each newer version's note, oldest first (a version may have none)
    submission_id: int | None  # the accepted submission, whose code a re-submit may send again


class KeptBest(BaseModel):
    """An admin's rejudge judged the reader's best submission lower; the best it had is kept."""

    submission_id: int
    kept_verdict: str
    kept_score: int
    verdict: str | None  # what the rejudge gave
    score: int | None
    max_score: int | None


class ProblemSummary(BaseModel):
    id: str
    slug: str
    title: Title
    chapter: str  # the chapter's number and Chinese name in one string, "03 RMSNorm"
    course_chapter: CourseChapter
    # Problems to solve first, in course order: the parts it may import and the course's extras.
    prerequisites: list[str]
    acceptance: Acceptance
    difficulty: str
    tags: list[str]
    max_score: int
    best_score: int | None  # null without an account or before a first submit
    solved: bool
    # The reader's progress: solved, attempted (any run or submit) or new (and new for anonymous).
    status: Progress
    package_version: int | None  # problem.toml's `version` (null until the first sync records it)
    # Set when the reader's accepted best was judged on an older version than the current one.
    changed_since: ChangedSince | None = None


class Statement(BaseModel):
    zh_markdown: str
    en_markdown: str
    zh_html: str
    en_html: str


class ProblemDetail(ProblemSummary):
    version: str  # the package's content hash: what new submissions are judged against
    # Set when a rejudge judged the reader's best submission lower than the best it keeps.
    kept_best: KeptBest | None = None
    statement: Statement
    starter: str
    public_cases: list[str]
    limits: dict[str, Any]


def progress(score: Score | None, attempted: bool) -> Progress:
    if score is not None and score.solved:
        return "solved"
    return "attempted" if attempted or score is not None else "new"


def current_versions(db: Session) -> Sequence[ProblemVersion]:
    """The version of each offered problem that new submissions get, by problem id."""
    return db.scalars(
        select(ProblemVersion).where(ProblemVersion.current.is_(True)).order_by(ProblemVersion.problem_id)
    ).all()


# Course order: by the chapter's place, then by id (a version no sync has placed yet, last).
UNPLACED = 10**6
COURSE_ORDER = (func.coalesce(ProblemVersion.chapter_position, UNPLACED), ProblemVersion.problem_id)


def acceptance(db: Session, problem_id: str | None = None) -> dict[str, Acceptance]:
    """Each problem's acceptance from the scores (one row per learner and problem they submitted),
    or only `problem_id`'s."""
    query = select(Score.problem_id, func.count(), func.sum(cast(Score.solved, Integer))).group_by(
        Score.problem_id
    )
    if problem_id is not None:
        query = query.where(Score.problem_id == problem_id)
    found = {}
    for pid, submitters, accepted in db.execute(query):
        n, ok = int(submitters), int(accepted or 0)
        found[pid] = Acceptance(submitters=n, accepted=ok, rate=ok / n if n >= MIN_SUBMITTERS else None)
    return found


def course_chapter(v: ProblemVersion) -> CourseChapter:
    return CourseChapter(
        number=v.chapter_number,
        title=Title(zh=v.chapter_zh or v.chapter, en=v.chapter_en or v.chapter),
        position=v.chapter_position if v.chapter_position is not None else UNPLACED,
    )


def current_titles(db: Session) -> dict[str, tuple[str, str]]:
    """Each offered problem's (Chinese, English) title."""
    return {v.problem_id: (v.title_zh, v.title_en) for v in current_versions(db)}


def attempted_problems(db: Session, user_id: int) -> set[str]:
    # A scratch run is no attempt, nor code that could not run for a part not solved yet.
    mine = (Submission.user_id == user_id, Submission.mode != Mode.SCRATCH, Submission.blocked_by.is_(None))
    return set(db.scalars(select(Submission.problem_id).where(*mine).distinct()))


def changed_since(v: ProblemVersion, score: Score | None) -> ChangedSince | None:
    """What changed in the package since the reader's accepted best, if it was judged on an older
    version (a best judged before versions were recorded says nothing)."""
    if score is None or not score.solved:
        return None
    return changes_after(v.package_version, v.changes, score.best_version, score.best_submission_id)


def changes_after(
    package_version: int | None,
    changes: dict[str, Any] | None,
    best_version: int | None,
    best_submission_id: int | None,
) -> ChangedSince | None:
    """`changed_since` from the values it reads (the problem page keeps the version's)."""
    if best_version is None or package_version is None or best_version >= package_version:
        return None
    notes = sorted((int(n), note) for n, note in (changes or {}).items() if int(n) > best_version)
    return ChangedSince(
        accepted_version=best_version,
        current_version=package_version,
        changes=[ChangeNote(version=n, note=Title(zh=note["zh"], en=note["en"])) for n, note in notes],
        submission_id=best_submission_id,
    )


def kept_best(db: Session, score: Score | None) -> KeptBest | None:
    """The reader's best submission, when a rejudge judged it lower than the result it keeps."""
    if score is None or score.best_submission_id is None:
        return None
    sub = db.get(Submission, score.best_submission_id)
    if sub is None or sub.status != SubmissionStatus.DONE:
        return None
    if sub.kept_score is None or sub.kept_verdict is None:
        return None
    return KeptBest(
        submission_id=sub.id,
        kept_verdict=sub.kept_verdict,
        kept_score=sub.kept_score,
        verdict=sub.verdict,
        score=sub.score,
        max_score=sub.max_score,
    )


def _summary(v: ProblemVersion, score: Score | None, attempted: bool, accepted: Acceptance) -> dict[str, Any]:
    return {
        "id": v.problem_id,
        "slug": v.slug,
        "title": Title(zh=v.title_zh, en=v.title_en),
        "chapter": v.chapter,
        "course_chapter": course_chapter(v),
        "prerequisites": v.prerequisites or [],
        "acceptance": accepted,
        "difficulty": v.difficulty,
        "tags": v.tags,
        "max_score": v.max_score,
        "best_score": score.best_score if score else None,
        "solved": bool(score and score.solved),
        "status": progress(score, attempted),
        "package_version": v.package_version,
        "changed_since": changed_since(v, score),
    }


def list_problems(db: Session, user: User | None) -> list[ProblemSummary]:
    """Every offered problem, in course order."""
    versions = db.scalars(
        select(ProblemVersion).where(ProblemVersion.current.is_(True)).order_by(*COURSE_ORDER)
    ).all()
    scores: dict[str, Score] = {}
    attempted: set[str] = set()
    if user is not None:
        scores = {s.problem_id: s for s in db.scalars(select(Score).where(Score.user_id == user.id))}
        attempted = attempted_problems(db, user.id)
    rates = acceptance(db)
    return [
        ProblemSummary(
            **_summary(
                v, scores.get(v.problem_id), v.problem_id in attempted, rates.get(v.problem_id, NO_ACCEPTANCE)
            )
        )
        for v in versions
    ]


_ATTEMPTED = select(
    exists().where(
        Submission.user_id == bindparam("user_id"),
        Submission.problem_id == bindparam("problem_id"),
        Submission.mode != Mode.SCRATCH,
        Submission.blocked_by.is_(None),
    )
)


def attempted_problem(db: Session, user_id: int, problem_id: str) -> bool:
    return bool(db.scalar(_ATTEMPTED, {"user_id": user_id, "problem_id": problem_id}))


# A problem's current version with the reader's score on it (if any), in one query.
_CURRENT_WITH_SCORE = (
    select(ProblemVersion, Score)
    .outerjoin(
        Score, and_(Score.problem_id == ProblemVersion.problem_id, Score.user_id == bindparam("user_id"))
    )
    .where(ProblemVersion.problem_id == bindparam("problem_id"), ProblemVersion.current.is_(True))
)


def get_problem(db: Session, statements: Statements, problem_id: str, user: User | None) -> ProblemDetail:
    """One offered problem (404 for any other id); its statements rendered as the API gives them."""
    v: ProblemVersion | None
    score: Score | None = None
    if user is None:
        v = current_version(db, problem_id)
    else:
        found = db.execute(_CURRENT_WITH_SCORE, {"problem_id": problem_id, "user_id": user.id}).first()
        v, score = (found[0], found[1]) if found is not None else (None, None)
    if v is None:
        raise not_found("problem", problem_id)
    # Only a reader without a score can be "new" rather than "attempted": ask only then.
    attempted = user is not None and score is None and attempted_problem(db, user.id, problem_id)
    return problem_detail(db, statements, v, score, attempted)


def problem_detail(
    db: Session, statements: Statements, v: ProblemVersion, score: Score | None, attempted: bool
) -> ProblemDetail:
    """Version `v` as a reader with `score` sees it (None and False: as a visitor does)."""
    problem_id = v.problem_id
    return ProblemDetail(
        **_summary(v, score, attempted, acceptance(db, problem_id).get(problem_id, NO_ACCEPTANCE)),
        version=v.content_hash,
        kept_best=kept_best(db, score),
        statement=Statement(
            zh_markdown=v.statement_zh,
            en_markdown=v.statement_en,
            zh_html=statements.for_api(v.statement_zh),
            en_html=statements.for_api(v.statement_en) if v.statement_en else "",
        ),
        starter=v.starter,
        public_cases=v.public_cases,
        limits=v.limits,
    )
