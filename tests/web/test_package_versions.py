"""When a package changes (issue 29): a learner accepted on an older version keeps the best score
and reads what changed since, on the problem, in the list and in the API, until a Submit is
accepted on the current version; an admin's rejudge that judges lower keeps the best and says
so to the learner and to the admin. Real workers and the real judge (Docker when there is one) on a tiny
package; SQLite, and PostgreSQL when JUDGE_TEST_POSTGRES_URL is set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.factories import make_package
from tests.web.factories import (
    PASSWORD,
    bearer,
    make_admin,
    make_client,
    make_settings,
    platform_of,
    register,
    submit,
    wait_done,
)
from web.problems.models import ProblemVersion
from web.settings import WebSettings

DOUBLE = "def f(x):\n    return x + x\n"
TRIPLE = "def f(x):\n    return x + x + x\n"
NOTE = {"zh": "f 现在返回三倍", "en": "f now returns three times x"}


def settings(tmp_path: Path, url: str | None) -> WebSettings:
    """The Docker sandbox's fork server where there is one (always under CI), as
    test_solutions does: a judgement costs tens of milliseconds there."""
    return make_settings(tmp_path, database_url=url, problems_dir=tmp_path / "problems", backend="auto")


def version_2(package: Path) -> None:
    """The package's second version: f triples (so the first version's AC is wrong now), with
    its change note."""
    (package / "reference.py").write_text("def f(x):\n    return x * 3\n")
    toml = package / "problem.toml"
    text = toml.read_text().replace("version = 1", "version = 2")
    toml.write_text(text + f'\n[changes.2]\nzh = "{NOTE["zh"]}"\nen = "{NOTE["en"]}"\n')


def problem(client: TestClient, token: str) -> dict[str, Any]:
    res = client.get("/api/problems/901", headers=bearer(token))
    assert res.status_code == 200, res.text
    body: dict[str, Any] = res.json()
    listed = [p for p in client.get("/api/problems", headers=bearer(token)).json() if p["id"] == "901"]
    # The list says the same as the problem.
    assert [(p["best_score"], p["solved"], p["changed_since"]) for p in listed] == [
        (body["best_score"], body["solved"], body["changed_since"])
    ]
    return body


def page(client: TestClient, token: str, path: str, lang: str) -> str:
    assert client.patch("/api/me", json={"language": lang}, headers=bearer(token)).status_code == 200
    res = client.get(path)
    assert res.status_code == 200, res.text
    return res.text


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_a_learner_accepted_on_an_older_version_keeps_the_score_and_reads_what_changed(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = None if dialect == "sqlite" else request.getfixturevalue("postgres_url")
    package = make_package(tmp_path / "problems")
    with make_client(settings(tmp_path, url)) as client:
        name, alice = register(client)
        assert (
            client.post("/api/auth/login", json={"username": name, "password": PASSWORD}).status_code == 200
        )
        accepted = wait_done(client, alice, submit(client, alice, DOUBLE, "901"))
        assert accepted["verdict"] == "AC"
        first = problem(client, alice)
        assert (first["package_version"], first["changed_since"], first["best_score"]) == (1, None, 100)

        version_2(package)
        assert platform_of(client).reload_problems() == ["901"]
        now = problem(client, alice)
        assert (now["package_version"], now["best_score"], now["solved"], now["status"]) == (
            2,
            100,
            True,
            "solved",
        )
        assert now["changed_since"] == {
            "accepted_version": 1,
            "current_version": 2,
            "changes": [{"version": 2, "note": NOTE}],
            "submission_id": accepted["id"],
        }
        zh = page(client, alice, "/problems/901", "zh")
        assert "在版本 1 上通过；此后题目有改动：" in zh and NOTE["zh"] in zh and NOTE["en"] not in zh
        assert f'data-resubmit="{accepted["id"]}"' in zh and "重新提交你通过的代码" in zh
        en = page(client, alice, "/problems", "en")
        assert "Accepted on version 1; the problem has changed since:" in en and NOTE["en"] in en
        assert NOTE["zh"] not in en and 'href="/problems/901" data-testid="resubmit"' in en

        # A re-submit accepted on the current version puts the change behind the learner.
        assert wait_done(client, alice, submit(client, alice, TRIPLE, "901"))["verdict"] == "AC"
        assert problem(client, alice)["changed_since"] is None
        assert 'data-testid="changed-since"' not in page(client, alice, "/problems", "zh")


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_a_rejudge_that_judges_lower_keeps_the_best_and_says_so(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = None if dialect == "sqlite" else request.getfixturevalue("postgres_url")
    package = make_package(tmp_path / "problems")
    with make_client(settings(tmp_path, url)) as client:
        name, alice = register(client)
        assert (
            client.post("/api/auth/login", json={"username": name, "password": PASSWORD}).status_code == 200
        )
        accepted = wait_done(client, alice, submit(client, alice, DOUBLE, "901"))
        assert (accepted["verdict"], accepted["kept"]) == ("AC", None)
        version_2(package)
        assert platform_of(client).reload_problems() == ["901"]

        admin_name, admin = make_admin(client)
        res = client.post("/api/admin/problems/901/rejudge", headers=bearer(admin))
        assert res.status_code == 200 and res.json() == {"queued": 1}
        again = wait_done(client, alice, accepted["id"])
        # The rejudged result is recorded, and what it replaced is kept beside it.
        assert (again["verdict"], again["score"]) == ("WA", 0)
        assert again["kept"] == {"verdict": "AC", "score": 100, "max_score": 100, "version": 1}
        now = problem(client, alice)
        assert (now["best_score"], now["solved"]) == (100, True)
        assert now["kept_best"] == {
            "submission_id": accepted["id"],
            "kept_verdict": "AC",
            "kept_score": 100,
            "verdict": "WA",
            "score": 0,
            "max_score": 100,
        }
        # Still accepted on version 1 (the kept result's), so the change note stays too.
        assert now["changed_since"]["accepted_version"] == 1
        assert [s["kept"] for s in client.get("/api/submissions", headers=bearer(alice)).json()] == [
            again["kept"]
        ]
        assert [s["kept"] for s in client.get("/api/admin/submissions", headers=bearer(admin)).json()] == [
            again["kept"]
        ]

        zh = page(client, alice, "/problems/901", "zh")
        assert (
            f'重判后你的最佳提交 <a href="/submissions/{accepted["id"]}">#{accepted["id"]}</a> 为 WA，0 分'
            in zh
        )
        assert "你的最高分保留之前的 100 分" in zh
        assert "已重判；之前：AC 100" in page(client, alice, "/submissions", "zh")
        en = page(client, alice, f"/submissions/{accepted['id']}", "en")
        assert "Before the rejudge" in en and "AC 100 / 100 · version 1" in en
        # The admin sees it in the list of submissions too.
        login = {"username": admin_name, "password": PASSWORD}
        assert client.post("/api/auth/login", json=login).status_code == 200
        assert "rejudged; before: AC 100" in page(client, admin, "/admin", "en")

        # Rejudged again on a package under which it is right: the kept result is moot.
        (package / "reference.py").write_text("def f(x):\n    return x * 2\n")
        platform_of(client).reload_problems()
        assert client.post(
            f"/api/admin/submissions/{accepted['id']}/rejudge", headers=bearer(admin)
        ).json() == {"queued": 1}
        third = wait_done(client, alice, accepted["id"])
        assert (third["verdict"], third["kept"]) == ("AC", None)
        with platform_of(client).factory() as session:
            current = session.scalar(
                select(ProblemVersion.package_version).where(
                    ProblemVersion.problem_id == "901", ProblemVersion.current.is_(True)
                )
            )
        assert current == 2 and problem(client, alice)["changed_since"] is None
