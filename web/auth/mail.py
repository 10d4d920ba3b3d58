"""Mail through the configured SMTP server (settings smtp_*): only reset links, sent after the
answer (a slow or absent server never holds a request) with a timeout; a failure is logged for
the operator and never shown to whoever asked."""

from __future__ import annotations

import logging
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from web.settings import WebSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Mail:
    to: str
    subject: str
    body: str


def mail_configured(settings: WebSettings) -> bool:
    return bool(settings.smtp_host)


def sender(settings: WebSettings) -> str:
    return settings.smtp_from or f"no-reply@{settings.smtp_host or 'localhost'}"


def message_of(settings: WebSettings, mail: Mail) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender(settings)
    message["To"] = mail.to
    message["Subject"] = mail.subject
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain=(settings.smtp_host or "localhost"))
    message.set_content(mail.body)  # UTF-8 whatever the language
    return message


def send(settings: WebSettings, mail: Mail) -> bool:
    """Deliver `mail`; False (and a log line) when it could not be handed to the server."""
    host = settings.smtp_host
    if not host:
        return False
    try:
        with smtplib.SMTP(host, settings.smtp_port, timeout=settings.smtp_timeout_s) as smtp:
            if settings.smtp_starttls:
                smtp.starttls(context=ssl.create_default_context())
            if settings.smtp_user:
                smtp.login(settings.smtp_user, settings.smtp_password or "")
            smtp.send_message(message_of(settings, mail))
    except (OSError, smtplib.SMTPException) as exc:
        log.warning("could not mail %s through %s:%s: %s", mail.to, host, settings.smtp_port, exc)
        return False
    return True
