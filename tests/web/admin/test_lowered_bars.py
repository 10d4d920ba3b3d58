"""Issue 32 item 3: a small package lowers a coverage bar in `[validation]` with its reason, and the
admin sees which bars and why beside its validation (API and page, in both languages)."""

from __future__ import annotations

from pathlib import Path

from tests.factories import make_package
from tests.web.factories import PASSWORD, bearer, make_admin, make_client, make_settings

LOWERED = """
[validation]
min_hidden = { value = 1, reason = "one line of arithmetic: one hidden case checks all of it" }
min_wrong = { value = 1, reason = "the one way to get it wrong is listed" }
"""


def test_the_admin_sees_the_bars_a_package_lowers_and_why(tmp_path: Path) -> None:
    make_package(tmp_path / "problems", extra_toml=LOWERED)
    settings = make_settings(tmp_path, problems_dir=tmp_path / "problems", workers=0)
    with make_client(settings) as client:
        name, token = make_admin(client)
        assert (
            client.post("/api/auth/login", json={"username": name, "password": PASSWORD}).status_code == 200
        )
        [row] = client.get("/api/admin/problems", headers=bearer(token)).json()
        assert [(b["key"], b["value"], b["default"]) for b in row["lowered"]] == [
            ("min_hidden", 1, 6),
            ("min_wrong", 1, 3),
        ]
        assert row["lowered"][0]["reason"].startswith("one line of arithmetic")
        for lang, words in (
            ("zh", "隐藏用例：至少 1 个（默认 6 个）"),
            ("en", "Hidden cases: at least 1 (default 6)"),
        ):
            assert client.patch("/api/me", json={"language": lang}, headers=bearer(token)).status_code == 200
            page = client.get("/admin", headers=bearer(token)).text
            assert 'data-testid="lowered"' in page and words in page, lang
