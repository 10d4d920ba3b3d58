# Set-up is part of every target: a fresh clone needs only `make serve` or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup serve test lint typecheck pytest validate clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# pip, not uv or poetry: only pip finds the local torch 2.13.0 CPU wheel.
	$(BIN)/pip install --quiet -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

# The API at http://127.0.0.1:8000 (OpenAPI at /docs) on var/judge.db (SQLite), with
# in-process workers: Docker when an engine answers, else the local backend (loopback only).
serve: setup
	$(BIN)/judge db upgrade
	$(BIN)/judge serve --host 127.0.0.1 --port 8000

lint: setup
	$(BIN)/ruff check judge sandbox web alembic tests problems
	$(BIN)/ruff format --check judge sandbox web alembic tests

typecheck: setup
	$(BIN)/mypy

pytest: setup
	$(BIN)/pytest

validate: setup
	$(BIN)/judge validate --all

test: lint typecheck pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
