"""Errors on pages are pages: what went wrong in the reader's language, and a way on."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import Response

from web.errors import Message
from web.pages.templating import page_language, render, translations


def error_page(request: Request, status: int, code: str, message: Message) -> Response:
    principal = getattr(request.state, "principal", None)
    lang = page_language(request, principal.user if principal else None)
    text = message.text(translations(request, lang).gettext)
    return render(request, "error.html", principal, status, status=status, code=code, message=text)
