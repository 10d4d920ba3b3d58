"""The FastAPI application: the pages and JSON API of DESIGN.md, /healthz and /metrics."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy import text

import judge
from web.admin.router import router as admin_router
from web.auth.router import router as auth_router
from web.bodylimit import BodyCaps, BodyLimit
from web.classes.reports_router import router as class_reports_router
from web.classes.router import roles_router
from web.classes.router import router as classes_router
from web.course.router import router as course_router
from web.deps import PlatformDep, client_address
from web.drafts.router import router as drafts_router
from web.errors import N_, ApiError, install_error_handlers
from web.pages.apidocs import install_api_docs
from web.pages.errors import error_page
from web.pages.router import router as pages_router
from web.pages.templating import STATIC_DIR
from web.platform import Platform, build_platform
from web.problems.kit import router as kit_router
from web.problems.router import router as problems_router
from web.scores.router import router as scores_router
from web.scratch.router import router as scratch_router
from web.settings import WebSettings, address_list
from web.solutions.router import router as solutions_router
from web.submissions.router import router as submissions_router


def metrics_allowed(request: Request, settings: WebSettings) -> bool:
    """From an allowed address (JUDGE_METRICS_ALLOW), or with the metrics token as a Bearer."""
    token = settings.metrics_token
    if token:
        scheme, _, sent = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(sent.strip().encode(), token.encode()):
            return True
    try:
        address = ipaddress.ip_address(client_address(request))
    except ValueError:
        return False  # not an IP address (the test client's "testclient"): never on the list
    return any(
        address in ipaddress.ip_network(entry, strict=False) for entry in address_list(settings.metrics_allow)
    )


def create_app(
    settings: WebSettings | None = None, host: str = "127.0.0.1", platform: Platform | None = None
) -> FastAPI:
    platform = platform or build_platform(settings or WebSettings(), host)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        platform.notices.start()
        if platform.pool is not None:
            platform.pool.start()
        try:
            yield
        finally:
            if platform.pool is not None:
                platform.pool.stop()
            platform.notices.close()
            platform.engine.dispose()

    app = FastAPI(
        title="LLM Judge",
        description="An online judge for hand-written LLM parts",
        version="1",
        lifespan=lifespan,
        # /docs is served from the project's own Swagger UI (web.pages.apidocs), not from a CDN.
        docs_url=None,
        redoc_url=None,
    )
    app.state.platform = platform
    app.state.preview = None  # `judge preview` sets its state here (web.preview.serve)
    install_api_docs(app)
    install_error_handlers(app, html_page=error_page)
    # Bodies are capped before any route reads them; the caps are the platform's settings.
    app.add_middleware(BodyLimit, caps=lambda: BodyCaps.of(platform.settings), html_page=error_page)
    for router in (
        auth_router,
        problems_router,
        course_router,
        solutions_router,
        drafts_router,
        kit_router,
        submissions_router,
        scratch_router,
        scores_router,
        admin_router,
        classes_router,
        class_reports_router,
        roles_router,
        pages_router,
    ):
        app.include_router(router)
    # The built front end (web/static/dist, made by `make frontend`); absent until then.
    app.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")

    @app.get("/healthz", tags=["ops"])
    def healthz(p: PlatformDep) -> JSONResponse:
        body: dict[str, Any] = {
            "status": "ok",
            "version": judge.__version__,  # the installed llm-judge's, to tell servers apart
            "backend": p.backend_name,
            "problems": len(p.problems),
        }
        try:
            with p.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            body["database"] = "ok"
        except Exception as exc:  # report, do not crash: this is what monitoring polls
            body.update(status="degraded", database=f"error: {type(exc).__name__}")
        if p.warnings:
            body["warnings"] = [w.to_dict() for w in p.warnings]
        return JSONResponse(body, status_code=200 if body["status"] == "ok" else 503)

    @app.get("/metrics", tags=["ops"])
    def metrics(request: Request, p: PlatformDep) -> Response:
        """For operators: from JUDGE_METRICS_ALLOW (loopback by default) or with JUDGE_METRICS_TOKEN."""
        if not metrics_allowed(request, p.settings):
            raise ApiError(
                403,
                "forbidden",
                N_(
                    "/metrics is for the addresses of JUDGE_METRICS_ALLOW or "
                    "'Authorization: Bearer <JUDGE_METRICS_TOKEN>'."
                ),
            )
        return Response(p.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return app
