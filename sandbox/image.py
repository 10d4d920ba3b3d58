"""The judge runtime image: a base (Debian, Python, the pinned CPU torch) and a runner layer.

Two ways make the base, and both tag it with a hash of what went in, so a build is skipped
when its tag exists and a changed input makes a new tag:

- offline (`judge image build --offline`): debootstrap a Debian rootfs from Debian's
  packages, install the pinned wheels into it with the host's pip (which finds the local
  torch file), `docker import`. Needs root, debootstrap and chroot; no registry.
- pulled (`judge image build`): `docker build` of `sandbox/image/Dockerfile` from
  python:3.11-slim, for hosts that can pull.

The runner layer adds the runner's code (the caller names the folders) to a base, byte-
compiled, as one small committed layer, tagged with a hash of the base and the code. It is
made on demand in a few seconds, so editing the judge never needs a base rebuild, and the
reference observations and the learner's run always come from the same image.
"""

from __future__ import annotations

import hashlib
import io
import os
import platform
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import docker
import docker.errors

IMAGE_DIR = Path(__file__).resolve().parent / "image"
REQUIREMENTS = IMAGE_DIR / "requirements.txt"
DOCKERFILE = IMAGE_DIR / "Dockerfile"

BASE_REPO = "llm-judge-base"
RUNTIME_REPO = "llm-judge-runtime"
# Labels every container the judge creates, so that stale ones can be found and removed.
LABEL = "llm-judge.sandbox"

# The offline recipe. Bump RECIPE when the steps change in a way the inputs do not show.
RECIPE = 1
DEBIAN_SUITE = "bookworm"  # its python3 is 3.11, matching the pinned cp311 wheels
DEBIAN_PYTHON = "3.11"
DEBIAN_MIRROR = os.environ.get("JUDGE_DEBIAN_MIRROR", "http://deb.debian.org/debian")
DEBIAN_PACKAGES = ("python3",)

SANDBOX_USER = "65534:65534"  # nobody:nogroup; owns nothing in the image
CODE_ROOT = "/opt/judge"  # the runner's code, on PYTHONPATH
IMAGE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "PYTHONPATH": CODE_ROOT,
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}

Log = Callable[[str], None]


class ImageError(Exception):
    """The runtime image is missing or could not be built; the message says what to do."""


def _digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()[:16]


def offline_base_tag() -> str:
    inputs = (
        f"recipe={RECIPE}",
        DEBIAN_SUITE,
        ",".join(DEBIAN_PACKAGES),
        platform.machine(),
        REQUIREMENTS.read_bytes(),
    )
    return f"{BASE_REPO}:debootstrap-{_digest(*inputs)}"


def pulled_base_tag() -> str:
    return f"{BASE_REPO}:dockerfile-{_digest(DOCKERFILE.read_bytes(), REQUIREMENTS.read_bytes())}"


def image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def build_base(client: docker.DockerClient, *, offline: bool, log: Log = print) -> str:
    """Build the base image unless its tag already exists; return the tag."""
    tag = offline_base_tag() if offline else pulled_base_tag()
    if image_exists(client, tag):
        log(f"{tag} exists; nothing to build")
        return tag
    if offline:
        _build_offline(client, tag, log)
    else:
        log(f"building {tag} from {DOCKERFILE} (pulls python:3.11-slim)")
        try:
            client.images.build(path=str(IMAGE_DIR), tag=tag, rm=True, pull=True)
        except (docker.errors.BuildError, docker.errors.APIError) as exc:
            raise ImageError(f"docker build failed: {exc}; without a registry use --offline") from exc
    log(f"built {tag}")
    return tag


def _build_offline(client: docker.DockerClient, tag: str, log: Log) -> None:
    if os.geteuid() != 0:
        raise ImageError("the offline build needs root (debootstrap and chroot); run it with sudo")
    for tool in ("debootstrap", "chroot", "tar"):
        if shutil.which(tool) is None:
            hint = " (apt-get install debootstrap)" if tool == "debootstrap" else ""
            raise ImageError(f"the offline build needs {tool}{hint}")
    work = Path(os.environ.get("JUDGE_IMAGE_WORKDIR", "/var/tmp"))
    with tempfile.TemporaryDirectory(prefix="judge-image-", dir=work) as tmp:
        root = Path(tmp) / "rootfs"
        log(f"debootstrap {DEBIAN_SUITE} from {DEBIAN_MIRROR} (about a minute)")
        _step(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(DEBIAN_PACKAGES)}",
                DEBIAN_SUITE,
                str(root),
                DEBIAN_MIRROR,
            ]
        )
        site = f"/usr/local/lib/python{DEBIAN_PYTHON}/dist-packages"
        log(f"installing {REQUIREMENTS.name} into the rootfs")
        _step([sys.executable, "-m", "pip", "install", "--quiet", *_wheel_target_args(root / site[1:])])
        log("byte-compiling (the image's root is read-only at run time)")
        # Exit 1 is expected: a few of torch's test helpers use newer syntax and stay uncompiled.
        _step(["chroot", str(root), "python3", "-m", "compileall", "-q", "-j", "0", site], ok=(0, 1))
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man"):
            shutil.rmtree(root / junk, ignore_errors=True)
        archive = Path(tmp) / "rootfs.tar"
        _step(["tar", "-C", str(root), "--numeric-owner", "-cf", str(archive), "."])
        log(f"docker import as {tag}")
        repo, _, version = tag.partition(":")
        try:
            client.api.import_image_from_file(
                str(archive), repository=repo, tag=version, changes=_image_changes()
            )
        except docker.errors.APIError as exc:
            raise ImageError(f"docker import failed: {exc}") from exc
    if not image_exists(client, tag):
        raise ImageError(f"docker import did not produce {tag}")


def _wheel_target_args(target: Path) -> list[str]:
    """pip arguments that fetch the image's wheels (cp311, Linux) whatever the host's Python is."""
    machine = platform.machine()
    args = ["--no-deps", "--no-compile", "--only-binary=:all:", "--target", str(target)]
    args += ["--python-version", DEBIAN_PYTHON, "--implementation", "cp"]
    args += ["--abi", "cp" + DEBIAN_PYTHON.replace(".", ""), "--abi", "abi3", "--abi", "none"]
    for plat in (f"manylinux_2_28_{machine}", f"manylinux_2_17_{machine}", "any"):
        args += ["--platform", plat]
    return [*args, "-r", str(REQUIREMENTS)]


def _image_changes() -> list[str]:
    env = [f"ENV {k}={v}" for k, v in IMAGE_ENV.items()]
    return [*env, "WORKDIR /tmp", f"USER {SANDBOX_USER}", 'CMD ["python3"]']


def _step(command: list[str], ok: tuple[int, ...] = (0,)) -> None:
    proc = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode not in ok:
        tail = (proc.stderr or proc.stdout).strip()[-2000:]
        raise ImageError(f"`{' '.join(command[:3])} ...` failed (exit {proc.returncode}):\n{tail}")


def _code_files(code: Mapping[str, Path]) -> list[tuple[str, Path]]:
    """(path inside CODE_ROOT, file on the host) for every .py file of the code folders, sorted."""
    files = []
    for dest, src in sorted(code.items()):
        for path in sorted(src.rglob("*.py")):
            if "__pycache__" not in path.parts:
                files.append((f"{dest}/{path.relative_to(src).as_posix()}", path))
    return files


def _code_tar(files: list[tuple[str, Path]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        dirs = sorted({str(Path(CODE_ROOT[1:], name).parent) for name, _ in files} | {CODE_ROOT[1:]})
        for d in dirs:
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for name, path in files:
            data = path.read_bytes()
            info = tarfile.TarInfo(f"{CODE_ROOT[1:]}/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def find_base(client: docker.DockerClient) -> str | None:
    for tag in (offline_base_tag(), pulled_base_tag()):
        if image_exists(client, tag):
            return tag
    return None


def runtime_image(client: docker.DockerClient, code: Mapping[str, Path], log: Log | None = None) -> str:
    """The runtime image for this code: found, or layered onto the base now (a few seconds)."""
    base = find_base(client)
    if base is None:
        raise ImageError(
            "the judge runtime image is not built; run `judge image build --offline` "
            "(or `judge image build` where images can be pulled)"
        )
    base_id = str(client.images.get(base).id)
    files = _code_files(code)
    code_digest = _digest(base_id, *(f"{name}\0".encode() + path.read_bytes() for name, path in files))
    tag = f"{RUNTIME_REPO}:{code_digest}"
    if image_exists(client, tag):
        return tag
    if log:
        log(f"adding the runner layer to {base} as {tag}")
    container = client.containers.create(
        base,
        ["python3", "-m", "compileall", "-q", CODE_ROOT],
        user="0:0",  # writes the .pyc files next to the code, before the layer is sealed
        network_mode="none",
        labels={LABEL: "build", f"{LABEL}.owner": f"{socket.gethostname()}:{os.getpid()}"},
    )
    try:
        container.put_archive("/", _code_tar(files))
        container.start()
        status = container.wait(timeout=120)
        if status.get("StatusCode") != 0:
            raise ImageError(f"compiling the runner code in the image failed: {status}")
        repo, _, version = tag.partition(":")
        container.commit(
            repository=repo,
            tag=version,
            conf={
                "Env": [f"{k}={v}" for k, v in IMAGE_ENV.items()],
                "User": SANDBOX_USER,
                "WorkingDir": "/tmp",
                "Cmd": ["python3"],
                "Labels": {LABEL: "runtime", f"{LABEL}.base": base},
            },
        )
    finally:
        container.remove(force=True)
    return tag
