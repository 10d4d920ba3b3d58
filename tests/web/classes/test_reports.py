"""A class's reports on SQLite and PostgreSQL: the gradebook (JSON, CSV read back with the csv
module, the page), the class leaderboard and similar submissions, and who may read each."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.web.classes.test_similarity import SOFTMAX, SOFTMAX_RENAMED
from tests.web.factories import (
    PASSWORD,
    bearer,
    make_admin,
    make_assignment,
    make_class,
    make_instructor,
    platform_of,
    read_204,
    register,
    unique_name,
)
from web.auth.models import User
from web.classes.export import content_disposition
from web.classes.models import Assignment, Extension
from web.scores.models import Score
from web.submissions.models import Submission

# A fixed due time in the past: every submission below is made at a known distance from it.
DUE = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
OPENS = DUE - timedelta(days=7)
CHINESE = "张伟同学"


@dataclass
class Course:
    client: TestClient
    teacher_token: str
    class_id: int
    assignment_id: int
    ids: dict[str, int]  # username -> user id
    tokens: dict[str, str]  # username -> API token
    zh: str  # the learner whose username is Chinese
    a: str
    b: str  # has an extension
    outsider: str


def _user_id(client: TestClient, name: str) -> int:
    with platform_of(client).factory() as db:
        found = db.scalar(select(User.id).where(User.username == name))
        assert found is not None
        return found


def _submission(client: TestClient, user_id: int, problem: str, at: datetime, **fields: Any) -> int:
    values: dict[str, Any] = {
        "user_id": user_id,
        "problem_id": problem,
        "mode": "submit",
        "code": "# code\n",
        "status": "done",
        "created_at": at,
        "max_score": 100,
        **fields,
    }
    values.setdefault("verdict", "AC" if values.get("score") == 100 else "WA")
    with platform_of(client).factory() as db, db.begin():
        sub = Submission(**values)
        db.add(sub)
        db.flush()
        return sub.id


@pytest.fixture
def course(client: TestClient) -> Course:
    """A class of three learners (one with a Chinese name, one with an extension) and an
    assignment of 204 and 203 due at DUE, late work not counted; submissions at known times."""
    teacher, teacher_token = make_instructor(client)
    names: dict[str, str] = {}
    tokens: dict[str, str] = {}
    for key in ("zh", "a", "b", "outsider"):
        names[key], token = register(client, unique_name(key))
        tokens[names[key]] = token
    # A Chinese username (the API takes ASCII ones; a spreadsheet must still read this one).
    with platform_of(client).factory() as db, db.begin():
        user = db.scalar(select(User).where(User.username == names["zh"]))
        assert user is not None
        user.username = CHINESE
    tokens[CHINESE] = tokens.pop(names["zh"])
    names["zh"] = CHINESE
    class_id = make_class(client, teacher, [names["zh"], names["a"], names["b"]], name="线性代数 A")
    assignment_id = make_assignment(
        client, class_id, ("204", "203"), opens_at=OPENS, due_at=DUE, title="第一周 RMSNorm"
    )
    ids = {n: _user_id(client, n) for n in names.values()}
    with platform_of(client).factory() as db, db.begin():
        db.add(
            Extension(assignment_id=assignment_id, user_id=ids[names["b"]], due_at=DUE + timedelta(hours=2))
        )
    zh, a, b = ids[names["zh"]], ids[names["a"]], ids[names["b"]]
    hour = timedelta(hours=1)
    # zh: 60 in time, 100 an hour late (late work does not count: grade 60); 203 accepted early.
    _submission(client, zh, "204", DUE - 2 * hour, score=60)
    _submission(client, zh, "204", DUE + hour, score=100)
    _submission(client, zh, "203", DUE - 3 * hour, score=100)
    # a: a rejudge lowered an in-time 100 to 30 and kept the 100 (it counts); a blocked 100 on
    # 203 is no attempt, nor is a Run, nor a submission still queued.
    _submission(client, a, "204", DUE - hour, score=30, kept_score=100, kept_max_score=100, kept_verdict="AC")
    _submission(client, a, "203", DUE - hour, score=100, blocked_by="201")
    _submission(client, a, "203", DUE - hour, score=100, mode="run")
    _submission(client, a, "203", DUE - hour, status="queued", max_score=None, verdict=None)
    # b: extended to DUE + 2 h: 100 at DUE + 1 h is in time; 50 on 203 at DUE + 3 h is late.
    _submission(client, b, "204", DUE - 3 * hour, score=0)
    _submission(client, b, "204", DUE + hour, score=100)
    _submission(client, b, "203", DUE + 3 * hour, score=50)
    return Course(
        client,
        teacher_token,
        class_id,
        assignment_id,
        ids,
        tokens,
        names["zh"],
        names["a"],
        names["b"],
        names["outsider"],
    )


def iso(moment: datetime) -> str:
    return moment.isoformat()


# What the gradebook must say: (best in time, best overall, first AC, attempts, late, grade).
def expected(c: Course) -> dict[str, dict[str, tuple[Any, ...]]]:
    hour = timedelta(hours=1)
    return {
        c.zh: {"204": (60, 100, DUE + hour, 2, True, 60), "203": (100, 100, DUE - 3 * hour, 1, False, 100)},
        c.a: {"204": (100, 100, DUE - hour, 1, False, 100), "203": (None, None, None, 0, False, 0)},
        c.b: {"204": (100, 100, DUE + hour, 2, False, 100), "203": (None, 50, None, 1, True, 0)},
    }


def gradebook_url(c: Course, suffix: str = "") -> str:
    return f"/api/classes/{c.class_id}/assignments/{c.assignment_id}/gradebook{suffix}"


def test_the_gradebook_json_has_every_cell(course: Course) -> None:
    c = course
    res = c.client.get(gradebook_url(c), headers=bearer(c.teacher_token))
    assert res.status_code == 200, res.text
    book = res.json()
    assert [p["problem_id"] for p in book["problems"]] == ["204", "203"]
    assert all(p["max_score"] == 100 for p in book["problems"]) and book["max_total"] == 200
    assert book["title"] == "第一周 RMSNorm" and book["late_counts"] is False
    want = expected(c)
    # Ordered by name, case-insensitively; every member once, nobody else.
    assert [r["username"] for r in book["rows"]] == sorted(want, key=str.lower)
    for row in book["rows"]:
        name = row["username"]
        assert row["extended"] is (name == c.b)
        due = DUE + timedelta(hours=2) if name == c.b else DUE
        assert datetime.fromisoformat(row["due_at"]) == due
        for cell in row["cells"]:
            in_time, overall, first_ac, attempts, late, grade = want[name][cell["problem_id"]]
            got_ac = cell["first_accepted_at"]
            assert (datetime.fromisoformat(got_ac) if got_ac else None) == first_ac, (name, cell)
            assert (
                cell["best_in_time"],
                cell["best_overall"],
                cell["attempts"],
                cell["late"],
                cell["grade"],
            ) == (
                in_time,
                overall,
                attempts,
                late,
                grade,
            ), (name, cell)
        assert row["total"] == sum(w[5] for w in want[name].values())
        assert row["solved"] == sum(1 for w in want[name].values() if w[5] == 100)


def read_csv(res: Any) -> list[list[str]]:
    assert res.status_code == 200, res.text
    assert res.headers["content-type"].startswith("text/csv")
    assert res.content.startswith(b"\xef\xbb\xbf"), "no UTF-8 BOM: spreadsheets misread Chinese names"
    return list(csv.reader(io.StringIO(res.content.decode("utf-8-sig"))))


def test_the_csv_matches_the_json_and_the_database(course: Course) -> None:
    c = course
    headers = bearer(c.teacher_token)
    book = c.client.get(gradebook_url(c), headers=headers).json()
    res = c.client.get(gradebook_url(c, ".csv"), headers={**headers, "Accept-Language": "en"})
    disposition = res.headers["content-disposition"]
    assert f'filename="gradebook-{c.class_id}-{c.assignment_id}.csv"' in disposition
    assert "filename*=UTF-8''" in disposition
    rows = read_csv(res)
    header, body = rows[0], rows[1:]
    assert header[:3] == ["Username", "Due (for this learner)", "Extended"]
    assert header[3:9] == [
        "204: best by the due time",
        "204: best overall",
        "204: first accepted (UTC)",
        "204: attempts",
        "204: late",
        "204: grade",
    ]
    assert header[-2:] == ["Total", "Solved"] and len(header) == 3 + 6 * 2 + 2
    want = expected(c)
    assert [r[0] for r in body] == [r["username"] for r in book["rows"]]
    assert CHINESE in [r[0] for r in body]
    for line, row in zip(body, book["rows"], strict=True):
        name = line[0]
        assert len(line) == len(header)
        assert datetime.fromisoformat(line[1]) == datetime.fromisoformat(row["due_at"])
        assert datetime.fromisoformat(line[1]).utcoffset() == timedelta(0)  # UTC, said so
        assert line[2] == ("yes" if row["extended"] else "no")
        for i, cell in enumerate(row["cells"]):
            got = line[3 + 6 * i : 9 + 6 * i]
            in_time, overall, first_ac, attempts, late, grade = want[name][cell["problem_id"]]
            assert got == [
                "" if in_time is None else str(in_time),
                "" if overall is None else str(overall),
                iso(first_ac) if first_ac else "",
                str(attempts),
                "yes" if late else "no",
                str(grade),
            ], (name, cell["problem_id"])
            # And the same as the JSON's.
            assert got[0] == ("" if cell["best_in_time"] is None else str(cell["best_in_time"]))
            assert got[5] == str(cell["grade"])
        assert line[-2:] == [str(row["total"]), str(row["solved"])]
    # The header in Chinese for a Chinese reader, the numbers the same.
    zh_rows = read_csv(
        c.client.get(gradebook_url(c, ".csv"), headers={**headers, "Accept-Language": "zh-CN"})
    )
    assert zh_rows[0][:4] == ["用户名", "截止时间（该学习者）", "已延期", "204：截止前最高分"]
    assert zh_rows[0][-2:] == ["总分", "已通过"]
    assert [r[3:] for r in zh_rows[1:]] == [
        [v.replace("yes", "是").replace("no", "否") for v in r[3:]] for r in body
    ]


def test_late_work_counts_when_the_assignment_says_so(course: Course) -> None:
    c = course
    with platform_of(c.client).factory() as db, db.begin():
        assignment = db.get(Assignment, c.assignment_id)
        assert assignment is not None
        assignment.late_counts = True
    book = c.client.get(gradebook_url(c), headers=bearer(c.teacher_token)).json()
    grades = {r["username"]: {x["problem_id"]: x["grade"] for x in r["cells"]} for r in book["rows"]}
    assert grades[c.zh]["204"] == 100 and grades[c.b]["203"] == 50


def test_the_whole_class_csv_has_every_assignment(course: Course) -> None:
    c = course
    second = make_assignment(
        c.client, c.class_id, ("205",), opens_at=OPENS, due_at=DUE + timedelta(days=7), title="Week 2"
    )
    _submission(c.client, c.ids[c.a], "205", DUE + timedelta(days=1), score=100)
    rows = read_csv(
        c.client.get(f"/api/classes/{c.class_id}/gradebook.csv?lang=en", headers=bearer(c.teacher_token))
    )
    assert rows[0] == [
        "Username",
        "第一周 RMSNorm: grade (of 200)",
        "第一周 RMSNorm: solved",
        "Week 2: grade (of 100)",
        "Week 2: solved",
        "Total",
    ]
    by_name = {r[0]: r[1:] for r in rows[1:]}
    assert by_name[c.zh] == ["160", "1", "0", "0", "160"]
    assert by_name[c.a] == ["100", "1", "100", "1", "200"]
    assert by_name[c.b] == ["100", "1", "0", "0", "100"]
    assert second > c.assignment_id


def test_only_the_instructor_or_an_admin_reads_the_gradebook(course: Course) -> None:
    c = course
    other_teacher, other_token = make_instructor(c.client)
    _admin, admin_token = make_admin(c.client)
    for url in (gradebook_url(c), gradebook_url(c, ".csv"), f"/api/classes/{c.class_id}/gradebook.csv"):
        assert c.client.get(url).status_code == 401
        for token in (c.tokens[c.a], c.tokens[c.outsider], other_token):
            res = c.client.get(url, headers=bearer(token))
            assert res.status_code == 404, (url, res.text)
            assert CHINESE not in res.text
        assert c.client.get(url, headers=bearer(admin_token)).status_code == 200
    # Another class's assignment id under this class: not found either.
    other_class = make_class(c.client, other_teacher, [c.a])
    foreign = make_assignment(c.client, other_class, ("204",))
    res = c.client.get(
        f"/api/classes/{c.class_id}/assignments/{foreign}/gradebook", headers=bearer(c.teacher_token)
    )
    assert res.status_code == 404 and res.json()["error"]["code"] == "not_found"


def login(client: TestClient, name: str) -> TestClient:
    browser = TestClient(client.app, follow_redirects=False)
    res = browser.post("/api/auth/login", json={"username": name, "password": PASSWORD})
    assert res.status_code == 200, res.text
    return browser


def teacher_name(c: Course) -> str:
    res = c.client.get("/api/me", headers=bearer(c.teacher_token))
    name: str = res.json()["username"]
    return name


def test_the_gradebook_page_marks_late_cells_and_links_the_csv(course: Course) -> None:
    c = course
    page = f"/classes/{c.class_id}/assignments/{c.assignment_id}/gradebook"
    assert TestClient(c.client.app, follow_redirects=False).get(page).status_code == 303
    browser = login(c.client, teacher_name(c))
    browser.cookies.set("judge_lang", "en")
    res = browser.get(page)
    assert res.status_code == 200, res.text
    html = res.text
    assert CHINESE in html and 'data-testid="gradebook"' in html
    assert html.count('data-testid="late"') == 2  # zh's 204, b's 203
    assert f"/api/classes/{c.class_id}/assignments/{c.assignment_id}/gradebook.csv?lang=en" in html
    assert html.count('data-testid="extended"') == 1
    # A learner of the class: the API's "not found", as a page.
    res = login(c.client, c.a).get(page)
    assert res.status_code == 404 and res.headers["content-type"].startswith("text/html")


def test_the_class_leaderboard_respects_each_members_choice(course: Course) -> None:
    c = course
    with platform_of(c.client).factory() as db, db.begin():
        a = db.get(User, c.ids[c.a])
        b = db.get(User, c.ids[c.b])
        assert a is not None and b is not None
        a.display_name = "Ada 数学"
        b.on_leaderboard = False
        at = DUE - timedelta(hours=1)

        def best(user: str, problem: str, score: int) -> Score:
            return Score(
                user_id=c.ids[user],
                problem_id=problem,
                best_score=score,
                max_score=100,
                solved=score == 100,
                improved_at=at,
            )

        db.add_all(
            [
                best(c.a, "204", 100),
                best(c.zh, "204", 100),
                best(c.zh, "203", 40),
                best(c.a, "205", 100),  # not a problem of the class: not counted
                best(c.b, "204", 100),
            ]
        )
    url = f"/api/classes/{c.class_id}/leaderboard"
    res = c.client.get(url, headers=bearer(c.tokens[c.a]))
    assert res.status_code == 200, res.text
    board = res.json()
    assert board["problems"] == ["204", "203"] and board["hidden"] == 1
    assert [(r["rank"], r["name"], r["score"], r["solved"], r["you"]) for r in board["rows"]] == [
        (1, CHINESE, 140, 1, False),
        (2, "Ada 数学", 100, 1, True),
    ]
    assert c.a not in res.text and c.b not in res.text  # a display name never carries the username
    assert c.client.get(url, headers=bearer(c.teacher_token)).status_code == 200
    assert c.client.get(url, headers=bearer(c.tokens[c.outsider])).status_code == 404
    assert c.client.get(url).status_code == 401
    page = login(c.client, teacher_name(c)).get(f"/classes/{c.class_id}/leaderboard")
    assert page.status_code == 200 and "Ada 数学" in page.text and 'data-testid="hidden-members"' in page.text


def test_similar_submissions_for_the_instructor(course: Course) -> None:
    c = course
    at = DUE + timedelta(days=1)  # after the course's submissions: these are each one's latest
    reference = read_204("reference.py")
    # a and b hand in the same code under other names; zh hands in the reference, renamed.
    sub_a = _submission(c.client, c.ids[c.a], "204", at, score=100, code=SOFTMAX)
    _submission(c.client, c.ids[c.a], "204", at - timedelta(hours=1), score=100, code="x = 1\n")  # older
    sub_b = _submission(c.client, c.ids[c.b], "204", at, score=100, code=SOFTMAX_RENAMED)
    _submission(c.client, c.ids[c.zh], "204", at, score=100, code=reference.replace("xf", "h"))
    # Not accepted: not compared.
    _submission(c.client, c.ids[c.zh], "204", at + timedelta(hours=1), score=90, code=SOFTMAX)
    url = f"/api/classes/{c.class_id}/similar?problem_id=204"
    res = c.client.get(url, headers=bearer(c.teacher_token))
    assert res.status_code == 200, res.text
    found = res.json()
    assert found["problems"] == ["204", "203"] and found["compared"] == 3
    assert len(found["pairs"]) == 1
    pair = found["pairs"][0]
    assert pair["share"] == 1.0
    assert {pair["a"]["submission_id"], pair["b"]["submission_id"]} == {sub_a, sub_b}
    assert {pair["a"]["code"], pair["b"]["code"]} == {SOFTMAX, SOFTMAX_RENAMED}
    assert "_normalize_fp32" not in res.text  # never the reference's code
    # The first of the class's problems by default; a problem not in the class is not found.
    default = c.client.get(f"/api/classes/{c.class_id}/similar", headers=bearer(c.teacher_token)).json()
    assert default["problem_id"] == "204"
    res = c.client.get(f"/api/classes/{c.class_id}/similar?problem_id=217", headers=bearer(c.teacher_token))
    assert res.status_code == 404 and res.json()["error"]["code"] == "not_found"
    assert res.json()["error"]["message"] == "题目 217 不在本班的任何作业中。"
    # Members' code is the instructor's to see, nobody else's.
    for token in (c.tokens[c.a], c.tokens[c.outsider]):
        res = c.client.get(url, headers=bearer(token))
        assert res.status_code == 404 and "softmax" not in res.text
    page = login(c.client, teacher_name(c)).get(f"/classes/{c.class_id}/similar?problem_id=204")
    assert page.status_code == 200
    assert 'data-testid="not-a-penalty"' in page.text and page.text.count('data-testid="similar-pair"') == 1


def test_the_file_name_is_safe_whatever_the_title() -> None:
    header = content_disposition("gradebook-3-7", 'Week "1"\r\nSet-Cookie: x=1; 第一周/../')
    assert header.startswith("attachment; filename=\"gradebook-3-7.csv\"; filename*=UTF-8''")
    assert "\r" not in header and "\n" not in header and header.count('"') == 2
    assert "/" not in header.split("filename*=")[1]  # no path in either name


def test_an_empty_class_has_empty_reports(client: TestClient) -> None:
    teacher, token = make_instructor(client)
    class_id = make_class(client, teacher)
    found = client.get(f"/api/classes/{class_id}/similar?problem_id=", headers=bearer(token)).json()
    assert (found["problems"], found["problem_id"], found["compared"], found["pairs"]) == ([], "", 0, [])
    board = client.get(f"/api/classes/{class_id}/leaderboard", headers=bearer(token)).json()
    assert (board["problems"], board["rows"], board["hidden"]) == ([], [], 0)
    rows = read_csv(client.get(f"/api/classes/{class_id}/gradebook.csv", headers=bearer(token)))
    assert rows == [["用户名", "总分"]]
    browser = login(client, teacher)
    assert browser.get(f"/classes/{class_id}/similar").status_code == 200
    assert browser.get(f"/classes/{class_id}/leaderboard").status_code == 200
