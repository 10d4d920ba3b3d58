"""The limits whose behaviour is the server's, against a real `judge serve` (uvicorn):

- a body over its route's cap is answered 413 before it is read: a declared 200 MB at once, a
  chunked one as soon as the cap is passed, and the server's memory does not grow with it;
- X-Forwarded-For is believed only from JUDGE_TRUSTED_PROXIES, so the per-address limits and
  /metrics' allowed addresses cannot be dodged by naming another address;
- concurrent registrations of case variants of one name: one account, the rest 409, on SQLite and
  on PostgreSQL (the database's unique index decides).
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.web.factories import PASSWORD, Server, serving, unique_name

pytestmark = pytest.mark.slow

MIB = 1024 * 1024
LOGIN_LIMITS = {"JUDGE_LOGIN_FAILURES_PER_ADDRESS": "3", "JUDGE_LOGIN_FAILURES_PER_USER": "100"}


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server that trusts no proxy (the default)."""
    with serving(tmp_path_factory.mktemp("plain"), JUDGE_WORKERS="0", **LOGIN_LIMITS) as server:
        yield server


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server behind a proxy on 127.0.0.1 (the tests play the proxy)."""
    tmp = tmp_path_factory.mktemp("proxied")
    with serving(tmp, JUDGE_WORKERS="0", JUDGE_TRUSTED_PROXIES="127.0.0.1", **LOGIN_LIMITS) as server:
        yield server


def call(
    server: Server,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    request = urllib.request.Request(
        server.url + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as res:
            raw = res.read()
            status = res.status
    except urllib.error.HTTPError as err:
        raw, status = err.read(), err.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode()


def memory_kib(server: Server, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for the server")


class PeakMemory:
    """The server's largest resident size while the block runs, sampled every few milliseconds."""

    def __init__(self, server: Server) -> None:
        self.server, self.peak_kib, self._done = server, memory_kib(server), threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak_kib = max(self.peak_kib, memory_kib(self.server))
            time.sleep(0.002)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        time.sleep(0.2)  # what the last bytes sent made the server hold
        self._done.set()
        self._thread.join()


class Reader(threading.Thread):
    """Everything the server sends on a socket, until it closes it."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(daemon=True)
        self.sock, self.data = sock, b""

    def run(self) -> None:
        try:
            while chunk := self.sock.recv(65536):
                self.data += chunk
        except OSError:
            pass  # reset after the answer: what was answered is kept

    def status(self) -> int:
        head = self.data.split(b"\r\n", 1)[0].split()
        assert len(head) >= 2 and head[0].startswith(b"HTTP/"), self.data[:200]
        return int(head[1])

    def error(self) -> dict[str, Any]:
        body = json.loads(self.data.split(b"\r\n\r\n", 1)[1])
        error: dict[str, Any] = body["error"]
        return error


def request_head(server: Server, path: str, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{server.port}", "Content-Type: application/json"]
    return ("\r\n".join([*lines, *headers]) + "\r\n\r\n").encode()


# ---------------------------------------------------------------- request bodies


def test_a_declared_200_mb_body_is_refused_before_it_is_sent(plain: Server) -> None:
    with socket.create_connection(("127.0.0.1", plain.port), timeout=15) as sock:
        reader = Reader(sock)
        reader.start()
        sock.sendall(request_head(plain, "/api/auth/register", f"Content-Length: {200 * MIB}"))
        sock.sendall(b'{"username": "')  # and not one byte more: the answer must come anyway
        reader.join(timeout=10)
        assert not reader.is_alive(), f"no answer (or the connection was kept) within 10 s: {reader.data!r}"
    assert reader.status() == 413, reader.data[:300]
    assert b"connection: close" in reader.data.lower()
    error = reader.error()
    assert error["code"] == "payload_too_large" and "4 KiB" in error["message"], error


def test_a_chunked_body_is_cut_off_at_its_cap_and_memory_stays_low(plain: Server) -> None:
    before = memory_kib(plain)
    frame = b"%x\r\n" % MIB + b"x" * MIB + b"\r\n"
    sent = 0
    with PeakMemory(plain) as memory, socket.create_connection(("127.0.0.1", plain.port), timeout=30) as sock:
        reader = Reader(sock)
        reader.start()
        sock.sendall(request_head(plain, "/api/auth/login", "Transfer-Encoding: chunked"))
        try:
            for _ in range(50):  # 50 MB, unless the server stops taking them
                sock.sendall(frame)
                sent += 1
            sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed: the rest is never sent
        reader.join(timeout=15)
    grown_mib = (memory.peak_kib - before) / 1024
    assert reader.status() == 413, reader.data[:300]
    assert reader.error()["code"] == "payload_too_large"
    assert sent < 50, "the server read the whole 50 MB body"
    assert grown_mib < 10, f"the server grew by {grown_mib:.0f} MiB for a body it refused"
    assert memory_kib(plain) - before < 10 * 1024
    status, _ = call(plain, "GET", "/healthz")  # and it serves on
    assert status == 200


# ---------------------------------------------------------------- forwarded addresses


def failed_token_request(server: Server, forwarded_for: str | None = None) -> int:
    body = {"username": unique_name("guess"), "password": "not the password"}
    headers = {} if forwarded_for is None else {"X-Forwarded-For": forwarded_for}
    status, _ = call(server, "POST", "/api/auth/token", body, headers)
    return status


def test_forwarded_for_from_an_untrusted_peer_is_ignored(plain: Server) -> None:
    # Each failure claims another address: all of them count against the real one (127.0.0.1).
    statuses = [failed_token_request(plain, f"203.0.113.{i}") for i in range(4)]
    assert statuses == [401, 401, 401, 429]
    # /metrics is for loopback (the real peer), whatever the header claims.
    assert call(plain, "GET", "/metrics", headers={"X-Forwarded-For": "203.0.113.9"})[0] == 200


def test_forwarded_for_from_a_trusted_proxy_is_the_address(proxied: Server) -> None:
    # Behind the proxy, each learner is the address the proxy names.
    assert [failed_token_request(proxied, f"203.0.113.{i}") for i in range(5)] == [401] * 5
    assert [failed_token_request(proxied, "198.51.100.7") for _ in range(4)] == [401, 401, 401, 429]
    assert failed_token_request(proxied, "198.51.100.8") == 401
    # A forwarded learner is not loopback: /metrics refuses them; the proxy itself is allowed.
    status, body = call(proxied, "GET", "/metrics", headers={"X-Forwarded-For": "203.0.113.9"})
    assert status == 403 and body["error"]["code"] == "forbidden"
    assert call(proxied, "GET", "/metrics")[0] == 200


# ---------------------------------------------------------------- case variants of one name


def case_variants(name: str, count: int) -> list[str]:
    letters = [i for i, c in enumerate(name) if c.isalpha()][: count.bit_length() - 1]
    variants = []
    for bits in range(count):
        chars = list(name)
        for n, i in enumerate(letters):
            if bits >> n & 1:
                chars[i] = chars[i].upper()
        variants.append("".join(chars))
    assert len(set(variants)) == count
    return variants


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_concurrent_case_variants_make_one_account(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = {"JUDGE_WORKERS": "0"}
    if dialect == "postgresql":
        env["JUDGE_DATABASE_URL"] = request.getfixturevalue("postgres_url")
    with serving(tmp_path, **env) as server:
        for _round in range(2):
            names = case_variants(unique_name("racer"), 8)
            barrier = threading.Barrier(len(names))

            def register(name: str, barrier: threading.Barrier = barrier) -> tuple[int, Any]:
                barrier.wait()
                return call(server, "POST", "/api/auth/register", {"username": name, "password": PASSWORD})

            with ThreadPoolExecutor(len(names)) as pool:
                answers = list(pool.map(register, names))
            statuses = sorted(status for status, _ in answers)
            assert statuses == [201] + [409] * (len(names) - 1), answers
            assert all(body["error"]["code"] == "username_taken" for status, body in answers if status == 409)
            [winner] = [body["username"] for status, body in answers if status == 201]
            # Whoever won logs in under any spelling of the name.
            for spelling in (winner, winner.upper(), names[3]):
                status, _ = call(
                    server, "POST", "/api/auth/login", {"username": spelling, "password": PASSWORD}
                )
                assert status == 200, spelling
