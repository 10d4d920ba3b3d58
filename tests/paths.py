"""Where the tests find the clone they test (the folder above tests/)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
