"""The pool's policy: per-job uid blocks that fit in a uid and hold every job of a container."""

from __future__ import annotations

import pytest

from judge.settings import MAX_RECYCLE_AFTER, SandboxSettings
from sandbox.docker_warm import FIRST_JOB_UID, MAX_UID, PoolPolicy


def test_a_block_must_hold_every_job_a_container_serves() -> None:
    with pytest.raises(ValueError, match="needs more per-job uids"):
        PoolPolicy(recycle_after=501, uid_block=500)


def test_every_block_lies_below_the_largest_uid() -> None:
    policy = PoolPolicy(recycle_after=MAX_RECYCLE_AFTER, uid_block=SandboxSettings().uid_block)
    bases = {policy.uid_base() for _ in range(2000)}
    assert all(b >= FIRST_JOB_UID and b + policy.uid_block - 1 <= MAX_UID for b in bases)
    assert all((b - FIRST_JOB_UID) % policy.uid_block == 0 for b in bases)  # blocks never overlap


def test_the_settings_cap_and_the_block_are_one_number() -> None:
    from pydantic import ValidationError

    largest = SandboxSettings(recycle_after=MAX_RECYCLE_AFTER)
    PoolPolicy(recycle_after=largest.recycle_after, uid_block=largest.uid_block)  # fits
    with pytest.raises(ValidationError):
        SandboxSettings(recycle_after=MAX_RECYCLE_AFTER + 1)
