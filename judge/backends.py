"""Choosing a sandbox backend by name, and the rule that a shared server needs a real sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from judge.core.backend import Backend
from judge.core.errors import JudgeError
from judge.core.execution import RUNNER
from judge.core.forked import local_backend
from judge.core.messages import msg
from judge.core.texts import Text
from judge.settings import CODE_ROOT, SandboxSettings

__all__ = ["make_backend", "require_sandbox"]

BackendName = Literal["auto", "local", "docker"]


class BackendUnavailable(JudgeError):
    pass


def runner_code() -> dict[str, Path]:
    """The code the runner imports inside a sandbox: the judge package, which holds no secrets
    (references and cases live in problems/ and reach the runner only through its job), and
    the sandbox package, whose fork server runs the runner in warm containers."""
    return {"judge": CODE_ROOT / "judge", "sandbox": CODE_ROOT / "sandbox"}


def make_backend(name: BackendName, sandbox: SandboxSettings) -> tuple[Backend, list[Text]]:
    """The backend, built to run the judge's runner, and any warnings to show about the choice.

    `auto` takes Docker wherever an engine answers and the runtime image is built, and
    otherwise the local backend, saying why. `docker` never falls back. The Docker
    backend's mode (cold, warm, fork) and pool come from `sandbox`.
    """
    if name == "local":
        # Each job in a child forked from this process, which has torch loaded, where that is
        # safe (judge.core.forked: Linux, one thread), else in a new process.
        return local_backend(CODE_ROOT, RUNNER), []
    # Imported here: the Docker SDK is only needed when Docker is asked for.
    from sandbox.docker_backend import DockerBackend
    from sandbox.docker_warm import PoolPolicy
    from sandbox.engine import EngineFailure
    from sandbox.image import ImageError

    pool = PoolPolicy(
        mode=sandbox.mode,
        size=sandbox.pool_size,
        recycle_after=sandbox.recycle_after,
        memory_bytes=sandbox.pool_memory_bytes,
        uid_block=sandbox.uid_block,
    )
    try:
        return DockerBackend.connect(runner_code(), RUNNER, pool), []
    except (EngineFailure, ImageError) as exc:
        if name == "docker":
            raise BackendUnavailable(str(exc)) from exc
        reason = str(exc)
    return local_backend(CODE_ROOT, RUNNER), [msg("no_docker_fallback", reason=reason)]


def require_sandbox(backend: Backend, allow_unsandboxed: bool) -> None:
    """A server that judges other people's code refuses to start without a sandbox.

    `JUDGE_ALLOW_UNSANDBOXED=1` overrides it, for a single-user server on one's own machine.
    """
    if not backend.is_sandbox and not allow_unsandboxed:
        raise BackendUnavailable(
            f"refusing to judge other people's code on the {backend.name} backend, which is no "
            "security boundary: start a Docker engine and build the image (`judge image build "
            "--offline`), or set JUDGE_ALLOW_UNSANDBOXED=1 if you alone use this server"
        )
