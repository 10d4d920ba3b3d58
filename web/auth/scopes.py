"""What an API token may do: its expiry and its scope, checked on every request that sends one
(`web.deps.read_principal`), after routing, so that the route is known.

- `submit` (the default, and what the settings page makes): the routes the practice kit and a
  learner's scripts use, listed in SUBMIT_ROUTES: problems and the course, submissions and
  scratch runs, drafts, the reader's scores and the leaderboard, who am I. Everything else
  (tokens, the account's settings, log-out, the admin routes, the pages) is refused with 403
  `token_scope`. A route added later is refused too until it is listed here.
- `full`: whatever the account may do through the API, admin routes for an admin. Still no
  token may make another (`web.auth.router.add_token`): that takes the password or a browser
  session, so a leaked token ends with its expiry, its revocation or a log-out everywhere.
"""

from __future__ import annotations

from datetime import datetime

from web.auth.models import ApiToken, TokenScope
from web.errors import N_, ApiError

# (method, route path) that a token of scope `submit` may call.
SUBMIT_ROUTES = frozenset(
    {
        ("GET", "/api/me"),
        ("GET", "/api/problems"),
        ("GET", "/api/problems/{problem_id}"),
        ("GET", "/api/problems/{problem_id}/solutions"),
        ("GET", "/api/problems/{problem_id}/draft"),
        ("PUT", "/api/problems/{problem_id}/draft"),
        ("DELETE", "/api/problems/{problem_id}/draft"),
        ("GET", "/api/course"),
        ("GET", "/api/course/problems/{problem_id}"),
        ("POST", "/api/submissions"),
        ("GET", "/api/submissions"),
        ("GET", "/api/submissions/{submission_id}"),
        ("POST", "/api/scratch"),
        ("GET", "/api/scratch/{scratch_id}"),
        ("GET", "/api/me/scores"),
        ("GET", "/api/leaderboard"),
    }
)


def allows(scope: str, method: str, route_path: str | None) -> bool:
    """Whether a token of `scope` may call the route `route_path` (its template) with `method`."""
    if scope == TokenScope.FULL:
        return True
    if route_path is None:
        return False
    return ((method if method != "HEAD" else "GET"), route_path) in SUBMIT_ROUTES


def check_token(token: ApiToken, method: str, route_path: str | None, now: datetime) -> None:
    """Refuse a token past its expiry (401 `token_expired`) or outside its scope (403 `token_scope`)."""
    if token.expires_at <= now:
        raise ApiError(
            401,
            "token_expired",
            N_(
                "This API token expired on {date}. Make a new one on the Settings page, or with your "
                "password at POST /api/auth/token."
            ),
            params={"date": token.expires_at.strftime("%Y-%m-%d %H:%M UTC")},
        )
    if not allows(token.scope, method, route_path):
        raise ApiError(
            403,
            "token_scope",
            N_(
                "This API token may only submit code and read problems and results (scope submit). "
                "Do this logged in, or with a token of scope full."
            ),
        )
