"""The Docker engine layer: locked-down sandbox containers, their attach stream, kill, wait, reap.

Both ways of running a job in Docker stand on it: a cold run (sandbox.docker_cold, a new
container per job) and a pooled one (sandbox.docker_warm, a fork server started ahead of
its jobs). It knows containers, not runners or jobs: what runs in one is the caller's.

Every container gets the same lock-down: no network, a read-only root, a small tmpfs for
/tmp, an empty read-only /dev/mqueue, no capabilities (beyond what the caller adds),
no-new-privileges, and limits on processes, memory (no swap), CPU, open files, file size
and core dumps; Docker's log driver is off (a learner's megabytes of output must not land
on the host's disk). Each container carries a label naming its owner (host and pid), so a
judge that starts after a crash removes the ones its dead predecessor left behind.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.types import LogConfig, Ulimit

from judge.core.backend import Outcome
from sandbox.errors import SandboxError
from sandbox.image import LABEL, SANDBOX_USER, ImageError, runtime_image

# The runner's own footprint (interpreter, torch, its libraries) before learner code runs.
# The learner's memory budget comes on top of it in the container's memory limit.
BASELINE_MEMORY = 512 * 1024 * 1024
# Containers older than this are removed by any judge, whoever made them.
STALE_AFTER_S = 3600.0
# The runtime image's interpreter (on its PATH), which every container's command starts.
PYTHON = "python3"
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)
ATTACH_PARAMS = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
# Docker mounts the container's POSIX message queue filesystem writable at /dev/mqueue: a
# queue made there with open(2) outlives the job that made it, and in a fork server the next
# job (another learner's) could read it. A mount of our own at the same place replaces
# Docker's: an empty tmpfs, read-only (and too small to hold anything, should it ever be
# remounted), so nothing can be made there whatever the job's uid.
MASKED = ("/dev/mqueue",)
MASK_OPTIONS = "ro,nosuid,nodev,noexec,size=4k,mode=0555"


class EngineFailure(SandboxError):
    """The Docker engine failed us (not the learner's code); the run may be retried."""


@dataclass(frozen=True)
class ContainerPolicy:
    """What every sandbox container gets, beyond the per-run Limits."""

    scratch_bytes: int = 64 * 1024 * 1024  # tmpfs /tmp; counts against the memory limit too
    cpus: float = 1.0
    open_files: int = 1024
    retries: int = 2  # more attempts when the engine itself fails
    user: str = SANDBOX_USER


class Attachment:
    """A container's attach stream: the job goes in on stdin, Docker's multiplexed stdout and
    stderr come out (sandbox.attach splits them)."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        # docker-py hands back a wrapper of the socket for unix and TCP transports alike.
        self.raw: socket.socket = getattr(sock, "_sock", sock)

    def read(self, timeout_s: float) -> bytes | None:
        """The next chunk: None when nothing came within `timeout_s`, b"" once the stream ended."""
        readable, _, _ = select.select([self.raw], [], [], max(timeout_s, 0.0))
        if not readable:
            return None
        try:
            return self.raw.recv(1 << 16)
        except (ConnectionResetError, TimeoutError):
            return b""

    def send_all(self, data: bytes) -> None:
        self.raw.sendall(data)

    def end_input(self) -> None:
        """Half-close: with StdinOnce this is the end of the container's stdin."""
        self.raw.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        """Close the stream and the HTTP response that owns it (idempotent)."""
        response = getattr(self._sock, "_response", None)
        for closable in (self._sock, response, self.raw):
            if closable is not None:
                with contextlib.suppress(Exception):
                    closable.close()


class Engine:
    """One Docker engine and the runtime image, as the sandbox uses them."""

    # The kernel filesystems covered in every container (a test of the fork server's own
    # after-job check makes containers without, to see what the check alone does).
    masked: tuple[str, ...] = MASKED

    def __init__(
        self, client: docker.DockerClient, image: str, policy: ContainerPolicy | None = None
    ) -> None:
        self.client = client
        self.image = image
        self.policy = policy or ContainerPolicy()
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self.image_id = str(client.images.get(image).id)

    @classmethod
    def connect(
        cls, code: Mapping[str, Path], timeout_s: float = 5.0, policy: ContainerPolicy | None = None
    ) -> Engine:
        """The engine of DOCKER_HOST (or the local socket), with a runtime image holding `code`.

        Raises EngineFailure when no engine answers and ImageError when the image is missing.
        Containers of dead judges are removed on the way.
        """
        try:
            client = docker.from_env(timeout=int(max(timeout_s, 1)))
        except ENGINE_ERRORS as exc:
            raise EngineFailure(f"no Docker engine answers: {exc}") from exc
        try:
            client.ping()
            engine = cls(client, runtime_image(client, code), policy)
        except BaseException as exc:
            client.close()  # its connection pool would otherwise outlive the failed attempt
            if isinstance(exc, ENGINE_ERRORS):
                raise EngineFailure(f"no Docker engine answers: {exc}") from exc
            raise
        engine.reap_stale()
        return engine

    # -- one container --------------------------------------------------------------------

    def create(
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
    ) -> str:
        """Create (not start) a sandbox container and return its id.

        A warm or fork-server container outlives one job, so its per-job limits (CPU time,
        file size) are set by the server on each job's process instead of here (None).
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
        scratch = f"rw,nosuid,nodev,noexec,size={self.policy.scratch_bytes},mode={tmp_mode}"
        try:
            created = self.client.api.create_container(
                self.image,
                command,
                user=user or self.policy.user,
                working_dir="/tmp",
                # Not detached + stdin_open sets StdinOnce: our half-close of the attach
                # stream becomes the end of the container's input.
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
                    tmpfs={"/tmp": scratch, **dict.fromkeys(self.masked, MASK_OPTIONS)},
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
        except docker.errors.ImageNotFound as exc:
            raise ImageError(f"the runtime image {self.image} is gone: {exc}") from exc
        cid: str = created["Id"]
        return cid

    def attach(self, cid: str) -> Attachment:
        """The container's stdin, stdout and stderr; attach before start to miss no output."""
        return Attachment(self.client.api.attach_socket(cid, params=ATTACH_PARAMS))

    def start(self, cid: str) -> None:
        self.client.api.start(cid)

    def kill(self, cid: str) -> None:
        with contextlib.suppress(docker.errors.APIError):  # 409: it already stopped
            self.client.api.kill(cid)

    def wait(self, cid: str, timeout_s: float) -> dict[str, Any] | None:
        """The container's final State, or None if it is still running after `timeout_s`."""
        give_up = time.monotonic() + timeout_s
        while True:
            state: dict[str, Any] = self.client.api.inspect_container(cid)["State"]
            if not state.get("Running") and state.get("Status") in ("exited", "dead"):
                return state
            if time.monotonic() >= give_up:
                return None
            time.sleep(0.02)

    def last_state(self, cid: str, timeout_s: float = 5.0) -> dict[str, Any]:
        """The State once the container stopped (or after `timeout_s`); {} if the engine fails."""
        with contextlib.suppress(*ENGINE_ERRORS):
            state = self.wait(cid, timeout_s)
            if state is not None:
                return state
            running: dict[str, Any] = self.client.api.inspect_container(cid)["State"]
            return running
        return {}

    def remove(self, cid: str) -> None:
        """Remove the container, running or not; an engine that fails here is not the run's fault."""
        with contextlib.suppress(*ENGINE_ERRORS):
            self.client.api.remove_container(cid, force=True)

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


def retried(attempts: int, attempt: Callable[[], Outcome], what: str) -> Outcome:
    """`attempt` until it gives an outcome without a system error, at most `attempts` times,
    waiting 0.5 s, 1 s, 2 s ... between them. An engine exception is a failed attempt too.
    Whatever the learner's code caused is an outcome without a system error: returned as is."""
    last = ""
    for n in range(attempts):
        if n:
            time.sleep(0.5 * 2 ** (n - 1))
        try:
            outcome = attempt()
        except (EngineFailure, *ENGINE_ERRORS) as exc:
            last = str(exc)
            continue
        if outcome.system_error is None:
            return outcome
        last = outcome.system_error
    return Outcome.failed(f"{what} failed {attempts} times: {last}")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
