"""The pool of ready sessions, with sessions that are plain objects (the pool is what is tested)."""

from __future__ import annotations

import threading
import time

from sandbox.pool import Pool


class Token:
    def close(self) -> None:
        pass


def test_a_waiting_job_gets_the_session_handed_back_at_once() -> None:
    # A fork server comes back after its job; the job waiting for it must not sleep until its
    # time-out because the filler thread took the one wake-up (judge run waited 60 s for it).
    pool: Pool[Token] = Pool(Token, size=1, reusable=True)
    try:
        assert pool.fill(5)
        for _ in range(20):
            held = pool.acquire(timeout_s=5)
            assert held is not None
            got: list[float] = []

            def wait_for_it(got: list[float] = got) -> None:
                if pool.acquire(timeout_s=30) is not None:
                    got.append(time.monotonic())

            waiter = threading.Thread(target=wait_for_it)
            waiter.start()
            time.sleep(0.05)  # the waiter and the filler both wait on the pool now
            handed_back = time.monotonic()
            pool.release(held, fit=True)
            waiter.join(timeout=30)
            assert got and got[0] - handed_back < 2.0
            pool.release(held, fit=True)  # the waiter's (the same session) back for the next round
    finally:
        pool.close()
