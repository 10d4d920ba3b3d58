"""My submissions filtered by verdict and mode, and downloaded as CSV (issue 31, item 8): the
rows are the reader's own, as the filters say, readable by a spreadsheet (UTF-8 with a BOM, so
Chinese titles survive) and by the csv module; nobody else's and no code."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.web.factories import PASSWORD, make_client, make_settings, platform_of, register
from tests.web.pages.test_account_pages import form_token
from web.auth.models import User
from web.db import transaction
from web.submissions.models import Mode, Submission, SubmissionStatus

SECRET_CODE = "def f(x):  # never in the CSV\n    return x\n"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(make_settings(tmp_path, JUDGE_WORKERS=0)) as c:
        yield c


def judged_rows(client: TestClient, username: str, rows: list[tuple[str, str, str, int]]) -> None:
    """Submissions written directly, as the worker leaves them: (problem, mode, verdict, score)."""
    with transaction(platform_of(client).factory) as db:
        user_id = db.scalar(select(User.id).where(User.username == username))
        for problem, mode, verdict, score in rows:
            db.add(
                Submission(
                    user_id=user_id,
                    problem_id=problem,
                    mode=Mode(mode),
                    code=SECRET_CODE,
                    status=SubmissionStatus.DONE,
                    verdict=verdict,
                    score=score,
                    max_score=100,
                )
            )


def log_in(client: TestClient, name: str) -> None:
    page = client.get("/login")
    res = client.post(
        "/login", data={"username": name, "password": PASSWORD, "form_token": form_token(page.text)}
    )
    assert res.status_code in (200, 303), res.text


def test_filters_and_the_csv_agree_with_the_database(client: TestClient) -> None:
    ada, _ = register(client)
    bob, _ = register(client)
    judged_rows(
        client, ada, [("204", "submit", "WA", 40), ("204", "submit", "AC", 100), ("205", "run", "AC", 30)]
    )
    judged_rows(client, bob, [("204", "submit", "AC", 100)])
    log_in(client, ada)

    page = client.get("/submissions?verdict=AC&mode=submit").text
    table = page.split('data-testid="submission-table"')[1]
    assert table.count('href="/submissions/') == 1 and "/problems/204" in table

    res = client.get("/submissions.csv?verdict=AC")
    assert res.status_code == 200 and res.headers["content-type"].startswith("text/csv")
    assert "attachment" in res.headers["content-disposition"]
    assert res.content.startswith(b"\xef\xbb\xbf")  # the BOM
    rows = list(csv.DictReader(io.StringIO(res.content.decode("utf-8-sig"))))
    with transaction(platform_of(client).factory) as db:
        ada_id = db.scalar(select(User.id).where(User.username == ada))
        mine = db.scalars(
            select(Submission)
            .where(Submission.user_id == ada_id, Submission.verdict == "AC")
            .order_by(Submission.id.desc())
        ).all()
        expected = [(str(s.id), s.problem_id, s.mode, s.verdict, str(s.score)) for s in mine]
    assert [(r["id"], r["problem"], r["mode"], r["verdict"], r["score"]) for r in rows] == expected
    assert rows[0]["title"] and any("\u4e00" <= ch <= "\u9fff" for ch in rows[0]["title"])  # Chinese title
    assert "never in the CSV" not in res.text and bob not in res.text

    # A filter that is no verdict is no filter; a visitor is sent to log in.
    assert (
        len(
            list(
                csv.DictReader(io.StringIO(client.get("/submissions.csv?verdict=zzz").text.lstrip("\ufeff")))
            )
        )
        == 3
    )
    client.cookies.clear()
    assert client.get("/submissions.csv", follow_redirects=False).status_code == 303
