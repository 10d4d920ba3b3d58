"""The judge: problem packages, cases, checkers, the runner protocol and verdicts.

This package never imports a web framework or a database layer; `web/` builds on it.
Modules under `judge.runner`, plus `judge.casekit`, `judge.checkers`, `judge.observations`
and `judge.protocol`, are also imported inside the sandbox and so depend only on the
standard library, torch and safetensors.
"""

__version__ = "0.1.0"
