"""A forgotten password asked for by mail, against a real SMTP server (aiosmtpd) on loopback, on
SQLite and PostgreSQL: the mail arrives in the account's language, its link works once, the page
answers the same sentence whoever is named, each account gets a bounded number of mails, a mail
server that is down is logged and not shown, and the email is the account's own to set."""

from __future__ import annotations

import email
import email.policy
import logging
import re
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from fastapi.testclient import TestClient

from tests.web.auth.forms import NEW_PASSWORD, backend_url, browser, form_token, user_named
from tests.web.factories import PASSWORD, bearer, error_of, free_port, make_client, make_settings, register

SENT_EN = "If that account has an email address, a link to set a new password is on its way to it."
SENT_ZH = "如果该账号设置了电子邮箱，设置新密码的链接已发往该邮箱。"


class Inbox:
    """The aiosmtpd handler: every message the server accepts."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        message = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self.messages.append(message)
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if m["To"] == address]


@pytest.fixture
def inbox() -> Iterator[tuple[Inbox, int]]:
    handler = Inbox()
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    return backend_url(request, request.param, tmp_path)


def mailing_site(tmp_path: Path, url: str | None, port: int, **overrides: Any) -> TestClient:
    settings = make_settings(
        tmp_path,
        url,
        workers=0,
        smtp_host="127.0.0.1",
        smtp_port=port,
        smtp_from="judge@example.org",
        smtp_timeout_s=5.0,
        **overrides,
    )
    return make_client(settings)


def with_email(client: TestClient, language: str, address: str) -> str:
    name, token = register(client)
    res = client.patch("/api/me", json={"language": language, "email": address}, headers=bearer(token))
    assert res.status_code == 200 and res.json()["email"] == address, res.text
    return name


def ask(client: TestClient, name: str, lang: str = "en") -> str:
    reader = browser(client, lang)
    page = reader.get("/forgot")
    assert page.status_code == 200 and 'action="/forgot"' in page.text
    res = reader.post("/forgot", data={"name": name, "form_token": form_token(page.text)})
    assert res.status_code == 200, res.text
    return res.text


def link_in(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    text = body.get_content()
    found = re.search(r"http://testserver/reset/([A-Za-z0-9_\-]+)", text)
    assert found, text
    return found.group(1)


def test_the_mailed_link_arrives_in_the_accounts_language_and_works_once(
    tmp_path: Path, database_url: str | None, inbox: tuple[Inbox, int]
) -> None:
    box, port = inbox
    with mailing_site(tmp_path, database_url, port) as client:
        zh_name = with_email(client, "zh", "li@example.org")
        en_name = with_email(client, "en", "sam@example.org")
        # The log-in page offers the way, since mail is configured.
        assert 'href="/forgot"' in browser(client, "en").get("/login").text

        assert SENT_ZH in ask(client, zh_name, "zh")
        assert SENT_EN in ask(client, "SAM@example.org", "en")  # by email, whatever its case
        (zh_mail,) = box.to("li@example.org")
        (en_mail,) = box.to("sam@example.org")
        assert zh_mail["Subject"] == "你的密码重置链接" and zh_mail["From"] == "judge@example.org"
        assert en_mail["Subject"] == "Your password reset link"
        zh_body = zh_mail.get_body(("plain",))
        assert zh_body is not None and f"{zh_name}，你好" in zh_body.get_content()
        assert "24 小时内有效" in zh_body.get_content()
        en_body = en_mail.get_body(("plain",))
        assert en_body is not None and f"Hello {en_name}," in en_body.get_content()

        token = link_in(en_mail)
        reader = browser(client, "en")
        page = reader.get(f"/reset/{token}")
        assert page.status_code == 200 and en_name in page.text
        form = {"password": NEW_PASSWORD, "password_again": NEW_PASSWORD, "form_token": form_token(page.text)}
        assert reader.post(f"/reset/{token}", data=form).status_code == 303
        assert (
            client.post("/api/auth/login", json={"username": en_name, "password": NEW_PASSWORD}).status_code
            == 200
        )
        again = browser(client, "en").get(f"/reset/{token}")
        assert again.status_code == 410
        # The Chinese account's link is its own and still works.
        assert browser(client, "zh").get(f"/reset/{link_in(zh_mail)}").status_code == 200


def test_the_answer_is_the_same_whoever_is_named(
    tmp_path: Path, database_url: str | None, inbox: tuple[Inbox, int]
) -> None:
    box, port = inbox
    with mailing_site(tmp_path, database_url, port, reset_mails_per_account=2) as client:
        named = with_email(client, "en", "kim@example.org")
        no_email, _ = register(client)
        answers = {
            label: re.sub(r'value="[^"]*"', "", ask(client, who))
            for label, who in (
                ("has email", named),
                ("no email", no_email),
                ("no account", "nobody_here"),
                ("unknown email", "who@example.org"),
            )
        }
        assert len(set(answers.values())) == 1 and SENT_EN in answers["has email"]
        assert len(box.messages) == 1
        # Two mails per account per window: the third ask answers the same and sends nothing.
        assert SENT_EN in ask(client, named) and SENT_EN in ask(client, named)
        assert len(box.to("kim@example.org")) == 2
        # A new link voided the older one: only the newest mailed link works.
        first, second = (link_in(m) for m in box.to("kim@example.org"))
        assert browser(client, "en").get(f"/reset/{first}").status_code == 410
        assert browser(client, "en").get(f"/reset/{second}").status_code == 200


def test_a_mail_server_that_is_down_is_logged_not_shown(
    tmp_path: Path, database_url: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    with mailing_site(tmp_path, database_url, free_port()) as client:
        name = with_email(client, "en", "lee@example.org")
        with caplog.at_level(logging.WARNING, logger="web.auth.mail"):
            assert SENT_EN in ask(client, name)
        assert any("lee@example.org" in r.getMessage() for r in caplog.records)


def test_no_mail_no_forgot_link(tmp_path: Path, database_url: str | None) -> None:
    with make_client(make_settings(tmp_path, database_url, workers=0)) as client:
        login = browser(client, "en").get("/login").text
        assert 'href="/forgot"' not in login and "can give you a link" in login
        page = browser(client, "zh").get("/forgot")
        assert (
            page.status_code == 200
            and 'action="/forgot"' not in page.text
            and "老师或站点管理员" in page.text
        )


def test_the_email_is_the_accounts_own(tmp_path: Path, database_url: str | None) -> None:
    with make_client(make_settings(tmp_path, database_url, workers=0)) as client:
        name, token = register(client)
        _, other_token = register(client)
        bad = client.patch("/api/me", json={"email": "not an address"}, headers=bearer(token))
        assert bad.status_code == 422
        assert client.patch("/api/me", json={"email": " ada@example.org "}, headers=bearer(token)).json()[
            "email"
        ] == ("ada@example.org")
        assert client.get("/api/me", headers=bearer(other_token)).json()["email"] is None
        assert "ada@example.org" not in client.get("/api/leaderboard").text
        # The settings form: saved, refused when it is no address, cleared with "".
        reader = browser(client, "en")
        page = reader.get("/login")
        reader.post(
            "/login", data={"username": name, "password": PASSWORD, "form_token": form_token(page.text)}
        )
        settings_page = reader.get("/settings")
        assert 'value="ada@example.org"' in settings_page.text
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', settings_page.text)
        assert csrf
        res = reader.post("/settings/email", data={"email": "nope", "csrf_token": csrf.group(1)})
        assert res.status_code == 422 and "does not look like an email address" in res.text
        res = reader.post("/settings/email", data={"email": "", "csrf_token": csrf.group(1)})
        assert res.status_code == 303
        assert user_named(client, name).email is None
        error_of(
            client.patch("/api/me", json={"email": "a@b"}, headers=bearer(token)), 422, "invalid_request"
        )
