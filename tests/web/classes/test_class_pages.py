"""The class pages as the server renders them, on SQLite and PostgreSQL: the instructor's page
(code, members, everyone's progress with late work marked), a member's (their own row only, no
code, no other member), /classes (what is due), and the header's link."""

from __future__ import annotations

import re
from datetime import timedelta

from fastapi.testclient import TestClient

from tests.web.classes.test_classes_api import judged
from tests.web.factories import (
    PASSWORD,
    make_assignment,
    make_class,
    make_instructor,
    register,
)
from web.db import utcnow


def browser_of(client: TestClient, name: str, lang: str = "en") -> TestClient:
    """A browser of its own, logged in as `name`, reading pages in `lang`."""
    browser = TestClient(client.app, cookies={"judge_lang": lang})
    res = browser.post("/api/auth/login", json={"username": name, "password": PASSWORD})
    assert res.status_code == 200, res.text
    return browser


def test_the_instructor_sees_everyone_and_a_member_only_themself(client: TestClient) -> None:
    teacher, _ = make_instructor(client)
    ana, _ = register(client)
    bo, _ = register(client)
    class_id = make_class(client, teacher, [ana, bo], name="Night class")
    now = utcnow()
    make_assignment(
        client,
        class_id,
        ["204"],
        title="Norms",
        opens_at=now - timedelta(days=2),
        due_at=now - timedelta(days=1),
    )
    judged(client, ana, "204", 100, now - timedelta(days=1, hours=1))  # in time
    judged(client, bo, "204", 30, now - timedelta(days=1, hours=2))
    judged(client, bo, "204", 100, now - timedelta(hours=1))  # late

    page = browser_of(client, teacher).get(f"/classes/{class_id}")
    assert page.status_code == 200, page.text
    html = page.text
    assert 'data-testid="join-code"' in html and "Night class" in html
    assert ana in html and bo in html
    rows = dict(re.findall(r'<tr data-user="(\d+)">(.*?)</tr>', html, re.S))
    assert len(rows) == 2
    bo_row = next(r for r in rows.values() if bo in r)
    ana_row = next(r for r in rows.values() if ana in r)
    assert 'data-testid="late"' in bo_row and "30 / 100" in bo_row and "attempts: 2" in bo_row
    assert 'data-testid="late"' not in ana_row and "100 / 100" in ana_row
    assert f'href="/classes/{class_id}/members/' in html  # a learner's name leads to their work
    assert f"/classes/{class_id}/assignments/" in html and "/gradebook" in html

    member = browser_of(client, ana).get(f"/classes/{class_id}")
    assert member.status_code == 200
    assert ana in member.text and bo not in member.text
    assert 'data-testid="join-code"' not in member.text and "assignment-form" not in member.text
    assert 'data-testid="leave-class"' in member.text


def test_my_classes_page_lists_what_is_due_in_the_readers_language(client: TestClient) -> None:
    teacher, _ = make_instructor(client)
    learner, _ = register(client)
    class_id = make_class(client, teacher, [learner], name="Morning class")
    now = utcnow()
    make_assignment(client, class_id, ["204"], title="Soon", due_at=now + timedelta(hours=3))
    make_assignment(
        client,
        class_id,
        ["204"],
        title="Unopened",
        opens_at=now + timedelta(days=1),
        due_at=now + timedelta(days=2),
    )
    english = browser_of(client, learner, "en").get("/classes")
    assert english.status_code == 200
    assert "Soon" in english.text and "Unopened" not in english.text
    assert 'href="/classes"' in english.text and ">Classes<" in english.text  # the header's link
    assert 'id="create-class"' not in english.text  # a learner makes no class
    chinese = browser_of(client, learner, "zh").get("/classes")
    assert "班级" in chinese.text and "用班级码加入班级" in chinese.text
    teacher_page = browser_of(client, teacher, "en").get("/classes")
    assert 'id="create-class"' in teacher_page.text and "Morning class" in teacher_page.text
    assert TestClient(client.app).get("/classes", follow_redirects=False).status_code == 303
