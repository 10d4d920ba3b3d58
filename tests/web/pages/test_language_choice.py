"""Issue 31 item 5: the language is chosen per browser (its cookie); the account's language is
only the default of a browser that never chose. Choosing on one device never flips another."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.web.factories import PASSWORD, make_client, make_settings, register
from tests.web.pages.test_account_pages import csrf_of, form_token


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with make_client(make_settings(tmp_path_factory.mktemp("lang"), workers=0)) as client:
        yield client


def logged_in(app: TestClient, name: str) -> TestClient:
    browser = TestClient(app.app)
    page = browser.get("/login")
    res = browser.post(
        "/login",
        data={"username": name, "password": PASSWORD, "form_token": form_token(page.text)},
        follow_redirects=False,
    )
    assert res.status_code in (302, 303), res.text
    return browser


def html_lang(browser: TestClient) -> str:
    page = browser.get("/problems")
    assert page.status_code == 200
    return "en" if '<html lang="en"' in page.text else "zh"


def switch(browser: TestClient, lang: str) -> None:
    csrf = csrf_of(browser.get("/problems").text)
    res = browser.post(
        "/lang", data={"lang": lang, "next": "/problems", "csrf_token": csrf}, follow_redirects=False
    )
    assert res.status_code in (302, 303), res.text


def test_a_choice_on_one_device_does_not_flip_another(app_client: TestClient) -> None:
    name, _ = register(app_client)
    laptop, phone = logged_in(app_client, name), logged_in(app_client, name)
    assert html_lang(laptop) == html_lang(phone) == "zh"
    switch(phone, "zh")  # the phone chose Chinese itself
    switch(laptop, "en")
    assert html_lang(laptop) == "en"
    assert html_lang(phone) == "zh"  # its own choice stands
    # A browser that never chose follows the account's last choice.
    tablet = logged_in(app_client, name)
    assert html_lang(tablet) == "en"


def test_tags_are_in_the_readers_language(app_client: TestClient) -> None:
    chinese = TestClient(app_client.app)
    assert '<span class="tag">归一化</span>' in chinese.get("/problems").text
    assert '<span class="tag">归一化</span>' in chinese.get("/problems/204").text
    english = TestClient(app_client.app)
    english.cookies.set("judge_lang", "en")
    assert '<span class="tag">normalization</span>' in english.get("/problems").text


def test_solve_first_lists_every_part_the_parts_panel_lists(app_client: TestClient) -> None:
    page = TestClient(app_client.app).get("/problems/217").text
    first = set(re.findall(r'data-prerequisite="(\d+)"', page))
    parts = set(re.findall(r'<li[^>]*data-part="(\d+)"', page))
    assert parts and parts <= first, sorted(parts - first)
