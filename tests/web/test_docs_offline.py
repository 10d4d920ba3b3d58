"""/docs is the project's own Swagger UI: no URL off the site, a CSP that allows its one inline
script by hash and nothing from elsewhere, the assets the front end's build copies.

The browser half (the page renders with every outside request refused) is
tests/web/pages/test_browser_editor.py::test_docs_render_with_no_network.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.web.factories import make_client, make_settings
from web.pages.templating import DIST_DIR


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return make_client(make_settings(tmp_path, workers=0))


def test_docs_page_names_no_other_origin(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    urls = re.findall(r"""(?:src|href)=["']([^"']+)""", page.text)
    assert "/static/dist/swagger/swagger-ui-bundle.js" in urls
    assert "/static/dist/swagger/swagger-ui.css" in urls
    assert all(url.startswith("/") and not url.startswith("//") for url in urls), urls
    # No host named anywhere in the page (a script could build a URL outside src and href).
    assert "https://" not in page.text
    assert not re.search(r"(?:https?:)?//[a-z0-9-]+(?:\.[a-z0-9-]+)+", page.text, re.I), page.text


def test_docs_policy_allows_its_inline_script_and_this_origin_only(client: TestClient) -> None:
    page = client.get("/docs")
    policy = dict(part.strip().split(" ", 1) for part in page.headers["content-security-policy"].split(";"))
    inline = re.findall(r"<script>(.*?)</script>", page.text, re.DOTALL)
    assert len(inline) == 1 and "SwaggerUIBundle(" in inline[0]
    digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
    assert policy["script-src"] == f"'self' 'sha256-{digest}'"
    assert policy["default-src"] == "'self'" and policy["connect-src"] == "'self'"
    assert "http" not in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"


def test_redoc_is_gone_and_the_oauth2_redirect_stays(client: TestClient) -> None:
    assert client.get("/redoc").status_code == 404
    assert client.get("/docs/oauth2-redirect").status_code == 200
    assert client.get("/openapi.json").json()["info"]["title"] == "LLM Judge"


@pytest.mark.skipif(not (DIST_DIR / "swagger").exists(), reason="the front end is not built (make frontend)")
def test_the_build_serves_swagger_ui(client: TestClient) -> None:
    for name, kind in (("swagger-ui-bundle.js", "javascript"), ("swagger-ui.css", "text/css")):
        asset = client.get(f"/static/dist/swagger/{name}")
        assert asset.status_code == 200 and kind in asset.headers["content-type"], name
