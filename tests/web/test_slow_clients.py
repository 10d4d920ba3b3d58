"""Slow clients against a real `judge serve` (uvicorn): a request's head must arrive within
JUDGE_HEADER_TIMEOUT_S of the connection opening (or of the previous answer on a kept-alive
connection), and its body within JUDGE_BODY_TIMEOUT_S of its head; else the server closes the
connection. Without these a client that sends a byte a second (slowloris) holds a connection,
and the memory and task behind it, for as long as it likes. A request that arrived in time is
never cut, however long its answer takes (a long-poll).
"""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from collections.abc import Iterator
from itertools import cycle

import pytest

from tests.web.factories import PASSWORD, Server, serving, unique_name

pytestmark = pytest.mark.slow

HEADER_S = 2.0
BODY_S = 2.0
# How much later than its deadline the server may close: the loop's timer, a loaded test machine.
SLACK_S = 2.5
# How long a test keeps trickling before it concludes that the server would never close.
PATIENCE_S = 15.0


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("slow-clients")
    env = {"JUDGE_WORKERS": "0", "JUDGE_HEADER_TIMEOUT_S": str(HEADER_S), "JUDGE_BODY_TIMEOUT_S": str(BODY_S)}
    with serving(tmp, **env) as server:
        yield server


def connect(server: Server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def closed_by_server(sock: socket.socket, wait_s: float) -> bool:
    """Whether the server closes (EOF or reset) within `wait_s`; what it sent before is ignored."""
    sock.settimeout(wait_s)
    deadline = time.monotonic() + wait_s
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return False


def trickle(sock: socket.socket, data: bytes, every_s: float = 0.5) -> float | None:
    """Send `data` (over and over) a byte every `every_s`; the seconds until the server closed the
    connection, or None when it was still open after PATIENCE_S."""
    start = time.monotonic()
    for byte in cycle(data):
        elapsed = time.monotonic() - start
        if elapsed > PATIENCE_S:
            return None
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            return elapsed
        if closed_by_server(sock, every_s):
            return time.monotonic() - start
    raise AssertionError("unreachable")


def head(server: Server, method: str, path: str, *headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{server.port}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def assert_cut_in_time(closed_after: float | None, deadline_s: float) -> None:
    assert closed_after is not None, f"the server kept a trickling connection open for {PATIENCE_S} s"
    assert deadline_s - 0.5 <= closed_after <= deadline_s + SLACK_S, closed_after


def test_a_request_head_sent_a_byte_at_a_time_is_cut_off(guarded: Server) -> None:
    with connect(guarded) as sock:
        slow_head = head(guarded, "GET", "/healthz", "X-Padding: " + "a" * 200)
        assert_cut_in_time(trickle(sock, slow_head), HEADER_S)


def test_a_connection_that_sends_nothing_is_closed(guarded: Server) -> None:
    with connect(guarded) as sock:
        start = time.monotonic()
        assert closed_by_server(sock, PATIENCE_S), f"an idle connection stayed open for {PATIENCE_S} s"
        assert_cut_in_time(time.monotonic() - start, HEADER_S)


@pytest.mark.parametrize("framing", ["Content-Length: 300", "Transfer-Encoding: chunked"])
def test_a_body_sent_a_byte_at_a_time_is_cut_off(guarded: Server, framing: str) -> None:
    body = json.dumps({"username": "x" * 100, "password": "y" * 150}).encode()
    if framing.startswith("Transfer"):
        body = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    with connect(guarded) as sock:
        sock.sendall(head(guarded, "POST", "/api/auth/login", "Content-Type: application/json", framing))
        assert_cut_in_time(trickle(sock, body), BODY_S)


def test_the_next_request_on_a_kept_alive_connection_is_timed_too(guarded: Server) -> None:
    with connect(guarded) as sock:
        sock.sendall(head(guarded, "GET", "/healthz"))
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            answer += sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        assert_cut_in_time(
            trickle(sock, head(guarded, "GET", "/healthz", "X-Padding: " + "b" * 200)), HEADER_S
        )


def api(server: Server, method: str, path: str, body: object = None, token: str = "") -> object:
    request = urllib.request.Request(
        server.url + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={
            "Content-Type": "application/json",
            **({"Authorization": f"Bearer {token}"} if token else {}),
        },
    )
    with urllib.request.urlopen(request, timeout=30) as res:
        return json.loads(res.read())


def test_a_request_that_arrived_in_time_is_answered_however_long_it_takes(guarded: Server) -> None:
    """The deadlines bound the client's sending, not the server's answer: a long-poll that
    outlasts both is answered, and a body sent in a few pieces within its deadline is read."""
    name = unique_name("slow")
    api(guarded, "POST", "/api/auth/register", {"username": name, "password": PASSWORD})
    made = api(guarded, "POST", "/api/auth/token", {"username": name, "password": PASSWORD})
    assert isinstance(made, dict)
    token = str(made["token"])
    sub = api(guarded, "POST", "/api/submissions", {"problem_id": "204", "code": "x = 1\n"}, token)
    assert isinstance(sub, dict)
    wait_s = HEADER_S + BODY_S + 1
    start = time.monotonic()
    got = api(guarded, "GET", f"/api/submissions/{sub['id']}?wait={wait_s}", token=token)
    assert isinstance(got, dict) and got["status"] == "queued"  # no worker: it waited the whole time
    assert time.monotonic() - start >= wait_s - 0.5

    body = json.dumps({"username": name, "password": PASSWORD}).encode()
    with connect(guarded) as sock:
        sock.sendall(
            head(
                guarded,
                "POST",
                "/api/auth/login",
                "Content-Type: application/json",
                f"Content-Length: {len(body)}",
            )
        )
        for piece in (body[:10], body[10:20], body[20:]):
            time.sleep(BODY_S / 6)
            sock.sendall(piece)
        sock.settimeout(10)
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
