"""Parts on the pages: a problem's "your parts" panel, the list's progress toward the model, and
the parts a judgement used in the submission API, from a real app on real SQLite (and
PostgreSQL when JUDGE_TEST_POSTGRES_URL is set), judged by its own worker.

Three tiny packages side by side in a one-chapter course: 901 (module course.double), 902
(imports 901) and the capstone course.toml names, 217 like the shipped course's model (imports
902, and so 901 too)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.factories import make_package
from tests.judge.authoring.test_course import COURSE, join_chapter_one, write_course
from tests.judge.core.test_parts import USES_PART, course
from tests.web.factories import bearer, make_client, make_settings, register, submit, wait_done

MODEL_PROBLEM = "217"

DOUBLE = "def f(x):\n    return x + x\n"
PLUS_ONE = "def f(x):\n    return 2 * x + 1\n"
MODEL = "from course.plus_one import f as plus_one\n\n\ndef f(x):\n    return plus_one(x)\n"


@pytest.fixture(params=["sqlite", "postgresql"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestClient]:
    problems = tmp_path / "problems"
    course(problems)
    make_package(
        problems,
        problem_id=MODEL_PROBLEM,
        slug="model",
        reference=MODEL,
        extra_toml='module = "course.model"\nparts = ["902"]',
    )
    for package in problems.iterdir():
        join_chapter_one(package)
    write_course(problems, f'capstone = "{MODEL_PROBLEM}"\n{COURSE}')
    url = None if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    # The fork server where Docker answers (always under CI): tens of ms a judgement, not a process.
    settings = make_settings(tmp_path, database_url=url, problems_dir=problems, backend="auto")
    with make_client(settings) as client:
        yield client


def panel(html: str) -> str:
    found = re.search(r'<details class="parts-panel".*?</details>', html, re.S)
    assert found, "no parts panel"
    return found.group(0)


def part_item(html: str, problem_id: str) -> str:
    found = re.search(rf'<li data-part="{problem_id}"[^>]*>.*?</li>', panel(html), re.S)
    assert found, f"no part {problem_id} in the panel"
    return found.group(0)


def is_open(html: str) -> bool:
    return bool(re.match(r"<details [^>]*\bopen\b", panel(html)))


def solve(client: TestClient, token: str, problem_id: str, code: str) -> dict:
    done = wait_done(client, token, submit(client, token, code, problem_id))
    assert done["verdict"] == "AC", done
    return done


def test_a_visitor_sees_the_parts_without_status(client: TestClient) -> None:
    html = client.get("/problems/902").text
    item = part_item(html, "901")
    assert "course/double.py" in item and 'href="/problems/901"' in item and "加倍" in item
    assert "data-state" not in item and 'data-testid="parts-count"' not in html
    assert "你的零件" in panel(html) and "登录后" in panel(html) and is_open(html)
    # A problem without parts has no panel; the capstone's is "your model", parts closed over.
    assert "parts-panel" not in client.get("/problems/901").text
    model = client.get(f"/problems/{MODEL_PROBLEM}").text
    assert "你的模型" in panel(model)
    assert re.findall(r'<li data-part="(\d+)"', panel(model)) == ["901", "902"]
    # Nothing to count for a visitor on the list.
    assert 'data-testid="model-progress"' not in client.get("/problems").text


def test_a_learners_panel_and_progress_follow_their_accepted_parts(client: TestClient) -> None:
    _, token = register(client)
    me = bearer(token)
    item = part_item(client.get("/problems/902", headers=me).text, "901")
    assert 'data-state="missing"' in item and "缺少" in item and "尚未通过" in item
    assert is_open(client.get("/problems/902", headers=me).text)
    listed = client.get("/problems", headers=me).text
    progress = re.search(r'href="/problems/217" data-testid="model-progress">(.*?)<', listed)
    assert progress and progress.group(1) == "你的模型：已完成 0 / 2 个零件"

    # A Run that passes is not a solved part; an accepted Submit is.
    run = wait_done(client, token, submit(client, token, DOUBLE, "901", mode="run"))
    assert run["verdict"] == "AC"
    assert 'data-state="missing"' in part_item(client.get("/problems/902", headers=me).text, "901")
    solve(client, token, "901", DOUBLE)
    page = client.get("/problems/902", headers=me).text
    item = part_item(page, "901")
    assert 'data-state="solved"' in item and "你的" in item and "缺少" not in item
    assert "已完成 1 / 1 个零件" in panel(page)
    assert not is_open(page)  # every part is theirs: the count says it all
    model = client.get(f"/problems/{MODEL_PROBLEM}", headers=me).text
    assert 'data-state="solved"' in part_item(model, "901")
    assert 'data-state="missing"' in part_item(model, "902")
    assert is_open(model)
    assert "已完成 1 / 2 个零件" in client.get("/problems", headers=me).text

    # In English, English only.
    assert client.patch("/api/me", json={"language": "en"}, headers=me).status_code == 200
    listed_en = client.get("/problems", headers=me).text
    assert "Your model: 1 of 2 parts" in listed_en and "你的模型" not in listed_en
    model_en = panel(client.get(f"/problems/{MODEL_PROBLEM}", headers=me).text)
    assert "Your model" in model_en and "1 of 2 parts solved" in model_en and "Double" in model_en
    assert not re.search("[\u4e00-\u9fff]", model_en), model_en

    # Someone else's parts are not theirs.
    _, other = register(client)
    assert "已完成 0 / 2 个零件" in client.get("/problems", headers=bearer(other)).text


def part(origin: str, used: bool) -> dict[str, object]:
    """Part 901 as the submission API reports it."""
    return {"problem": "901", "module": "course.double", "origin": origin, "used": used}


def test_the_submission_says_which_parts_it_used_and_whose(client: TestClient) -> None:
    _, token = register(client)
    missing = wait_done(client, token, submit(client, token, USES_PART, "902"))
    assert missing["verdict"] == "CE"
    assert missing["parts"] == [part("missing", used=False)]
    solve(client, token, "901", DOUBLE)
    # Writing it all itself uses no part.
    inline = solve(client, token, "902", PLUS_ONE)
    assert inline["parts"] == [part("learner", used=False)]
    mine = solve(client, token, "902", USES_PART)
    assert mine["parts"] == [part("learner", used=True)]
    # The capstone lists every part it could import: 902 (the latest accepted, which imports
    # 901) and 901.
    model = solve(client, token, MODEL_PROBLEM, MODEL)
    assert [(p["problem"], p["origin"], p["used"]) for p in model["parts"]] == [
        ("901", "learner", True),
        ("902", "learner", True),
    ]
    # The submission's page hands the script the same parts.
    page = client.get(f"/submissions/{model['id']}", headers=bearer(token)).text
    assert '"module": "course.plus_one"' in page or '"module":"course.plus_one"' in page
