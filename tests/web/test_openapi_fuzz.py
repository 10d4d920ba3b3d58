"""No request makes the API answer 5xx: fuzzing every operation of the app's own OpenAPI schema.

- schemathesis generates valid and invalid requests for every operation, sent in-process over ASGI
  (no server, no network), anonymously, with a learner's API token and with an admin's; the only
  check is `not_a_server_error`. A small `max_examples` keeps it well under a minute.
- `test_edge_values_get_no_server_error` sends, deterministically, the values random generation
  rarely hits: ids beyond 64 bits, NUL characters, lone surrogates, huge strings. It also runs on
  PostgreSQL when JUDGE_TEST_POSTGRES_URL is set, where NUL in text is an error of the driver.

No worker judges anything here (workers=0).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

import pytest
import schemathesis
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis.configuration import set_hypothesis_home_dir
from schemathesis import Case
from schemathesis.checks import not_a_server_error
from schemathesis.python import asgi
from sqlalchemy import select

from tests.web.factories import PASSWORD, bearer, make_client, make_settings, register, unique_name
from web.app import create_app
from web.auth import secrets
from web.auth.models import User
from web.platform import Platform

MAX_EXAMPLES = 10

CONFIG: dict[str, Any] = {
    # Fixed, so that a failure reproduces; each operation derives its own seed from it.
    "seed": 20240601,
    "generation": {
        "max-examples": MAX_EXAMPLES,
        "database": "none",  # nothing written under .hypothesis/ in the repository
        "mode": "all",  # valid and invalid data both
    },
    "phases": {"stateful": {"enabled": False}},
    "base-url": "http://testserver",
}
# Rate limits would turn most fuzzed logins and submissions into 429s before their handlers run.
UNLIMITED: dict[str, Any] = {
    "login_failures_per_user": 10**6,
    "login_failures_per_address": 10**6,
    "submits_per_user": 10**6,
    "submits_per_address": 10**6,
}


@pytest.fixture(scope="module", autouse=True)
def hypothesis_home() -> Iterator[None]:
    """Hypothesis' home is a temporary directory while this module runs (see below)."""
    yield
    set_hypothesis_home_dir(None)  # later modules get the default (or HYPOTHESIS_STORAGE_DIRECTORY)


@pytest.fixture(scope="module")
def cheap_passwords() -> Iterator[None]:
    """Logins and registrations are sent by the hundred here: argon2 at its cheapest takes about a
    millisecond a hash instead of ~0.1 s. The code path is the same."""
    cheap = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(secrets, "_hasher", cheap)
        patch.setattr(secrets, "_DUMMY_HASH", cheap.hash("not-a-password"))
        yield


def make_role(app: FastAPI, username: str, role: str) -> None:
    with app.state.platform.factory() as db:
        user = db.scalar(select(User).where(User.username == username))
        assert user is not None
        user.role = role
        db.commit()


# --------------------------------------------------------------------------- schemathesis

# Hypothesis caches what it derives (Unicode tables, constants read from the source) under ./.hypothesis
# even without an example database (`database: none` above), some of it while this module is being
# collected: keep all of it in a temporary directory instead of the repository.
_hypothesis_home = tempfile.mkdtemp(prefix="judge-hypothesis-")
atexit.register(shutil.rmtree, _hypothesis_home, ignore_errors=True)
set_hypothesis_home_dir(_hypothesis_home)


def _openapi() -> dict[str, Any]:
    """The app's OpenAPI document, without a database: the schema depends on the routes alone."""
    stub = cast(Platform, object())  # never touched: no request reaches this app
    return create_app(platform=stub).openapi()


# Loaded at collection, from a stub app: schemathesis' lazy `from_fixture` loader fails under pytest 9
# (it sets `request.node._nodeid`, which pytest 9 no longer has). Requests go to the fixture's app.
schema = schemathesis.openapi.from_dict(_openapi(), config=schemathesis.Config.from_dict(CONFIG))

# In a pytest-xdist worker, schemathesis' parametrized tests pass without sending a request (a
# route planted to fail every request still passed), so this module runs in `make test`'s serial
# phase; the fixture makes a parallel run of it fail instead of passing empty.
pytestmark = pytest.mark.serial


@pytest.fixture(autouse=True)
def _not_in_an_xdist_worker() -> None:
    if "PYTEST_XDIST_WORKER" in os.environ:
        pytest.fail("schemathesis' tests do not run under pytest-xdist: run this module with -n 0")


@dataclass
class Account:
    """A user of the fuzzed app, with an API token that outlives the fuzzer revoking it."""

    app: FastAPI
    username: str
    token: str = ""

    def headers(self) -> dict[str, str]:
        if not self.token:
            # Scope full: every route the account may call is fuzzed, not refused for its scope.
            body = {"username": self.username, "password": PASSWORD, "scope": "full"}
            res = TestClient(self.app).post("/api/auth/token", json=body)
            assert res.status_code == 201, res.text
            self.token = res.json()["token"]
        return bearer(self.token)

    def after(self, case: Case[Any]) -> None:
        """A fuzzed DELETE may have revoked this token: get a new one next time if so."""
        if case.method.upper() != "DELETE":
            return
        if TestClient(self.app).get("/api/me", headers=bearer(self.token)).status_code == 401:
            self.token = ""


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, cheap_passwords: None) -> Iterator[FastAPI]:
    app = create_app(make_settings(tmp_path_factory.mktemp("fuzz"), workers=0, **UNLIMITED))
    yield app
    # schemathesis started the app's lifespan for its requests; end it with this module.
    asgi.shutdown_lifespans()


def _account(app: FastAPI, role: str) -> Account:
    username = unique_name(role)
    res = TestClient(app).post("/api/auth/register", json={"username": username, "password": PASSWORD})
    assert res.status_code == 201, res.text
    make_role(app, username, role)
    return Account(app, username)


@pytest.fixture(scope="module")
def learner(app: FastAPI) -> Account:
    return _account(app, "learner")


@pytest.fixture(scope="module")
def admin(app: FastAPI) -> Account:
    return _account(app, "admin")


def test_fuzzed_schema_is_the_app_schema(app: FastAPI) -> None:
    assert app.openapi() == schema.raw_schema


@pytest.mark.slow
@schema.parametrize()
def test_anonymous_requests_get_no_server_error(case: Case[Any], app: FastAPI) -> None:
    case.call_and_validate(app=app, checks=[not_a_server_error])


@pytest.mark.slow
@schema.parametrize()
def test_learner_requests_get_no_server_error(case: Case[Any], learner: Account) -> None:
    case.call_and_validate(app=learner.app, headers=learner.headers(), checks=[not_a_server_error])
    learner.after(case)


@pytest.mark.slow
@schema.parametrize()
def test_admin_requests_get_no_server_error(case: Case[Any], admin: Account) -> None:
    case.call_and_validate(app=admin.app, headers=admin.headers(), checks=[not_a_server_error])
    admin.after(case)


# --------------------------------------------------------------------------- edge values

NUL = "a\x00b"
EDGE_VALUES: list[Any] = [
    0,
    -1,
    2**31 - 1,  # the largest id a row can have (INTEGER is 32 bits on PostgreSQL)
    2**31,  # one past it
    2**63,  # one past SQLite's 64-bit integers
    "",
    NUL,
    "\ud800",  # a lone surrogate: valid JSON ("\\ud800"), not encodable as UTF-8
    "é✓💥",
    "x" * 70_000,  # beyond max_code_bytes and every max_length
    "'; DROP TABLE users; --",
    None,
    [],
]
# Only hashed, never stored nor queried: NUL is allowed in a password.
NOT_STORED = {"password", "old_password", "new_password"}
ASSIGNMENT: dict[str, Any] = {
    "title": "Edge",
    "problems": ["204"],
    "opens_at": "2030-01-01T00:00:00+00:00",
    "due_at": "2030-01-02T00:00:00+00:00",
    "late_counts": False,
}
# A valid body per operation that takes one; each field in turn is replaced by each edge value.
BODIES: dict[tuple[str, str], Callable[[str], dict[str, Any]]] = {
    ("POST", "/api/auth/register"): lambda _name: {
        "username": unique_name("edge"),
        "password": PASSWORD,
        "language": "en",
        "invite_code": "inv-edge",  # ignored while registration is open
    },
    ("PATCH", "/api/me"): lambda _name: {
        "language": "zh",
        "display_name": "",
        "on_leaderboard": True,
        "email": "edge@example.org",
    },
    ("PUT", "/api/admin/registration"): lambda _name: {"mode": "open"},
    ("POST", "/api/admin/invites"): lambda _name: {"note": "edge", "max_uses": 1, "expires_in_days": 1},
    ("PUT", "/api/problems/{problem_id}/draft"): lambda _name: {"code": "x = 1\n"},
    ("POST", "/api/auth/token"): lambda name: {
        "username": name,
        "password": PASSWORD,
        "name": "edge",
        "scope": "submit",
    },
    ("POST", "/api/auth/login"): lambda name: {"username": name, "password": PASSWORD},
    ("POST", "/api/me/tokens"): lambda _name: {"name": "edge", "scope": "submit"},
    # A wrong old password: the caller's password stays as the other bodies expect.
    ("POST", "/api/me/password"): lambda _name: {
        "old_password": "not the password",
        "new_password": "a new Pass phrase 9",
        "end_tokens": False,
    },
    ("POST", "/api/submissions"): lambda _name: {"problem_id": "204", "code": "print(1)\n", "mode": "run"},
    ("POST", "/api/scratch"): lambda _name: {"problem_id": "204", "code": "print(1)\n", "snippet": "1 + 1\n"},
    ("POST", "/api/admin/users/{user_id}/role"): lambda _name: {"role": "learner"},
    ("POST", "/api/classes"): lambda _name: {"name": "Edge class"},
    ("POST", "/api/classes/join"): lambda _name: {"code": "ABCD2345"},
    ("PATCH", "/api/classes/{class_id}"): lambda _name: {"name": "Edge", "joining_open": True},
    ("POST", "/api/classes/{class_id}/members"): lambda name: {"names": [name], "csv": ""},
    ("POST", "/api/classes/{class_id}/assignments"): lambda _name: ASSIGNMENT,
    ("PUT", "/api/classes/{class_id}/assignments/{assignment_id}"): lambda _name: ASSIGNMENT,
    ("PUT", "/api/classes/{class_id}/assignments/{assignment_id}/extensions/{user_id}"): lambda _name: {
        "due_at": "2030-01-02T00:00:00+00:00"
    },
}
# Error codes of callers refused before their input is read: who they are decides, not what they sent.
REFUSED = {"login_required", "admin_only"}
PATH_DEFAULTS = {
    "submission_id": "1",
    "token_id": "1",
    "problem_id": "204",
    "validation_id": "1",
    "scratch_id": "1",
    "user_id": "1",
    "invite_id": "1",
    "class_id": "1",
    "assignment_id": "1",
}


def _in_path(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    # Percent-encoded UTF-8 (a lone surrogate as the bytes Python would write for it), and within
    # what the test client sends in a URL (64 KiB).
    return quote(str(value)[:8192].encode("utf-8", "surrogatepass"), safe="")


def _error_code(res: Any) -> str | None:
    try:
        code: str = res.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None
    return code


def _body_properties(operation: dict[str, Any]) -> set[str]:
    ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    name = ref.rsplit("/", 1)[-1]
    return set(schema.raw_schema["components"]["schemas"][name]["properties"])


def _requests(name: str) -> Iterator[tuple[str, str, str, bytes | None, bool]]:
    """(label, method, url, JSON body, whether a NUL must be refused) for every edge value in every
    path parameter, query parameter and body field of every operation."""
    for path, item in schema.raw_schema["paths"].items():
        for method, operation in item.items():
            method = method.upper()
            params = operation.get("parameters", [])
            body = BODIES.get((method, path))
            if "requestBody" in operation:
                assert body is not None, f"{method} {path}: add a valid body to BODIES"
                assert set(body(name)) == _body_properties(operation), f"{method} {path}: update BODIES"
            defaults = {p["name"]: PATH_DEFAULTS[p["name"]] for p in params if p["in"] == "path"}

            def url(path_values: dict[str, str], query: str = "", path: str = path) -> str:
                return path.format(**path_values) + query

            base = json.dumps(body(name)).encode() if body else None
            for param in params:
                for value in EDGE_VALUES:
                    encoded = _in_path(value)
                    if encoded is None:
                        continue
                    label = f"{method} {path} {param['in']}.{param['name']}={value!r:.40}"
                    nul = value == NUL
                    if param["in"] == "path":
                        yield label, method, url({**defaults, param["name"]: encoded}), base, nul
                    elif param["in"] == "query":
                        yield label, method, url(defaults, f"?{param['name']}={encoded}"), base, nul
            if body is not None:
                for field in body(name):
                    for value in EDGE_VALUES:
                        data = {**body(name), field: value}
                        label = f"{method} {path} body.{field}={value!r:.40}"
                        nul = value == NUL and field not in NOT_STORED
                        yield label, method, url(defaults), json.dumps(data).encode(), nul


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    if request.param == "postgresql":
        url: str = request.getfixturevalue("postgres_url")  # skips without JUDGE_TEST_POSTGRES_URL
        return url
    return None


def test_edge_values_get_no_server_error(
    tmp_path: Path, database_url: str | None, cheap_passwords: None
) -> None:
    settings = make_settings(tmp_path, database_url=database_url, workers=0, **UNLIMITED)
    failures: list[str] = []
    with make_client(settings) as client:
        learner, _token = register(client)
        admin, admin_token = register(client)
        make_role(cast(FastAPI, client.app), admin, "admin")
        # An admin reaches every handler a learner does, and the admin ones; anonymous callers take
        # the branches without a user. Learners are fuzzed by schemathesis above.
        callers: dict[str, dict[str, str]] = {"anonymous": {}, "admin": bearer(admin_token)}
        sent = 0
        for label, method, url, body, nul in _requests(learner):
            for caller, headers in callers.items():
                headers = {**headers, "content-type": "application/json"} if body is not None else headers
                sent += 1
                try:
                    res = client.request(method, url, content=body, headers=headers)
                except Exception as exc:  # the test client re-raises what the app did not handle
                    failures.append(f"{caller}: {label}: raised {type(exc).__name__}: {exc}")
                    continue
                if res.status_code >= 500:
                    failures.append(f"{caller}: {label}: {res.status_code} {res.text[:200]}")
                # Refused up front, the same on SQLite as on PostgreSQL (which cannot store NUL),
                # unless the caller was turned away before the input was looked at.
                elif nul and res.status_code != 422 and _error_code(res) not in REFUSED:
                    failures.append(f"{caller}: {label}: a NUL got {res.status_code}, expected 422")
                if "/api/me/tokens/" in url and res.status_code == 204:
                    failures.append(f"{caller}: {label}: revoked the caller's own token; pick other ids")
    assert sent > 300
    assert not failures, "\n".join(failures)
