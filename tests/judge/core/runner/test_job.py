"""The job's cases.py, compiled by the judge and loaded by the runner where it can be."""

from __future__ import annotations

import base64
import dataclasses

import pytest

from judge.core.runner.job import RunnerJob, SolutionSource, load_cases_code, marshalled_cases

CASES = """
def helper(x: NotDefinedAnywhere) -> int:  # an annotation is never evaluated (as in the runner)
    return 1

VALUE = helper(None) + 41
"""


def job(cases_code: str) -> RunnerJob:
    return RunnerJob(
        problem="204",
        entry_points=["f"],
        cases_source=CASES,
        case_names=[],
        solutions=[SolutionSource("solution", "")],
        cases_code=cases_code,
    )


def run(code: object) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(code, namespace)  # type: ignore[call-overload]
    return namespace


def test_the_compiled_cases_travel_with_the_job_and_mean_what_the_source_does() -> None:
    sent = RunnerJob.from_bytes(job(marshalled_cases(CASES)).to_bytes())
    code = load_cases_code(sent)
    assert code.co_filename == "cases.py"
    assert run(code)["VALUE"] == 42
    assert marshalled_cases(CASES) is marshalled_cases(CASES)  # compiled once per text


def test_another_interpreter_compiles_the_source_instead() -> None:
    raw = base64.b64decode(marshalled_cases(CASES))
    foreign = base64.b64encode(b"\x00\x00\r\n" + raw[4:]).decode()  # another Python's magic
    for cases_code in (foreign, ""):
        code = load_cases_code(dataclasses.replace(job(cases_code), cases_source=CASES + "VALUE += 1\n"))
        assert run(code)["VALUE"] == 43  # from the source, not from the marshalled code


def test_data_files_travel_raw_after_the_json_and_come_back_byte_for_byte() -> None:
    checkpoint = bytes(range(256)) * 3 + b"\n\n{}"  # newlines and braces: nothing JSON may read
    sent = dataclasses.replace(
        job(""),
        data={"ckpt/model.safetensors": checkpoint, "notes.txt": b"as before", "e": b""},
    )
    wire = sent.to_bytes()
    assert checkpoint in wire and base64.b64encode(checkpoint) not in wire  # raw, not base64
    assert RunnerJob.from_bytes(wire) == sent


def test_a_job_whose_bytes_do_not_match_its_data_files_is_refused() -> None:
    wire = dataclasses.replace(job(""), data={"a": b"12345"}).to_bytes()
    for broken in (wire[:-1], wire + b"6"):
        with pytest.raises(ValueError, match=r"data file|after its last"):
            RunnerJob.from_bytes(broken)
