"""The kit as an installable package: `pip install ./practice` (or the zip) gives `practice`
(`from practice import check, submit`, `python -m practice 204`) and the learner's course package
(`qwen`), with torch the only dependency.

Where an installed kit reads the learner's files from (practice/judge.py, kit_home): the kit's
setup.py records the folder pip installed it from, and while that folder is there it is the one
judged, so editing practice/qwen/norm.py and calling check(204) judges the edit. Installed from
the zip (unpacked by pip into a folder that is gone afterwards), or after the folder moved, the
installed copy is judged; JUDGE_KIT=/path/to/practice names the folder outright, and
`pip install -e ./practice` makes the installed package the folder itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from judge.settings import CODE_ROOT

API_MODULE = "judge/authoring/practice_api.py"  # shipped as practice/practice_api.py
DISTRIBUTION = "llm-judge-practice"

INIT = '''"""The practice kit as a package: `from practice import check, submit` in a notebook,
`python -m practice 204` like `python practice/judge.py 204`. Importing it loads nothing: torch
and the judge's modules only when check or submit is first used."""

from typing import Any

__all__ = ["check", "submit"]


def __getattr__(name: str) -> Any:
    if name == "check":
        from .judge import check

        return check
    if name == "submit":
        from .judge import submit_solution

        return submit_solution
    raise AttributeError(name)
'''

MAIN = '''"""`python -m practice 204`: the same as `python practice/judge.py 204`."""

from .judge import exit_now, main

exit_now(main())
'''

SETUP = '''"""Records the folder the kit is installed from (practice/kit_home.txt), so that the installed
`practice` judges the learner's files there (practice/judge.py, kit_home)."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class RecordHome(build_py):
    def run(self):
        super().run()
        if not getattr(self, "editable_mode", False):  # an editable install is the folder itself
            target = Path(self.build_lib) / "practice" / "kit_home.txt"
            target.write_text(str(Path(__file__).resolve().parent), encoding="utf-8")


setup(cmdclass={"build_py": RecordHome})
'''

# The kit's files the installed `practice` carries, besides its modules (*.py beside judge.py).
PACKAGE_DATA = ["kit.json", "README.md", "_judge/**/*.py", "[0-9]*/**/*", "tiny-qwen3.5/*"]


def course_packages(root: Path) -> list[str]:
    """The learner's packages in the kit (qwen, and any package inside it), dotted."""
    found = []
    for init in sorted(root.glob("*/**/__init__.py")):
        folder = init.parent.relative_to(root)
        if folder.parts[0] not in ("_judge", "build") and not folder.parts[0].endswith(".egg-info"):
            found.append(".".join(folder.parts))
    return found


def pyproject(root: Path) -> str:
    courses = course_packages(root)
    tops = sorted({p.split(".")[0] for p in courses})
    data = [*PACKAGE_DATA, *(f"{top}/**/*.py" for top in tops)]
    package_dir = ", ".join(['"practice" = "."', *(f'"{top}" = "{top}"' for top in tops)])
    return f"""# `pip install ./practice`: the kit's `practice` package and your own ({" ".join(tops)}).
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "{DISTRIBUTION}"
version = "1.0"
description = "The practice kit: judge your solutions offline, in a terminal or a notebook"
requires-python = ">=3.10"
dependencies = ["torch>=2.1"]

[tool.setuptools]
packages = {json.dumps(["practice", *courses])}
package-dir = {{{package_dir}}}
include-package-data = false

[tool.setuptools.package-data]
practice = {json.dumps(data)}
"""


def write_package_files(root: Path) -> None:
    """practice/__init__.py, __main__.py, practice_api.py, pyproject.toml and setup.py."""
    shutil.copyfile(CODE_ROOT / API_MODULE, root / "practice_api.py")
    (root / "__init__.py").write_text(INIT, encoding="utf-8")
    (root / "__main__.py").write_text(MAIN, encoding="utf-8")
    (root / "setup.py").write_text(SETUP, encoding="utf-8")
    (root / "pyproject.toml").write_text(pyproject(root), encoding="utf-8")
