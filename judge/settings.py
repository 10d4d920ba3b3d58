"""Settings: one tree, loaded once by the command line and passed down.

`JudgeSettings` holds what the judge needs (where problems and caches are, which backend) and
a `sandbox` section (how the Docker backend gets its containers); `web.settings.WebSettings`
extends it with the platform's. Each value comes from, strongest first:

1. the arguments the program passes (tests, `--backend` on the command line);
2. the environment: `JUDGE_<NAME>`, and `JUDGE_SANDBOX__<NAME>` for the sandbox section;
3. a TOML file: `--config FILE`, else `JUDGE_CONFIG`, else `judge.toml` in the working folder
   if there is one. Its tables are `[judge]`, `[sandbox]` and `[web]`; a key that no table
   knows is an error, not a silent default;
4. the defaults below. docs/settings.md lists every setting.

Derived numbers (the per-job uid block of a fork-mode container, the body cap of code routes)
are properties, not settings, so that they cannot disagree with what they derive from.
"""

from __future__ import annotations

import importlib.util
import os
import tomllib
from pathlib import Path
from typing import Any, ClassVar, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from judge.core.errors import JudgeError

# The folder that holds the judge and sandbox packages: the clone, or site-packages.
CODE_ROOT = Path(__file__).resolve().parent.parent
APP_NAME = "llm-judge"
CONFIG_ENV = "JUDGE_CONFIG"
CONFIG_NAME = "judge.toml"
# Most jobs one fork-mode container serves before it is replaced; per-job uids are allotted in
# blocks of this size (SandboxSettings.uid_block), so jobs of two containers never share one.
MAX_RECYCLE_AFTER = 4000

# Environment names of an earlier layout: refused by name rather than silently ignored.
RENAMED = {
    "JUDGE_SANDBOX_MODE": "JUDGE_SANDBOX__MODE",
    "JUDGE_POOL_SIZE": "JUDGE_SANDBOX__POOL_SIZE",
    "JUDGE_RECYCLE_AFTER": "JUDGE_SANDBOX__RECYCLE_AFTER",
    "JUDGE_POOL_MEMORY_MB": "JUDGE_SANDBOX__POOL_MEMORY_MB",
    "JUDGE_DEBIAN_MIRROR": "JUDGE_SANDBOX__IMAGE_MIRROR",
    "JUDGE_IMAGE_WORKDIR": "JUDGE_SANDBOX__IMAGE_WORKDIR",
}


class SettingsError(JudgeError):
    """A setting that cannot be used: an unreadable file, an unknown key, an old name."""


def shipped_problems() -> Path:
    """The problem packages that come with the judge: `problems/` of a clone, installed as the
    package `llm_judge_problems` (found without importing it)."""
    spec = importlib.util.find_spec("llm_judge_problems")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return CODE_ROOT / "problems"  # a clone used without being installed


class SandboxSettings(BaseModel):
    """How the Docker backend gets its containers.

    - cold: a new container per run; torch is imported inside it every time (about 2 s).
    - warm: containers started ahead of time with torch imported, each used for one run
      and replaced in the background.
    - fork: warm containers whose server forks a child per run, under a user of the run's
      own, with rlimits, a seccomp filter and a fresh folder; replaced after
      `recycle_after` runs or anything unusual.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["cold", "warm", "fork"] = "fork"
    # Ready containers kept by each process that judges (size it to its judging threads).
    pool_size: int = Field(default=2, ge=1, le=64)
    recycle_after: int = Field(default=100, ge=1, le=MAX_RECYCLE_AFTER)
    # The most memory a pooled run may ask for; runs of problems that ask for more go cold.
    pool_memory_mb: int = Field(default=1024, ge=64)
    # `judge image build --offline`: the Debian mirror to bootstrap from (unset: the one this
    # machine's apt sources name) and the folder for the root file system while it is built.
    image_mirror: str | None = None
    image_workdir: Path = Path("/var/tmp")

    @property
    def pool_memory_bytes(self) -> int:
        return self.pool_memory_mb * 1024 * 1024

    @property
    def uid_block(self) -> int:
        """Per-job uids one fork-mode container may use: one per job it can ever serve."""
        return MAX_RECYCLE_AFTER


class JudgeSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="JUDGE_", env_nested_delimiter="__", extra="ignore")
    # The TOML tables this class reads; WebSettings adds "web".
    file_tables: ClassVar[tuple[str, ...]] = ("judge",)

    # The TOML file read (see the module docstring); not itself read from a file.
    config: Path | None = None
    problems_dir: Path = Field(default_factory=shipped_problems)
    # Reference and wrong-solution observations, keyed by package hash and runtime.
    cache_dir: Path = Field(default_factory=lambda: Path(platformdirs.user_cache_dir(APP_NAME)))
    backend: Literal["auto", "local", "docker"] = "auto"
    # Seconds the runner may take to become ready (interpreter and torch loaded).
    startup_s: float = 30.0
    # A shared server refuses to run on the local backend (no security boundary) unless this is set.
    allow_unsandboxed: bool = False
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        _refuse_renamed()
        return init_settings, env_settings, TomlFile(settings_cls, init_settings, cls.file_tables)


def _refuse_renamed() -> None:
    old = [f"{name} is now {new}" for name, new in RENAMED.items() if name in os.environ]
    if old:
        raise SettingsError("renamed settings: " + "; ".join(old))


def config_path(explicit: Path | None) -> Path | None:
    """The TOML file to read: given, named by JUDGE_CONFIG, or judge.toml here (if any)."""
    if explicit is not None:
        return explicit
    named = os.environ.get(CONFIG_ENV, "").strip()
    if named:
        return Path(named)
    here = Path.cwd() / CONFIG_NAME
    return here if here.is_file() else None


class TomlFile(PydanticBaseSettingsSource):
    """Values from the TOML file; its tables flattened onto the settings, `[sandbox]` kept as
    the section it is. Unknown tables or keys are refused with their names."""

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        tables: tuple[str, ...],
    ) -> None:
        super().__init__(settings_cls)
        self.tables = tables
        explicit = init_settings().get("config")
        self.path = config_path(Path(explicit) if explicit is not None else None)

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ returns the whole mapping

    def __call__(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        try:
            data = tomllib.loads(self.path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise SettingsError(f"cannot read the settings file {self.path}: {exc.strerror}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{self.path} is not valid TOML: {exc}") from exc
        return flatten(data, self.settings_cls, self.tables, self.path)


ALL_TABLES = ("judge", "sandbox", "web")


def flatten(
    data: dict[str, Any], settings_cls: type[BaseSettings], tables: tuple[str, ...], path: Path
) -> dict[str, Any]:
    unknown = [key for key in data if key not in ALL_TABLES]
    if unknown:
        raise SettingsError(
            f"{path}: unknown table or key {', '.join(map(repr, unknown))}; settings go under "
            "[judge], [sandbox] or [web] (docs/settings.md)"
        )
    out: dict[str, Any] = {}
    fields = settings_cls.model_fields
    for table in tables:
        values = data.get(table, {})
        if not isinstance(values, dict):
            raise SettingsError(f"{path}: [{table}] must be a table")
        wrong = [k for k in values if k not in fields or k in ("sandbox", "config")]
        if wrong:
            raise SettingsError(f"{path}: [{table}] has no setting {', '.join(map(repr, wrong))}")
        out.update(values)
    if "sandbox" in data:
        section = data["sandbox"]
        if not isinstance(section, dict):
            raise SettingsError(f"{path}: [sandbox] must be a table")
        wrong = [k for k in section if k not in SandboxSettings.model_fields]
        if wrong:
            raise SettingsError(f"{path}: [sandbox] has no setting {', '.join(map(repr, wrong))}")
        out["sandbox"] = section
    return out
