"""`judge validate` of a package, started by an admin from the web and kept as a record.

It runs in a background thread with the platform's own backend (the same sandbox workers use),
because a validation runs every author solution and takes seconds. A restart interrupts it;
the record then says so instead of staying "running" for ever.
"""

from __future__ import annotations

import threading
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from judge.authoring.validate import validate_package
from judge.core.backend import Backend
from judge.settings import JudgeSettings
from web.db import utcnow
from web.errors import N_, ApiError
from web.problems.models import ProblemValidation, ProblemVersion, ValidationState
from web.settings import WebSettings

INTERRUPTED = "interrupted: the server stopped while this validation ran"


def judge_settings(settings: WebSettings) -> JudgeSettings:
    return JudgeSettings(
        problems_dir=settings.problems_dir,
        cache_dir=settings.cache_dir,
        backend=settings.backend,
        startup_s=settings.startup_s,
        allow_unsandboxed=settings.allow_unsandboxed,
    )


def latest(db: Session, version_ids: list[int]) -> dict[int, ProblemValidation]:
    """The newest validation of each of these package versions."""
    rows = db.scalars(
        select(ProblemValidation)
        .where(ProblemValidation.problem_version_id.in_(version_ids))
        .order_by(ProblemValidation.id)
    )
    return {row.problem_version_id: row for row in rows}


def mark_interrupted(factory: sessionmaker[Session]) -> None:
    """At start-up nothing can still be running: earlier runs died with their process."""
    with factory() as db:
        db.execute(
            update(ProblemValidation)
            .where(ProblemValidation.status == ValidationState.RUNNING)
            .values(status=ValidationState.ERROR, error=INTERRUPTED, finished_at=utcnow())
        )
        db.commit()


def start(
    factory: sessionmaker[Session],
    db: Session,
    version: ProblemVersion,
    package_dir: Path,
    backend: Backend | None,
    settings: WebSettings,
    user_id: int,
) -> ProblemValidation:
    if backend is None:
        raise ApiError(409, "no_judge", N_("This server judges nothing (it runs no workers)."))
    running = db.scalar(
        select(ProblemValidation.id).where(
            ProblemValidation.problem_version_id == version.id,
            ProblemValidation.status == ValidationState.RUNNING,
        )
    )
    if running is not None:
        raise ApiError(
            409,
            "already_running",
            N_("Validation {id} of this version is still running."),
            params={"id": running},
        )
    record = ProblemValidation(problem_version_id=version.id, started_by=user_id)
    db.add(record)
    db.commit()
    record_id = record.id
    thread = threading.Thread(
        target=_run,
        args=(factory, record_id, package_dir, backend, judge_settings(settings)),
        name=f"validate-{version.problem_id}",
        daemon=True,
    )
    thread.start()
    return record


def _run(
    factory: sessionmaker[Session],
    record_id: int,
    package_dir: Path,
    backend: Backend,
    settings: JudgeSettings,
) -> None:
    status, checks, error = ValidationState.ERROR, [], ""
    try:
        result = validate_package(package_dir, backend, settings)
        status = ValidationState.SOUND if result.ok else ValidationState.UNSOUND
        checks = result.to_dict()["checks"]
    except Exception as exc:  # recorded for the admin page; the server carries on
        error = f"{type(exc).__name__}: {exc}"
    with factory() as db:
        record = db.get(ProblemValidation, record_id)
        if record is not None:
            record.status, record.checks, record.error = status, checks, error
            record.finished_at = utcnow()
            db.commit()
