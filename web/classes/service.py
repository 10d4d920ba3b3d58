"""Classes: making one, its join code, its members, its assignments and their extensions; what a
learner has due. The API's routes (web/classes/router.py) and the class pages call these; who may
see what is web.classes.access, the one place for that rule.

Every write either happens whole or not at all: adding forty names of which one is misspelt adds
none and names the misspelt one, so an instructor never has to work out which half went in.
"""

from __future__ import annotations

import csv
import io
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from pydantic import AwareDatetime, BaseModel, Field
from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from web.auth.models import User
from web.classes.access import is_member, managed_class, manages, visible_class
from web.classes.deadlines import due_for, is_open
from web.classes.gradebook import Gradebook, Row, extensions_of, gradebook, problems_of
from web.classes.models import Assignment, AssignmentProblem, Extension, Group, Membership
from web.db import utcnow
from web.deps import DbText
from web.errors import N_, ApiError
from web.problems.service import current_versions
from web.submissions.models import Mode, Submission
from web.submissions.views import SubmissionSummary, summary

# Join codes: no 0/O, 1/I/L, so a code read aloud or off a projector is typed right.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
MAX_NAMES = 1000  # one request adds at most this many learners (a CSV of a large course)
# A CSV's first row is a header when its first cell is one of these (compared without case).
HEADER_NAMES = {"username", "user", "name", "login", "用户名", "账号", "帐号", "姓名"}


# ------------------------------------------------------------------ shapes


class ClassBody(BaseModel):
    name: DbText = Field(min_length=1, max_length=80)


class ClassPatch(BaseModel):
    name: DbText | None = Field(None, min_length=1, max_length=80)
    joining_open: bool | None = None


class JoinBody(BaseModel):
    code: DbText = Field(min_length=1, max_length=32)


class NamesBody(BaseModel):
    """Learners to add: `names`, or `csv` (the text of a CSV file: the first column, a header
    row optional), or both."""

    names: list[DbText] = Field(default_factory=list, max_length=MAX_NAMES)
    # The body cap (JUDGE_MAX_BODY_BYTES, 16 KiB by default) bounds it first: some 800 names.
    csv: DbText = Field("", max_length=1_000_000)


class AssignmentBody(BaseModel):
    title: DbText = Field(min_length=1, max_length=120)
    problems: list[DbText] = Field(min_length=1, max_length=100)
    # With an offset: a time without one could be any of 24 moments, so it is refused (422).
    opens_at: AwareDatetime
    due_at: AwareDatetime
    late_counts: bool = False


class ExtensionBody(BaseModel):
    due_at: AwareDatetime


class ClassOut(BaseModel):
    id: int
    name: str
    instructor: str
    joining_open: bool
    join_code: str | None  # its instructor's (and admins') only
    members: int
    manages: bool  # the reader runs this class


class MemberOut(BaseModel):
    id: int
    username: str
    joined_at: datetime


class ExtensionOut(BaseModel):
    user_id: int
    username: str
    due_at: datetime


class AssignmentOut(BaseModel):
    id: int
    class_id: int
    title: str
    problems: list[str]
    opens_at: datetime
    due_at: datetime
    late_counts: bool
    extensions: list[ExtensionOut] = []  # its instructor's view only


class ClassView(BaseModel):
    """A class as its reader may see it: its members for its instructor only."""

    group: ClassOut
    members: list[MemberOut]
    assignments: list[AssignmentOut]


class Added(BaseModel):
    added: list[str]  # names now in the class
    already: list[str]  # names that were in it before


class RoleBody(BaseModel):
    role: str = Field(pattern="^(learner|instructor)$")


class RoleOut(BaseModel):
    id: int
    username: str
    role: str


class DueProblem(BaseModel):
    problem_id: str
    score: int | None  # the best, in time or not
    max_score: int
    solved: bool
    late: bool  # the best came after the learner's due time


class DueItem(BaseModel):
    """One open assignment of one of the learner's classes, with their state on each problem."""

    class_id: int
    class_name: str
    assignment_id: int
    title: str
    due_at: datetime  # the learner's own (their extension, if any)
    extended: bool
    overdue: bool
    late_counts: bool
    problems: list[DueProblem]


class MyClasses(BaseModel):
    teaching: list[ClassOut]
    joined: list[ClassOut]
    due: list[DueItem]  # next due first; past due times last


# ------------------------------------------------------------------ errors

INSTRUCTOR_ONLY = N_("Only instructors may do this.")


def instructor_only() -> ApiError:
    return ApiError(403, "instructor_only", INSTRUCTOR_ONLY)


def no_assignment(assignment_id: int) -> ApiError:
    return ApiError(404, "not_found", N_("There is no assignment {id}."), params={"id": assignment_id})


def not_a_member(user_id: int) -> ApiError:
    return ApiError(404, "not_found", N_("User {id} is not in this class."), params={"id": user_id})


# ------------------------------------------------------------------ the instructor role


def set_role(db: Session, admin: User, user_id: int, role: str) -> RoleOut:
    """An admin makes an account an instructor or a learner. Their own role stays: an admin who
    demoted themself could not undo it. An admin's role is changed by `judge admin create
    --promote` only, on the server."""
    user = db.get(User, user_id)
    if user is None:
        raise ApiError(404, "not_found", N_("No such user."))
    if user.id == admin.id:
        raise ApiError(409, "cannot_change_own_role", N_("You cannot change your own role."))
    if user.is_admin:
        raise ApiError(409, "admin_role", N_("An administrator's role is changed on the server only."))
    user.role = role
    db.commit()
    return RoleOut(id=user.id, username=user.username, role=user.role)


# ------------------------------------------------------------------ classes


def _class_out(db: Session, reader: User, group: Group) -> ClassOut:
    teacher = db.get(User, group.instructor_id)
    runs = manages(reader, group)
    count = db.scalar(select(func.count()).select_from(Membership).where(Membership.class_id == group.id))
    return ClassOut(
        id=group.id,
        name=group.name,
        instructor=teacher.username if teacher else "?",
        joining_open=group.joining_open,
        join_code=group.join_code if runs else None,
        members=count or 0,
        manages=runs,
    )


def _new_code(db: Session) -> str:
    """A join code no class has. 31^8 codes: a collision is rare, and the unique index is there
    for the one a concurrent writer takes at the same moment (the request fails, nothing half)."""
    while True:
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        if db.scalar(select(Group.id).where(Group.join_code == code)) is None:
            return code


def normalise_code(code: str) -> str:
    """What a learner typed, as stored: no spaces or dashes, upper case."""
    return "".join(ch for ch in code.upper() if ch.isalnum())


def create_class(db: Session, user: User, name: str) -> ClassOut:
    if not user.is_instructor:
        raise instructor_only()
    group = Group(name=name.strip() or name, instructor_id=user.id, join_code=_new_code(db))
    db.add(group)
    db.commit()
    return _class_out(db, user, group)


def update_class(db: Session, user: User, class_id: int, patch: ClassPatch) -> ClassOut:
    group = managed_class(db, user, class_id)
    if patch.name is not None:
        group.name = patch.name
    if patch.joining_open is not None:
        group.joining_open = patch.joining_open
    db.commit()
    return _class_out(db, user, group)


def new_join_code(db: Session, user: User, class_id: int) -> ClassOut:
    """A new code: the old one stops working at once (a code that leaked beyond the class)."""
    group = managed_class(db, user, class_id)
    group.join_code = _new_code(db)
    db.commit()
    return _class_out(db, user, group)


def join(db: Session, user: User, code: str) -> ClassOut:
    group = db.scalar(select(Group).where(Group.join_code == normalise_code(code)))
    if group is None:
        raise ApiError(404, "no_such_code", N_("No class has the code {code}."), params={"code": code})
    if not group.joining_open:
        raise ApiError(409, "joining_closed", N_("This class is not taking new members; ask its instructor."))
    if group.instructor_id == user.id:
        raise ApiError(409, "own_class", N_("You teach this class: you cannot join it as a learner."))
    if not is_member(db, user.id, group.id):
        db.add(Membership(class_id=group.id, user_id=user.id))
        try:
            db.commit()
        except IntegrityError:  # the same learner's other tab joined a moment ago: in, either way
            db.rollback()
    return _class_out(db, user, group)


def leave(db: Session, user: User, class_id: int) -> None:
    group = db.get(Group, class_id)
    if group is None or not is_member(db, user.id, class_id):
        raise ApiError(404, "not_found", N_("You are not in class {id}."), params={"id": class_id})
    db.execute(delete(Membership).where(Membership.class_id == class_id, Membership.user_id == user.id))
    db.commit()


def names_of(body: NamesBody) -> list[str]:
    """The names in the body's list and CSV, trimmed, each once, in the order given. A CSV's
    first column is the name; its first row is skipped when it is a header ("username", "姓名")."""
    found = [n.strip() for n in body.names]
    if body.csv.strip():
        try:
            rows = [
                row for row in csv.reader(io.StringIO(body.csv.lstrip("\ufeff"))) if row and row[0].strip()
            ]
        except csv.Error:  # a field past the csv module's limit: no file of names looks like that
            raise ApiError(
                422, "bad_csv", N_("This CSV file cannot be read as a list of usernames.")
            ) from None
        if rows and rows[0][0].strip().lower() in HEADER_NAMES:
            rows = rows[1:]
        found += [row[0].strip() for row in rows]
    seen: set[str] = set()
    unique = []
    for name in found:
        if name and name.lower() not in seen:
            seen.add(name.lower())
            unique.append(name)
    return unique


def add_members(db: Session, user: User, class_id: int, body: NamesBody) -> Added:
    """Adds every named learner, or none: names that are no account are listed back, one by one."""
    group = managed_class(db, user, class_id)
    names = names_of(body)
    if not names:
        raise ApiError(422, "no_names", N_("Give at least one username (or a CSV file of them)."))
    if len(names) > MAX_NAMES:
        raise ApiError(422, "too_many_names", N_("At most {n} names at a time."), params={"n": MAX_NAMES})
    wanted = {n.lower() for n in names}
    accounts = {
        u.username.lower(): u for u in db.scalars(select(User).where(func.lower(User.username).in_(wanted)))
    }
    unknown = [n for n in names if n.lower() not in accounts]
    if unknown:
        raise ApiError(
            422,
            "unknown_names",
            N_("Nobody was added. These names are not accounts here: {names}."),
            params={"names": ", ".join(unknown)},
        )
    teacher = [n for n in names if accounts[n.lower()].id == group.instructor_id]
    if teacher:
        raise ApiError(
            422, "own_class", N_("Nobody was added. {name} teaches this class."), params={"name": teacher[0]}
        )
    present = set(db.scalars(select(Membership.user_id).where(Membership.class_id == group.id)))
    added, already = [], []
    for name in names:
        account = accounts[name.lower()]
        if account.id in present:
            already.append(account.username)
        else:
            db.add(Membership(class_id=group.id, user_id=account.id))
            present.add(account.id)
            added.append(account.username)
    try:
        db.commit()
    except IntegrityError:  # one of them joined by code meanwhile: nothing was added, say so
        db.rollback()
        raise ApiError(
            409, "members_changed", N_("The class changed meanwhile; nobody was added. Try again.")
        ) from None
    return Added(added=added, already=already)


def remove_member(db: Session, user: User, class_id: int, member_id: int) -> None:
    """The learner leaves the class and its extensions; their submissions stay theirs."""
    group = managed_class(db, user, class_id)
    if not is_member(db, member_id, group.id):
        raise not_a_member(member_id)
    db.execute(delete(Membership).where(Membership.class_id == group.id, Membership.user_id == member_id))
    own = select(Assignment.id).where(Assignment.class_id == group.id)
    db.execute(delete(Extension).where(Extension.user_id == member_id, Extension.assignment_id.in_(own)))
    db.commit()


def class_members(db: Session, group: Group) -> list[MemberOut]:
    rows = db.execute(
        select(User.id, User.username, Membership.joined_at)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.class_id == group.id)
        .order_by(func.lower(User.username))
    )
    return [MemberOut(id=i, username=n, joined_at=at) for i, n, at in rows]


# ------------------------------------------------------------------ assignments


def _assignment_out(db: Session, assignment: Assignment, with_extensions: bool) -> AssignmentOut:
    extensions: list[ExtensionOut] = []
    if with_extensions:
        rows = db.execute(
            select(Extension.user_id, User.username, Extension.due_at)
            .join(User, User.id == Extension.user_id)
            .where(Extension.assignment_id == assignment.id)
            .order_by(func.lower(User.username))
        )
        extensions = [ExtensionOut(user_id=i, username=n, due_at=d) for i, n, d in rows]
    return AssignmentOut(
        id=assignment.id,
        class_id=assignment.class_id,
        title=assignment.title,
        problems=problems_of(db, assignment.id),
        opens_at=assignment.opens_at,
        due_at=assignment.due_at,
        late_counts=assignment.late_counts,
        extensions=extensions,
    )


def visible_assignments(db: Session, reader: User, group: Group) -> list[Assignment]:
    """Its instructor sees every assignment; a member those that have opened. By due time."""
    query = select(Assignment).where(Assignment.class_id == group.id)
    if not manages(reader, group):
        query = query.where(Assignment.opens_at <= utcnow())
    return list(db.scalars(query.order_by(Assignment.due_at, Assignment.id)))


def class_view(db: Session, reader: User, class_id: int) -> ClassView:
    group = visible_class(db, reader, class_id)
    runs = manages(reader, group)
    return ClassView(
        group=_class_out(db, reader, group),
        members=class_members(db, group) if runs else [],
        assignments=[_assignment_out(db, a, runs) for a in visible_assignments(db, reader, group)],
    )


def _utc(moment: datetime) -> datetime:
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+05:00 is before the first representable moment
        raise ApiError(422, "time_out_of_range", N_("That time is out of range.")) from None


def _checked(db: Session, body: AssignmentBody) -> tuple[list[str], datetime, datetime]:
    """The body's problems (each once, in order) and times in UTC, or a 422 saying what is wrong."""
    offered = {v.problem_id for v in current_versions(db)}
    problems = list(dict.fromkeys(p.strip() for p in body.problems))
    unknown = [p for p in problems if p not in offered]
    if unknown:
        raise ApiError(
            422, "unknown_problems", N_("No such problems: {ids}."), params={"ids": ", ".join(unknown)}
        )
    opens_at, due_at = _utc(body.opens_at), _utc(body.due_at)
    if due_at <= opens_at:
        raise ApiError(422, "due_before_open", N_("The due time must come after the opening time."))
    return problems, opens_at, due_at


def _set_problems(db: Session, assignment_id: int, problems: list[str]) -> None:
    db.execute(delete(AssignmentProblem).where(AssignmentProblem.assignment_id == assignment_id))
    db.add_all(
        AssignmentProblem(assignment_id=assignment_id, problem_id=p, position=i)
        for i, p in enumerate(problems)
    )


def create_assignment(db: Session, user: User, class_id: int, body: AssignmentBody) -> AssignmentOut:
    group = managed_class(db, user, class_id)
    problems, opens_at, due_at = _checked(db, body)
    assignment = Assignment(
        class_id=group.id, title=body.title, opens_at=opens_at, due_at=due_at, late_counts=body.late_counts
    )
    db.add(assignment)
    db.flush()
    _set_problems(db, assignment.id, problems)
    db.commit()
    return _assignment_out(db, assignment, True)


def managed_assignment(
    db: Session, user: User, class_id: int, assignment_id: int
) -> tuple[Group, Assignment]:
    group = managed_class(db, user, class_id)
    assignment = db.get(Assignment, assignment_id)
    if assignment is None or assignment.class_id != group.id:
        raise no_assignment(assignment_id)
    return group, assignment


def update_assignment(
    db: Session, user: User, class_id: int, assignment_id: int, body: AssignmentBody
) -> AssignmentOut:
    """Everything is replaced. An extension earlier than the new due time would shorten the
    learner's time: those go, and the learner has the new (later) due time."""
    _group, assignment = managed_assignment(db, user, class_id, assignment_id)
    problems, opens_at, due_at = _checked(db, body)
    assignment.title, assignment.opens_at, assignment.due_at = body.title, opens_at, due_at
    assignment.late_counts = body.late_counts
    _set_problems(db, assignment.id, problems)
    db.execute(delete(Extension).where(Extension.assignment_id == assignment.id, Extension.due_at <= due_at))
    db.commit()
    return _assignment_out(db, assignment, True)


def delete_assignment(db: Session, user: User, class_id: int, assignment_id: int) -> None:
    _group, assignment = managed_assignment(db, user, class_id, assignment_id)
    db.delete(assignment)
    db.commit()


def set_extension(
    db: Session, user: User, class_id: int, assignment_id: int, member_id: int, due_at: datetime
) -> AssignmentOut:
    group, assignment = managed_assignment(db, user, class_id, assignment_id)
    if not is_member(db, member_id, group.id):
        raise not_a_member(member_id)
    moment = _utc(due_at)
    if moment <= assignment.due_at:
        raise ApiError(
            422, "extension_not_later", N_("An extension must be later than the assignment's due time.")
        )
    found = db.scalar(
        select(Extension).where(Extension.assignment_id == assignment.id, Extension.user_id == member_id)
    )
    if found is None:
        db.add(Extension(assignment_id=assignment.id, user_id=member_id, due_at=moment))
    else:
        found.due_at = moment
    db.commit()
    return _assignment_out(db, assignment, True)


def remove_extension(db: Session, user: User, class_id: int, assignment_id: int, member_id: int) -> None:
    _group, assignment = managed_assignment(db, user, class_id, assignment_id)
    found = db.scalar(
        select(Extension).where(Extension.assignment_id == assignment.id, Extension.user_id == member_id)
    )
    if found is None:
        raise ApiError(404, "not_found", N_("That learner has no extension on this assignment."))
    db.delete(found)
    db.commit()


# ------------------------------------------------------------------ progress


def max_scores(db: Session) -> dict[str, int]:
    return {v.problem_id: v.max_score for v in current_versions(db)}


@dataclass(frozen=True)
class Progress:
    """One assignment with its gradebook: every member's row for the instructor, the reader's
    own row only for a member."""

    assignment: AssignmentOut
    book: Gradebook
    is_open: bool

    @property
    def rows(self) -> tuple[Row, ...]:
        return self.book.rows


def progress(db: Session, reader: User, group: Group) -> list[Progress]:
    runs = manages(reader, group)
    tops = max_scores(db)
    now = utcnow()
    shown = []
    for assignment in visible_assignments(db, reader, group):
        book = gradebook(db, group, assignment, tops)
        if not runs:
            book = replace(book, rows=tuple(r for r in book.rows if r.user_id == reader.id))
        shown.append(Progress(_assignment_out(db, assignment, runs), book, is_open(assignment, now)))
    return shown


def _due_item(
    db: Session, group: Group, assignment: Assignment, learner: User, tops: dict[str, int]
) -> DueItem:
    book = gradebook(db, group, assignment, tops)
    mine = next((r for r in book.rows if r.user_id == learner.id), None)
    extensions = extensions_of(db, assignment.id)
    due_at = due_for(assignment, extensions, learner.id)
    cells = mine.cells if mine else ()
    return DueItem(
        class_id=group.id,
        class_name=group.name,
        assignment_id=assignment.id,
        title=assignment.title,
        due_at=due_at,
        extended=learner.id in extensions,
        overdue=utcnow() > due_at,
        late_counts=assignment.late_counts,
        problems=[
            DueProblem(
                problem_id=c.problem_id,
                score=c.best_overall,
                max_score=c.max_score,
                solved=c.max_score > 0 and (c.best_overall or 0) >= c.max_score,
                late=c.late,
            )
            for c in cells
        ],
    )


def my_classes(db: Session, user: User) -> MyClasses:
    """The classes the reader teaches (every class, for an admin) and those they are in, with
    the open assignments of the latter: the next due time first, those past due after them."""
    taught = select(Group).order_by(Group.created_at.desc(), Group.id.desc())
    if not user.is_admin:
        taught = taught.where(Group.instructor_id == user.id)
    teaching = [_class_out(db, user, g) for g in db.scalars(taught)] if user.is_instructor else []
    groups = list(
        db.scalars(
            select(Group)
            .join(Membership, Membership.class_id == Group.id)
            .where(Membership.user_id == user.id)
            .order_by(func.lower(Group.name), Group.id)
        )
    )
    tops = max_scores(db)
    due = [
        _due_item(db, g, a, user, tops)
        for g in groups
        for a in db.scalars(
            select(Assignment).where(Assignment.class_id == g.id, Assignment.opens_at <= utcnow())
        )
    ]
    upcoming = sorted((d for d in due if not d.overdue), key=lambda d: (d.due_at, d.assignment_id))
    past = sorted((d for d in due if d.overdue), key=lambda d: (d.due_at, d.assignment_id), reverse=True)
    return MyClasses(teaching=teaching, joined=[_class_out(db, user, g) for g in groups], due=upcoming + past)


# ------------------------------------------------------------------ members' work


def member_submissions(db: Session, user: User, class_id: int, member_id: int) -> list[SubmissionSummary]:
    """A member's submissions to the class's problems (any of its assignments), newest first,
    for the class's instructor: read-only, like the learner's own list."""
    group = managed_class(db, user, class_id)
    if not is_member(db, member_id, group.id):
        raise not_a_member(member_id)
    problems = (
        select(AssignmentProblem.problem_id)
        .join(Assignment, Assignment.id == AssignmentProblem.assignment_id)
        .where(Assignment.class_id == group.id)
    )
    rows = db.scalars(
        select(Submission)
        .where(
            Submission.user_id == member_id,
            Submission.mode != Mode.SCRATCH,
            Submission.problem_id.in_(problems),
        )
        .order_by(Submission.id.desc())
        .limit(500)
    )
    return [summary(s) for s in rows]


def member_name(db: Session, member_id: int) -> str:
    user = db.get(User, member_id)
    return user.username if user else "?"
