"""Classes through the API, on SQLite and PostgreSQL: the instructor role, a class and its join
code, members by name and CSV (all or none), assignments and extensions, what a learner has due,
and an instructor reading their members' submissions (read-only) and nobody else's."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from tests.web.factories import (
    PASSWORD,
    bearer,
    error_of,
    make_admin,
    make_assignment,
    make_class,
    make_instructor,
    platform_of,
    register,
)
from tests.web.test_words import one_language
from web.auth.models import User
from web.classes.models import Extension, Group, Membership
from web.classes.service import CODE_ALPHABET, CODE_LENGTH, NamesBody, names_of
from web.db import utcnow
from web.errors import ApiError
from web.submissions.models import Mode, Submission, SubmissionStatus


def user_id(client: TestClient, name: str) -> int:
    with platform_of(client).factory() as db:
        found = db.scalar(select(User.id).where(User.username == name))
        assert found is not None
        return found


def judged(
    client: TestClient, name: str, problem: str, score: int, at: datetime, max_score: int = 100
) -> int:
    """A judged Submit made at `at`, written directly (no worker runs in these tests)."""
    with platform_of(client).factory() as db, db.begin():
        sub = Submission(
            user_id=user_id(client, name),
            problem_id=problem,
            mode=Mode.SUBMIT,
            code=f"# {name}'s code\n",
            status=SubmissionStatus.DONE,
            created_at=at,
            finished_at=at,
            verdict="AC" if score == max_score else "WA",
            score=score,
            max_score=max_score,
        )
        db.add(sub)
        db.flush()
        return sub.id


def members_of(client: TestClient, class_id: int) -> int:
    with platform_of(client).factory() as db:
        return (
            db.scalar(select(func.count()).select_from(Membership).where(Membership.class_id == class_id))
            or 0
        )


def iso(moment: datetime) -> str:
    return moment.isoformat()


def assignment_body(**overrides: Any) -> dict[str, Any]:
    now = utcnow()
    body = {
        "title": "Week 1",
        "problems": ["204", "201"],
        "opens_at": iso(now - timedelta(hours=1)),
        "due_at": iso(now + timedelta(days=2)),
        "late_counts": False,
    }
    body.update(overrides)
    return body


# ------------------------------------------------------------------ the role


def test_an_admin_makes_an_instructor_who_then_makes_a_class(client: TestClient) -> None:
    admin_name, admin = make_admin(client)
    name, token = register(client)
    refused = client.post("/api/classes", json={"name": "Mine"}, headers=bearer(token))
    error_of(refused, 403, "instructor_only")
    # A learner cannot give the role, and an admin cannot change their own.
    learner_try = client.post(
        f"/api/admin/users/{user_id(client, name)}/role", json={"role": "instructor"}, headers=bearer(token)
    )
    error_of(learner_try, 403, "admin_only")
    own = client.post(
        f"/api/admin/users/{user_id(client, admin_name)}/role",
        json={"role": "learner"},
        headers=bearer(admin),
    )
    error_of(own, 409, "cannot_change_own_role")
    bad = client.post(
        f"/api/admin/users/{user_id(client, name)}/role", json={"role": "admin"}, headers=bearer(admin)
    )
    error_of(bad, 422, "invalid_request")
    res = client.post(
        f"/api/admin/users/{user_id(client, name)}/role", json={"role": "instructor"}, headers=bearer(admin)
    )
    assert res.status_code == 200 and res.json()["role"] == "instructor", res.text
    made = client.post("/api/classes", json={"name": "线性代数 1 班"}, headers=bearer(token))
    assert made.status_code == 201, made.text
    code = made.json()["join_code"]
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    # Back to learner: no new class.
    client.post(
        f"/api/admin/users/{user_id(client, name)}/role", json={"role": "learner"}, headers=bearer(admin)
    )
    error_of(client.post("/api/classes", json={"name": "x"}, headers=bearer(token)), 403, "instructor_only")


# ------------------------------------------------------------------ joining


def test_joining_with_the_code_closing_and_a_new_code(client: TestClient) -> None:
    teacher, t_token = make_instructor(client)
    made = client.post("/api/classes", json={"name": "Course"}, headers=bearer(t_token)).json()
    class_id, code = made["id"], made["join_code"]
    learner, l_token = register(client)
    typed = f"{code[:4].lower()}-{code[4:].lower()} "  # as read aloud: case, dashes, spaces
    joined = client.post("/api/classes/join", json={"code": typed}, headers=bearer(l_token))
    assert joined.status_code == 200 and joined.json()["id"] == class_id, joined.text
    assert joined.json()["join_code"] is None  # the code is the instructor's to hand out
    again = client.post("/api/classes/join", json={"code": code}, headers=bearer(l_token))
    assert again.status_code == 200 and members_of(client, class_id) == 1
    error_of(client.post("/api/classes/join", json={"code": code}, headers=bearer(t_token)), 409, "own_class")
    # The member sees the class, but not its members or code.
    view = client.get(f"/api/classes/{class_id}", headers=bearer(l_token))
    assert (
        view.status_code == 200 and view.json()["members"] == [] and view.json()["group"]["join_code"] is None
    )
    # Closed: nobody new joins.
    closed = client.patch(f"/api/classes/{class_id}", json={"joining_open": False}, headers=bearer(t_token))
    assert closed.status_code == 200 and closed.json()["joining_open"] is False
    _late, late_token = register(client)
    error_of(
        client.post("/api/classes/join", json={"code": code}, headers=bearer(late_token)),
        409,
        "joining_closed",
    )
    client.patch(f"/api/classes/{class_id}", json={"joining_open": True}, headers=bearer(t_token))
    # A new code: the old one stops working.
    renewed = client.post(f"/api/classes/{class_id}/code", headers=bearer(t_token)).json()["join_code"]
    assert renewed != code
    error_of(
        client.post("/api/classes/join", json={"code": code}, headers=bearer(late_token)), 404, "no_such_code"
    )
    assert (
        client.post("/api/classes/join", json={"code": renewed}, headers=bearer(late_token)).status_code
        == 200
    )
    # Leaving.
    assert client.post(f"/api/classes/{class_id}/leave", headers=bearer(l_token)).status_code == 204
    error_of(client.get(f"/api/classes/{class_id}", headers=bearer(l_token)), 404, "not_found")
    error_of(client.post(f"/api/classes/{class_id}/leave", headers=bearer(l_token)), 404, "not_found")
    assert learner and teacher


def test_another_instructor_and_a_stranger_get_404(client: TestClient) -> None:
    teacher, _ = make_instructor(client)
    _other, other_token = make_instructor(client)
    _stranger, stranger_token = register(client)
    class_id = make_class(client, teacher)
    missing = class_id + 1000
    for token in (other_token, stranger_token):
        theirs = error_of(client.get(f"/api/classes/{class_id}", headers=bearer(token)), 404, "not_found")
        nothing = error_of(client.get(f"/api/classes/{missing}", headers=bearer(token)), 404, "not_found")
        assert theirs.replace(str(class_id), "N") == nothing.replace(str(missing), "N")
        error_of(client.post(f"/api/classes/{class_id}/code", headers=bearer(token)), 404, "not_found")
        body = {"names": ["x"]}
        error_of(
            client.post(f"/api/classes/{class_id}/members", json=body, headers=bearer(token)),
            404,
            "not_found",
        )
        error_of(
            client.post(
                f"/api/classes/{class_id}/assignments", json=assignment_body(), headers=bearer(token)
            ),
            404,
            "not_found",
        )


# ------------------------------------------------------------------ members by name and CSV


def test_adding_by_names_and_csv_is_all_or_nothing(client: TestClient) -> None:
    teacher, t_token = make_instructor(client)
    class_id = make_class(client, teacher)
    names = sorted(register(client)[0] for _ in range(3))
    bad = {"names": [names[0], "nobody_here", " ghost_2 "]}
    message = error_of(
        client.post(f"/api/classes/{class_id}/members", json=bad, headers=bearer(t_token)),
        422,
        "unknown_names",
    )
    assert "nobody_here" in message and "ghost_2" in message and names[0] not in message
    assert members_of(client, class_id) == 0  # nothing half-done
    english = client.post(
        f"/api/classes/{class_id}/members", json=bad, headers={**bearer(t_token), "Accept-Language": "en"}
    )
    assert "Nobody was added" in error_of(english, 422, "unknown_names")
    # A CSV with a header and a second column, a BOM, a blank line and a name in another case.
    csv_text = "\ufeff用户名,姓名\n" + f"{names[1]},张三\n\n{names[2].upper()},李四\n"
    res = client.post(
        f"/api/classes/{class_id}/members",
        json={"names": [names[0]], "csv": csv_text},
        headers=bearer(t_token),
    )
    assert res.status_code == 200, res.text
    assert res.json() == {"added": names, "already": []}
    again = client.post(f"/api/classes/{class_id}/members", json={"csv": names[0]}, headers=bearer(t_token))
    assert again.json() == {"added": [], "already": [names[0]]}  # a CSV without a header
    assert members_of(client, class_id) == 3
    error_of(
        client.post(f"/api/classes/{class_id}/members", json={"csv": "username\n"}, headers=bearer(t_token)),
        422,
        "no_names",
    )
    error_of(
        client.post(f"/api/classes/{class_id}/members", json={"names": [teacher]}, headers=bearer(t_token)),
        422,
        "own_class",
    )
    # Removing one.
    gone = user_id(client, names[1])
    assert (
        client.delete(f"/api/classes/{class_id}/members/{gone}", headers=bearer(t_token)).status_code == 204
    )
    assert members_of(client, class_id) == 2
    error_of(
        client.delete(f"/api/classes/{class_id}/members/{gone}", headers=bearer(t_token)), 404, "not_found"
    )


# ------------------------------------------------------------------ assignments


def test_assignment_times_need_an_offset_and_an_order(client: TestClient) -> None:
    teacher, t_token = make_instructor(client)
    class_id = make_class(client, teacher)
    url = f"/api/classes/{class_id}/assignments"
    naive = assignment_body(due_at="2030-01-01T10:00:00")
    error_of(client.post(url, json=naive, headers=bearer(t_token)), 422, "invalid_request")
    now = utcnow()
    backwards = assignment_body(opens_at=iso(now + timedelta(days=1)), due_at=iso(now))
    error_of(client.post(url, json=backwards, headers=bearer(t_token)), 422, "due_before_open")
    unknown = error_of(
        client.post(url, json=assignment_body(problems=["204", "999"]), headers=bearer(t_token)),
        422,
        "unknown_problems",
    )
    assert "999" in unknown
    # An offset is kept as the instant it names: 18:00 in Shanghai is 10:00 UTC.
    body = assignment_body(
        opens_at="2030-01-01T08:00:00+08:00",
        due_at="2030-01-01T18:00:00+08:00",
        problems=["204", "201", "204"],
    )
    made = client.post(url, json=body, headers=bearer(t_token))
    assert made.status_code == 201, made.text
    shown = made.json()
    assert shown["problems"] == ["204", "201"]
    assert datetime.fromisoformat(shown["due_at"]) == datetime.fromisoformat("2030-01-01T10:00:00+00:00")
    edited = client.put(
        f"{url}/{shown['id']}",
        json={**body, "title": "Week 2", "problems": ["201"], "late_counts": True},
        headers=bearer(t_token),
    )
    assert (
        edited.status_code == 200
        and edited.json()["title"] == "Week 2"
        and edited.json()["problems"] == ["201"]
    )
    assert edited.json()["late_counts"] is True
    assert client.delete(f"{url}/{shown['id']}", headers=bearer(t_token)).status_code == 204
    error_of(client.put(f"{url}/{shown['id']}", json=body, headers=bearer(t_token)), 404, "not_found")


def test_learners_see_an_assignment_from_its_opening(client: TestClient) -> None:
    teacher, t_token = make_instructor(client)
    learner, l_token = register(client)
    class_id = make_class(client, teacher, [learner])
    now = utcnow()
    make_assignment(client, class_id, title="Open", opens_at=now - timedelta(hours=1))
    make_assignment(
        client, class_id, title="Later", opens_at=now + timedelta(days=1), due_at=now + timedelta(days=3)
    )
    seen = [
        a["title"]
        for a in client.get(f"/api/classes/{class_id}", headers=bearer(l_token)).json()["assignments"]
    ]
    assert seen == ["Open"]
    taught = [
        a["title"]
        for a in client.get(f"/api/classes/{class_id}", headers=bearer(t_token)).json()["assignments"]
    ]
    assert sorted(taught) == ["Later", "Open"]
    due = client.get("/api/classes", headers=bearer(l_token)).json()["due"]
    assert [d["title"] for d in due] == ["Open"]


def test_extensions_are_later_and_for_members_only(client: TestClient) -> None:
    teacher, t_token = make_instructor(client)
    learner, l_token = register(client)
    outsider, _ = register(client)
    class_id = make_class(client, teacher, [learner])
    now = utcnow()
    due = now + timedelta(hours=1)
    aid = make_assignment(client, class_id, due_at=due)
    url = f"/api/classes/{class_id}/assignments/{aid}/extensions"
    earlier = {"due_at": iso(due - timedelta(minutes=5))}
    error_of(
        client.put(f"{url}/{user_id(client, learner)}", json=earlier, headers=bearer(t_token)),
        422,
        "extension_not_later",
    )
    later = {"due_at": iso(due + timedelta(days=1))}
    error_of(
        client.put(f"{url}/{user_id(client, outsider)}", json=later, headers=bearer(t_token)),
        404,
        "not_found",
    )
    error_of(
        client.put(f"{url}/{user_id(client, learner)}", json=later, headers=bearer(l_token)), 404, "not_found"
    )
    res = client.put(f"{url}/{user_id(client, learner)}", json=later, headers=bearer(t_token))
    assert res.status_code == 200 and [e["username"] for e in res.json()["extensions"]] == [learner]
    mine = client.get("/api/classes", headers=bearer(l_token)).json()["due"][0]
    assert mine["extended"] is True
    assert datetime.fromisoformat(mine["due_at"]) == datetime.fromisoformat(later["due_at"])
    # The learner's view of the class carries no extensions list (the instructor's only).
    assert (
        client.get(f"/api/classes/{class_id}", headers=bearer(l_token)).json()["assignments"][0]["extensions"]
        == []
    )
    assert client.delete(f"{url}/{user_id(client, learner)}", headers=bearer(t_token)).status_code == 204
    error_of(client.delete(f"{url}/{user_id(client, learner)}", headers=bearer(t_token)), 404, "not_found")
    # Moving the due time past an extension drops it: it would now shorten the learner's time.
    client.put(f"{url}/{user_id(client, learner)}", json=later, headers=bearer(t_token))
    moved = assignment_body(
        problems=["204"], opens_at=iso(now - timedelta(hours=1)), due_at=iso(due + timedelta(days=2))
    )
    edited = client.put(f"/api/classes/{class_id}/assignments/{aid}", json=moved, headers=bearer(t_token))
    assert edited.status_code == 200 and edited.json()["extensions"] == [], edited.text
    # Removing a member removes their extensions with them.
    client.put(
        f"{url}/{user_id(client, learner)}",
        json={"due_at": iso(due + timedelta(days=3))},
        headers=bearer(t_token),
    )
    with platform_of(client).factory() as db:
        assert db.scalar(select(func.count()).select_from(Extension)) == 1
    client.delete(f"/api/classes/{class_id}/members/{user_id(client, learner)}", headers=bearer(t_token))
    with platform_of(client).factory() as db:
        assert db.scalar(select(func.count()).select_from(Extension)) == 0


def test_what_is_due_next_first_with_late_and_solved_state(client: TestClient) -> None:
    teacher, _ = make_instructor(client)
    learner, l_token = register(client)
    class_id = make_class(client, teacher, [learner], name="Evening class")
    now = utcnow()
    past = make_assignment(
        client,
        class_id,
        ["204", "201"],
        title="Past",
        opens_at=now - timedelta(days=3),
        due_at=now - timedelta(days=1),
    )
    make_assignment(
        client,
        class_id,
        ["201"],
        title="Far",
        opens_at=now - timedelta(hours=1),
        due_at=now + timedelta(days=5),
    )
    make_assignment(
        client,
        class_id,
        ["204"],
        title="Soon",
        opens_at=now - timedelta(hours=1),
        due_at=now + timedelta(hours=2),
    )
    judged(client, learner, "204", 100, now - timedelta(days=2))  # in time for Past, and counts for Soon
    judged(client, learner, "201", 40, now - timedelta(days=2))
    judged(client, learner, "201", 100, now - timedelta(hours=3))  # after Past's due time
    due = client.get("/api/classes", headers=bearer(l_token)).json()["due"]
    assert [d["title"] for d in due] == ["Soon", "Far", "Past"]
    assert [d["overdue"] for d in due] == [False, False, True]
    late = {p["problem_id"]: p for p in due[2]["problems"]}
    assert due[2]["assignment_id"] == past and due[2]["class_name"] == "Evening class"
    assert late["204"]["solved"] is True and late["204"]["late"] is False
    assert late["201"]["solved"] is True and late["201"]["late"] is True
    assert due[0]["problems"][0]["solved"] is True


# ------------------------------------------------------------------ members' submissions


def test_an_instructor_reads_their_members_submissions_and_nobody_elses(client: TestClient) -> None:
    teacher, t_token = make_instructor(client)
    _other, other_token = make_instructor(client)
    member, m_token = register(client)
    stranger, s_token = register(client)
    class_id = make_class(client, teacher, [member])
    make_assignment(client, class_id, ["204"])
    now = utcnow()
    in_class = judged(client, member, "204", 100, now)
    elsewhere = judged(client, member, "201", 30, now)  # no assignment of this class has 201
    strangers = judged(client, stranger, "204", 100, now)
    mid = user_id(client, member)
    listed = client.get(f"/api/classes/{class_id}/members/{mid}/submissions", headers=bearer(t_token))
    assert listed.status_code == 200 and [s["id"] for s in listed.json()] == [in_class], listed.text
    # The submission itself, code included, read-only: the teacher reads it, nobody else does.
    read = client.get(f"/api/submissions/{in_class}", headers=bearer(t_token))
    assert read.status_code == 200 and read.json()["username"] == member and "code" in read.json()
    assert (
        client.get(f"/api/submissions/{elsewhere}", headers=bearer(t_token)).status_code == 200
    )  # their member's
    for token, sub in (
        (t_token, strangers),
        (other_token, in_class),
        (s_token, in_class),
        (m_token, strangers),
    ):
        error_of(client.get(f"/api/submissions/{sub}", headers=bearer(token)), 404, "not_found")
    error_of(
        client.get(f"/api/classes/{class_id}/members/{mid}/submissions", headers=bearer(other_token)),
        404,
        "not_found",
    )
    error_of(
        client.get(f"/api/classes/{class_id}/members/{mid}/submissions", headers=bearer(m_token)),
        404,
        "not_found",
    )
    sid = user_id(client, stranger)
    error_of(
        client.get(f"/api/classes/{class_id}/members/{sid}/submissions", headers=bearer(t_token)),
        404,
        "not_found",
    )
    # The pages agree: the submission page and the member's list for the teacher, 404 pages for
    # the other instructor.
    for name, status in ((teacher, 200), (_other, 404)):
        browser = TestClient(client.app)
        logged = browser.post("/api/auth/login", json={"username": name, "password": PASSWORD})
        assert logged.status_code == 200, logged.text
        page = browser.get(f"/submissions/{in_class}")
        assert page.status_code == status and (member in page.text) == (status == 200)
        listing = browser.get(f"/classes/{class_id}/members/{mid}")
        assert listing.status_code == status
        assert (f'href="/submissions/{in_class}"' in listing.text) == (status == 200)
        assert f'href="/submissions/{elsewhere}"' not in listing.text
    # Once the learner leaves the class, their work is theirs alone again.
    client.delete(f"/api/classes/{class_id}/members/{mid}", headers=bearer(t_token))
    error_of(client.get(f"/api/submissions/{in_class}", headers=bearer(t_token)), 404, "not_found")
    # The teacher does not rejudge: that stays an admin's.
    error_of(
        client.post(f"/api/admin/submissions/{in_class}/rejudge", headers=bearer(t_token)), 403, "admin_only"
    )


def test_the_class_tables_hold_what_the_api_said(client: TestClient) -> None:
    teacher, t_token = make_instructor(client)
    made = client.post("/api/classes", json={"name": "  Spaced  "}, headers=bearer(t_token)).json()
    with platform_of(client).factory() as db:
        group = db.get(Group, made["id"])
        assert (
            group is not None
            and group.join_code == made["join_code"]
            and group.instructor_id == user_id(client, teacher)
        )


def test_class_errors_speak_one_language(client: TestClient) -> None:
    teacher, t_token = make_instructor(client)
    _learner, l_token = register(client)
    class_id = make_class(client, teacher)
    for lang in ("zh", "en"):
        head = {"Accept-Language": lang}
        refused = client.post("/api/classes", json={"name": "x"}, headers={**bearer(l_token), **head})
        one_language(error_of(refused, 403, "instructor_only"), lang)
        unknown = client.post(
            f"/api/classes/{class_id}/members",
            json={"names": ["ghost_x"]},
            headers={**bearer(t_token), **head},
        )
        one_language(error_of(unknown, 422, "unknown_names"), lang, "ghost_x")
        code = client.post(
            "/api/classes/join", json={"code": "ZZZZ2222"}, headers={**bearer(l_token), **head}
        )
        one_language(error_of(code, 404, "no_such_code"), lang, "ZZZZ2222")
        missing = client.get(f"/api/classes/{class_id}", headers={**bearer(l_token), **head})
        one_language(error_of(missing, 404, "not_found"), lang, str(class_id))
        late = assignment_body(opens_at="2030-01-02T00:00:00+00:00", due_at="2030-01-01T00:00:00+00:00")
        backwards = client.post(
            f"/api/classes/{class_id}/assignments", json=late, headers={**bearer(t_token), **head}
        )
        one_language(error_of(backwards, 422, "due_before_open"), lang)


def test_a_csv_that_is_no_list_of_names_is_refused() -> None:
    # One field past the csv module's limit. The API's body cap (JUDGE_MAX_BODY_BYTES, 16 KiB)
    # stops such a file first unless an operator raised it: the parser must refuse it still.
    huge = '"' + "x" * 150_000 + '"\n'
    with pytest.raises(ApiError) as refused:
        names_of(NamesBody(csv=huge))
    assert refused.value.code == "bad_csv" and refused.value.status == 422
    assert names_of(NamesBody(names=[" Ann ", "ann", "bo"], csv="Username\nBO,x\n\ncy\n")) == [
        "Ann",
        "bo",
        "cy",
    ]
