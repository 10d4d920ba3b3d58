"""/docs: FastAPI's Swagger UI page, run from the project's own copy of swagger-ui-dist.

FastAPI's default page loads Swagger UI from a CDN, so it is blank offline and on networks
that block it. The front end's build copies the bundle into web/static/dist/swagger; the page
here points at those files and runs under the site's Content-Security-Policy, its one inline
script (the Swagger UI call FastAPI writes) allowed by hash. There is no /redoc: ReDoc's own
bundle (2.3 MB, with React and a telemetry package as dependencies) would be a second viewer
of the same /openapi.json.
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse

from web.pages.templating import PAGE_HEADERS, content_security_policy

DOCS_URL = "/docs"
OAUTH2_REDIRECT_URL = "/docs/oauth2-redirect"
SWAGGER = "/static/dist/swagger"
# BaseLayout shows no validator badge; validatorUrl None makes sure nothing asks
# validator.swagger.io about our schema.
SWAGGER_PARAMETERS = {"validatorUrl": None, "defaultModelsExpandDepth": 0}

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def script_hashes(html: str) -> str:
    """The CSP source list for the page's inline scripts: 'sha256-…' for each."""
    digests = (hashlib.sha256(body.encode()).digest() for body in _INLINE_SCRIPT.findall(html))
    return " ".join(f"'sha256-{base64.b64encode(digest).decode()}'" for digest in digests)


def swagger_page(title: str, openapi_url: str) -> tuple[str, dict[str, str]]:
    """The page's HTML and headers (made once: they depend on nothing but the app)."""
    page = get_swagger_ui_html(
        openapi_url=openapi_url,
        title=title,
        swagger_js_url=f"{SWAGGER}/swagger-ui-bundle.js",
        swagger_css_url=f"{SWAGGER}/swagger-ui.css",
        swagger_favicon_url=f"{SWAGGER}/favicon-32x32.png",
        oauth2_redirect_url=OAUTH2_REDIRECT_URL,
        swagger_ui_parameters=SWAGGER_PARAMETERS,
    )
    html = bytes(page.body).decode()
    policy = content_security_policy(f"'self' {script_hashes(html)}")
    return html, {**PAGE_HEADERS, "Content-Security-Policy": policy}


def install_api_docs(app: FastAPI) -> None:
    """/docs and its OAuth2 redirect; the app is made with docs_url=None and redoc_url=None."""
    openapi_url = app.openapi_url or "/openapi.json"
    html, headers = swagger_page(f"{app.title} · API", openapi_url)

    @app.get(DOCS_URL, include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return HTMLResponse(html, headers=headers)

    @app.get(OAUTH2_REDIRECT_URL, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()
