"""Property-based fuzzing of every API operation from the app's own OpenAPI schema (schemathesis).

The app runs in-process over ASGI (no server, no network) and no worker judges anything
(workers=0). The property is the `not_a_server_error` check: whatever a client sends, anonymously,
with a learner's API token or with an admin's, the answer is never a 5xx. A small `max_examples`
keeps the module well under a minute.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import pytest
import schemathesis
from fastapi import FastAPI
from schemathesis.checks import not_a_server_error
from schemathesis.python import asgi
from sqlalchemy import select

from web.app import create_app
from web.auth.models import User
from web.platform import Platform

with warnings.catch_warnings():
    # Starlette 1.x deprecates httpx for its TestClient in favour of httpx2, and the repository pins
    # httpx 0.28 (requirements-dev.txt): under `filterwarnings = error` the import itself would fail.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from tests.web.factories import PASSWORD, bearer, make_settings, unique_name

MAX_EXAMPLES = 25

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
UNLIMITED = {
    "login_failures_per_user": 10**6,
    "login_failures_per_address": 10**6,
    "submits_per_user": 10**6,
    "submits_per_address": 10**6,
}


@dataclass
class Account:
    """A user of the fuzzed app whose API token survives the fuzzer revoking it."""

    app: FastAPI
    username: str
    token: str = ""

    def headers(self) -> dict[str, str]:
        with asgi.get_client(self.app) as client:
            if not self.token or client.get("/api/me", headers=bearer(self.token)).status_code == 401:
                res = client.post("/api/auth/token", json={"username": self.username, "password": PASSWORD})
                assert res.status_code == 201, res.text
                self.token = res.json()["token"]
        return bearer(self.token)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    settings = make_settings(tmp_path_factory.mktemp("fuzz"), workers=0, **UNLIMITED)
    app = create_app(settings)
    yield app
    # schemathesis started the app's lifespan for its requests; end it with this module.
    asgi.shutdown_lifespans()


def _openapi() -> dict[str, Any]:
    """The app's OpenAPI document, without a database: the schema depends on the routes alone."""
    stub = cast(Platform, object())  # never touched: no request reaches this app
    return create_app(platform=stub).openapi()


# Loaded at collection: schemathesis' lazy `from_fixture` loader does not work with pytest 9
# (it sets `request.node._nodeid`, which pytest 9 no longer has).
schema = schemathesis.openapi.from_dict(_openapi(), config=schemathesis.Config.from_dict(CONFIG))


def test_schema_is_the_app_schema(app: FastAPI) -> None:
    assert app.openapi() == schema.raw_schema


def _account(app: FastAPI, role: str) -> Account:
    username = unique_name(role)
    with asgi.get_client(app) as client:
        res = client.post("/api/auth/register", json={"username": username, "password": PASSWORD})
        assert res.status_code == 201, res.text
    with app.state.platform.factory() as db:
        user = db.scalar(select(User).where(User.username == username))
        assert user is not None
        user.role = role
        db.commit()
    return Account(app, username)


@pytest.fixture(scope="module")
def learner(app: FastAPI) -> Account:
    return _account(app, "learner")


@pytest.fixture(scope="module")
def admin(app: FastAPI) -> Account:
    return _account(app, "admin")


@pytest.mark.slow
@schema.parametrize()
def test_anonymous_requests_get_no_server_error(case: schemathesis.Case, app: FastAPI) -> None:
    case.call_and_validate(app=app, checks=[not_a_server_error])


@pytest.mark.slow
@schema.parametrize()
def test_learner_requests_get_no_server_error(case: schemathesis.Case, learner: Account) -> None:
    case.call_and_validate(app=learner.app, headers=learner.headers(), checks=[not_a_server_error])


@pytest.mark.slow
@schema.parametrize()
def test_admin_requests_get_no_server_error(case: schemathesis.Case, admin: Account) -> None:
    case.call_and_validate(app=admin.app, headers=admin.headers(), checks=[not_a_server_error])


import time as _t
from collections import Counter as _C
_T: _C[str] = _C()
_N: _C[str] = _C()
_orig = schemathesis.Case.call_and_validate
def _timed(self, *a, **k):  # type: ignore[no-untyped-def]
    s = _t.perf_counter()
    try:
        return _orig(self, *a, **k)
    finally:
        _T[self.operation.label] += _t.perf_counter() - s
        _N[self.operation.label] += 1
schemathesis.Case.call_and_validate = _timed  # type: ignore[method-assign]
def test_zz_report() -> None:
    for k, v in _T.most_common():
        print(f"{v:7.2f}s {_N[k]:5d} {k}")
