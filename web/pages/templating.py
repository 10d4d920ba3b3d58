"""Rendering a page: the Jinja2 environment, the context every page shares, security headers."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from babel.support import NullTranslations
from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from jinja2.utils import htmlsafe_json_dumps
from markupsafe import Markup

from web.auth.models import User
from web.auth.registration import registration_offered
from web.deps import Principal, platform_of, preview_of
from web.language import (
    DEFAULT_LANGUAGE,
    LANGUAGE_COOKIE,
    LANGUAGES,
    NATIVE_NAMES,
    Catalogs,
    Language,
    as_language,
)

WEB_DIR = Path(__file__).resolve().parent.parent
TEMPLATE_DIR = WEB_DIR / "templates"
STATIC_DIR = WEB_DIR / "static"
DIST_DIR = STATIC_DIR / "dist"


def content_security_policy(script_src: str = "'self'") -> str:
    """Pages run only our own bundle. KaTeX (and Swagger UI on /docs) set inline styles, hence
    'unsafe-inline' for styles only; scripts, fonts and data come from this origin alone (/docs
    adds the hash of its one inline script to `script_src`)."""
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src {script_src}",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


CONTENT_SECURITY_POLICY = content_security_policy()
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    # Pages show a learner's own data: never from a shared cache.
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class Assets:
    """The built bundle's URLs, with a content hash so browsers never run a stale one."""

    script: str | None
    style: str | None


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATE_DIR),
        autoescape=select_autoescape(["html"]),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


@lru_cache(maxsize=8)
def _digest(path: Path, _mtime_ns: int, _size: int) -> str:
    # Keyed by the file's stat, so the bundle is hashed once per build, not once per page.
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _versioned(path: Path) -> str | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return f"/static/dist/{path.name}?v={_digest(path, stat.st_mtime_ns, stat.st_size)}"


def assets() -> Assets:
    # Looked up per page (a stat each) so that a rebuild (`make frontend`) is picked up without
    # a restart.
    return Assets(_versioned(DIST_DIR / "app.js"), _versioned(DIST_DIR / "app.css"))


def page_language(request: Request, user: User | None) -> Language:
    """This browser's choice (its cookie, set by the switch), else the account's language (the
    last one chosen on any device: a browser that never chose follows it), else Chinese. A choice
    made on one device so never flips another device's open pages."""
    chosen = as_language(request.cookies.get(LANGUAGE_COOKIE))
    if chosen is not None:
        return chosen
    if user is not None:
        return as_language(user.language) or DEFAULT_LANGUAGE
    return DEFAULT_LANGUAGE


@lru_cache(maxsize=16)
def js_messages_json(catalogs: Catalogs, lang: Language) -> Markup:
    """The script's messages as every page embeds them (`|tojson`'s output, made once per
    language rather than for each page: a few hundred messages)."""
    env = environment()
    return htmlsafe_json_dumps(
        catalogs.js_messages(lang),
        dumps=env.policies["json.dumps_function"],
        **env.policies["json.dumps_kwargs"],
    )


def translations(request: Request, lang: Language) -> NullTranslations:
    """The pages' gettext in `lang`, from the catalogs the platform compiled at start-up."""
    return platform_of(request).catalogs.translations(lang)


def render(
    request: Request,
    template: str,
    principal: Principal | None,
    status_code: int = 200,
    **context: Any,
) -> HTMLResponse:
    html = render_html(request, template, principal, **context)
    return HTMLResponse(html, status_code=status_code, headers=PAGE_HEADERS)


def render_html(
    request: Request,
    template: str,
    principal: Principal | None,
    registration_open: bool | None = None,
    **context: Any,
) -> str:
    """The page's HTML. `registration_open`: the Register link as the caller already read it
    (a page kept for visitors is kept per value), else read here."""
    user = principal.user if principal else None
    lang = page_language(request, user)
    platform = platform_of(request)
    catalogs = platform.catalogs
    gettext = catalogs.translations(lang).gettext
    shared = {
        "request": request,
        "preview": preview_of(request),
        # A closed site offers no "Register" link (the page would only say it is closed).
        "registration_open": registration_offered(platform.factory, platform.settings)
        if registration_open is None
        else registration_open,
        "user": user,
        "csrf_token": principal.session.csrf_token if principal and principal.session else "",
        "lang": lang,
        "other_languages": [(code, NATIVE_NAMES[code]) for code in LANGUAGES if code != lang],
        "js_messages_json": js_messages_json(catalogs, lang),
        "assets": assets(),
        "current_path": request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        "_": gettext,
        "gettext": gettext,
        "ngettext": catalogs.translations(lang).ngettext,
    }
    html: str = environment().get_template(template).render(**shared, **context)
    return html
