# Set-up is part of every target: a fresh clone needs only `make serve` or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup frontend serve test lint typecheck pytest validate i18n screenshots bench bench-multi clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# pip, not uv or poetry: only pip finds the local torch 2.13.0 CPU wheel.
	$(BIN)/pip install --quiet -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

# The browser bundle (CodeMirror, KaTeX) from the pinned npm packages; never committed.
FRONTEND := web/frontend
DIST := web/static/dist/app.js
$(FRONTEND)/node_modules/.package-lock.json: $(FRONTEND)/package.json $(FRONTEND)/package-lock.json
	cd $(FRONTEND) && npm ci --no-audit --no-fund --loglevel=error
$(DIST): $(FRONTEND)/node_modules/.package-lock.json $(FRONTEND)/build.mjs $(wildcard $(FRONTEND)/src/*)
	cd $(FRONTEND) && npm run --silent build
frontend: $(DIST)

# The API at http://127.0.0.1:8000 (OpenAPI at /docs) on var/judge.db (SQLite), with
# in-process workers: Docker when an engine answers, else the local backend (loopback only).
serve: setup frontend
	JUDGE_DATA_DIR=$(CURDIR)/var $(BIN)/judge db upgrade
	JUDGE_DATA_DIR=$(CURDIR)/var $(BIN)/judge serve --host 127.0.0.1 --port 8000

lint: setup
	$(BIN)/ruff check judge sandbox web tests problems bench
	$(BIN)/ruff format --check judge sandbox web tests bench

typecheck: setup
	$(BIN)/mypy

# Two phases: the suite in TEST_JOBS processes (pytest-xdist; a module's tests stay in one
# process, as their servers are module fixtures; TEST_JOBS=0 runs it in this one), then the
# `serial` tests alone, because they measure time and memory limits and a load. Modules go out
# longest first (estimated in tests/conftest.py), so no long one is left for the end.
TEST_JOBS ?= 2
pytest: setup frontend
	$(BIN)/pytest -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder -m "not serial" --durations=25
	$(BIN)/pytest -m serial --durations=10

validate: setup
	$(BIN)/judge validate --all

test: lint typecheck pytest

# The figures of docs/performance.md (matplotlib only for the plots; wrk from Debian for the web).
bench: setup
	$(BIN)/pip install --quiet -r bench/requirements.txt
	$(BIN)/python bench/bench_sandbox.py --repeat 20
	$(BIN)/python bench/bench_e2e.py --n 50
	$(BIN)/python bench/bench_problems.py --n 20
	$(BIN)/python bench/bench_load.py --learners 8 --duration 60
	$(BIN)/python bench/bench_web.py

# The multi-process set (issue 19) on PostgreSQL: each run creates a database of its own on the
# server of BENCH_POSTGRES_URL (a role that may create databases) and drops it at the end.
# Results: bench/results/{e2e_idle_pg,e2e_idle_pg_p2,load_pg,load_pg_p2_j2,web_pg,web_pg_p2}.json
BENCH_POSTGRES_URL ?= $(JUDGE_TEST_POSTGRES_URL)
BENCH_PG = --database-url "$(BENCH_POSTGRES_URL)"
bench-multi: setup
	@test -n "$(BENCH_POSTGRES_URL)" || { echo "set BENCH_POSTGRES_URL=postgresql+psycopg://USER:PASS@HOST:5432/postgres"; exit 2; }
	$(BIN)/pip install --quiet -r bench/requirements.txt
	$(BIN)/python bench/bench_e2e.py --mode fork --n 30 $(BENCH_PG)
	$(BIN)/python bench/bench_e2e.py --mode fork --n 30 $(BENCH_PG) --processes 2
	$(BIN)/python bench/bench_load.py --mode fork --learners 8 --duration 60 --warmup 10 $(BENCH_PG)
	$(BIN)/python bench/bench_load.py --mode fork --learners 8 --duration 60 --warmup 10 $(BENCH_PG) --processes 2 --judge-processes 2
	$(BIN)/python bench/bench_web.py $(BENCH_PG)
	$(BIN)/python bench/bench_web.py $(BENCH_PG) --processes 2

# The README's screenshots, taken by the browser tests in Debian's Chromium: every browser test
# writes its pictures to var/screenshots (look at them there); the README's are copied on.
README_SHOTS := problems.png problem-hint.png submission.png settings.png \
	problem-phone.png leaderboard.png admin.png problem-diagnosis-en.png problem-diagnosis-zh.png \
	model-missing-part.png model-accepted.png workspace-run-zh.png workspace-tle-en.png \
	course-map-zh.png course-map-en.png solutions-zh.png solutions-en.png scratch-zh.png \
	scratch-en.png dark-problem-zh-desktop.png dark-problem-en-desktop.png \
	course-map-phone-zh.png workspace-tle-phone-en.png words-404-zh-desktop.png \
	words-404-en-desktop.png docs-offline.png layout-wrong-answer-zh.png compared-en-desktop.png \
	progress-live-zh-desktop.png scratch-example-206-desktop-en-filled.png layout-tablet-results-zh.png \
	layout-phone-submissions-en.png course-run-gradebook-zh.png course-run-due-phone-en.png
screenshots: setup frontend
	rm -rf var/screenshots
	JUDGE_SCREENSHOT_DIR=var/screenshots $(BIN)/pytest -q -p no:cacheprovider tests/web/pages/test_browser*.py \
		tests/web/classes/test_browser*.py tests/web/auth/test_browser*.py
	cp $(addprefix var/screenshots/,$(README_SHOTS)) docs/screenshots/

# Re-extract the UI's messages and merge them into the Chinese catalogs (then translate the new ones).
I18N := web/i18n
i18n: setup
	$(BIN)/pybabel extract -F $(I18N)/babel.cfg -k _ -k gettext --no-location --sort-output -o $(I18N)/messages.pot .
	$(BIN)/pybabel extract -F $(I18N)/babel-js.cfg -k t --no-location --sort-output -o $(I18N)/js.pot .
	$(BIN)/pybabel update -i $(I18N)/messages.pot -d $(I18N) -D messages -l zh --no-fuzzy-matching
	$(BIN)/pybabel update -i $(I18N)/js.pot -d $(I18N) -D js -l zh --no-fuzzy-matching
	rm -f $(I18N)/*.pot

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(FRONTEND)/node_modules web/static/dist
