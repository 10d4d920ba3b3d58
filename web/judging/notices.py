"""The notices of judging (web.notify): a job was queued (idle workers look), a job changed (its
long-polling readers read it again). Each is published in the transaction that makes the change
and delivered when it commits, in every process (every host on PostgreSQL)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from web.judging.waiting import CompletionBoard
from web.notify import ANYTHING, Notices, Topic


def announce(notices: Notices | None, session: Session, submission_id: int) -> None:
    """Tell long-polling readers (of every process) that `submission_id` changed, at commit."""
    if notices is not None:
        notices.publish(session, Topic.SUBMISSION, str(submission_id))


def announce_queued(notices: Notices | None, session: Session, submission_ids: list[int]) -> None:
    """Wake idle workers (of every process) for newly queued jobs, at commit: one notice for
    any number of jobs (each woken worker takes what the queue holds)."""
    if notices is not None and submission_ids:
        notices.publish(session, Topic.QUEUED, str(submission_ids[0]))


def waiting_board(notices: Notices) -> CompletionBoard:
    """The board where this process's long-polling readers wait, woken by SUBMISSION notices
    (ANYTHING: notices were lost, every waiter reads again)."""
    board = CompletionBoard(notified=lambda: notices.shared)

    def changed(payload: str) -> None:
        if payload == ANYTHING:
            board.notify_all()
        elif payload.isdigit():
            board.notify(int(payload))

    notices.subscribe(Topic.SUBMISSION, changed)
    return board
