"""The judge: problem packages, cases, checkers, the runner protocol and verdicts.

`judge.core` is what a judgement needs (also imported inside the sandbox and copied whole into
the practice kit: standard library and torch only); `judge.authoring` is what an author works
with; the command line, the settings, the logs, the backend choice and the store of expected
outputs sit at the top. Nothing here imports a web framework or a database layer; `web/` builds
on it.
"""

__version__ = "0.1.0"
