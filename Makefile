# One command per chore; CI runs `make check` exactly as a developer does.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
# Test runners (pytest-xdist): the tests mostly wait on workers and Redis, so more runners than
# cores pay; each runner has its own redis-server and fake model, a file stays on one runner.
PYTEST_WORKERS ?= 4

.PHONY: install redis-server agents demo check quick lint tree types contracts test bench bench-peers clean

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

# Claude Code from npm, the real agent the gateway's end-to-end test drives against loopback
# (tests/integration/test_gateway_agent.py): its package brings a native binary (~400 MB) from
# the registry, installed into this checkout, never globally. The version is pinned.
CLAUDE_CODE_VERSION ?= 2.1.332
AGENTS := build/agents

agents: $(AGENTS)/.installed-$(CLAUDE_CODE_VERSION)

$(AGENTS)/.installed-$(CLAUDE_CODE_VERSION):
	@command -v npm >/dev/null || { echo "make agents needs npm (Node 20 or later)" >&2; exit 1; }
	mkdir -p $(AGENTS)
	npm install --prefix $(AGENTS) --no-audit --no-fund --loglevel=error \
	  @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
	touch $@

demo: install redis-server
	$(VENV)/bin/tersify demo

check: install redis-server agents lint types contracts test

# check without the slow soak-style tests (pytest -m 'not slow'); CI always runs them all.
quick: PYTEST_ARGS += -m 'not slow'
quick: check

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# mypy and import-linter read folders, and the installed package `tersify` is two of them
# (producer/ and worker/, mapped in pyproject.toml): build/tree/tersify is that package as
# links to the real files, made anew each time so added or removed modules are always seen.
tree:
	@rm -rf build/tree && mkdir -p build/tree/tersify && \
	  cp -rs "$(CURDIR)/producer/." build/tree/tersify/ && \
	  cp -rs "$(CURDIR)/worker" build/tree/tersify/worker && \
	  find build/tree -name __pycache__ -prune -exec rm -rf {} +

# Paths are shown as the real files', not the links'.
types: tree
	set -o pipefail; $(VENV)/bin/mypy | sed -e 's#^build/tree/tersify/worker/#worker/#' \
	  -e 's#^build/tree/tersify/#producer/#'

contracts: tree
	PYTHONPATH=build/tree $(VENV)/bin/lint-imports

# pytest exits 5 when it collected nothing: that is a broken suite, not a pass.
test:
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

# arq and Dramatiq for bench/throughput.py, in their own env (arq needs redis-py < 6); the
# pinned versions live in bench/peers/env.py, which throughput.py also runs when the env is missing.
bench-peers: .venv-peers/.installed

.venv-peers/.installed: bench/peers/env.py | install
	$(PY) bench/peers/env.py
	touch $@

clean:
	rm -rf $(VENV) build .mypy_cache .ruff_cache .pytest_cache .hypothesis
