"""Every page route, in one router for the app to include."""

from __future__ import annotations

from fastapi import APIRouter

from web.pages import account, admin, class_reports, classes, problems, submissions

router = APIRouter(include_in_schema=False)
for module in (problems, account, submissions, admin, classes, class_reports):
    router.include_router(module.router)
