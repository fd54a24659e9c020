# Takedown Watch. `make run` and `make test` work on a fresh machine with Python 3.11.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install run test bench demo browse site clean

$(STAMP): requirements.txt requirements-dev.txt
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is needed ($(PYTHON) not found)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

## Collect once from the real outlets, then build the site into _site/.
run: install
	$(PY) -m collector run
	$(PY) -m collector build-site --out _site

## The whole test suite.
test: install
	$(PY) -m pytest -q

BENCH_VENV := .venv-bench
$(BENCH_VENV)/.installed: bench/requirements.txt
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r bench/requirements.txt
	touch $@

## Benchmarks: each prints its figures (a leading '-' keeps going when one misses its target).
bench: install $(BENCH_VENV)/.installed
	-$(PY) bench/pacing.py --scrapy $(BENCH_VENV)/bin/python
	-$(PY) bench/capture_cost.py
	-$(PY) bench/encoding_invariance.py

## The whole pipeline against loopback replicas of real outlets, no internet needed.
demo: install
	$(PY) -m demo

## Browse the record with Datasette.
browse: install
	$(VENV)/bin/datasette serve data/takedownwatch.db --metadata datasette/metadata.yml

clean:
	rm -rf _site _site_screens .pytest_cache
