"""The course through the API and the pages, on a real database (SQLite, and PostgreSQL when
JUDGE_TEST_POSTGRES_URL is set): chapters in course order with the learner's progress, each
problem's prerequisites and next problem, and the acceptance rate per problem."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.factories import make_package
from tests.web.factories import bearer, make_client, make_settings, platform_of, register
from web.auth.models import User
from web.problems.service import MIN_SUBMITTERS
from web.scores.models import Score

COURSE_CHAPTERS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]


@pytest.fixture(params=["sqlite", "postgresql"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestClient]:
    """An app on the shipped problems that judges nothing: scores are written as a judgement would."""
    url = None if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    with make_client(make_settings(tmp_path, database_url=url, workers=0)) as c:
        yield c


def learner(client: TestClient, scores: dict[str, bool] | None = None) -> str:
    """A new account with a score on each problem of `scores` (True: solved); its token."""
    name, token = register(client)
    with platform_of(client).factory() as db:
        user_id = db.scalar(select(User.id).where(User.username == name))
        assert user_id is not None
        for problem_id, solved in (scores or {}).items():
            db.add(
                Score(
                    user_id=user_id,
                    problem_id=problem_id,
                    best_score=100 if solved else 40,
                    max_score=100,
                    solved=solved,
                )
            )
        db.commit()
    return token


def get(client: TestClient, path: str, token: str | None = None) -> Any:
    res = client.get(path, headers=bearer(token) if token else {})
    assert res.status_code == 200, res.text
    return res.json()


def test_chapters_come_in_course_order_with_both_names(client: TestClient) -> None:
    chapters = get(client, "/api/course")
    assert [c["chapter"]["number"] for c in chapters] == COURSE_CHAPTERS
    assert [c["chapter"]["position"] for c in chapters] == list(range(len(COURSE_CHAPTERS)))
    by_number = {c["chapter"]["number"]: c for c in chapters}
    assert by_number[2]["problems"] == ["203", "207"]
    assert by_number[6]["chapter"]["title"] == {"zh": "注意力", "en": "Attention"}
    assert by_number[7]["problems"] == ["211", "212", "218"]
    # The problem list is in the same order, and keeps its one-string chapter.
    listed = get(client, "/api/problems")
    assert [p["id"] for p in listed] == [i for c in chapters for i in c["problems"]]
    rmsnorm = next(p for p in listed if p["id"] == "204")
    assert rmsnorm["chapter"] == "03 RMSNorm"
    assert rmsnorm["course_chapter"] == {
        "number": 3,
        "title": {"zh": "RMSNorm", "en": "RMSNorm"},
        "position": 2,
    }
    assert len({p["chapter"] for p in listed}) == len(COURSE_CHAPTERS), "one number, one chapter"


def test_progress_per_chapter_is_the_learner_s(client: TestClient) -> None:
    anonymous = {c["chapter"]["number"]: (c["solved"], c["total"]) for c in get(client, "/api/course")}
    assert anonymous[2] == (0, 2) and anonymous[7] == (0, 3)
    token = learner(client, {"203": True, "207": False, "211": True, "212": True})
    mine = {c["chapter"]["number"]: (c["solved"], c["total"]) for c in get(client, "/api/course", token)}
    assert mine[2] == (1, 2) and mine[7] == (2, 3) and mine[3] == (0, 1)


def test_prerequisites_are_the_parts_and_the_course_s_extras_with_their_state(client: TestClient) -> None:
    links = get(client, "/api/course/problems/209")
    assert [s["id"] for s in links["prerequisites"]] == ["204", "205", "208"]
    assert all(s["solved"] is None for s in links["prerequisites"]), "no state without an account"
    assert links["chapter"]["number"] == 6
    assert [s["id"] for s in get(client, "/api/course/problems/208")["prerequisites"]] == ["207"]
    assert [s["id"] for s in get(client, "/api/course/problems/213")["prerequisites"]] == ["207", "206"]
    assert get(client, "/api/course/problems/203")["prerequisites"] == []
    token = learner(client, {"204": True, "205": False})
    mine = {s["id"]: s["solved"] for s in get(client, "/api/course/problems/209", token)["prerequisites"]}
    assert mine == {"204": True, "205": False, "208": False}
    # The summary carries the ids too.
    assert get(client, "/api/problems/214")["prerequisites"] == ["204", "206", "208"]
    # Parts of parts are parts to solve first: the capstone's list is its parts panel's.
    capstone = platform_of(client).problems["217"]
    listed = [s["id"] for s in get(client, "/api/course/problems/217")["prerequisites"]]
    assert {p.id for p in capstone.part_problems} <= set(listed)
    assert len(listed) > len(capstone.spec.parts)


def test_the_next_problem_follows_the_course(client: TestClient) -> None:
    def next_of(problem_id: str) -> Any:
        return get(client, f"/api/course/problems/{problem_id}")["next"]

    assert next_of("204") == {
        "id": "205",
        "title": {"zh": "旋转位置编码 RoPE", "en": "Rotary position embedding (RoPE)"},
        "solved": None,
    }
    assert next_of("203")["id"] == "207" and next_of("207")["id"] == "204"
    assert next_of("212")["id"] == "218" and next_of("218")["id"] == "213"
    assert next_of("217") is None
    assert client.get("/api/course/problems/999").status_code == 404


def test_acceptance_counts_learners_and_waits_for_enough_of_them(client: TestClient) -> None:
    def acceptance(problem_id: str) -> Any:
        listed = {p["id"]: p["acceptance"] for p in get(client, "/api/problems")}
        detail = get(client, f"/api/problems/{problem_id}")["acceptance"]
        assert listed[problem_id] == detail
        return detail

    assert acceptance("216") == {"submitters": 0, "accepted": 0, "rate": None}
    for solved in [True] + [False] * (MIN_SUBMITTERS - 2):
        learner(client, {"216": solved})
    assert acceptance("216") == {"submitters": MIN_SUBMITTERS - 1, "accepted": 1, "rate": None}
    learner(client, {"216": True})
    assert acceptance("216") == {"submitters": MIN_SUBMITTERS, "accepted": 2, "rate": 2 / MIN_SUBMITTERS}


def test_the_list_page_is_the_course_map_in_the_reader_s_language(client: TestClient) -> None:
    page = client.get("/problems").text
    chapters = re.findall(r'<tbody data-chapter="(\d+)" data-testid="chapter">', page)
    assert [int(n) for n in chapters] == COURSE_CHAPTERS
    assert "注意力" in page and ">Attention<" not in page
    english = TestClient(client.app)
    english.cookies.set("judge_lang", "en")
    page_en = english.get("/problems").text
    heading = re.search(r'id="chapter-6">(.*?)</th>', page_en, re.S)
    assert heading and "Attention" in heading.group(1) and "注意力" not in page_en.split("<main")[1]
    assert "Acceptance" in page_en
    # The chapter filter sends the number; the one-string chapter of older links still works.
    assert '<option value="6">06 · Attention</option>' in page_en
    for key in ("6", "06 注意力"):
        only = english.get("/problems", params={"chapter": key}).text
        assert re.findall(r'data-chapter="(\d+)"', only) == ["6"]
        assert 'data-problem="208"' in only and 'data-problem="204"' not in only


def test_progress_shows_on_the_map_for_a_logged_in_learner(client: TestClient) -> None:
    token = learner(client, {"211": True, "212": False})
    reader = TestClient(client.app)
    reader.headers["Authorization"] = f"Bearer {token}"
    page = reader.get("/problems").text
    found = re.search(r'id="chapter-7">.*?data-testid="chapter-progress">(.*?)</span>', page, re.S)
    assert found and "1 / 3" in found.group(1)
    assert 'data-testid="chapter-progress"' not in client.get("/problems").text, "a visitor has no progress"


def test_a_problem_page_links_its_chapter_prerequisites_and_once_solved_the_next(client: TestClient) -> None:
    page = client.get("/problems/209").text
    links = re.search(r'<nav class="course-links".*?</nav>', page, re.S)
    assert links, "no course links on the page"
    nav = links.group(0)
    assert 'href="/problems#chapter-6"' in nav and "注意力" in nav
    assert re.findall(r'data-prerequisite="(\d+)"', nav) == ["204", "205", "208"]
    assert "data-state" not in nav, "a visitor has no state"
    assert 'data-testid="next-quiet"' not in nav, "the quiet next link is for who solved it"
    data = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', page, re.S)
    assert data and '"next"' in data.group(1) and '"210"' in data.group(1)


def test_a_sync_renames_chapters_without_a_new_version(tmp_path: Path) -> None:
    """course.toml is not part of any package: renaming a chapter changes no content hash, and
    the next sync still shows the new name."""
    problems = tmp_path / "problems"
    pkg = make_package(problems)
    (pkg / "problem.toml").write_text((pkg / "problem.toml").read_text().replace('"tests"', '"01"'))
    course = problems / "course.toml"
    course.write_text('[[chapter]]\nnumber = 1\nzh = "加倍"\nen = "Doubling"\n')
    with make_client(make_settings(tmp_path, problems_dir=problems, workers=0)) as c:
        assert get(c, "/api/problems/901")["course_chapter"]["title"]["en"] == "Doubling"
        course.write_text('[[chapter]]\nnumber = 1\nzh = "乘二"\nen = "Times two"\n')
        assert platform_of(c).reload_problems() == [], "no package changed"
        summary = get(c, "/api/problems/901")
        assert summary["chapter"] == "01 乘二" and summary["course_chapter"]["title"]["en"] == "Times two"
    shutil.rmtree(problems)
