"""Log in, register, log out (here or everywhere), the language switch, and the settings page (API
tokens, language, log-out everywhere).

The forms post to these routes and work without JavaScript. Before a session exists, a
double-submit token (cookie + hidden field) stops other sites from posting a login in the
visitor's name; once logged in, the session's CSRF token guards every form (web.deps).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Form, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session

from web.auth import forgot, mail, ratelimit, resets, service
from web.auth.models import User
from web.auth.registration import check_registration_allowed, registration_mode
from web.auth.router import base_url
from web.auth.service import Credentials, Email, Invite
from web.deps import DbDep, FactoryDep, Principal, SecretKeyDep, SettingsDep, client_address, platform_of
from web.errors import ApiError
from web.language import LANGUAGE_COOKIE, Language, as_language
from web.pages.common import PageUserDep, redirect, safe_next, to_login
from web.pages.templating import page_language, render, translations
from web.settings import WebSettings

router = APIRouter(include_in_schema=False)

FORM_COOKIE = "judge_form"
# The pages a visitor may read: log-out stays on one of these, and leaves any other (a page of
# the account's own) for the problem list.
VISITOR_PAGE = re.compile(r"^/(problems(/[\w-]+)?|leaderboard)?(\?.*)?$")
FormText = Annotated[str, Form(max_length=256)]
# Any text: only its hash is looked up, and a mangled link gets the page of a dead one.
ResetToken = Annotated[str, Path()]


class MeEmail(BaseModel):
    email: Email


def _form_token(request: Request) -> str:
    return request.cookies.get(FORM_COOKIE) or secrets.token_urlsafe(24)


def _form_page(
    request: Request, template: str, principal: PageUserDep, status_code: int = 200, **context: object
) -> HTMLResponse:
    token = _form_token(request)
    response = render(request, template, principal, status_code, form_token=token, **context)
    response.set_cookie(FORM_COOKIE, token, httponly=True, samesite="strict", path="/")
    return response


def _form_token_ok(request: Request, sent: str) -> bool:
    cookie = request.cookies.get(FORM_COOKIE, "")
    return bool(cookie) and secrets.compare_digest(cookie.encode(), sent.encode())


def _page_gettext(request: Request, principal: PageUserDep) -> Callable[[str], str]:
    lang = page_language(request, principal.user if principal else None)
    return translations(request, lang).gettext


def _stale_form_message(request: Request, principal: PageUserDep) -> str:
    gettext = _page_gettext(request, principal)
    return gettext("This form expired. Please send it again.")


def _session_and_go(
    request: Request, db: DbDep, settings: SettingsDep, secret_key: SecretKeyDep, user: User, target: str
) -> Response:
    response = redirect(target)
    service.start_session(db, settings, secret_key, user, response, https=request.url.scheme == "https")
    return response


@router.get("/login", response_class=HTMLResponse)
def login_page(
    request: Request,
    principal: PageUserDep,
    settings: SettingsDep,
    next: str | None = None,
    needed: bool = False,
) -> Response:
    if principal is not None:
        return redirect(safe_next(next))
    mail_on = mail.mail_configured(settings)
    return _form_page(
        request, "login.html", principal, next=safe_next(next), username="", needed=needed, mail=mail_on
    )


@router.post("/login", response_class=HTMLResponse)
def login_form(
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    settings: SettingsDep,
    secret_key: SecretKeyDep,
    username: FormText = "",
    password: FormText = "",
    next: FormText = "",
    form_token: FormText = "",
) -> Response:
    target = safe_next(next)
    if not _form_token_ok(request, form_token):
        error, status = _stale_form_message(request, principal), 400
    else:
        try:
            user = service.authenticate(db, settings, client_address(request), username, password)
        except ApiError as exc:
            error, status = exc.message.text(_page_gettext(request, principal)), exc.status
        else:
            return _session_and_go(request, db, settings, secret_key, user, target)
    return _form_page(
        request,
        "login.html",
        principal,
        status,
        next=target,
        username=username,
        error=error,
        mail=mail.mail_configured(settings),
    )


@router.get("/register", response_class=HTMLResponse)
def register_page(
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    settings: SettingsDep,
    next: str | None = None,
    invite: str | None = None,
) -> Response:
    if principal is not None:
        return redirect(safe_next(next))
    # Closed: the page says so in place of the form (the log-in link stays). Invite: the form
    # asks for the code too (?invite= fills it in, for a link handed out with the code).
    mode = registration_mode(db, settings)
    return _form_page(
        request,
        "register.html",
        principal,
        next=safe_next(next),
        username="",
        closed=mode == "closed",
        invite_needed=mode == "invite",
        invite_code=(invite or "")[:64],
    )


@router.post("/register", response_class=HTMLResponse)
def register_form(
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    settings: SettingsDep,
    secret_key: SecretKeyDep,
    username: FormText = "",
    password: FormText = "",
    password_again: FormText = "",
    invite_code: FormText = "",
    next: FormText = "",
    form_token: FormText = "",
) -> Response:
    target = safe_next(next)
    lang = page_language(request, None)
    gettext = translations(request, lang).gettext
    error, status = "", 400
    mode = registration_mode(db, settings)
    if mode == "closed":
        # A form from before the site was closed, or a hand-made post.
        return render(request, "register.html", principal, 403, next=target, closed=True)
    if not _form_token_ok(request, form_token):
        error = _stale_form_message(request, principal)
    elif password != password_again:
        error = gettext("The two passwords differ.")
    else:
        try:
            check_registration_allowed(mode, invite_code)
            body = Credentials(username=username, password=password, language=lang)
            address = client_address(request)
            invite = Invite(invite_code, secret_key) if mode == "invite" else None
            user = service.create_user(
                db, settings, address, body.username, body.password, body.language, invite
            )
        except ValidationError as exc:
            field = str(exc.errors()[0]["loc"][0])
            error = (
                gettext("A username has 3 to 32 letters, digits, '_' or '-'.")
                if field == "username"
                else gettext("A password has at least 8 characters.")
            )
        except ApiError as exc:
            error, status = exc.message.text(gettext), exc.status
        else:
            return _session_and_go(request, db, settings, secret_key, user, target)
    return _form_page(
        request,
        "register.html",
        principal,
        status,
        next=target,
        username=username,
        error=error,
        invite_needed=mode == "invite",
        invite_code=invite_code,
    )


@router.post("/logout")
def logout_form(
    principal: PageUserDep, db: DbDep, next: FormText = "", everywhere: FormText = ""
) -> RedirectResponse:
    target = safe_next(next)
    response = redirect(target if VISITOR_PAGE.match(target) else "/problems")
    if everywhere and principal is not None:
        # Every session and API token of the account, as POST /api/auth/logout?everywhere=true.
        service.end_everything(db, principal.user, response)
    else:
        service.end_session(db, principal.session if principal else None, response)
    return response


@router.post("/lang")
def switch_language(
    principal: PageUserDep, db: DbDep, lang: FormText = "", next: FormText = ""
) -> RedirectResponse:
    response = redirect(safe_next(next))
    chosen = as_language(lang)
    if chosen is None:
        return response
    if principal is not None:
        service.set_language(db, principal.user, chosen)
    # A year: the choice outlives sessions, and applies before logging in.
    response.set_cookie(LANGUAGE_COOKIE, chosen, max_age=365 * 86400, samesite="lax", path="/")
    return response


@router.get("/settings", response_class=HTMLResponse)
def settings_page(
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    settings: SettingsDep,
    password: str | None = None,
) -> Response:
    if principal is None:
        return to_login(request)
    return _settings(
        request,
        principal,
        db,
        settings,
        password_changed=password == "changed",
        password_reset=password == "reset",
        email_saved=request.query_params.get("email") == "saved",
    )


def _settings(
    request: Request,
    principal: Principal,
    db: Session,
    settings: WebSettings,
    status: int = 200,
    **context: object,
) -> HTMLResponse:
    tokens = service.active_tokens(db, principal.user)
    days = settings.token_days
    return render(request, "settings.html", principal, status, tokens=tokens, token_days=days, **context)


@router.post("/settings/password", response_class=HTMLResponse)
def change_password_form(
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    settings: SettingsDep,
    old_password: FormText = "",
    new_password: FormText = "",
    new_password_again: FormText = "",
    end_tokens: FormText = "",
) -> Response:
    """As POST /api/me/password; the page is shown again with the refusal, or reloaded (a
    redirect, so a reload does not post again) saying the password changed."""
    if principal is None:
        return redirect("/login?next=%2Fsettings&needed=1")  # back to the form's page, not this post
    gettext = _page_gettext(request, principal)
    if new_password != new_password_again:
        error, status = gettext("The two passwords differ."), 400
    elif len(new_password) < 8:
        error, status = gettext("A password has at least 8 characters."), 422
    else:
        try:
            address = client_address(request)
            service.change_password(
                db,
                settings,
                address,
                principal.user,
                principal.session,
                old_password,
                new_password,
                bool(end_tokens),
            )
        except ApiError as exc:
            error, status = exc.message.text(gettext), exc.status
        else:
            return redirect("/settings?password=changed#password-heading")
    return _settings(request, principal, db, settings, status, password_error=error)


@router.post("/settings/email", response_class=HTMLResponse)
def change_email_form(
    request: Request, principal: PageUserDep, db: DbDep, settings: SettingsDep, email: FormText = ""
) -> Response:
    """As PATCH /api/me {"email"}: where a reset link the account asks for is mailed."""
    if principal is None:
        return redirect("/login?next=%2Fsettings&needed=1")
    try:
        checked = MeEmail(email=email)
    except ValidationError:
        gettext = _page_gettext(request, principal)
        message = gettext("That does not look like an email address.")
        return _settings(request, principal, db, settings, 422, email_error=message, email_value=email)
    service.set_email(db, principal.user, checked.email)
    return redirect("/settings?email=saved#email-heading")


# ------------------------------------------------------------------ reset links


def _dead_link(request: Request, principal: PageUserDep) -> HTMLResponse:
    """One page for a link that is unknown, used or expired: which of them is nobody's business."""
    return render(request, "reset.html", principal, 410, dead=True)


@router.get("/reset/{token}", response_class=HTMLResponse)
def reset_page(
    request: Request, token: ResetToken, principal: PageUserDep, db: DbDep, secret_key: SecretKeyDep
) -> Response:
    account = resets.account_of(db, secret_key, token)
    if account is None:
        return _dead_link(request, principal)
    return _form_page(request, "reset.html", principal, account=account.username, token=token)


@router.post("/reset/{token}", response_class=HTMLResponse)
def reset_form(
    request: Request,
    token: ResetToken,
    principal: PageUserDep,
    db: DbDep,
    settings: SettingsDep,
    secret_key: SecretKeyDep,
    password: FormText = "",
    password_again: FormText = "",
    form_token: FormText = "",
) -> Response:
    """Sets the password, ends every session and API token of the account, and logs this browser
    in as it: whoever holds a working link could log in anyway, and a person who just chose a
    password should not have to type it again at once."""
    account = resets.account_of(db, secret_key, token)
    if account is None:
        return _dead_link(request, principal)
    gettext = _page_gettext(request, principal)
    if not _form_token_ok(request, form_token):
        error, status = _stale_form_message(request, principal), 400
    elif password != password_again:
        error, status = gettext("The two passwords differ."), 400
    elif len(password) < 8:
        error, status = gettext("A password has at least 8 characters."), 422
    else:
        try:
            user = resets.use(db, settings, secret_key, client_address(request), token, password)
        except ApiError as exc:
            if exc.code == "reset_link_dead":
                return _dead_link(request, principal)
            error, status = exc.message.text(gettext), exc.status
        else:
            target = "/settings?password=reset#password-heading"
            return _session_and_go(request, db, settings, secret_key, user, target)
    page = {"account": account.username, "token": token, "error": error}
    return _form_page(request, "reset.html", principal, status, **page)


@router.get("/forgot", response_class=HTMLResponse)
def forgot_page(request: Request, principal: PageUserDep, settings: SettingsDep) -> Response:
    """Without mail the page says whom to ask for a link instead."""
    return _form_page(request, "forgot.html", principal, mail=mail.mail_configured(settings), name="")


@router.post("/forgot", response_class=HTMLResponse)
def forgot_form(
    request: Request,
    principal: PageUserDep,
    db: DbDep,
    settings: SettingsDep,
    secret_key: SecretKeyDep,
    factory: FactoryDep,
    background: BackgroundTasks,
    name: FormText = "",
    form_token: FormText = "",
) -> Response:
    """Always the same answer, given before any account is looked up (no account enumeration);
    the links are made and mailed after it is sent (web.auth.forgot.mail_links)."""
    configured = mail.mail_configured(settings)
    if not configured or not _form_token_ok(request, form_token):
        error = "" if not configured else _stale_form_message(request, principal)
        return _form_page(request, "forgot.html", principal, 400, mail=configured, name=name, error=error)
    catalogs = platform_of(request).catalogs  # the request is gone when the mails are written

    def translate(lang: Language) -> Callable[[str], str]:
        """The mail's words: the named account's language, not the asker's."""
        gettext: Callable[[str], str] = catalogs.translations(lang).gettext
        return gettext

    try:
        ratelimit.count_reset_request(db, settings, client_address(request))
    except ApiError as exc:
        error = exc.message.text(_page_gettext(request, principal))
        return _form_page(request, "forgot.html", principal, exc.status, mail=True, name=name, error=error)
    asked = forgot.Asked(name, base_url(request, settings), translate)
    background.add_task(forgot.mail_links, factory, settings, secret_key, asked)
    return render(request, "forgot.html", principal, mail=True, asked=True, hours=settings.reset_link_hours)
