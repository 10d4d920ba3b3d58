"""Judging end to end on the local backend: every verdict from a real runner process."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge, make_package

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_package(
        tmp_path_factory.mktemp("problems"),
        time_s=1.5,
        memory_mb=256,
        output_kb=4,
        forbidden=("torch.nn.functional.silu",),
    )


def test_correct_solution_in_another_style_is_accepted(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "import torch\ndef f(x):\n    return torch.add(x, x)\n", store)
    assert report.verdict == Verdict.AC
    assert (report.score, report.max_score) == (100, 100)
    assert [c.verdict for c in report.cases] == [Verdict.AC, Verdict.AC]


def test_wrong_answer_carries_the_matching_hint(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "def f(x):\n    return 3 * x\n", store)
    assert report.verdict == Verdict.WA and report.score == 0
    case = report.cases[0]
    assert (case.hint.zh, case.hint.en) == ("乘了 3", "You multiplied by 3.")  # the docstring, parsed
    assert "elements differ" in case.message and "expected" in case.message


def test_wrong_answer_without_a_known_mistake_has_no_hint(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "def f(x):\n    return x + 1\n", store)
    assert report.verdict == Verdict.WA
    assert all(c.hint == "" for c in report.cases)


def test_partial_credit(pkg: Path, store: ExpectedStore) -> None:
    src = "import torch\ndef f(x):\n    return (x * 2) if x.dtype == torch.float32 else x\n"
    report = judge(pkg, src, store)
    assert report.verdict == Verdict.WA and report.score == 60


def test_wrong_dtype_is_named(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "def f(x):\n    return (x * 2).float()\n", store)
    bf16 = report.cases[1]
    assert bf16.verdict == Verdict.WA and "torch.bfloat16" in bf16.message and "torch.float32" in bf16.message


def test_runtime_error_traceback_shows_only_learner_frames(pkg: Path, store: ExpectedStore) -> None:
    src = "def helper(x):\n    return x.nope()\n\ndef f(x):\n    return helper(x)\n"
    report = judge(pkg, src, store)
    assert report.verdict == Verdict.RE
    msg = report.cases[0].message
    assert 'File "solution.py", line 2, in helper' in msg and "line 5, in f" in msg
    assert "AttributeError" in msg
    assert "cases.py" not in msg and "judge/" not in msg


def test_syntax_error_is_ce_with_the_line(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "def f(x):\n    return x *\n", store)
    assert report.verdict == Verdict.CE
    assert "line 2" in report.cases[0].message


def test_missing_entry_point_is_ce_naming_it(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "def g(x):\n    return 2 * x\n", store)
    assert report.verdict == Verdict.CE
    assert "missing entry point(s): f" in report.cases[0].message


def test_import_time_error_is_re(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "import no_such_module_here\ndef f(x):\n    return x\n", store)
    assert report.verdict == Verdict.RE
    assert "No module named 'no_such_module_here'" in report.cases[0].message


def test_endless_loop_is_tle_within_the_limit(pkg: Path, store: ExpectedStore) -> None:
    started = time.monotonic()
    report = judge(pkg, "def f(x):\n    while True:\n        pass\n", store)
    assert report.verdict == Verdict.TLE
    assert "1.5 s" in report.cases[0].message
    assert report.cases[1].verdict == Verdict.TLE and "not run" in report.cases[1].message
    assert time.monotonic() - started < 1.5 + 30  # limit + runner start-up


def test_huge_tensor_is_mle(pkg: Path, store: ExpectedStore) -> None:
    src = "import torch\ndef f(x):\n    big = torch.ones(1 << 31)\n    return x * 2\n"
    report = judge(pkg, src, store)
    assert report.verdict == Verdict.MLE


def test_python_memory_bomb_is_mle(tmp_path: Path, store: ExpectedStore) -> None:
    # Touching memory runs at a few hundred MB/s on small VMs: give the bomb time to hit the cap.
    roomy = make_package(tmp_path, problem_id="903", time_s=20, memory_mb=64)
    src = "def f(x):\n    hog = [bytearray(1 << 26) for _ in range(1000)]\n    return x * 2\n"
    report = judge(roomy, src, store)
    assert report.verdict == Verdict.MLE
    assert "out of memory" in report.cases[0].message


def test_printing_too_much_is_ole(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "def f(x):\n    print('x' * 100000)\n    return x * 2\n", store)
    assert report.verdict == Verdict.OLE
    assert "4 KiB" in report.cases[0].message


def test_small_prints_are_kept_in_the_log(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "def f(x):\n    print('debug', x.shape)\n    return x * 2\n", store)
    assert report.verdict == Verdict.AC
    assert "debug torch.Size([4, 8])" in report.log


def test_forbidden_api_fails_the_case_even_if_swallowed(pkg: Path, store: ExpectedStore) -> None:
    src = (
        "import torch.nn.functional as F\n"
        "def f(x):\n"
        "    try:\n        F.silu(x)\n    except Exception:\n        pass\n"
        "    return x * 2\n"
    )
    report = judge(pkg, src, store)
    assert report.verdict == Verdict.WA
    assert "torch.nn.functional.silu" in report.cases[0].message


def test_exiting_early_is_re_not_ac(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "import os\ndef f(x):\n    os._exit(0)\n", store)
    assert report.verdict == Verdict.RE
    assert "ended the process early" in report.cases[0].message


def test_sys_exit_is_re(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "import sys\ndef f(x):\n    sys.exit(0)\n", store)
    assert report.verdict == Verdict.RE and "SystemExit" in report.cases[0].message


def test_crash_by_signal_is_re(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGSEGV)\n", store)
    assert report.verdict == Verdict.RE and "SIGSEGV" in report.cases[0].message


def test_forged_result_frames_cannot_produce_ac(pkg: Path, store: ExpectedStore) -> None:
    # Write a fake "done" frame and garbage into every inherited descriptor, then stop.
    src = (
        "import os, json, struct\n"
        "def f(x):\n"
        "    head = json.dumps({'kind': 'done'}).encode()\n"
        "    frame = struct.pack('>4sIQ', b'JDG1', len(head), 0) + head\n"
        "    for fd in range(3, 20):\n"
        "        try:\n"
        "            os.write(fd, frame + b'garbage')\n"
        "        except OSError:\n"
        "            pass\n"
        "    os._exit(0)\n"
    )
    report = judge(pkg, src, store)
    assert report.verdict == Verdict.RE
    assert report.score == 0


def test_public_cases_only(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "def f(x):\n    return x * 2\n", store, which="public")
    assert [c.name for c in report.cases] == ["double"]
    assert report.max_score == 60


def test_oversized_source_is_ce(pkg: Path, store: ExpectedStore) -> None:
    report = judge(pkg, "# " + "x" * 300_000 + "\ndef f(x):\n    return x * 2\n", store)
    assert report.verdict == Verdict.CE and "KiB" in report.cases[0].message


def test_broken_reference_is_se_not_the_learners_fault(tmp_path: Path, store: ExpectedStore) -> None:
    bad = make_package(tmp_path, problem_id="902", reference="def f(x):\n    raise ValueError('oops')\n")
    report = judge(bad, "def f(x):\n    return x * 2\n", store)
    assert report.verdict == Verdict.SE
    assert "reference" in report.cases[0].message
