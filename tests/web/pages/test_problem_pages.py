"""The problem list, a problem's page, submissions and admin pages, as HTML from a real app."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.authoring.starters import in_language
from tests.web.factories import (
    bearer,
    make_client,
    make_settings,
    read_204,
    register,
    submit,
    wait_done,
)
from tests.web.test_access_control import make_admin
from web.pages.templating import CONTENT_SECURITY_POLICY


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with make_client(make_settings(tmp_path_factory.mktemp("pages"), workers=1)) as client:
        yield client


def english(client: TestClient) -> TestClient:
    """Another browser on the same app, whose visitor chose English."""
    other = TestClient(client.app)
    other.cookies.set("judge_lang", "en")
    return other


def page_data(html: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    assert found
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def row_of(html: str, problem_id: str) -> str:
    found = re.search(rf'<tr data-problem="{problem_id}">(.*?)</tr>', html, re.S)
    assert found, f"no row for {problem_id}"
    return found.group(1)


def test_list_and_statement_are_public(app_client: TestClient) -> None:
    page = app_client.get("/problems")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert page.headers["cache-control"] == "no-store"
    assert "零中心的 RMSNorm 与带门的 RMSNorm" in row_of(page.text, "204")
    problem = app_client.get("/problems/204")
    assert problem.status_code == 200
    # Math is left as text for KaTeX; code blocks are highlighted on the server.
    assert '<span class="math inline">' in problem.text or '<div class="math block">' in problem.text
    data = page_data(problem.text)
    assert data["loggedIn"] is False
    # The starter in the reader's language (issue 31): the same code, one language of comments.
    assert data["problem"]["starter"] == in_language(read_204("starter.py"), "zh")
    english_data = page_data(english(app_client).get("/problems/204").text)
    assert english_data["problem"]["starter"] == in_language(read_204("starter.py"), "en")
    assert not re.search(r"[\u4e00-\u9fff]", english_data["problem"]["starter"])
    assert "running and submitting need an account" in english(app_client).get("/problems/204").text


def test_code_blocks_are_highlighted_and_raw_html_is_escaped() -> None:
    from web.statements import Statements

    html = Statements().for_page(
        "# T\n\n```python\ndef f(x):\n    return x\n```\n\n<script>alert(1)</script> [x](javascript:alert(1))"
    )
    assert '<pre class="highlight"><code class="language-python">' in html
    assert '<span class="k">def</span>' in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="javascript:' not in html


def test_english_statement_and_titles(app_client: TestClient) -> None:
    page = english(app_client).get("/problems/204")
    assert "Zero-centred RMSNorm and gated RMSNorm" in page.text
    assert '<html lang="en">' in page.text


def test_status_goes_new_attempted_solved(app_client: TestClient) -> None:
    _name, token = register(app_client)
    headers = bearer(token)

    def status(problem_id: str) -> str:
        listed = {p["id"]: p for p in app_client.get("/api/problems", headers=headers).json()}
        return str(listed[problem_id]["status"])

    assert status("204") == "new"
    wrong = submit(app_client, token, read_204("solutions/wrong/eps_outside_sqrt.py"), mode="run")
    wait_done(app_client, token, wrong)
    assert status("204") == "attempted"
    right = submit(app_client, token, read_204("solutions/accepted/div_sqrt_sum.py"))
    assert wait_done(app_client, token, right)["score"] == 100
    assert status("204") == "solved"
    # ...and the page says so, with filters that keep only what was asked for.
    session = TestClient(app_client.app)
    session.headers.update(headers)
    solved = session.get("/problems", params={"status": "solved"}).text
    assert 'data-problem="204"' in solved and 'data-problem="205"' not in solved
    fresh = session.get("/problems", params={"status": "new"}).text
    assert 'data-problem="204"' not in fresh and 'data-problem="205"' in fresh
    assert "100 / 100" in row_of(session.get("/problems").text, "204")
    chapter = session.get("/problems", params={"chapter": "03 RMSNorm"}).text
    assert 'data-problem="204"' in chapter and 'data-problem="205"' not in chapter


def test_submission_page_escapes_the_code(app_client: TestClient) -> None:
    _name, token = register(app_client)
    code = "# </script><script>alert('x')</script> & <b>\n" + read_204("solutions/accepted/div_sqrt_sum.py")
    sub_id = submit(app_client, token, code, mode="run")
    wait_done(app_client, token, sub_id)
    page = app_client.get(f"/submissions/{sub_id}", headers=bearer(token))
    assert page.status_code == 200
    assert "<script>alert" not in page.text
    assert page_data(page.text)["submission"]["code"] == code
    listed = app_client.get("/submissions", headers=bearer(token))
    assert f'href="/submissions/{sub_id}"' in listed.text


def test_errors_on_pages_are_pages_and_on_the_api_json(app_client: TestClient) -> None:
    page = app_client.get("/problems/999")
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "题目 999 不存在" in page.text
    api = app_client.get("/api/problems/999")
    assert api.status_code == 404 and api.json()["error"]["code"] == "not_found"
    assert app_client.get("/no/such/page").headers["content-type"].startswith("text/html")
    too_long = app_client.get("/problems", params={"chapter": "x" * 100})
    assert too_long.status_code == 422 and too_long.headers["content-type"].startswith("text/html")


def test_drafts_follow_the_learner_and_stay_private(app_client: TestClient) -> None:
    _a, a_token = register(app_client)
    _b, b_token = register(app_client)
    url = "/api/problems/204/draft"
    assert app_client.get(url, headers=bearer(a_token)).json()["code"] is None
    saved = app_client.put(url, json={"code": "x = 1\n"}, headers=bearer(a_token))
    assert saved.status_code == 200 and saved.json()["updated_at"]
    app_client.put(url, json={"code": "x = 2\n"}, headers=bearer(a_token))
    assert app_client.get(url, headers=bearer(a_token)).json()["code"] == "x = 2\n"
    assert app_client.get(url, headers=bearer(b_token)).json()["code"] is None
    too_big = app_client.put(url, json={"code": "#" * (64 * 1024 + 1)}, headers=bearer(a_token))
    assert too_big.status_code == 413 and too_big.json()["error"]["code"] == "code_too_large"
    assert app_client.get(url, headers=bearer(a_token)).json()["code"] == "x = 2\n"  # nothing lost
    unknown = app_client.put("/api/problems/999/draft", json={"code": "x"}, headers=bearer(a_token))
    assert unknown.status_code == 404
    assert app_client.delete(url, headers=bearer(a_token)).status_code == 204
    assert app_client.get(url, headers=bearer(a_token)).json()["code"] is None
    assert app_client.delete(url, headers=bearer(a_token)).status_code == 204  # idempotent


def test_language_through_the_api(app_client: TestClient) -> None:
    _name, token = register(app_client)
    res = app_client.patch("/api/me", json={"language": "en"}, headers=bearer(token))
    assert res.status_code == 200 and res.json()["language"] == "en"
    assert app_client.patch("/api/me", json={"language": "fr"}, headers=bearer(token)).status_code == 422


@pytest.mark.slow
def test_admin_validates_a_package_from_the_web(app_client: TestClient) -> None:
    admin_name, admin_token = register(app_client)
    make_admin(app_client.app.state.platform.factory, admin_name)  # type: ignore[attr-defined]
    _learner, learner_token = register(app_client)
    headers = bearer(admin_token)
    assert app_client.get("/admin", headers=bearer(learner_token)).status_code == 403
    started = app_client.post("/api/admin/problems/204/validate", headers=headers)
    assert started.status_code == 202, started.text
    record = started.json()
    again = app_client.post("/api/admin/problems/204/validate", headers=headers)
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_running"
    for _ in range(600):
        record = app_client.get(f"/api/admin/validations/{record['id']}", headers=headers).json()
        if record["status"] != "running":
            break
        time.sleep(0.2)
    assert record["status"] == "sound", record
    assert record["failed"] == [] and len(record["checks"]) > 5
    listed = {p["id"]: p for p in app_client.get("/api/admin/problems", headers=headers).json()}
    assert listed["204"]["validation"]["id"] == record["id"]
    assert listed["205"]["validation"] is None
    page = app_client.get("/admin", headers=headers)
    assert page.status_code == 200
    assert 'data-status="sound"' in page.text and 'data-status="never"' in page.text
    assert admin_name in page.text


def test_validation_needs_a_judge(tmp_path_factory: pytest.TempPathFactory) -> None:
    with make_client(make_settings(tmp_path_factory.mktemp("nojudge"), workers=0)) as client:
        admin_name, admin_token = register(client)
        make_admin(client.app.state.platform.factory, admin_name)  # type: ignore[attr-defined]
        res = client.post("/api/admin/problems/204/validate", headers=bearer(admin_token))
        assert res.status_code == 409 and res.json()["error"]["code"] == "no_judge"
        assert client.post("/api/admin/problems/999/validate", headers=bearer(admin_token)).status_code == 404


def test_every_problem_page_renders_in_both_languages(app_client: TestClient) -> None:
    ids = [p["id"] for p in app_client.get("/api/problems").json()]
    assert len(ids) >= 13
    for client in (app_client, english(app_client)):
        for problem_id in ids:
            page = client.get(f"/problems/{problem_id}")
            assert page.status_code == 200, problem_id
            assert page_data(page.text)["problem"]["id"] == problem_id
