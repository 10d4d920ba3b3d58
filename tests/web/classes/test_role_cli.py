"""`judge admin create NAME --role instructor`: the operator's way to make an instructor, with
--promote meaning what it means for an admin (an existing name is refused without it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from tests.web.test_cli import env_for, judge
from web.auth.models import User
from web.db import make_engine, make_sessionmaker

pytestmark = pytest.mark.slow

STRONG = "a strong password\n"


def role_of(url: str, name: str) -> str | None:
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as db:
            return db.scalar(select(User.role).where(User.username == name))
    finally:
        engine.dispose()


def test_admin_create_makes_an_instructor(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    res = judge(env, "admin", "create", "teacher_1", "--role", "instructor", "--password-stdin", stdin=STRONG)
    assert res.returncode == 0 and "created instructor teacher_1" in res.stdout, res.stderr
    assert role_of(env["JUDGE_DATABASE_URL"], "teacher_1") == "instructor"
    again = judge(
        env, "admin", "create", "Teacher_1", "--role", "instructor", "--password-stdin", stdin=STRONG
    )
    assert again.returncode == 2 and "--promote" in again.stderr and "an instructor" in again.stderr
    promoted = judge(env, "admin", "create", "teacher_1", "--promote", "--password-stdin", stdin=STRONG)
    assert promoted.returncode == 0 and "now an admin" in promoted.stdout, promoted.stderr
    assert role_of(env["JUDGE_DATABASE_URL"], "teacher_1") == "admin"
    wrong = judge(env, "admin", "create", "x_learner", "--role", "learner", "--password-stdin", stdin=STRONG)
    assert wrong.returncode == 2 and "invalid choice" in wrong.stderr
