"""The limits that keep one caller from hurting the others, through the app (the test client):

- request bodies are capped per route before they are read (413 payload_too_large);
- failed log-ins are throttled by (username, address) and by address, never by username alone;
- registrations and password checks are counted per address (429 with Retry-After);
- /metrics answers only allowed addresses or the holder of the metrics token.

tests/web/test_server_limits.py checks what depends on uvicorn against a real `judge serve`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from tests.web.factories import (
    METRICS_HEADERS,
    METRICS_TOKEN,
    PASSWORD,
    bearer,
    make_client,
    make_settings,
    platform_of,
    register,
    unique_name,
)
from web.auth.models import User
from web.settings import WebSettings
from web.submissions.models import Submission

KIB = 1024


def quiet_app(tmp_path: Path, **overrides: Any) -> TestClient:
    return make_client(make_settings(tmp_path, workers=0, **overrides))


@pytest.fixture
def quiet(tmp_path: Path) -> Iterator[TestClient]:
    with quiet_app(tmp_path) as client:
        yield client


def client_at(client: TestClient, address: str) -> TestClient:
    """Another client of the same running app, seen as coming from `address`."""
    return TestClient(client.app, client=(address, 50000))


def assert_error(res: Any, status: int, code: str) -> dict[str, Any]:
    assert res.status_code == status, res.text
    body: dict[str, Any] = res.json()
    assert set(body) == {"error"} and set(body["error"]) >= {"code", "message"}, body
    assert body["error"]["code"] == code, body
    return body


def assert_too_large(res: Any, limit: int) -> None:
    body = assert_error(res, 413, "payload_too_large")
    assert f"{limit // KIB} KiB" in body["error"]["message"], body


def assert_rate_limited(res: Any, window_s: float) -> None:
    assert_error(res, 429, "rate_limited")
    assert 0 < int(res.headers["retry-after"]) <= window_s


def padded(body: dict[str, Any], size: int) -> bytes:
    """`body` as JSON, padded with spaces (still valid JSON) to exactly `size` bytes."""
    raw = json.dumps(body).encode()
    assert len(raw) <= size
    return raw + b" " * (size - len(raw))


def send(client: TestClient, method: str, path: str, content: Any, **headers: str) -> Any:
    return client.request(
        method, path, content=content, headers={"content-type": "application/json", **headers}
    )


def users_named(client: TestClient, name: str) -> int:
    with platform_of(client).factory() as db:
        return int(db.scalar(select(func.count()).where(func.lower(User.username) == name.lower())) or 0)


def count_submissions(client: TestClient) -> int:
    with platform_of(client).factory() as db:
        return int(db.scalar(select(func.count()).select_from(Submission)) or 0)


# ---------------------------------------------------------------- request bodies


def test_the_caps_come_from_the_settings(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    assert (settings.max_auth_body_bytes, settings.max_body_bytes) == (4 * KIB, 16 * KIB)
    # A code-carrying body holds max_code_bytes of code however JSON escapes it: at worst six
    # bytes a byte ("\u0001"), and room for the other fields.
    assert settings.max_code_body_bytes == 6 * settings.max_code_bytes + 4 * KIB
    smaller = WebSettings(**{**settings.model_dump(), "max_code_bytes": 1000})
    assert smaller.max_code_body_bytes == 6 * 1000 + 4 * KIB


@pytest.mark.parametrize("path", ["/api/auth/register", "/api/auth/token", "/api/auth/login"])
def test_auth_bodies_are_capped_at_4_kib(quiet: TestClient, path: str) -> None:
    cap = platform_of(quiet).settings.max_auth_body_bytes
    name = unique_name("big")
    body = {"username": name, "password": PASSWORD}
    assert_too_large(send(quiet, "POST", path, padded(body, cap + 1)), cap)
    assert users_named(quiet, name) == 0
    # Exactly the cap reaches the route.
    res = send(quiet, "POST", path, padded(body, cap))
    assert res.status_code == (201 if path.endswith("register") else 401), res.text


def test_a_chunked_body_without_a_length_is_counted_as_it_arrives(quiet: TestClient) -> None:
    cap = platform_of(quiet).settings.max_auth_body_bytes
    name = unique_name("chunked")
    raw = padded({"username": name, "password": PASSWORD}, cap + 1)

    def chunks(data: bytes) -> Iterator[bytes]:
        for i in range(0, len(data), 1000):
            yield data[i : i + 1000]

    res = send(quiet, "POST", "/api/auth/register", chunks(raw))
    assert_too_large(res, cap)
    assert users_named(quiet, name) == 0
    res = send(quiet, "POST", "/api/auth/register", chunks(raw[:-1]))  # the cap itself is fine
    assert res.status_code == 201, res.text


def test_the_login_and_register_forms_are_capped_like_the_api(quiet: TestClient) -> None:
    cap = platform_of(quiet).settings.max_auth_body_bytes
    for path in ("/login", "/register"):
        form = {"username": "x" * 200, "password": "y" * 200, "form_token": "z" * (cap - 400)}
        res = quiet.post(path, data=form)
        assert res.status_code == 413, res.text
        assert res.headers["content-type"].startswith("text/html")  # a page's error is a page
        assert "payload_too_large" in res.text and f"{cap // KIB} KiB" in res.text


def test_code_at_its_limit_fits_whatever_its_escaping(quiet: TestClient) -> None:
    settings = platform_of(quiet).settings
    _, token = register(quiet)
    # The worst case of JSON escaping: a control character becomes six bytes.
    code = "\x01" * settings.max_code_bytes
    body = json.dumps({"problem_id": "204", "code": code, "mode": "run"}).encode()
    assert len(body) > 6 * settings.max_code_bytes
    res = send(quiet, "POST", "/api/submissions", body, **bearer(token))
    assert res.status_code == 202, res.text
    saved = send(quiet, "PUT", "/api/problems/204/draft", json.dumps({"code": code}), **bearer(token))
    assert saved.status_code == 200, saved.text
    # Within the body cap but over the code cap: the code's own error, as before.
    over = send(quiet, "PUT", "/api/problems/204/draft", json.dumps({"code": "#" * 70_000}), **bearer(token))
    assert_error(over, 413, "code_too_large")


def test_code_bodies_over_their_cap_are_refused_and_lose_nothing(quiet: TestClient) -> None:
    cap = platform_of(quiet).settings.max_code_body_bytes
    _, token = register(quiet)
    draft = {"code": "# my draft\n"}
    assert (
        send(quiet, "PUT", "/api/problems/204/draft", json.dumps(draft), **bearer(token)).status_code == 200
    )

    res = send(quiet, "PUT", "/api/problems/204/draft", padded({"code": "x = 1\n"}, cap + 1), **bearer(token))
    assert_too_large(res, cap)
    kept = quiet.get("/api/problems/204/draft", headers=bearer(token)).json()
    assert kept["code"] == draft["code"]

    sub = {"problem_id": "204", "code": "x = 1\n", "mode": "run"}
    assert_too_large(send(quiet, "POST", "/api/submissions", padded(sub, cap + 1), **bearer(token)), cap)
    assert count_submissions(quiet) == 0
    assert send(quiet, "POST", "/api/submissions", padded(sub, cap), **bearer(token)).status_code == 202


def test_other_bodies_are_capped_at_16_kib(quiet: TestClient) -> None:
    cap = platform_of(quiet).settings.max_body_bytes
    _, token = register(quiet)
    res = send(quiet, "PATCH", "/api/me", padded({"language": "en"}, cap + 1), **bearer(token))
    assert_too_large(res, cap)
    assert quiet.get("/api/me", headers=bearer(token)).json()["language"] == "zh"
    assert (
        send(quiet, "PATCH", "/api/me", padded({"language": "en"}, cap), **bearer(token)).status_code == 200
    )
    assert_too_large(
        send(quiet, "POST", "/api/me/tokens", padded({"name": "t"}, cap + 1), **bearer(token)), cap
    )
    assert_too_large(send(quiet, "POST", "/api/admin/problems/sync", b"x" * (cap + 1), **bearer(token)), cap)
    page = quiet.post("/lang", data={"lang": "en", "next": "x" * cap})
    assert page.status_code == 413 and page.headers["content-type"].startswith("text/html")


# ---------------------------------------------------------------- failed log-ins


def test_failures_for_a_name_from_one_address_do_not_lock_its_owner_out(tmp_path: Path) -> None:
    with quiet_app(tmp_path, login_failures_per_user=10, login_failures_per_address=100) as client:
        name, _ = register(client)
        attacker = client_at(client, "203.0.113.7")
        wrong = {"username": name, "password": "not the password"}
        for _ in range(10):
            assert_error(attacker.post("/api/auth/login", json=wrong), 401, "bad_credentials")
        assert_rate_limited(attacker.post("/api/auth/login", json=wrong), 300)
        right = {"username": name, "password": PASSWORD}
        # The attacker's address waits for that name, even with the right password...
        assert_rate_limited(attacker.post("/api/auth/token", json=right), 300)
        # ...and its owner, elsewhere, logs in.
        owner = client_at(client, "198.51.100.20")
        assert owner.post("/api/auth/login", json=right).status_code == 200
        assert owner.post("/api/auth/token", json=right).status_code == 201


def test_an_address_over_its_failure_limit_is_refused_for_every_name(tmp_path: Path) -> None:
    with quiet_app(tmp_path, login_failures_per_user=100, login_failures_per_address=5) as client:
        names = [register(client)[0] for _ in range(2)]
        guesser = client_at(client, "203.0.113.8")
        for i in range(5):
            res = guesser.post("/api/auth/token", json={"username": f"guess{i}", "password": "password1"})
            assert_error(res, 401, "bad_credentials")
        for name in [*names, "guess9"]:
            right = {"username": name, "password": PASSWORD}
            assert_rate_limited(guesser.post("/api/auth/login", json=right), 300)
        assert (
            client_at(client, "198.51.100.21")
            .post("/api/auth/login", json={"username": names[0], "password": PASSWORD})
            .status_code
            == 200
        )


# ---------------------------------------------------------------- registrations and password checks


def test_registrations_are_limited_per_address(tmp_path: Path) -> None:
    with quiet_app(tmp_path, registrations_per_address=2, register_window_s=3600) as client:
        here = client_at(client, "203.0.113.9")
        for _ in range(2):
            res = here.post("/api/auth/register", json={"username": unique_name(), "password": PASSWORD})
            assert res.status_code == 201, res.text
        name = unique_name("third")
        assert_rate_limited(
            here.post("/api/auth/register", json={"username": name, "password": PASSWORD}), 3600
        )
        assert users_named(client, name) == 0
        # The form is the same door.
        page = here.get("/register")
        token = re.search(r'name="form_token" value="([^"]+)"', page.text)
        assert token is not None
        form = {"username": name, "password": PASSWORD, "password_again": PASSWORD, "form_token": token[1]}
        refused = here.post("/register", data=form, follow_redirects=False)
        assert refused.status_code == 429, refused.text
        assert users_named(client, name) == 0
        # Another address registers.
        there = client_at(client, "198.51.100.22")
        ok = there.post("/api/auth/register", json={"username": name, "password": PASSWORD})
        assert ok.status_code == 201, ok.text


def test_password_checks_are_limited_per_address_success_or_not(tmp_path: Path) -> None:
    with quiet_app(
        tmp_path, password_checks_per_address=4, password_window_s=300, login_failures_per_user=100
    ) as client:
        name, _ = register(client_at(client, "198.51.100.23"))
        right = {"username": name, "password": PASSWORD}
        api, browser = client_at(client, "203.0.113.10"), client_at(client, "203.0.113.10")
        assert api.post("/api/auth/login", json=right).status_code == 200
        assert api.post("/api/auth/token", json=right).status_code == 201
        assert api.post("/api/auth/login", json={**right, "password": "wrong password"}).status_code == 401

        def form_login() -> Any:
            browser.cookies.clear()
            token = re.search(r'name="form_token" value="([^"]+)"', browser.get("/login").text)
            assert token is not None
            return browser.post("/login", data={**right, "form_token": token[1]}, follow_redirects=False)

        assert form_login().status_code == 303
        # Four checks: the fifth waits, whichever door and whoever's name.
        assert_rate_limited(api.post("/api/auth/token", json=right), 300)
        assert_rate_limited(api.post("/api/auth/login", json={"username": "nobody", "password": "x"}), 300)
        again = form_login()
        assert again.status_code == 429 and "秒后再试" in again.text
        # Another address is not held back.
        assert client_at(client, "198.51.100.24").post("/api/auth/token", json=right).status_code == 201


# ---------------------------------------------------------------- /metrics


def test_metrics_need_the_token_or_an_allowed_address(quiet: TestClient) -> None:
    # The test client's address ("testclient") is not allowed: the token is needed.
    assert_error(quiet.get("/metrics"), 403, "forbidden")
    assert_error(quiet.get("/metrics", headers=bearer("not-the-token")), 403, "forbidden")
    _, api_token = register(quiet)
    assert_error(quiet.get("/metrics", headers=bearer(api_token)), 403, "forbidden")  # not an API token
    assert_error(quiet.get("/metrics", headers={"Authorization": METRICS_TOKEN}), 403, "forbidden")
    res = quiet.get("/metrics", headers=METRICS_HEADERS)
    assert res.status_code == 200 and "judge_queue_depth" in res.text
    # Loopback is allowed by default, without a token.
    for address in ("127.0.0.1", "::1"):
        assert client_at(quiet, address).get("/metrics").status_code == 200
    assert_error(client_at(quiet, "192.0.2.1").get("/metrics"), 403, "forbidden")


def test_metrics_allow_and_no_token(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with quiet_app(tmp_path / "a", metrics_token=None, metrics_allow="10.1.0.0/16, 192.0.2.5") as client:
        assert client_at(client, "10.1.2.3").get("/metrics").status_code == 200
        assert client_at(client, "192.0.2.5").get("/metrics").status_code == 200
        for address in ("127.0.0.1", "10.2.0.1", "testclient"):
            assert_error(client_at(client, address).get("/metrics"), 403, "forbidden")
        # No token configured: no bearer opens it.
        assert_error(client.get("/metrics", headers=METRICS_HEADERS), 403, "forbidden")
    with quiet_app(tmp_path / "b", metrics_allow="") as client:  # the token alone
        assert_error(client_at(client, "127.0.0.1").get("/metrics"), 403, "forbidden")
        assert client_at(client, "127.0.0.1").get("/metrics", headers=METRICS_HEADERS).status_code == 200


@pytest.mark.parametrize(
    "values",
    [{"metrics_allow": "127.0.0.1, not-an-address"}, {"trusted_proxies": "10.0.0.1,nonsense"}],
)
def test_address_settings_are_checked(values: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="address"):
        make_settings(tmp_path, **values)


def test_trusted_proxies_are_given_to_uvicorn_as_it_reads_them(tmp_path: Path) -> None:
    def proxies(value: str) -> list[str]:
        return make_settings(tmp_path, trusted_proxies=value).trusted_proxy_list()

    assert proxies("") == []
    assert proxies(" 127.0.0.1 , ::1,") == ["127.0.0.1", "::1"]
    assert proxies("10.0.0.1/8") == ["10.0.0.0/8"]
    assert proxies("10.0.0.1, *") == ["*"]
