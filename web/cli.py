"""The web platform's commands, added to `judge` through the `llm_judge.commands` entry point
(so that `judge/` itself never imports the web stack): serve, worker, admin, problems, db."""

from __future__ import annotations

import argparse
import getpass
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from judge.cli import UsageError
from judge.cli_options import add_lang
from web.settings import WebSettings

log = logging.getLogger(__name__)


def _serve(args: argparse.Namespace, settings: WebSettings) -> int:
    from web.serving import serve

    processes = args.processes or settings.processes
    return serve(settings, args.host, args.port, processes, args.log_level, args.access_log)


def _worker(args: argparse.Namespace, settings: WebSettings) -> int:
    from web.serving import count_in

    count_in(settings.metrics_dir)  # the web processes of this host add these up, if set
    from web.db import make_engine, make_sessionmaker
    from web.judging.judges import judge_context
    from web.judging.worker import QueueSettings, WorkerPool
    from web.metrics import Metrics
    from web.migrate import is_current
    from web.notify import Topic, make_notices
    from web.problems.sync import load_packages, replace_problems, sync_problems

    engine = make_engine(settings.sqlalchemy_url())
    if not is_current(engine):
        raise UsageError(
            "the database schema is not at the newest migration; "
            "start `judge serve` or run `judge db upgrade`"
        )
    factory = make_sessionmaker(engine)
    notices = make_notices(engine)
    notices.attach(factory)
    problems = load_packages(settings.problems_dir)
    sync_problems(factory, problems, notices)

    # Another process synced problems/ (an admin's reload, `judge problems sync`): read it again.
    def reload(_payload: str) -> None:
        replace_problems(problems, load_packages(settings.problems_dir))

    notices.subscribe(Topic.PROBLEMS, reload)
    # No sandbox or unsafe settings: a JudgeError, said by judge.cli.main like every command's.
    context, warnings = judge_context(settings, problems, serving_others=True)
    for warning in warnings:
        log.warning("%s", warning.en)  # the worker's log is in English, as its other lines are
    queue_settings = QueueSettings.of(settings)
    threads = args.threads or settings.worker_threads
    pool = WorkerPool(threads, factory, context, queue_settings, Metrics(lambda: {}), notices)
    done = threading.Event()

    def _stop(_sig: int, _frame: Any) -> None:
        done.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    notices.start()
    pool.start()
    log.info("judge worker: %s threads on the %s backend", threads, context.backend.name)
    done.wait()
    log.info("judge worker: stopping (waiting up to 30 s for the judgements under way)")
    pool.stop()
    notices.close()
    return 0


def _migrated_engine(settings: WebSettings) -> Any:
    """An engine on the configured database, brought to the newest schema."""
    from web.db import make_engine
    from web.migrate import upgrade

    engine = make_engine(settings.sqlalchemy_url())
    upgrade(engine)
    return engine


def _user_exists(engine: Any, username: str) -> bool:
    from sqlalchemy import func, select

    from web.auth.models import User

    with engine.connect() as connection:
        query = select(User.id).where(func.lower(User.username) == username.lower())
        return connection.scalar(query) is not None


def _admin_create(args: argparse.Namespace, settings: WebSettings) -> int:
    from sqlalchemy import func, select

    from web.auth.models import User
    from web.auth.rules import weak_password
    from web.auth.secrets import hash_password
    from web.db import make_sessionmaker, transaction

    engine = _migrated_engine(settings)
    # An existing name is refused before the password is asked for: a typo or a learner's name
    # must not quietly become an admin (and lose its password); --promote says it is meant.
    role: str = args.role
    if not args.promote and _user_exists(engine, args.username):
        raise UsageError(f"{args.username} already exists; add --promote to make that account an {role}")
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass(f"password for {args.username}: ")
    if len(password) < 8:
        raise UsageError("the password must have at least 8 characters")
    # An admin account is the one most worth guessing: the registration rules hold here too
    # (only reserved names are the operator's to take).
    weak = weak_password(password, args.username)
    if weak is not None:
        raise UsageError(f"the password is too easy to guess ({weak.value}); choose another")
    with transaction(make_sessionmaker(engine)) as session:
        user = session.scalar(select(User).where(func.lower(User.username) == args.username.lower()))
        if user is None:
            session.add(User(username=args.username, password_hash=hash_password(password), role=role))
            print(f"created {role} {args.username}")
        elif not args.promote:
            # Registered while the password was being typed: still not ours to take.
            raise UsageError(f"{user.username} already exists; add --promote to make that account an {role}")
        else:
            user.role, user.password_hash = role, hash_password(password)
            print(f"{user.username} is now an {role} (password reset)")
    return 0


def _problems_sync(_args: argparse.Namespace, settings: WebSettings) -> int:
    from web.db import make_sessionmaker
    from web.notify import make_notices
    from web.problems.sync import load_packages, sync_problems

    problems = load_packages(settings.problems_dir)
    engine = _migrated_engine(settings)
    # Running servers and workers (every host, on PostgreSQL) reload problems/ after the commit.
    changed = sync_problems(make_sessionmaker(engine), problems, make_notices(engine))
    print(f"{len(problems)} problems; new versions: {', '.join(changed) or 'none'}")
    return 0


def _preview(args: argparse.Namespace, settings: WebSettings) -> int:
    from web.preview.serve import run_preview

    return run_preview(
        settings, Path(args.dir), args.host, args.port, args.backend, args.lang, args.log_level
    )


def _problems_add(args: argparse.Namespace, settings: WebSettings) -> int:
    # The work is the judge's (judge.authoring.archive): the web only names the folder.
    from judge.authoring.archive import ArchiveError, Outcome, install, validation_vet
    from judge.core.messages import msg

    problems_dir = args.problems_dir or settings.problems_dir
    vet = validation_vet(settings) if args.validate else None
    try:
        done = install(args.archive, problems_dir, replace_older=args.replace_older, vet=vet)
    except ArchiveError as exc:
        raise UsageError(exc.text.get(args.lang)) from exc
    print(done.text().get(args.lang))
    if done.outcome is not Outcome.ALREADY_INSTALLED:
        print(msg("add_next").get(args.lang))
    return 0


def _db_upgrade(_args: argparse.Namespace, settings: WebSettings) -> int:
    _migrated_engine(settings)
    print("database schema is at the newest migration")
    return 0


def register(sub: Any) -> None:
    """Add the web's commands; each is handed the platform's settings (WebSettings), loaded once
    by `judge.cli.main` from the same sources as the judge's."""
    serve = sub.add_parser("serve", help="the web app and in-process workers")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="print a line per request (off by default: it costs about a fifth of the throughput)",
    )
    serve.add_argument(
        "--processes",
        type=int,
        default=None,
        help="web processes behind the port (default: JUDGE_PROCESSES, else 1; more needs PostgreSQL)",
    )
    serve.set_defaults(func=_serve, settings_class=WebSettings)

    worker = sub.add_parser("worker", help="judge queued submissions from the database (no web app)")
    worker.add_argument(
        "--threads", type=int, default=None, help="judging threads (default: JUDGE_WORKER_THREADS, else 2)"
    )
    worker.set_defaults(func=_worker, settings_class=WebSettings)

    admin = sub.add_parser("admin", help="manage accounts")
    admin_sub = admin.add_subparsers(dest="admin_command", required=True)
    create = admin_sub.add_parser(
        "create", help="create an admin or instructor (--promote: make an existing user one)"
    )
    create.add_argument("username")
    create.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    create.add_argument(
        "--promote", action="store_true", help="if the name exists, give that account the role (new password)"
    )
    # An operator may make an instructor here too (an admin can also do it on the site).
    create.add_argument("--role", choices=("admin", "instructor"), default="admin", help="the account's role")
    create.set_defaults(func=_admin_create, settings_class=WebSettings)

    problems = sub.add_parser("problems", help="problem packages in the database")
    problems_sub = problems.add_subparsers(dest="problems_command", required=True)
    sync = problems_sub.add_parser("sync", help="load problems/ into the database")
    sync.set_defaults(func=_problems_sync, settings_class=WebSettings)
    add = problems_sub.add_parser("add", help="check a package archive (judge pack) and install it")
    add.add_argument("archive", type=Path, help="a .tar.gz written by `judge pack`")
    add.add_argument(
        "--problems-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to install (default: the problems folder)",
    )
    add.add_argument(
        "--replace-older", action="store_true", help="replace an installed older version of the same problem"
    )
    add.add_argument(
        "--validate",
        action="store_true",
        help="run `judge validate` on it first and refuse it unless sound (minutes)",
    )
    add_lang(add)
    add.set_defaults(func=_problems_add, settings_class=WebSettings)

    preview = sub.add_parser("preview", help="a problem package's page as learners see it, on this machine")
    preview.add_argument("dir", help="a package folder (NNN-slug/) or a folder of packages")
    preview.add_argument(
        "--host", default="127.0.0.1", help="a loopback address (the preview is the author's)"
    )
    preview.add_argument("--port", type=int, default=None, help="default: a free port")
    preview.add_argument("--backend", choices=["local", "docker", "auto"], default="local")
    add_lang(preview)
    preview.set_defaults(func=_preview, settings_class=WebSettings)

    db = sub.add_parser("db", help="the database schema")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    upgrade = db_sub.add_parser("upgrade", help="apply the migrations")
    upgrade.set_defaults(func=_db_upgrade, settings_class=WebSettings)
