"""Packages and package data (the rest of the metadata is in pyproject.toml).

Everything the installed `judge` reads at run time travels inside the wheel: page templates,
message catalogs, the built front end, the runtime image's Dockerfile, the migrations and the
shipped problem packages. A file missing here is a `judge` that works in a clone and not when
installed: tests/test_wheel.py installs the wheel in a fresh venv and runs it elsewhere.
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["judge*", "sandbox*", "web*"], exclude=["web.frontend*"]),
        "llm_judge_problems",
    ],
    package_dir={"llm_judge_problems": "problems"},
    # Only what package_data names: not whatever a stale egg-info lists (node_modules).
    include_package_data=False,
    package_data={
        "judge": ["py.typed"],
        "sandbox": ["py.typed", "image/*"],
        "web": [
            "py.typed",
            "templates/*.html",
            "templates/partials/*.html",
            "i18n/*.cfg",
            "i18n/*/LC_MESSAGES/*.po",
            "static/dist/**/*",
            "migrations/*.mako",
        ],
        "llm_judge_problems": ["**/*"],
    },
    exclude_package_data={"llm_judge_problems": ["**/__pycache__/*", "**/*.pyc"]},
)
