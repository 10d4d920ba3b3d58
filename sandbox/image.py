"""The judge runtime image: a base (Debian, Python, the pinned CPU torch) and a runner layer.

Two ways make the base, and both tag it with a hash of what went in, so a build is skipped
when its tag exists and a changed input makes a new tag. Either way the pinned wheels are
installed by the host's own pip, so they come from wherever this machine's pip configuration
says (a local torch file, a mirror); no index is named here.

- offline (`judge image build --offline`): debootstrap a Debian rootfs from the Debian mirror
  of this machine's apt sources (or the image_mirror setting), install the wheels into it,
  `docker import`. Needs root, debootstrap and chroot; no registry.
- pulled (`judge image build`): `docker build` of `sandbox/image/Dockerfile` from
  python:3.11-slim, which copies in the wheels installed on the host; for hosts that can pull.

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
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

from sandbox.errors import SandboxError

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
DEBIAN_PACKAGES = ("python3",)
# The settings that choose the mirror and the work folder (judge.settings, [sandbox]); named
# in messages only: the caller passes their values in.
MIRROR_SETTING = "image_mirror under [sandbox] (JUDGE_SANDBOX__IMAGE_MIRROR)"
DEFAULT_WORKDIR = Path("/var/tmp")
APT_DIR = Path("/etc/apt")
OS_RELEASE = Path("/etc/os-release")
# debootstrap reads these schemes (apt's mirror+file:, cdrom: and tor+ are apt's alone).
MIRROR_SCHEMES = ("http://", "https://", "file:/")
STEP_TAIL_LINES = 40  # of a failed step's output, in the error

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


class ImageError(SandboxError):
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


@dataclass(frozen=True)
class AptSource:
    """One `deb` entry of apt's sources: a repository URI and what it serves."""

    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]


def apt_sources(apt_dir: Path = APT_DIR) -> list[AptSource]:
    """The `deb` entries of sources.list and sources.list.d/ (one-line *.list files and deb822
    *.sources files), in apt's order; deb-src and disabled entries are left out."""
    files = [apt_dir / "sources.list"]
    listed = apt_dir / "sources.list.d"
    if listed.is_dir():
        files += sorted(p for p in listed.iterdir() if p.suffix in (".list", ".sources"))
    found: list[AptSource] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found += _deb822_sources(text) if path.suffix == ".sources" else _one_line_sources(text)
    return found


def _one_line_sources(text: str) -> list[AptSource]:
    """`deb [options] uri suite [component...]`, one per line."""
    found = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) < 3 or words[0] != "deb":
            continue
        rest = words[1:]
        if rest[0].startswith("["):  # options: [ arch=amd64 signed-by=... ]
            end = next((i for i, w in enumerate(rest) if w.endswith("]")), len(rest) - 1)
            rest = rest[end + 1 :]
        if len(rest) >= 2:
            found.append(AptSource(rest[0], (rest[1],), tuple(rest[2:])))
    return found


def _deb822_sources(text: str) -> list[AptSource]:
    """Stanzas of `Field: value` lines separated by blank lines (sources.list(5), deb822)."""
    found = []
    for stanza in _stanzas(text):
        enabled = stanza.get("enabled", "yes").lower() not in ("no", "false", "0")
        if enabled and "deb" in stanza.get("types", "").split():
            suites = tuple(stanza.get("suites", "").split())
            components = tuple(stanza.get("components", "").split())
            found += [AptSource(uri, suites, components) for uri in stanza.get("uris", "").split()]
    return found


def _stanzas(text: str) -> Iterable[dict[str, str]]:
    stanza: dict[str, str] = {}
    field = ""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if not line.strip():
            if stanza:
                yield stanza
            stanza, field = {}, ""
        elif line[0] in " \t" and field:  # a continuation of the field above
            stanza[field] += " " + line.strip()
        elif ":" in line:
            field, value = line.split(":", 1)
            field = field.strip().lower()
            stanza[field] = value.strip()
    if stanza:
        yield stanza


def debian_mirror(chosen: str | None = None, apt_dir: Path = APT_DIR, os_release: Path = OS_RELEASE) -> str:
    """The Debian mirror for the offline build: `chosen` (the image_mirror setting) if given,
    else the first of this machine's apt sources that serves DEBIAN_SUITE's main component,
    else (on a Debian host, whose mirror serves every release) the first source of a main
    Debian suite."""
    if chosen and chosen.strip():
        return chosen.strip().rstrip("/")
    usable = [s for s in apt_sources(apt_dir) if s.uri.startswith(MIRROR_SCHEMES) and "main" in s.components]
    for source in usable:
        if DEBIAN_SUITE in source.suites:
            return source.uri.rstrip("/")
    if _os_id(os_release) == "debian":
        for source in usable:
            if any("-" not in suite and not suite.endswith("/") for suite in source.suites):
                return source.uri.rstrip("/")
    raise ImageError(
        f"no apt source of this machine serves Debian {DEBIAN_SUITE} (looked in {apt_dir}/sources.list "
        f"and {apt_dir}/sources.list.d/); set {MIRROR_SETTING} to a Debian mirror's URL"
    )


def _os_id(os_release: Path) -> str:
    try:
        text = os_release.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith("ID="):
            return line[3:].strip().strip("\"'")
    return ""


def image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def build_base(
    client: docker.DockerClient,
    *,
    offline: bool,
    log: Log = print,
    mirror: str | None = None,
    workdir: Path = DEFAULT_WORKDIR,
) -> str:
    """Build the base image unless its tag already exists; return the tag. `log` hears each
    step and the output of the tools as it comes (debootstrap, pip, docker build). `mirror`
    (offline only; default: from this machine's apt sources) and `workdir` (where the rootfs
    or the build context is made, a few GB) are the image_* settings of [sandbox]."""
    tag = offline_base_tag() if offline else pulled_base_tag()
    if image_exists(client, tag):
        log(f"{tag} exists; nothing to build")
        return tag
    if offline:
        _build_offline(client, tag, log, debian_mirror(mirror), workdir)
    else:
        _build_pulled(client, tag, log, workdir)
    log(f"built {tag}")
    return tag


def _build_offline(client: docker.DockerClient, tag: str, log: Log, mirror: str, workdir: Path) -> None:
    if os.geteuid() != 0:
        raise ImageError("the offline build needs root (debootstrap and chroot); run it with sudo")
    for tool in ("debootstrap", "chroot", "tar"):
        if shutil.which(tool) is None:
            hint = " (apt-get install debootstrap)" if tool == "debootstrap" else ""
            raise ImageError(f"the offline build needs {tool}{hint}")
    with tempfile.TemporaryDirectory(prefix="judge-image-", dir=workdir) as tmp:
        root = Path(tmp) / "rootfs"
        log(f"== debootstrap {DEBIAN_SUITE} from {mirror} (a minute or two)")
        run_step(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(DEBIAN_PACKAGES)}",
                DEBIAN_SUITE,
                str(root),
                mirror,
            ],
            log,
        )
        site = f"/usr/local/lib/python{DEBIAN_PYTHON}/dist-packages"
        _install_wheels(root / site[1:], log)
        log("== byte-compiling (the image's root is read-only at run time)")
        # Exit 1 is expected: a few of torch's test helpers use newer syntax and stay uncompiled.
        run_step(["chroot", str(root), "python3", "-m", "compileall", "-q", "-j", "0", site], log, ok=(0, 1))
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man"):
            shutil.rmtree(root / junk, ignore_errors=True)
        archive = Path(tmp) / "rootfs.tar"
        log("== packing the rootfs")
        run_step(["tar", "-C", str(root), "--numeric-owner", "-cf", str(archive), "."], log)
        log(f"== docker import as {tag}")
        repo, _, version = tag.partition(":")
        try:
            client.api.import_image_from_file(
                str(archive), repository=repo, tag=version, changes=_image_changes()
            )
        except docker.errors.APIError as exc:
            raise ImageError(f"docker import failed: {exc}") from exc
    if not image_exists(client, tag):
        raise ImageError(f"docker import did not produce {tag}")


def _build_pulled(client: docker.DockerClient, tag: str, log: Log, workdir: Path) -> None:
    """`docker build` of the Dockerfile, with the wheels installed on the host into the build
    context's site/ (the build itself fetches nothing but its FROM image)."""
    with tempfile.TemporaryDirectory(prefix="judge-image-", dir=workdir) as tmp:
        context = Path(tmp)
        shutil.copyfile(DOCKERFILE, context / "Dockerfile")
        _install_wheels(context / "site", log)
        log(f"== docker build of {DOCKERFILE.name} as {tag} (pulls its FROM image)")
        tail: deque[str] = deque(maxlen=STEP_TAIL_LINES)
        try:
            for chunk in client.api.build(path=str(context), tag=tag, rm=True, pull=True, decode=True):
                if "error" in chunk:
                    raise ImageError(f"docker build failed: {chunk['error']}\n" + "\n".join(tail))
                for line in str(chunk.get("stream", "")).splitlines():
                    if line.strip():
                        tail.append(line)
                        log(f"  {line}")
        except docker.errors.APIError as exc:
            raise ImageError(f"docker build failed: {exc}; without a registry use --offline") from exc
    if not image_exists(client, tag):
        raise ImageError(f"docker build did not produce {tag}")


def _install_wheels(target: Path, log: Log) -> None:
    log(f"== installing {REQUIREMENTS.name} into {target.name}/ with this machine's pip")
    run_step(
        [sys.executable, "-m", "pip", "install", "--progress-bar", "off", *_wheel_target_args(target)], log
    )


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


def run_step(command: list[str], log: Log, ok: tuple[int, ...] = (0,)) -> None:
    """Run a build step, passing its output (stdout and stderr) to `log` line by line."""
    tail: deque[str] = deque(maxlen=STEP_TAIL_LINES)
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},  # pip's lines as they come, not at exit
        text=True,
        errors="replace",
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            if line:
                tail.append(line)
                log(f"  {line}")
    if proc.returncode not in ok:
        raise ImageError(
            f"`{' '.join(command[:3])} ...` failed (exit {proc.returncode}):\n" + "\n".join(tail)
        )


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
