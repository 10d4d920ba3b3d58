"""A learner accepted on an older version of a package, in a real Chromium: the problem and the list
say on which version and what changed since, in Chinese and in English, on a desktop and on a
phone; the page's button submits the accepted code again, and an AC on the current version puts
the note away.

One `judge serve` for the module on the local backend. The older version is a row of
`problem_versions` (204 as it was at version 2) with the learner's accepted submission on it,
written into the server's database as a sync and a judgement of that time would have. Screenshots
land in JUDGE_SCREENSHOT_DIR as versions-*.png.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, ViewportSize, expect
from sqlalchemy import select

from tests.web.factories import read_204, unique_name
from tests.web.pages.test_browser import JUDGED_S, Site, ready, register_via_ui, serving_site, switch_language
from web.auth.models import User
from web.db import make_engine, make_sessionmaker, transaction
from web.problems.models import ProblemVersion
from web.scores.service import refresh_score
from web.submissions.models import Mode, Submission, SubmissionStatus

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CORRECT = read_204("solutions/accepted/div_sqrt_sum.py")
PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1366, "height": 900}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serving_site(tmp_path_factory, JUDGE_BACKEND="local", JUDGE_WORKERS="1") as s:
        yield s


def accepted_on_version_2(site: Site, username: str) -> int:
    """`username`'s accepted Submit of 204, judged on its version 2 (a row of its own, no longer
    current); returns the submission's id."""
    engine = make_engine(site.env["JUDGE_DATABASE_URL"])
    try:
        with transaction(make_sessionmaker(engine)) as s:
            current = s.scalar(
                select(ProblemVersion).where(ProblemVersion.problem_id == "204", ProblemVersion.current)
            )
            user = s.scalar(select(User).where(User.username == username))
            assert current is not None and user is not None and current.package_version == 3
            old = ProblemVersion(
                **{
                    c.key: getattr(current, c.key)
                    for c in ProblemVersion.__table__.columns
                    if c.key not in ("id", "content_hash", "current", "loaded_at")
                },
                content_hash="2" * 64,
                current=False,
            )
            old.package_version = 2
            s.add(old)
            s.flush()
            sub = Submission(
                user_id=user.id,
                problem_id="204",
                mode=Mode.SUBMIT,
                code=CORRECT,
                status=SubmissionStatus.DONE,
                verdict="AC",
                score=100,
                max_score=100,
                report={"verdict": "AC", "score": 100, "max_score": 100, "cases": []},
                problem_version_id=old.id,
            )
            s.add(sub)
            s.flush()
            refresh_score(s, user.id, "204")
            return sub.id
    finally:
        engine.dispose()


def test_a_learner_accepted_on_an_older_version_reads_what_changed_and_submits_again(
    browser: Browser, site: Site
) -> None:
    context = browser.new_context(base_url=site.url, viewport=DESKTOP)
    page = context.new_page()
    name = unique_name("versions")
    register_via_ui(page, name)
    sub_id = accepted_on_version_2(site, name)

    page.goto("/problems/204")
    ready(page)
    note = page.get_by_test_id("changed-since")
    expect(note).to_contain_text("在版本 2 上通过；此后题目有改动：版本 3：新增 eps 参数")
    expect(page.get_by_test_id("problem-best")).to_have_text("100")
    expect(note.get_by_test_id("resubmit")).to_have_attribute("data-resubmit", str(sub_id))
    page.screenshot(path=site.shots / "versions-problem-zh.png")
    page.goto("/problems")
    ready(page)
    row = page.locator("tr[data-problem='204']")
    expect(row.get_by_test_id("changed-since")).to_contain_text("在版本 2 上通过")
    expect(row.get_by_test_id("best-score")).to_contain_text("100 / 100")
    row.scroll_into_view_if_needed()
    page.screenshot(path=site.shots / "versions-list-zh.png")

    switch_language(page)
    expect(row.get_by_test_id("changed-since")).to_contain_text(
        "Accepted on version 2; the problem has changed since: version 3: New cases: the eps argument"
    )
    expect(row.get_by_test_id("resubmit")).to_have_text("Submit again")
    page.screenshot(path=site.shots / "versions-list-en.png")
    page.set_viewport_size(PHONE)
    page.reload()
    ready(page)
    row.scroll_into_view_if_needed()
    expect(row.get_by_test_id("changed-since")).to_be_visible()
    page.screenshot(path=site.shots / "versions-list-phone-en.png")
    page.goto("/problems/204")
    ready(page)
    page.screenshot(path=site.shots / "versions-problem-phone-en.png")

    # The button puts the accepted code back and submits it: accepted on version 3, the note goes.
    switch_language(page)
    expect(page.get_by_test_id("changed-since")).to_contain_text("在版本 2 上通过")
    page.screenshot(path=site.shots / "versions-problem-phone-zh.png")
    page.set_viewport_size(DESKTOP)
    page.reload()
    ready(page)
    page.once("dialog", lambda dialog: dialog.accept())  # "replace your code with it?"
    page.get_by_test_id("changed-since").get_by_test_id("resubmit").click()
    expect(page.get_by_test_id("status")).to_contain_text("通过", timeout=JUDGED_S)
    expect(page.get_by_test_id("changed-since")).to_have_count(0)
    page.screenshot(path=site.shots / "versions-resubmitted-zh.png")
    page.goto("/problems")
    ready(page)
    expect(page.get_by_test_id("changed-since")).to_have_count(0)
    context.close()
