"""The three screens every browser test of the workspace looks at (issue 31)."""

from __future__ import annotations

from playwright.sync_api import ViewportSize

SIZES: dict[str, ViewportSize] = {
    "desktop": {"width": 1366, "height": 900},
    "tablet": {"width": 768, "height": 1024},
    "phone": {"width": 390, "height": 844},
}
