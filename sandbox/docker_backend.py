"""The docker backend: every run in a fresh, locked-down container that is always removed.

The container has no network, a read-only root, a small tmpfs for /tmp, the `nobody`
user, no capabilities, no-new-privileges, and limits on processes, memory (no swap), CPU,
open files, file size and core dumps. Its only channel is the attach stream: the job goes
in on stdin, the runner's frames come out on stdout and the learner's prints on stderr.
Nothing is read back from a file, so nothing the learner plants (a link, a FIFO) is ever
opened by the judge. The container holds no secrets: the job carries the code and the
case table, never a reference or an expected value.

Docker's log driver is off (a learner's megabytes of output must not land on the host's
disk); output is read from the attach stream under the caps and the container is killed
when a cap, the start-up deadline or the wall clock is passed. Each container carries a
label naming its owner (host and pid), so a judge that starts after a crash removes the
ones its dead predecessor left behind.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import select
import signal
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.types import LogConfig, Ulimit

from sandbox.attach import AttachFrames, append_capped
from sandbox.backend import Limits, Outcome
from sandbox.docker_warm import PoolPolicy, WarmContainer, WarmSpec
from sandbox.image import LABEL, SANDBOX_USER, ImageError, runtime_image
from sandbox.pool import Pool

log = logging.getLogger(__name__)

# The runner's own footprint (interpreter, torch, its libraries) before learner code runs.
# The learner's memory budget comes on top of it in the container's memory limit.
BASELINE_MEMORY = 512 * 1024 * 1024
# Containers older than this are removed by any judge, whoever made them.
STALE_AFTER_S = 3600.0
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)


class EngineFailure(Exception):
    """The Docker engine failed us (not the learner's code); the run may be retried."""


@dataclass(frozen=True)
class ContainerPolicy:
    """What every sandbox container gets, beyond the per-run Limits."""

    scratch_bytes: int = 64 * 1024 * 1024  # tmpfs /tmp; counts against the memory limit too
    cpus: float = 1.0
    open_files: int = 1024
    retries: int = 2  # more attempts when the engine itself fails
    user: str = SANDBOX_USER


class DockerBackend:
    name = "docker"
    is_sandbox = True
    python = "python3"

    def __init__(
        self,
        client: docker.DockerClient,
        image: str,
        policy: ContainerPolicy | None = None,
        warm: WarmSpec | None = None,
        pool: PoolPolicy | None = None,
    ) -> None:
        self.client = client
        self.image = image
        self.policy = policy or ContainerPolicy()
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self._image_id = client.images.get(image).id
        self.warm = warm
        self.pool_policy = pool if warm is not None and pool is not None and pool.mode != "cold" else None
        self.pool: Pool[WarmContainer] | None = None
        if self.pool_policy is not None:
            policy_ = self.pool_policy
            self.pool = Pool(
                lambda: WarmContainer(self, warm, policy_),  # type: ignore[arg-type]
                policy_.size,
                reusable=policy_.mode == "fork",
                name=f"docker-{policy_.mode}-pool",
            )

    @property
    def mode(self) -> str:
        return self.pool_policy.mode if self.pool_policy is not None else "cold"

    def warm_up(self) -> None:
        """Start filling the pool now, so that the first job finds a ready container."""
        if self.pool is not None:
            self.pool.start()

    def close(self) -> None:
        """Remove the pool's containers (a cold backend holds none between runs)."""
        if self.pool is not None:
            self.pool.close()

    @classmethod
    def connect(
        cls,
        code: Mapping[str, Path],
        timeout_s: float = 5.0,
        warm: WarmSpec | None = None,
        pool: PoolPolicy | None = None,
    ) -> DockerBackend:
        """The backend on the engine of DOCKER_HOST (or the local socket), with its runtime image.

        Raises EngineFailure when no engine answers and ImageError when the image is missing.
        """
        try:
            client = docker.from_env(timeout=int(max(timeout_s, 1)))
        except ENGINE_ERRORS as exc:
            raise EngineFailure(f"no Docker engine answers: {exc}") from exc
        try:
            client.ping()
            image = runtime_image(client, code)
        except BaseException as exc:
            client.close()  # its connection pool would otherwise outlive the failed attempt
            if isinstance(exc, ENGINE_ERRORS):
                raise EngineFailure(f"no Docker engine answers: {exc}") from exc
            raise
        backend = cls(client, image, warm=warm, pool=pool)
        backend.reap_stale()
        return backend

    def runtime_id(self) -> str:
        return f"docker:{self._image_id}"

    # -- housekeeping ---------------------------------------------------------------------

    def reap_stale(self) -> list[str]:
        """Remove judge containers whose owner is gone (or that are very old). Returns their ids."""
        removed = []
        host = socket.gethostname()
        now = time.time()
        for info in self.client.api.containers(all=True, filters={"label": LABEL}):
            labels = info.get("Labels") or {}
            owner_host, _, pid = str(labels.get(f"{LABEL}.owner", "")).partition(":")
            orphan = owner_host == host and pid.isdigit() and not _pid_alive(int(pid))
            too_old = now - float(info.get("Created", now)) > STALE_AFTER_S
            if orphan or too_old:
                with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                    self.client.api.remove_container(info["Id"], force=True)
                    removed.append(info["Id"])
        return removed

    def containers(self, kind: str | None = None) -> list[str]:
        """Ids of this process's judge containers that exist now (for tests and the admin page).

        `kind` narrows to "run" (cold), "warm" or "fork" containers.
        """
        label = f"{LABEL}.owner={self.owner}"
        found = self.client.api.containers(all=True, filters={"label": [LABEL, label]})
        return [c["Id"] for c in found if kind is None or (c.get("Labels") or {}).get(LABEL) == kind]

    # -- running ----------------------------------------------------------------------------

    def run(self, command: list[str], stdin: bytes, limits: Limits) -> Outcome:
        if (
            self.pool is not None
            and self.warm is not None
            and self.pool_policy is not None
            and tuple(command) == self.warm.command
            and self.pool_policy.accepts(limits)
        ):
            return self._run_pooled(command, stdin, limits, self.pool, self.pool_policy)
        return self._run_cold(command, stdin, limits)

    def _run_pooled(
        self, command: list[str], stdin: bytes, limits: Limits, pool: Pool[WarmContainer], policy: PoolPolicy
    ) -> Outcome:
        """A job in a ready container; the wall clock counts from handing it the job.

        When no container can be had (they fail to start), the job runs cold: slower, but
        judged, and the same lock-down. The failure is logged.
        """
        last = ""
        for attempt in range(self.policy.retries + 1):
            if attempt:
                time.sleep(0.5 * 2 ** (attempt - 1))
            container = pool.acquire(timeout_s=policy.startup_s)
            if container is None:
                log.warning("no %s sandbox is ready (%s); this job runs cold", policy.mode, pool.last_error)
                return self._run_cold(command, stdin, limits)
            fit = False
            try:
                outcome, fit = container.run(stdin, limits)
            finally:
                pool.release(container, fit)
            if outcome.system_error is None:
                return outcome
            last = outcome.system_error
        return Outcome(b"", b"", None, None, 0.0, system_error=f"the {policy.mode} sandbox failed: {last}")

    def _run_cold(self, command: list[str], stdin: bytes, limits: Limits) -> Outcome:
        last: Exception | None = None
        for attempt in range(self.policy.retries + 1):
            if attempt:
                time.sleep(0.5 * 2 ** (attempt - 1))
            try:
                return self._run_once(command, stdin, limits)
            except (EngineFailure, *ENGINE_ERRORS) as exc:
                last = exc
        return Outcome(
            b"",
            b"",
            None,
            None,
            0.0,
            system_error=f"the Docker engine failed {self.policy.retries + 1} times: {last}",
        )

    def _create(self, command: list[str], limits: Limits) -> Any:
        return self.create_container(
            command,
            memory=BASELINE_MEMORY + limits.memory_bytes,
            processes=limits.processes,
            cpu_s=limits.cpu_s,
            file_bytes=limits.file_bytes,
            kind="run",
        )

    def create_container(
        self,
        command: list[str],
        *,
        memory: int,
        processes: int,
        cpu_s: float | None,
        file_bytes: int | None,
        kind: str,
        user: str | None = None,
        tmp_mode: str = "1777",
        cap_add: list[str] | None = None,
    ) -> Any:
        """Create (not start) a sandbox container; every mode gets the same lock-down.

        A warm or fork-server container outlives one job, so its per-job limits (CPU time,
        file size) are set by the server on each job's process instead of here.
        """
        ulimits = [
            Ulimit(name="nofile", soft=self.policy.open_files, hard=self.policy.open_files),
            Ulimit(name="core", soft=0, hard=0),
        ]
        if file_bytes is not None:
            ulimits.append(Ulimit(name="fsize", soft=file_bytes, hard=file_bytes))
        if cpu_s is not None:
            cpu = math.ceil(cpu_s)
            ulimits.append(Ulimit(name="cpu", soft=cpu, hard=cpu + 1))
        return self.client.api.create_container(
            self.image,
            command,
            user=user or self.policy.user,
            working_dir="/tmp",
            # Not detached + stdin_open sets StdinOnce: our half-close of the attach stream
            # becomes the runner's end of input.
            stdin_open=True,
            environment={
                "HOME": "/tmp",
                "TMPDIR": "/tmp",
                "PYTHONHASHSEED": "0",
                "OMP_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1",
                "OPENBLAS_NUM_THREADS": "1",
                "MALLOC_ARENA_MAX": "2",
            },
            labels={LABEL: kind, f"{LABEL}.owner": self.owner},
            hostname="sandbox",
            network_disabled=True,
            host_config=self.client.api.create_host_config(
                network_mode="none",
                read_only=True,
                tmpfs={"/tmp": f"rw,nosuid,nodev,noexec,size={self.policy.scratch_bytes},mode={tmp_mode}"},
                cap_drop=["ALL"],
                cap_add=cap_add or None,
                security_opt=["no-new-privileges"],
                pids_limit=processes,
                mem_limit=memory,
                memswap_limit=memory,  # equal to the memory limit: no swap
                nano_cpus=int(self.policy.cpus * 1e9),
                ulimits=ulimits,
                ipc_mode="none",  # no /dev/shm: nothing to fill, nothing to share
                init=True,  # a real pid 1 reaps zombies and forwards signals
                log_config=LogConfig(type="none"),
                auto_remove=False,  # we read the exit state (OOM) before removing it
            ),
        )

    def _run_once(self, command: list[str], stdin: bytes, limits: Limits) -> Outcome:
        start = time.monotonic()
        try:
            cid = self._create(command, limits)["Id"]
        except docker.errors.ImageNotFound as exc:
            raise ImageError(f"the runtime image {self.image} is gone: {exc}") from exc
        try:
            sock = self.client.api.attach_socket(
                cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            raw: socket.socket = getattr(sock, "_sock", sock)
            return self._pump(cid, sock, raw, stdin, limits, start)
        finally:
            with contextlib.suppress(*ENGINE_ERRORS):
                self.client.api.remove_container(cid, force=True)

    def _pump(
        self, cid: str, sock: Any, raw: socket.socket, stdin: bytes, limits: Limits, start: float
    ) -> Outcome:
        # Start and feed from a thread while this one reads: a container that floods its
        # output at once would otherwise stall the engine's start call on our unread socket.
        starter = _Starter(self.client, cid, raw, stdin)
        starter.start()
        demux = _Demux(limits)
        deadline = start + limits.startup_s
        timed_out = False
        ready_s: float | None = None
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                readable, _, _ = select.select([raw], [], [], min(remaining, 0.1))
                if not readable:
                    if starter.error is not None:
                        raise EngineFailure(f"the container did not start: {starter.error}")
                    continue
                try:
                    chunk = raw.recv(1 << 16)
                except (ConnectionResetError, TimeoutError):
                    chunk = b""
                if not chunk:
                    break  # the container's streams closed: it has exited
                was_ready = demux.ready
                demux.feed(chunk)
                if demux.ready and not was_ready:
                    ready_s = time.monotonic() - start
                    deadline = time.monotonic() + limits.wall_s
                if demux.result_overflow or demux.log_overflow:
                    break
            stopped_early = timed_out or demux.result_overflow or demux.log_overflow
            if stopped_early:
                # Close our end first: the engine does not finish a kill while its copy of
                # the container's output is blocked on a socket nobody reads.
                _close_attach(sock, raw)
                self._kill(cid)
            state = self._wait(cid, max(deadline - time.monotonic(), 0.0) + 5.0)
            if state is None:  # streams closed but the container lives on: over the wall clock
                timed_out = True
                self._kill(cid)
                state = self._wait(cid, 30.0)
                if state is None:
                    raise EngineFailure("the container did not stop after it was killed")
        finally:
            _close_attach(sock, raw)
        starter.join(timeout=1.0)
        exit_code = int(state.get("ExitCode", -1))
        oom = bool(state.get("OOMKilled"))
        # With docker-init as pid 1, a runner killed by signal N exits as 128 + N.
        sig = exit_code - 128 if 128 < exit_code < 128 + 65 else None
        cpu_exceeded = sig == signal.SIGXCPU
        return Outcome(
            result=bytes(demux.result),
            log=bytes(demux.log),
            exit_code=None if sig else exit_code,
            signal=sig,
            wall_s=time.monotonic() - start,
            ready_s=ready_s,
            timed_out=timed_out and demux.ready,
            startup_timed_out=timed_out and not demux.ready,
            cpu_exceeded=cpu_exceeded,
            memory_exceeded=oom and not timed_out,
            result_overflow=demux.result_overflow,
            log_overflow=demux.log_overflow,
        )

    def _kill(self, cid: str) -> None:
        with contextlib.suppress(docker.errors.APIError):  # 409: it already stopped
            self.client.api.kill(cid)

    def _wait(self, cid: str, timeout_s: float) -> dict[str, Any] | None:
        """The container's final State, or None if it is still running after `timeout_s`."""
        give_up = time.monotonic() + timeout_s
        while True:
            state: dict[str, Any] = self.client.api.inspect_container(cid)["State"]
            if not state.get("Running") and state.get("Status") in ("exited", "dead"):
                return state
            if time.monotonic() >= give_up:
                return None
            time.sleep(0.02)


class _Demux:
    """Splits Docker's multiplexed attach stream into result (stdout) and log (stderr), capped."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.result = bytearray()
        self.log = bytearray()
        self.result_overflow = False
        self.log_overflow = False
        self.ready = False  # the first result byte arrived: the runner is up
        self._frames = AttachFrames()

    def feed(self, chunk: bytes) -> None:
        for stream, payload in self._frames.feed(chunk):
            if stream == 1:
                self.ready = self.ready or bool(payload)
                self.result_overflow |= append_capped(self.result, payload, self.limits.result_bytes)
            else:
                self.log_overflow |= append_capped(self.log, payload, self.limits.log_bytes)


class _Starter(threading.Thread):
    """Starts the container, then writes the job to its stdin and half-closes it."""

    def __init__(self, client: docker.DockerClient, cid: str, raw: socket.socket, data: bytes) -> None:
        super().__init__(daemon=True)
        self.client, self.cid, self.raw, self.data = client, cid, raw, data
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            self.client.api.start(self.cid)
        except ENGINE_ERRORS as exc:
            self.error = exc
            return
        try:
            self.raw.sendall(self.data)
            self.raw.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the runner died or stopped reading; its outcome says why


def _close_attach(sock: Any, raw: socket.socket) -> None:
    """Close the attach stream and the HTTP response that owns it."""
    response = getattr(sock, "_response", None)
    for closable in (sock, response, raw):
        if closable is not None:
            with contextlib.suppress(Exception):
                closable.close()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
