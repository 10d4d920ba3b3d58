"""Classes: the JSON API of instructors (a class, its code, members, assignments, extensions, the
members' submissions) and of learners (join with a code, leave, what is due). Who may see what
is web.classes.access: a class its reader may not see is 404, as if it did not exist."""

from __future__ import annotations

from fastapi import APIRouter, Response

from web.classes import service
from web.classes.service import (
    Added,
    AssignmentBody,
    AssignmentOut,
    ClassBody,
    ClassOut,
    ClassPatch,
    ClassView,
    ExtensionBody,
    JoinBody,
    MyClasses,
    NamesBody,
    RoleBody,
    RoleOut,
)
from web.deps import AdminDep, DbDep, IdPath, UserDep
from web.submissions.views import SubmissionSummary

router = APIRouter(prefix="/api/classes", tags=["classes"])
# The instructor role is an admin's to give; it lives here, beside what the role is for.
roles_router = APIRouter(prefix="/api/admin", tags=["admin"])


@roles_router.post("/users/{user_id}/role", response_model=RoleOut)
def set_role(user_id: IdPath, body: RoleBody, admin: AdminDep, db: DbDep) -> RoleOut:
    """Make an account an instructor, or a learner again (not one's own, nor an admin's)."""
    return service.set_role(db, admin, user_id, body.role)


@router.get("", response_model=MyClasses)
def my_classes(user: UserDep, db: DbDep) -> MyClasses:
    """The classes the caller teaches and is in, and their open assignments, next due first."""
    return service.my_classes(db, user)


@router.post("", status_code=201, response_model=ClassOut)
def create_class(body: ClassBody, user: UserDep, db: DbDep) -> ClassOut:
    return service.create_class(db, user, body.name)


@router.post("/join", response_model=ClassOut)
def join(body: JoinBody, user: UserDep, db: DbDep) -> ClassOut:
    """Join with the class's code (case, spaces and dashes do not matter)."""
    return service.join(db, user, body.code)


@router.get("/{class_id}", response_model=ClassView)
def get_class(class_id: IdPath, user: UserDep, db: DbDep) -> ClassView:
    return service.class_view(db, user, class_id)


@router.patch("/{class_id}", response_model=ClassOut)
def update_class(class_id: IdPath, body: ClassPatch, user: UserDep, db: DbDep) -> ClassOut:
    """Rename the class, or open or close joining by code."""
    return service.update_class(db, user, class_id, body)


@router.post("/{class_id}/code", response_model=ClassOut)
def new_join_code(class_id: IdPath, user: UserDep, db: DbDep) -> ClassOut:
    """A new join code; the old one stops working."""
    return service.new_join_code(db, user, class_id)


@router.post("/{class_id}/leave", status_code=204)
def leave(class_id: IdPath, user: UserDep, db: DbDep) -> Response:
    service.leave(db, user, class_id)
    return Response(status_code=204)


@router.post("/{class_id}/members", response_model=Added)
def add_members(class_id: IdPath, body: NamesBody, user: UserDep, db: DbDep) -> Added:
    """Add learners by username (a list, or a CSV's text): all of them, or none and the unknown
    names listed."""
    return service.add_members(db, user, class_id, body)


@router.delete("/{class_id}/members/{user_id}", status_code=204)
def remove_member(class_id: IdPath, user_id: IdPath, user: UserDep, db: DbDep) -> Response:
    service.remove_member(db, user, class_id, user_id)
    return Response(status_code=204)


@router.get("/{class_id}/members/{user_id}/submissions", response_model=list[SubmissionSummary])
def member_submissions(
    class_id: IdPath, user_id: IdPath, user: UserDep, db: DbDep
) -> list[SubmissionSummary]:
    """A member's submissions to the class's problems, for its instructor (read-only)."""
    return service.member_submissions(db, user, class_id, user_id)


@router.post("/{class_id}/assignments", status_code=201, response_model=AssignmentOut)
def create_assignment(class_id: IdPath, body: AssignmentBody, user: UserDep, db: DbDep) -> AssignmentOut:
    return service.create_assignment(db, user, class_id, body)


@router.put("/{class_id}/assignments/{assignment_id}", response_model=AssignmentOut)
def update_assignment(
    class_id: IdPath, assignment_id: IdPath, body: AssignmentBody, user: UserDep, db: DbDep
) -> AssignmentOut:
    return service.update_assignment(db, user, class_id, assignment_id, body)


@router.delete("/{class_id}/assignments/{assignment_id}", status_code=204)
def delete_assignment(class_id: IdPath, assignment_id: IdPath, user: UserDep, db: DbDep) -> Response:
    service.delete_assignment(db, user, class_id, assignment_id)
    return Response(status_code=204)


@router.put("/{class_id}/assignments/{assignment_id}/extensions/{user_id}", response_model=AssignmentOut)
def set_extension(
    class_id: IdPath, assignment_id: IdPath, user_id: IdPath, body: ExtensionBody, user: UserDep, db: DbDep
) -> AssignmentOut:
    """A later due time for one member (later than the assignment's)."""
    return service.set_extension(db, user, class_id, assignment_id, user_id, body.due_at)


@router.delete("/{class_id}/assignments/{assignment_id}/extensions/{user_id}", status_code=204)
def remove_extension(
    class_id: IdPath, assignment_id: IdPath, user_id: IdPath, user: UserDep, db: DbDep
) -> Response:
    service.remove_extension(db, user, class_id, assignment_id, user_id)
    return Response(status_code=204)
