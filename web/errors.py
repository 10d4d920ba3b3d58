"""Errors as JSON: {"error": {"code": "...", "message": "..."}} with a fitting HTTP status."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


# Paths that answer in JSON (or are machine-read); every other path is a page and gets an HTML error.
MACHINE_PATHS = ("/api/", "/static/", "/healthz", "/metrics", "/docs", "/openapi.json", "/redoc")

# Renders an error as a page: (request, status, code, message) -> response.
HtmlErrorPage = Callable[[Request, int, str, str], Response]


def error_response(
    request: Request,
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
    html_page: HtmlErrorPage | None = None,
    **extra: Any,
) -> Response:
    """The error as JSON, or as a page for a path that is a page (when `html_page` is given)."""
    if html_page is not None and not request.url.path.startswith(MACHINE_PATHS):
        response = html_page(request, status, code, message)
        response.headers.update(headers or {})
        return response
    return JSONResponse(error_body(code, message, **extra), status, headers=headers)


def install_error_handlers(app: FastAPI, html_page: HtmlErrorPage | None = None) -> None:
    def answer(
        request: Request,
        status: int,
        code: str,
        message: str,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> Response:
        return error_response(request, status, code, message, headers, html_page, **extra)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        return answer(request, exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        details = [
            {"where": ".".join(str(p) for p in e.get("loc", ())), "problem": str(e.get("msg", ""))}
            for e in exc.errors()
        ]
        first = details[0] if details else {"where": "", "problem": "invalid request"}
        message = f"{first['where']}: {first['problem']}" if first["where"] else first["problem"]
        return answer(request, 422, "invalid_request", message, details=details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        codes = {404: "not_found", 405: "method_not_allowed", 401: "unauthorized", 403: "forbidden"}
        code = codes.get(exc.status_code, "http_error")
        return answer(request, exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))


def ensure_code_fits(code: str, limit_bytes: int) -> None:
    """Submissions and drafts share one cap: a draft that could never be submitted is refused early."""
    if len(code.encode("utf-8")) > limit_bytes:
        kib = limit_bytes // 1024
        raise ApiError(413, "code_too_large", f"代码超过 {kib} KiB / your code is larger than {kib} KiB")
