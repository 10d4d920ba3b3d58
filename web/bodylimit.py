"""Request bodies capped per route before they are read into memory (a pure ASGI middleware).

A declared Content-Length over the route's cap is refused at once, before a byte of the body is
read; a body without one (chunked) is read only up to the cap and refused as soon as it passes
it. Either way the answer is 413 `payload_too_large` with `Connection: close`, so the server
stops reading the rest. The caps come from the settings (`BodyCaps.of`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from web import errors
from web.errors import N_, HtmlErrorPage, error_response
from web.settings import WebSettings

# The routes that carry code (the JSON API; no page form carries code) and the doors that take a
# password (the JSON API and the page forms). Every other route gets the general cap.
CODE_ROUTES = (
    ("POST", re.compile(r"/api/submissions")),
    ("POST", re.compile(r"/api/scratch")),  # the code and a snippet
    ("PUT", re.compile(r"/api/problems/[^/]+/draft")),
)
AUTH_ROUTES = (("POST", re.compile(r"/api/auth/(?:register|token|login)|/login|/register")),)


@dataclass(frozen=True)
class BodyCaps:
    code: int
    auth: int
    other: int

    @classmethod
    def of(cls, settings: WebSettings) -> BodyCaps:
        return cls(settings.max_code_body_bytes, settings.max_auth_body_bytes, settings.max_body_bytes)

    def for_route(self, method: str, path: str) -> int:
        if any(method == m and pattern.fullmatch(path) for m, pattern in CODE_ROUTES):
            return self.code
        if any(method == m and pattern.fullmatch(path) for m, pattern in AUTH_ROUTES):
            return self.auth
        return self.other


def size_text(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} bytes"


def _declared_length(scope: Scope) -> int | None:
    """The Content-Length that bounds the body, or None when the body's size is not declared
    (chunked: Transfer-Encoding wins over any Content-Length)."""
    length: int | None = None
    for name, value in scope["headers"]:
        if name == b"transfer-encoding":
            return None
        if name == b"content-length":
            try:
                length = int(value)
            except ValueError:
                return None  # not a length: count what comes instead
    return length


class BodyLimit:
    def __init__(
        self, app: ASGIApp, caps: Callable[[], BodyCaps], html_page: HtmlErrorPage | None = None
    ) -> None:
        # `caps` is asked on the first request: the settings are the platform's, known by then.
        self.app, self._caps_of, self.html_page = app, caps, html_page
        self._caps: BodyCaps | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._caps is None:
            self._caps = self._caps_of()
        cap = self._caps.for_route(scope["method"], scope["path"])
        declared = _declared_length(scope)
        if declared is not None:
            if declared > cap:
                await self._refuse(scope, receive, send, cap)
            else:
                await self.app(scope, receive, send)  # the server reads no more than declared
            return
        # No declared length: read the body here, keeping at most `cap` bytes, and hand it on.
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away: there is no one to answer
            chunk: bytes = message.get("body", b"")
            if len(body) + len(chunk) > cap:
                await self._refuse(scope, receive, send, cap)
                return
            body += chunk
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, cap: int) -> None:
        limit = size_text(cap)
        response = error_response(
            Request(scope),
            413,
            "payload_too_large",
            errors.Message(N_("The request is larger than {limit}, the limit here."), {"limit": limit}),
            # The rest of the body is never read: the connection ends with this answer.
            headers={"Connection": "close"},
            html_page=self.html_page,
        )
        await response(scope, receive, send)
