"""The judge: problem packages, cases, checkers, the runner protocol and verdicts.

This package never imports a web framework or a database layer; `web/` builds on it.
Modules under `judge.runner`, plus `judge.casekit`, `judge.checkers`, `judge.observations`
and `judge.protocol`, are also imported inside the sandbox and so depend only on the
standard library and torch. The practice kit (`judge kit`) copies those and the grading
modules (`judge.execution`, `judge.expected`, `judge.grading`, `judge.report`,
`judge.verdicts`, `judge.compare`) to a learner's machine, so they too import nothing but the
standard library, torch and `sandbox`, and run on Python 3.10.
"""

__version__ = "0.1.0"
