"""The docker backend: every job in a locked-down container (sandbox.engine), cold or pooled.

Cold (sandbox.docker_cold), each job gets a fresh container that runs the runner's cold
command and is always removed. Pooled (sandbox.docker_warm), a ready container whose fork
server has preloaded the runner takes the job: once (warm) or up to N times, each job in a
fresh child (fork). The backend alone chooses, per job: pooled when it was built with a pool,
its runner can be preloaded and the job's limits fit the pool's containers; cold otherwise,
and whenever no pooled container can be had.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import docker

from judge.core.backend import Limits, Outcome, ResultWatch, RunnerSpec
from sandbox.docker_cold import run_cold
from sandbox.docker_warm import PoolPolicy, WarmContainer
from sandbox.engine import PYTHON, ContainerPolicy, Engine, retried
from sandbox.errors import SandboxError
from sandbox.pool import Pool

log = logging.getLogger(__name__)


class DockerBackend:
    name = "docker"
    is_sandbox = True

    def __init__(self, engine: Engine, runner: RunnerSpec, pool: PoolPolicy | None = None) -> None:
        self.engine = engine
        self.runner = runner
        self.pool_policy = pool if pool is not None and pool.mode != "cold" else None
        if self.pool_policy is not None and not runner.poolable:
            raise ValueError(f"a {self.pool_policy.mode} pool needs a runner with a preload and an entry")
        self.pool: Pool[WarmContainer] | None = None
        if self.pool_policy is not None:
            policy = self.pool_policy
            self.pool = Pool(
                lambda: WarmContainer(engine, runner, policy),
                policy.size,
                reusable=policy.mode == "fork",
                name=f"docker-{policy.mode}-pool",
            )

    @classmethod
    def connect(
        cls,
        code: Mapping[str, Path],
        runner: RunnerSpec,
        pool: PoolPolicy | None = None,
        timeout_s: float = 5.0,
        policy: ContainerPolicy | None = None,
    ) -> DockerBackend:
        """The backend on the engine of DOCKER_HOST (or the local socket), with its runtime image.

        Raises EngineFailure when no engine answers and ImageError when the image is missing.
        """
        return cls(Engine.connect(code, timeout_s, policy), runner, pool)

    # The engine's, for callers that look at containers (tests, the admin page).
    @property
    def client(self) -> docker.DockerClient:
        return self.engine.client

    @property
    def image(self) -> str:
        return self.engine.image

    @property
    def mode(self) -> str:
        return self.pool_policy.mode if self.pool_policy is not None else "cold"

    def runtime_id(self) -> str:
        return f"docker:{self.engine.image_id}"

    def containers(self, kind: str | None = None) -> list[str]:
        return self.engine.containers(kind)

    def warm_up(self) -> None:
        """Start filling the pool now, so that the first job finds a ready container."""
        if self.pool is not None:
            self.pool.start()

    def close(self) -> None:
        """Remove the pool's containers (a cold backend holds none between runs)."""
        if self.pool is not None:
            self.pool.close()

    # -- running ----------------------------------------------------------------------------

    def run(self, stdin: bytes, limits: Limits, watch: ResultWatch | None = None) -> Outcome:
        # A retried job's stream starts again from its first byte: `watch` sees it twice, which
        # progress (a set of finished cases) does not mind.
        if self.pool is not None and self.pool_policy is not None and self.pool_policy.accepts(limits):
            return self._run_pooled(stdin, limits, self.pool, self.pool_policy, watch)
        return self._run_cold(stdin, limits, watch)

    def _run_cold(self, stdin: bytes, limits: Limits, watch: ResultWatch | None) -> Outcome:
        # The runner starts under the job's seccomp filter, as a fork server's child does.
        command = [PYTHON, "-m", "sandbox.confine", *self.runner.cold_args]
        return retried(
            self.engine.policy.retries + 1,
            lambda: run_cold(self.engine, command, stdin, limits, watch),
            "the Docker engine",
        )

    def _run_pooled(
        self,
        stdin: bytes,
        limits: Limits,
        pool: Pool[WarmContainer],
        policy: PoolPolicy,
        watch: ResultWatch | None,
    ) -> Outcome:
        """A job in a ready container; the wall clock counts from handing it the job.

        When no container can be had (they fail to start), the job runs cold: slower, but
        judged, and the same lock-down. The failure is logged.
        """

        def attempt() -> Outcome:
            container = pool.acquire(timeout_s=policy.startup_s)
            if container is None:
                raise _NoneReady
            fit = False
            try:
                outcome, fit = container.run(stdin, limits, watch)
            finally:
                pool.release(container, fit)
            return outcome

        try:
            return retried(self.engine.policy.retries + 1, attempt, f"the {policy.mode} sandbox")
        except _NoneReady:
            log.warning("no %s sandbox is ready (%s); this job runs cold", policy.mode, pool.last_error)
            return self._run_cold(stdin, limits, watch)


class _NoneReady(SandboxError):
    """The pool had no container to give (the cold path, with retries of its own, takes over)."""
