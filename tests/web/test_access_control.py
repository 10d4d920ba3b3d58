"""Access control: a learner never reads another learner's code, results or tokens.

Every route of the app is called, with path parameters filled with learner A's ids, as learner B
(API token of scope full), as B's browser session (cookie + CSRF token) and anonymously. ROUTES
below says what each route must answer to each of them and why what it shows is fine; a route
missing from the table fails `test_every_route_is_classified`, so a new route cannot slip in
unreviewed. (What a token of scope submit may call: tests/web/test_account_security.py.)
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from starlette.routing import Mount

from tests.web.factories import (
    PASSWORD,
    bearer,
    make_assignment,
    make_class,
    make_client,
    make_instructor,
    make_settings,
    read_204,
    register,
    submit,
    unique_name,
    wait_done,
)
from web.auth.models import ApiToken, User
from web.db import utcnow
from web.deps import CSRF_HEADER, SESSION_COOKIE
from web.judging.records import HIDDEN_CASE_FIELDS
from web.scores.models import Score

ANON, TOKEN, COOKIE = "anonymous", "learner B (API token)", "learner B (cookie session)"
CALLERS = (ANON, TOKEN, COOKIE)


@dataclass
class World:
    """Learner A's private things, learner B who tries to read them, and an admin."""

    app: FastAPI
    client: TestClient  # the one that runs the app's lifespan
    a_name: str
    a_token: str
    a_token_id: int
    a_sub_id: int
    marker: str  # appears only in A's code
    b_name: str
    b_token: str
    admin_token: str
    # A class of an instructor who is not B, with A in it, and an assignment of it.
    class_id: int = 0
    assignment_id: int = 0

    def secrets(self) -> list[str]:
        """Strings that are A's alone: no response to anyone else may contain them."""
        return [self.marker, self.a_token, PASSWORD]

    def path_params(self) -> dict[str, str]:
        return {
            "submission_id": str(self.a_sub_id),
            "scratch_id": str(self.a_sub_id),  # A's submission is no scratch run of B's either
            "token_id": str(self.a_token_id),
            "problem_id": "204",
            "validation_id": "1",
            "path": "no-such-file.js",
            "user_id": "1",  # A registered first: the first account
            "invite_id": "1",
            "token": "no-such-link",  # a reset link: nobody's
            "class_id": str(self.class_id),
            "assignment_id": str(self.assignment_id),
        }


Body = Callable[[World], dict[str, Any]]


@dataclass(frozen=True)
class Rule:
    """What a route answers: the status for anonymous callers and for learner B, and why."""

    anon: int
    learner: int
    why: str
    body: Body | None = None
    # Usernames are public on this route (the leaderboard), so A's name may appear in it.
    shows_usernames: bool = False
    # Besides the status, the error code a refusal must carry (admin routes: "admin_only").
    learner_code: str | None = None
    # An HTML page (its errors are pages too); the rest answer JSON.
    page: bool = False
    # The status for B's API token where it differs from B's session's (`learner`).
    token: int | None = None


def _fresh_account(_w: World) -> dict[str, Any]:
    return {"username": unique_name("fresh"), "password": PASSWORD}


def _as_a_wrong_password(w: World) -> dict[str, Any]:
    return {"username": w.a_name, "password": "not A's password"}


def _b_code(_w: World) -> dict[str, Any]:
    return {"problem_id": "204", "code": "# B's own attempt\n", "mode": "run"}


def _b_scratch(_w: World) -> dict[str, Any]:
    return {"problem_id": "204", "code": "# B's own attempt\n", "snippet": "1 + 1"}


def _b_draft(_w: World) -> dict[str, Any]:
    return {"code": "# B's own draft\n"}


DOCS = "the API's own documentation: no user data"
PAGE_LOGIN = "a page of the caller's own data: anonymous callers are sent to /login (303)"
FORM = "a form post without the form's token: refused with the form shown again"
ADMIN = "admin only: users, every submission, rejudging"
CLASS = "A's class, whose instructor is not B: not found for B, as if it did not exist"


def _later(_w: World) -> dict[str, Any]:
    return {"due_at": "2099-01-01T00:00:00+00:00"}


def _assignment(_w: World) -> dict[str, Any]:
    return {
        "title": "B's",
        "problems": ["204"],
        "opens_at": "2099-01-01T00:00:00+00:00",
        "due_at": "2099-01-02T00:00:00+00:00",
    }


ROUTES: dict[tuple[str, str], Rule] = {
    ("GET", "/openapi.json"): Rule(200, 200, DOCS),
    ("HEAD", "/openapi.json"): Rule(200, 200, DOCS),
    ("GET", "/docs"): Rule(200, 200, DOCS),
    ("GET", "/docs/oauth2-redirect"): Rule(200, 200, DOCS),
    ("GET", "/healthz"): Rule(200, 200, "status, version, backend name and problem count: nothing per user"),
    # Nothing per user, but for operators: allowed addresses (loopback) or the metrics token only.
    ("GET", "/metrics"): Rule(
        403, 403, "queue depth and verdict counters, for operators", learner_code="forbidden"
    ),
    ("POST", "/api/auth/register"): Rule(201, 201, "creates the caller's own new account", _fresh_account),
    # With A's name but not A's password: refused, and the refusal does not say whether A exists.
    ("POST", "/api/auth/token"): Rule(401, 401, "a token needs the password", _as_a_wrong_password),
    ("POST", "/api/auth/login"): Rule(401, 401, "a session needs the password", _as_a_wrong_password),
    ("POST", "/api/auth/logout"): Rule(401, 204, "ends the caller's own session"),
    ("GET", "/api/me"): Rule(401, 200, "the caller's own account"),
    ("GET", "/api/me/tokens"): Rule(401, 200, "the caller's own tokens"),
    # A token never makes another: that takes the password (POST /api/auth/token) or a session.
    ("POST", "/api/me/tokens"): Rule(
        401, 201, "a new token for the caller", lambda _w: {"name": "b-script"}, token=403
    ),
    ("DELETE", "/api/me/tokens/{token_id}"): Rule(401, 404, "A's token is not B's to see or revoke"),
    ("GET", "/api/me/scores"): Rule(401, 200, "the caller's own scores"),
    # Only the caller's own password, and only with it: a wrong old one is refused.
    ("POST", "/api/me/password"): Rule(
        401,
        403,
        "changes the caller's own password, the old one required",
        lambda _w: {"old_password": "not B's password", "new_password": "a new Pass phrase 9"},
        learner_code="wrong_password",
    ),
    ("GET", "/api/problems"): Rule(200, 200, "public problems; best_score is the caller's own"),
    ("GET", "/api/problems/{problem_id}"): Rule(200, 200, "a public problem; best_score is the caller's"),
    ("GET", "/api/course"): Rule(200, 200, "the public course map; the progress is the caller's own"),
    ("GET", "/api/course/problems/{problem_id}"): Rule(
        200, 200, "a public problem's chapter, prerequisites and next; solved is the caller's own"
    ),
    # The reference and the package's accepted files (no learner's code), after the caller's own AC.
    ("GET", "/api/problems/{problem_id}/solutions"): Rule(
        401, 403, "after the caller's own accepted Submit only", learner_code="not_solved_yet"
    ),
    ("POST", "/api/scratch"): Rule(401, 202, "the caller's own code on their own snippet", _b_scratch),
    ("GET", "/api/scratch/{scratch_id}"): Rule(401, 404, "only the caller's own scratch runs are found"),
    ("GET", "/api/scratch/examples/{problem_id}"): Rule(
        200, 200, "the package's example and its public cases' calls, as public as the statement"
    ),
    ("POST", "/api/submissions"): Rule(401, 202, "submits the caller's own code", _b_code),
    ("GET", "/api/submissions"): Rule(401, 200, "the caller's own submissions only"),
    ("GET", "/api/submissions/{submission_id}"): Rule(401, 404, "A's submission is not found for B"),
    ("GET", "/api/leaderboard"): Rule(
        200, 200, "public by design: usernames with totals, no code", shows_usernames=True
    ),
    ("GET", "/api/admin/users"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("GET", "/api/admin/submissions"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("POST", "/api/admin/users/{user_id}/disable"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("POST", "/api/admin/users/{user_id}/enable"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("POST", "/api/admin/submissions/{submission_id}/rejudge"): Rule(
        401, 403, ADMIN, learner_code="admin_only"
    ),
    ("POST", "/api/admin/problems/{problem_id}/rejudge"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("POST", "/api/admin/problems/sync"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("GET", "/api/admin/problems"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("POST", "/api/admin/problems/{problem_id}/validate"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("GET", "/api/admin/validations/{validation_id}"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("PATCH", "/api/me"): Rule(
        401, 200, "the caller's own language and leaderboard name", lambda _w: {"language": "zh"}
    ),
    # A saved a draft holding the marker: B reads and writes only B's own.
    ("GET", "/api/problems/{problem_id}/draft"): Rule(401, 200, "the caller's own draft"),
    ("PUT", "/api/problems/{problem_id}/draft"): Rule(401, 200, "the caller's own draft", _b_draft),
    ("DELETE", "/api/problems/{problem_id}/draft"): Rule(401, 204, "the caller's own draft"),
    # No judge in this world (workers=0), so no kit; with one it is the same public zip for all.
    ("GET", "/kit.zip"): Rule(503, 503, "public statements, starters and public cases", page=True),
    ("GET", "/api/kit/status"): Rule(503, 503, "whether the public kit is built yet, and how far"),
    ("GET", "/static/{path}"): Rule(404, 404, "the built front end: the same public files for all"),
    # Pages.
    ("GET", "/"): Rule(200, 200, "the public problem list; progress is the caller's own", page=True),
    ("GET", "/problems"): Rule(200, 200, "the public problem list", page=True),
    ("GET", "/problems/{problem_id}"): Rule(200, 200, "a public statement and the starter", page=True),
    ("GET", "/leaderboard"): Rule(200, 200, "public by design", shows_usernames=True, page=True),
    ("GET", "/highlight.css"): Rule(200, 200, "colours of highlighted code"),
    ("GET", "/login"): Rule(200, 303, "the form; a logged-in caller is sent on", page=True),
    ("GET", "/register"): Rule(200, 303, "the form; a logged-in caller is sent on", page=True),
    ("POST", "/login"): Rule(400, 400, FORM, page=True),
    ("POST", "/register"): Rule(400, 400, FORM, page=True),
    ("POST", "/logout"): Rule(303, 303, "ends the caller's own session (if any)", page=True),
    ("POST", "/lang"): Rule(303, 303, "the caller's own language", page=True),
    ("GET", "/settings"): Rule(303, 200, PAGE_LOGIN, page=True),
    # The caller's own password, the old one required; an empty form is refused as too short.
    ("POST", "/settings/password"): Rule(303, 422, PAGE_LOGIN, page=True),
    ("GET", "/submissions"): Rule(303, 200, PAGE_LOGIN, page=True),
    # A file, not a page: a visitor is sent to log in as on the page it comes from.
    ("GET", "/submissions.csv"): Rule(303, 200, "the caller's own submissions, as the page lists them"),
    ("GET", "/submissions/{submission_id}"): Rule(303, 404, "A's submission is not found for B", page=True),
    ("GET", "/admin"): Rule(303, 403, ADMIN, page=True),
    # Reset links, invite codes and the registration mode (web/auth: resets, invites, registration).
    ("POST", "/api/users/{user_id}/reset-link"): Rule(
        401, 404, "an admin's, or the instructor's of a class A is in: for B, as if A did not exist"
    ),
    ("GET", "/api/admin/registration"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("PUT", "/api/admin/registration"): Rule(
        401, 403, ADMIN, lambda _w: {"mode": "closed"}, learner_code="admin_only"
    ),
    ("GET", "/api/admin/invites"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("POST", "/api/admin/invites"): Rule(
        401, 403, ADMIN, lambda _w: {"max_uses": 1}, learner_code="admin_only"
    ),
    ("POST", "/api/admin/invites/{invite_id}/revoke"): Rule(401, 403, ADMIN, learner_code="admin_only"),
    ("GET", "/reset/{token}"): Rule(410, 410, "a link nobody has: the one page of a dead link", page=True),
    ("POST", "/reset/{token}"): Rule(410, 410, "a link nobody has: the one page of a dead link", page=True),
    ("GET", "/forgot"): Rule(200, 200, "the form (or, without mail, whom to ask): nobody's data", page=True),
    # Without mail configured (this world) the form is refused; with it, one sentence for all.
    ("POST", "/forgot"): Rule(400, 400, FORM, page=True),
    # B's own email ("" clears it), then back to the settings page.
    ("POST", "/settings/email"): Rule(303, 303, "the caller's own email", page=True),
    # Classes (web/classes): an instructor's own, a member's own part, nothing of anyone else's.
    ("POST", "/api/admin/users/{user_id}/role"): Rule(
        401, 403, ADMIN, lambda _w: {"role": "instructor"}, learner_code="admin_only"
    ),
    ("GET", "/api/classes"): Rule(
        401, 200, "the classes the caller teaches or is in, and what they have due"
    ),
    ("POST", "/api/classes"): Rule(
        401, 403, "instructors only", lambda _w: {"name": "B's class"}, learner_code="instructor_only"
    ),
    # A code no class has (B joining A's class would change what the sweep sees next).
    ("POST", "/api/classes/join"): Rule(
        401, 404, "joins the caller to the class of the code", lambda _w: {"code": "NOSUCH22"}
    ),
    ("GET", "/api/classes/{class_id}"): Rule(401, 404, CLASS),
    ("PATCH", "/api/classes/{class_id}"): Rule(401, 404, CLASS, lambda _w: {"joining_open": True}),
    ("POST", "/api/classes/{class_id}/code"): Rule(401, 404, CLASS),
    ("POST", "/api/classes/{class_id}/leave"): Rule(401, 404, "B is not in A's class"),
    ("POST", "/api/classes/{class_id}/members"): Rule(401, 404, CLASS, lambda w: {"names": [w.b_name]}),
    ("DELETE", "/api/classes/{class_id}/members/{user_id}"): Rule(401, 404, CLASS),
    ("GET", "/api/classes/{class_id}/members/{user_id}/submissions"): Rule(
        401, 404, "A's submissions, for the instructor of A's class only"
    ),
    ("POST", "/api/classes/{class_id}/assignments"): Rule(401, 404, CLASS, _assignment),
    ("PUT", "/api/classes/{class_id}/assignments/{assignment_id}"): Rule(401, 404, CLASS, _assignment),
    ("DELETE", "/api/classes/{class_id}/assignments/{assignment_id}"): Rule(401, 404, CLASS),
    ("PUT", "/api/classes/{class_id}/assignments/{assignment_id}/extensions/{user_id}"): Rule(
        401, 404, CLASS, _later
    ),
    ("DELETE", "/api/classes/{class_id}/assignments/{assignment_id}/extensions/{user_id}"): Rule(
        401, 404, CLASS
    ),
    ("GET", "/classes"): Rule(303, 200, PAGE_LOGIN, page=True),
    ("GET", "/classes/{class_id}"): Rule(303, 404, CLASS, page=True),
    ("GET", "/classes/{class_id}/members/{user_id}"): Rule(303, 404, CLASS, page=True),
    # A class's reports (web/classes/reports_router.py, web/pages/class_reports.py): the gradebook
    # and similar submissions for its instructor, the class leaderboard for its members too.
    ("GET", "/api/classes/{class_id}/assignments/{assignment_id}/gradebook"): Rule(401, 404, CLASS),
    ("GET", "/api/classes/{class_id}/assignments/{assignment_id}/gradebook.csv"): Rule(401, 404, CLASS),
    ("GET", "/api/classes/{class_id}/gradebook.csv"): Rule(401, 404, CLASS),
    ("GET", "/api/classes/{class_id}/leaderboard"): Rule(401, 404, "B is not in A's class"),
    ("GET", "/api/classes/{class_id}/similar"): Rule(401, 404, CLASS),
    ("GET", "/classes/{class_id}/assignments/{assignment_id}/gradebook"): Rule(303, 404, CLASS, page=True),
    ("GET", "/classes/{class_id}/leaderboard"): Rule(303, 404, "B is not in A's class", page=True),
    ("GET", "/classes/{class_id}/similar"): Rule(303, 404, CLASS, page=True),
}

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}


def app_routes(app: FastAPI) -> list[tuple[str, str]]:
    """Every (method, path template) the app serves, routes of included routers too."""
    found: set[tuple[str, str]] = set()
    for context in iter_route_contexts(app.routes):
        path, methods = context.path, context.methods
        if isinstance(context.route, Mount):  # static files: every path below the mount
            found.add(("GET", f"{path}/{{path}}"))
            continue
        assert path is not None and methods, f"a route without a path or methods: {context!r}"
        found.update((method, path) for method in methods)
    return sorted(found)


def fill(path: str, params: dict[str, str]) -> str:
    names = [part[1:-1] for part in path.split("/") if part.startswith("{") and part.endswith("}")]
    unknown = [n for n in names if n not in params]
    assert not unknown, f"{path}: no id of learner A for {unknown}; add one to World.path_params"
    return path.format(**{n: params[n] for n in names})


def make_admin(factory: sessionmaker[Session], username: str) -> None:
    with factory() as db:
        user = db.scalar(select(User).where(User.username == username))
        assert user is not None
        user.role = "admin"
        db.commit()


def login(client: TestClient, username: str) -> str:
    """A fresh browser session on `client` (its cookie jar); returns the CSRF token."""
    client.cookies.clear()
    res = client.post("/api/auth/login", json={"username": username, "password": PASSWORD})
    assert res.status_code == 200, res.text
    assert SESSION_COOKIE in client.cookies
    csrf: str = res.json()["csrf_token"]
    return csrf


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """No workers: A's submission stays queued, which is all the route sweep needs."""
    settings = make_settings(tmp_path_factory.mktemp("access"), workers=0)
    with make_client(settings) as client:
        app = client.app
        assert isinstance(app, FastAPI)
        a_name, a_token = register(client)
        b_name, b_token = register(client)
        admin_name, admin_token = register(client)
        make_admin(app.state.platform.factory, admin_name)
        marker = f"A_PRIVATE_{uuid.uuid4().hex}"
        a_sub_id = submit(client, a_token, f"# {marker}\n" + read_204("reference.py"))
        saved = client.put("/api/problems/204/draft", json={"code": f"# {marker}\n"}, headers=bearer(a_token))
        assert saved.status_code == 200, saved.text
        factory = app.state.platform.factory
        with factory() as db:
            a_id = db.scalar(select(User.id).where(User.username == a_name))
            token_id = db.scalar(select(ApiToken.id).where(ApiToken.user_id == a_id))
            assert a_id is not None and token_id is not None
            # A on the leaderboard, so that "usernames are public there" is actually exercised.
            db.add(
                Score(
                    user_id=a_id,
                    problem_id="204",
                    best_score=42,
                    max_score=100,
                    improved_at=utcnow(),
                    best_submission_id=a_sub_id,
                )
            )
            db.commit()
        world = World(app, client, a_name, a_token, token_id, a_sub_id, marker, b_name, b_token, admin_token)
        teacher, _ = make_instructor(client)
        world.class_id = make_class(client, teacher, [a_name], name="A's class")
        world.assignment_id = make_assignment(client, world.class_id)
        yield world


class Caller:
    """Requests as one kind of caller, on a client of its own so that cookies never cross callers."""

    def __init__(self, w: World, kind: str) -> None:
        self.kind = kind
        self.client = TestClient(w.app)  # no lifespan: the world's client already runs the app
        self.b_name, self.b_token = w.b_name, w.b_token
        self.csrf = login(self.client, w.b_name) if kind == COOKIE else ""

    def request(self, method: str, url: str, body: dict[str, Any] | None = None) -> Any:
        headers: dict[str, str] = {}
        if self.kind == ANON:
            self.client.cookies.clear()
        elif self.kind == TOKEN:
            headers = bearer(self.b_token)
        else:
            if SESSION_COOKIE not in self.client.cookies:  # logged out by the previous request
                self.csrf = login(self.client, self.b_name)
            if method in UNSAFE:
                headers = {CSRF_HEADER: self.csrf}
        return self.client.request(method, url, json=body, headers=headers, follow_redirects=False)


def test_every_route_is_classified(world: World) -> None:
    served = set(app_routes(world.app))
    missing = sorted(served - ROUTES.keys())
    stale = sorted(ROUTES.keys() - served)
    assert not missing, f"routes without an access rule in ROUTES (decide who may see what): {missing}"
    assert not stale, f"ROUTES lists routes the app no longer serves: {stale}"


@pytest.mark.parametrize("caller", CALLERS)
def test_no_route_leaks_a_private_data(world: World, caller: str) -> None:
    params = world.path_params()
    failures: list[str] = []
    as_caller = Caller(world, caller)
    for method, path in app_routes(world.app):
        rule = ROUTES.get((method, path))
        assert rule is not None, f"{method} {path} is not classified in ROUTES"
        url = fill(path, params)
        res = as_caller.request(method, url, rule.body(world) if rule.body else None)
        where = f"{caller}: {method} {url} -> {res.status_code}"
        expected = rule.anon if caller == ANON else rule.learner
        if caller == TOKEN and rule.token is not None:
            expected = rule.token
        if res.status_code != expected:
            failures.append(f"{where}, expected {expected} ({rule.why}): {res.text[:300]}")
        content_type = res.headers.get("content-type", "")
        if rule.page and res.status_code != 303 and not content_type.startswith("text/html"):
            failures.append(f"{where}: a page answered {content_type!r}")
        if res.status_code >= 400 and method != "HEAD" and not rule.page:
            error = res.json().get("error", {})
            if not {"code", "message"} <= error.keys():
                failures.append(f"{where}: not an error body: {res.text[:300]}")
            elif caller != ANON and rule.learner_code and error["code"] != rule.learner_code:
                failures.append(f"{where}: error code {error['code']!r}, expected {rule.learner_code!r}")
        text = res.text
        for secret in world.secrets():
            if secret in text:
                failures.append(f"{where}: the response holds A's private {secret[:12]!r}…")
        if world.a_name in text and not rule.shows_usernames:
            failures.append(f"{where}: the response names A, and usernames are not public here")
    assert not failures, "\n".join(failures)


def test_a_submission_is_not_found_for_b(world: World) -> None:
    # Just like a submission that does not exist: the id reveals nothing.
    missing = world.a_sub_id + 10_000
    theirs = world.client.get(f"/api/submissions/{world.a_sub_id}", headers=bearer(world.b_token))
    nothing = world.client.get(f"/api/submissions/{missing}", headers=bearer(world.b_token))
    assert theirs.status_code == nothing.status_code == 404
    assert world.marker not in theirs.text
    assert theirs.json()["error"]["message"].replace(str(world.a_sub_id), "N") == nothing.json()["error"][
        "message"
    ].replace(str(missing), "N")
    # A still reads it, with the marker: the checks above look for something that is there.
    own = world.client.get(f"/api/submissions/{world.a_sub_id}", headers=bearer(world.a_token))
    assert own.status_code == 200 and world.marker in own.json()["code"]


def test_a_failed_login_does_not_tell_that_a_exists(world: World) -> None:
    for route in ("/api/auth/login", "/api/auth/token"):
        answers = [
            TestClient(world.app).post(route, json={"username": name, "password": "not the password"})
            for name in (world.a_name, unique_name("nobody"))
        ]
        theirs, nobodys = ((r.status_code, r.json()) for r in answers)
        assert theirs == nobodys and theirs[0] == 401


def test_b_lists_only_own_submissions(world: World) -> None:
    b_sub = submit(world.client, world.b_token, "# B's code\n", mode="run")
    for query in ("", "?problem_id=204", "?limit=200", "?problem_id=204&limit=1"):
        res = world.client.get(f"/api/submissions{query}", headers=bearer(world.b_token))
        assert res.status_code == 200, res.text
        ids = [s["id"] for s in res.json()]
        assert world.a_sub_id not in ids, query
        assert world.marker not in res.text
        assert b_sub in ids or "limit=1" in query
    a_list = world.client.get("/api/submissions", headers=bearer(world.a_token)).json()
    assert world.a_sub_id in [s["id"] for s in a_list] and b_sub not in [s["id"] for s in a_list]


def test_b_cannot_revoke_a_token(world: World) -> None:
    for res in (
        world.client.delete(f"/api/me/tokens/{world.a_token_id}", headers=bearer(world.b_token)),
        Caller(world, COOKIE).request("DELETE", f"/api/me/tokens/{world.a_token_id}"),
    ):
        assert res.status_code == 404, res.text
        assert res.json()["error"]["code"] == "not_found"
    # A's token still works and is still listed for A (and never for B).
    mine = world.client.get("/api/me/tokens", headers=bearer(world.a_token))
    assert mine.status_code == 200
    assert world.a_token_id in [t["id"] for t in mine.json()]
    theirs = world.client.get("/api/me/tokens", headers=bearer(world.b_token)).json()
    assert world.a_token_id not in [t["id"] for t in theirs]


def test_b_sees_own_scores_not_a(world: World) -> None:
    headers = bearer(world.b_token)
    assert world.client.get("/api/me/scores", headers=headers).json() == []
    problem = world.client.get("/api/problems/204", headers=headers).json()
    assert problem["best_score"] is None and problem["solved"] is False
    listed = {p["id"]: p for p in world.client.get("/api/problems", headers=headers).json()}
    assert listed["204"]["best_score"] is None
    # ...while A sees A's own score there, and the leaderboard (public) lists A.
    assert world.client.get("/api/problems/204", headers=bearer(world.a_token)).json()["best_score"] == 42
    board = world.client.get("/api/leaderboard").json()
    assert [row["name"] for row in board] == [world.a_name]
    assert set(board[0]) == {"rank", "name", "you", "score", "solved", "last_improved_at"}


def test_unsafe_cookie_requests_need_the_csrf_token(world: World) -> None:
    """B's own session without the CSRF token may change nothing: a page on another site could send it."""
    other = TestClient(world.app)
    for method, path in app_routes(world.app):
        rule = ROUTES[(method, path)]
        if method not in UNSAFE or not rule.anon == 401 != rule.learner:
            continue  # routes open to anyone do not act as the session's user
        login(other, world.b_name)
        url = fill(path, world.path_params())
        res = other.request(method, url, json=rule.body(world) if rule.body else None)
        assert res.status_code == 403, f"{method} {url}: {res.status_code} {res.text[:200]}"
        assert res.json()["error"]["code"] == "csrf_failed"


def test_admin_sees_a_code(world: World) -> None:
    """The other side of the coin: the data the learners were refused is there, for admins."""
    headers = bearer(world.admin_token)
    res = world.client.get(f"/api/submissions/{world.a_sub_id}", headers=headers)
    assert res.status_code == 200, res.text
    assert world.marker in res.json()["code"] and res.json()["username"] == world.a_name
    rows = world.client.get("/api/admin/submissions", headers=headers).json()
    assert {"id": world.a_sub_id, "username": world.a_name}.items() <= next(
        r for r in rows if r["id"] == world.a_sub_id
    ).items()
    users = world.client.get("/api/admin/users", headers=headers).json()
    assert world.a_name in [u["username"] for u in users]


@pytest.mark.slow
def test_hidden_cases_teach_without_leaking(tmp_path: Path) -> None:
    """A judged submit that fails a hidden case: its owner sees the hidden case's name, verdict,
    score, description, the kinds of its diagnoses and a listed mistake's hint, but never its
    message, a diagnosis's sentence or an error map (they hold expected values, indices and
    inputs); an admin sees everything."""
    marker = f"A_PRIVATE_{uuid.uuid4().hex}"
    code = f"# {marker}\n" + read_204("solutions/wrong/eps_outside_sqrt.py")
    with make_client(make_settings(tmp_path, workers=1)) as client:
        a_name, a_token = register(client)
        _b_name, b_token = register(client)
        admin_name, admin_token = register(client)
        make_admin(client.app.state.platform.factory, admin_name)  # type: ignore[attr-defined]
        sub_id = submit(client, a_token, code)
        mine = wait_done(client, a_token, sub_id)

        assert mine["verdict"] != "AC" and mine["code"] == code
        hidden = [c for c in mine["cases"] if not c["public"]]
        public = [c for c in mine["cases"] if c["public"]]
        assert hidden and public
        assert any(c["verdict"] != "AC" for c in hidden), "the wrong solution must fail a hidden case"
        teaching = {"description", "hint", "diagnoses"}
        for case in hidden:
            shown = {k for k, v in case.items() if v not in (None, [])}
            assert shown <= set(HIDDEN_CASE_FIELDS) | teaching, f"{case['name']}: {sorted(shown)}"
            assert {"message", "error_map"}.isdisjoint(shown)
            assert all(d["message"] is None and d["label"] for d in case["diagnoses"]), case["diagnoses"]
        assert any(c["description"] for c in hidden)
        # A submit's log is the public cases' job's: it never held a hidden case.
        assert isinstance(mine["log"], str)
        assert all(c["time_ms"] is None for c in hidden)  # a time could carry what the code read

        res = client.get(f"/api/submissions/{sub_id}", headers=bearer(b_token))
        assert res.status_code == 404 and marker not in res.text

        full = client.get(f"/api/submissions/{sub_id}", headers=bearer(admin_token))
        assert full.status_code == 200, full.text
        body = full.json()
        assert body["username"] == a_name and marker in body["code"]
        failed_hidden = [c for c in body["cases"] if not c["public"] and c["verdict"] != "AC"]
        assert failed_hidden and all(c["message"] for c in failed_hidden)
        assert [c["name"] for c in body["cases"]] == [c["name"] for c in mine["cases"]]
        assert all(isinstance(c["time_ms"], float) for c in body["cases"])
