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

serve: setup
	@echo "Set-up done. The web server (judge serve) arrives with the web platform; until then judge from the command line:"
	@echo "  $(BIN)/judge run 204 problems/204-rmsnorm/starter.py --backend local"

lint: setup
	$(BIN)/ruff check judge sandbox tests problems
	$(BIN)/ruff format --check judge sandbox tests

typecheck: setup
	$(BIN)/mypy

pytest: setup
	$(BIN)/pytest

validate: setup
	$(BIN)/judge validate --all

test: lint typecheck pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
