"""Who may see what of a class: its instructor (and admins) everything, a member their own part.

One place for the rule, so that the API, the pages, the gradebook and the submission pages
cannot disagree. A class its reader may not see answers "not found", like one that does not
exist: a learner cannot probe which class ids are in use.
"""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from web.auth.models import User
from web.classes.models import Group, Membership
from web.errors import N_, ApiError

NO_CLASS = N_("There is no class {id}.")


def class_not_found(class_id: int) -> ApiError:
    return ApiError(404, "not_found", NO_CLASS, params={"id": class_id})


def manages(user: User, group: Group) -> bool:
    """The class's own instructor, or an admin."""
    return user.is_admin or group.instructor_id == user.id


def is_member(db: Session, user_id: int, class_id: int) -> bool:
    return (
        db.scalar(select(exists().where(Membership.class_id == class_id, Membership.user_id == user_id)))
        is True
    )


def managed_class(db: Session, user: User, class_id: int) -> Group:
    """The class, if `user` runs it; else 404 (whether or not it exists)."""
    group = db.get(Group, class_id)
    if group is None or not manages(user, group):
        raise class_not_found(class_id)
    return group


def visible_class(db: Session, user: User, class_id: int) -> Group:
    """The class, if `user` runs it or is in it; else 404."""
    group = db.get(Group, class_id)
    if group is None or not (manages(user, group) or is_member(db, user.id, class_id)):
        raise class_not_found(class_id)
    return group


def teaches(db: Session, user: User, learner_id: int) -> bool:
    """Whether `user` may read `learner_id`'s work (read-only) and issue them a reset link: an
    admin, or the instructor of a class the learner is in. Nobody else's."""
    if user.is_admin:
        return True
    if not user.is_instructor:
        return False
    return (
        db.scalar(
            select(
                exists().where(
                    Membership.user_id == learner_id,
                    Membership.class_id == Group.id,
                    Group.instructor_id == user.id,
                )
            )
        )
        is True
    )
