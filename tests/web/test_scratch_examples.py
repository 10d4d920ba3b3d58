"""The scratch cell's snippets through the web: the package's example and the public cases'
calls the author wrote (GET /api/scratch/examples/ID), never a hidden case's; and a snippet's
traceback headed in the reader's language."""

from __future__ import annotations

from pathlib import Path

from judge.authoring.package import Problem
from judge.core.runner.tracebacks import OWN_FRAMES
from judge.core.verdicts import Verdict
from judge.scratch import Scratch
from tests.factories import make_package
from tests.web.factories import make_client, make_settings
from web.judging.records import read_scratch
from web.scratch.service import examples, localized

CASES = """from judge.core.casekit import case

@case(points=50, public=True)
def small(impl, rng):
    return {"y": impl.f(rng.normal(4, 8))}

@case(points=50)
def secret(impl, rng):
    return {"y": impl.f(rng.normal(3, 3))}
"""


def test_the_page_gets_the_example_and_the_public_cases_calls(tmp_path: Path) -> None:
    with make_client(make_settings(tmp_path, workers=0)) as client:
        res = client.get("/api/scratch/examples/205")  # no account needed, like the statement
        assert res.status_code == 200, res.text
        body = res.json()
        assert "rope_frequencies(16, 32)" in body["example"]
        names = [c["case"] for c in body["cases"]]
        assert names == ["frequencies_table", "apply_fp32", "apply_bf16"]  # the public cases, in order
        assert [c["number"] for c in body["cases"]] == [1, 2, 3]
        assert "apply_rope(x, cos, sin, torch.arange(5))" in body["cases"][1]["snippet"]
        assert client.get("/api/scratch/examples/999").status_code == 404


def test_a_hidden_cases_call_is_never_offered_whatever_the_package_says(tmp_path: Path) -> None:
    scratch = "[scratch]\nexample = 'f(torch.ones(2))'\n[scratch.cases]\nsecret = 'f(torch.ones(3, 3))'\n"
    scratch += "small = 'f(torch.ones(4, 8))'\n"
    problem = Problem(make_package(tmp_path, cases=CASES, extra_toml=scratch))
    found = examples({problem.id: problem}, problem.id)
    assert found.example == "f(torch.ones(2))"
    assert [(c.case, c.number) for c in found.cases] == [("small", 1)]
    assert "3, 3" not in found.model_dump_json()
    bare = Problem(make_package(tmp_path / "bare", cases=CASES))
    assert examples({bare.id: bare}, bare.id).example is None  # the cell writes a generic one


def test_a_snippets_traceback_is_headed_in_the_readers_language() -> None:
    """Item 7 of issue 31: the header was English on the Chinese page too."""
    message = (
        f"{OWN_FRAMES[1]}\n  File \"scratch.py\", line 1, in <module>\nNameError: name 'g' is not defined"
    )
    stored = read_scratch(Scratch(Verdict.RE, "error", message=message, line=1).to_dict())
    zh, en = localized(stored, "zh").message, localized(stored, "en").message
    assert zh.startswith(OWN_FRAMES[0]) and "your code only" not in zh
    assert en.startswith(OWN_FRAMES[1])
    assert zh.endswith("NameError: name 'g' is not defined") and en.endswith(
        "NameError: name 'g' is not defined"
    )
