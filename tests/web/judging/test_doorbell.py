"""The workers' doorbell (web.judging.worker.Doorbell): one ring wakes one idle worker, a
ring that comes while nobody waits is kept, and stopping wakes them all."""

from __future__ import annotations

import threading
import time

from web.judging.worker import Doorbell

SHORT_S = 0.3


def waiters(bell: Doorbell, n: int, timeout_s: float) -> tuple[list[threading.Thread], list[float]]:
    woke: list[float] = []
    started = time.monotonic()

    def wait() -> None:
        bell.wait(timeout_s)
        woke.append(time.monotonic() - started)

    threads = [threading.Thread(target=wait) for _ in range(n)]
    for t in threads:
        t.start()
    time.sleep(0.1)  # all of them wait now
    return threads, woke


def test_one_ring_wakes_one_worker_and_the_others_sleep_on() -> None:
    bell = Doorbell(3)
    threads, woke = waiters(bell, 3, timeout_s=5)
    bell.ring()
    time.sleep(SHORT_S)
    assert len(woke) == 1 and woke[0] < 0.1 + SHORT_S
    bell.ring_all()
    for t in threads:
        t.join(2)
    assert len(woke) == 3 and max(woke) < 0.1 + 2 * SHORT_S  # not their 5 s timeout


def test_a_ring_while_nobody_waits_is_kept_but_rings_do_not_pile_up() -> None:
    bell = Doorbell(2)
    for _ in range(10):
        bell.ring()
    started = time.monotonic()
    bell.wait(5)
    bell.wait(5)
    assert time.monotonic() - started < SHORT_S  # two kept rings: at most one per worker
    bell.wait(SHORT_S)
    assert time.monotonic() - started >= SHORT_S  # the third waited its timeout
