# One command per chore; CI runs `make check` exactly as a developer does.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: install redis-server demo check lint types contracts test bench bench-peers clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

# Debian's redis-server and redis-sentinel: the demo and the tests start their own private
# instances of them (the Sentinel tests: a primary, a replica and three sentinels).
redis-server:
	@{ command -v redis-server && command -v redis-sentinel; } >/dev/null || { \
	  echo "installing Debian's redis-server and redis-sentinel"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
	    redis-server redis-sentinel; }

demo: install redis-server
	$(VENV)/bin/tersify demo

check: install redis-server lint types contracts test

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

types:
	$(VENV)/bin/mypy

contracts:
	$(VENV)/bin/lint-imports

# pytest exits 5 when it collected nothing: that is a broken suite, not a pass.
test:
	$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

# arq and Dramatiq for bench/throughput.py, in their own env (arq needs redis-py < 6); the
# pinned versions live in bench/peers/env.py, which throughput.py also runs when the env is missing.
bench-peers: .venv-peers/.installed

.venv-peers/.installed: bench/peers/env.py | install
	$(PY) bench/peers/env.py
	touch $@

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
