"""The browser tests here use the same browser and checked pages as tests/web/pages/ (each module
starts its own `site`)."""

from tests.web.pages.conftest import browser, page

__all__ = ["browser", "page"]
