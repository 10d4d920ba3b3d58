"""The completion board behind long-polling: a worker thread's notice wakes a waiting request."""

from __future__ import annotations

import asyncio
import threading

import pytest

from web.judging import waiting
from web.judging.waiting import CompletionBoard


@pytest.fixture(autouse=True)
def no_rechecks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Far longer than any test waits: only the board's notice can end a wait early.
    monkeypatch.setattr(waiting, "RECHECK_S", 60.0)


def test_a_notice_from_a_worker_thread_wakes_the_waiter() -> None:
    board = CompletionBoard()
    state = {"done": False}

    async def is_done() -> bool:
        return state["done"]

    async def main() -> bool:
        def worker() -> None:
            state["done"] = True
            board.notify(7)

        threading.Timer(0.05, worker).start()
        return await asyncio.wait_for(board.wait_until(7, is_done, timeout_s=20), timeout=5)

    assert asyncio.run(main()) is True
    assert board.waiting() == 0


def test_a_result_committed_between_the_read_and_the_wait_is_not_missed() -> None:
    board = CompletionBoard()
    reads = []

    async def is_done() -> bool:
        # The first read sees "running"; the result is committed (and announced) right after
        # it, before the waiter sleeps. The waiter was registered before the read, so it wakes.
        reads.append(1)
        if len(reads) == 1:
            board.notify(3)
            return False
        return True

    async def main() -> bool:
        return await asyncio.wait_for(board.wait_until(3, is_done, timeout_s=20), timeout=5)

    assert asyncio.run(main()) is True
    assert len(reads) == 2


def test_without_a_notice_the_wait_ends_at_its_timeout_and_leaves_nothing() -> None:
    board = CompletionBoard()

    async def never() -> bool:
        return False

    async def main() -> bool:
        return await board.wait_until(5, never, timeout_s=0.1)

    assert asyncio.run(main()) is False
    assert board.waiting() == 0
    board.notify(5)  # nobody waits: nothing happens


def test_other_submissions_do_not_wake_a_waiter() -> None:
    board = CompletionBoard()
    reads = []

    async def never() -> bool:
        reads.append(1)
        return False

    async def main() -> bool:
        asyncio.get_running_loop().call_later(0.02, board.notify, 99)
        return await board.wait_until(5, never, timeout_s=0.3)

    assert asyncio.run(main()) is False
    assert len(reads) == 2  # the first read, and the one at the timeout: no wake-up between
