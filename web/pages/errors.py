"""Errors on pages are pages: what went wrong in the reader's language, and a way on."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import Response

from web.pages.templating import render


def error_page(request: Request, status: int, code: str, message: str) -> Response:
    principal = getattr(request.state, "principal", None)
    return render(request, "error.html", principal, status, status=status, code=code, message=message)
