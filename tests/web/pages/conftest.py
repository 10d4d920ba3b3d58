"""The browser and its pages for every browser test module; each module starts its own `site`
(a `judge serve` with the settings it needs), and these use whichever site the module has."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from tests.web.pages.test_browser import Site, checked_page, chromium


@pytest.fixture(scope="module")
def browser(site: Site) -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser, site: Site) -> Iterator[Page]:
    with checked_page(browser, site) as page:
        yield page
