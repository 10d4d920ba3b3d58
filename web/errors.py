"""Errors as JSON: {"error": {"code": "...", "message": "..."}} with a fitting HTTP status.

`code` is stable, for programs; `message` is for people, in the reader's language only. An error
is raised with an English message id (marked with N_() so that `make i18n` extracts it) and its
values; the text is made when the answer is, once the reader's language is known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from judge.core.errors import JudgeError
from web.language import LANGUAGE_COOKIE, Catalogs, reader_language


def N_(message: str) -> str:
    """Marks an English message id for extraction; it is translated later, for its reader."""
    return message


@dataclass(frozen=True)
class Message:
    """A message id and the values its {placeholders} take (names, numbers: never translated)."""

    id: str
    params: Mapping[str, object] = field(default_factory=dict)

    def text(self, gettext: Callable[[str], str]) -> str:
        translated = gettext(self.id)
        return translated.format(**self.params) if self.params else translated


class ApiError(JudgeError):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        headers: dict[str, str] | None = None,
        params: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.headers = status, code, headers
        self.message = Message(message, params or {})


# What is missing, by kind: the id is shown, so "not found" reads the same for another's row
# as for one that does not exist.
Missing = Literal["problem", "submission", "validation", "token"]
NOT_FOUND: dict[Missing, str] = {
    "problem": N_("There is no problem {id}."),
    "submission": N_("There is no submission {id}."),
    "validation": N_("There is no validation {id}."),
    "token": N_("There is no such token."),
}


def not_found(kind: Missing, ident: object = None) -> ApiError:
    return ApiError(404, "not_found", NOT_FOUND[kind], params={"id": ident})


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def api_gettext(request: Request) -> Callable[[str], str]:
    """The API's words for this request: `?lang=`, else Accept-Language (the site's script sends
    its page's language), else the language cookie, else Chinese."""
    catalogs: Catalogs = request.app.state.platform.catalogs
    lang = reader_language(
        request.query_params.get("lang"),
        request.headers.get("accept-language", ""),
        request.cookies.get(LANGUAGE_COOKIE),
    )
    return catalogs.translations(lang).gettext


# Paths that answer in JSON (or are machine-read); every other path is a page and gets an HTML error.
MACHINE_PATHS = ("/api/", "/static/", "/healthz", "/metrics", "/docs", "/openapi.json")

# Renders an error as a page: (request, status, code, message) -> response. The page translates
# the message into the page's own language.
HtmlErrorPage = Callable[[Request, int, str, Message], Response]


def error_response(
    request: Request,
    status: int,
    code: str,
    message: Message,
    headers: dict[str, str] | None = None,
    html_page: HtmlErrorPage | None = None,
    **extra: Any,
) -> Response:
    """The error as JSON, or as a page for a path that is a page (when `html_page` is given)."""
    if html_page is not None and not request.url.path.startswith(MACHINE_PATHS):
        response = html_page(request, status, code, message)
        response.headers.update(headers or {})
        return response
    text = message.text(api_gettext(request))
    return JSONResponse(error_body(code, text, **extra), status, headers=headers)


# Starlette's own errors (no route, wrong method): a sentence for each, the code for programs.
HTTP_ERRORS: dict[int, tuple[str, str]] = {
    401: ("unauthorized", N_("Log in first.")),
    403: ("forbidden", N_("You may not do this.")),
    404: ("not_found", N_("There is nothing at this address.")),
    405: ("method_not_allowed", N_("This address does not take that method.")),
}


def install_error_handlers(app: FastAPI, html_page: HtmlErrorPage | None = None) -> None:
    def answer(
        request: Request,
        status: int,
        code: str,
        message: Message,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> Response:
        return error_response(request, status, code, message, headers, html_page, **extra)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        return answer(request, exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        # The details (pydantic's own English) are for programs; the message names the field.
        details = [
            {"where": ".".join(str(p) for p in e.get("loc", ())), "problem": str(e.get("msg", ""))}
            for e in exc.errors()
        ]
        where = details[0]["where"] if details else ""
        message = (
            Message(N_("This request is not valid: look at {where}."), {"where": where})
            if where
            else Message(N_("This request is not valid."))
        )
        return answer(request, 422, "invalid_request", message, details=details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        code, text = HTTP_ERRORS.get(exc.status_code, ("http_error", N_("The request failed.")))
        return answer(request, exc.status_code, code, Message(text), getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> Response:
        # Starlette logs the exception and raises it again after this answer is sent.
        return answer(request, 500, "internal_error", Message(N_("Something broke on the server.")))


def ensure_code_fits(code: str, limit_bytes: int) -> None:
    """Submissions and drafts share one cap: a draft that could never be submitted is refused early."""
    if len(code.encode("utf-8")) > limit_bytes:
        kib = limit_bytes // 1024
        raise ApiError(413, "code_too_large", N_("Your code is larger than {kib} KiB."), params={"kib": kib})
