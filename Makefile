# The two commands of the README: `make demo` and `make test`. Both create .venv on a fresh machine.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
UV_VERSION := 0.13.9
# uv installs the locked requirements (requirements/*.txt, `make lock`): seconds where pip's resolver took minutes.
# INSTALLER=pip installs the same lock with pip, for a machine whose package index only pip is configured for.
INSTALLER ?= uv
export PROVENANCE_HOME ?= $(CURDIR)/.provenance

# Python 3.12 preferred, 3.11 accepted: the first candidate that actually runs and is >= 3.11.
PYTHON ?= $(shell for c in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3 python3.11 \
	$$HOME/.pyenv/versions/3.11*/bin/python3 python3; do \
	if $$c -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then echo $$c; break; fi; done)

# System packages the tests need, as BINARY:PACKAGE pairs for scripts/system_deps.sh, which installs them with
# apt-get when the binary is missing. tests/e2e drive Debian's Chromium at $(CHROMIUM) (tests/e2e/browser.py).
# tests/postgres.py starts a throw-away PostgreSQL server with the initdb that $(POSTGRES_INITDB) matches (a glob:
# Debian keeps the server in /usr/lib/postgresql/<major>/bin, and the major version differs between releases).
export CHROMIUM ?= /usr/bin/chromium
export POSTGRES_INITDB ?= /usr/lib/postgresql/*/bin/initdb
# tests/tools/changes and tests/test_action build real git repositories (infer-changes reads git history).
SYSTEM_DEPS ?= $(CHROMIUM):chromium $(POSTGRES_INITDB):postgresql /usr/bin/git:git

.PHONY: demo diff-demo test check lint system-deps chat clean lock mlflow dbt

# uv needs no pip in the venv, and ensurepip's copy costs ~5 s of a fresh set-up: the base interpreter's pip puts uv
# into the venv (pip >= 22.3 installs for another interpreter), or, where the base has no pip, the venv gets one.
ifeq ($(INSTALLER),pip)
INSTALL = $(BIN)/python -m pip install --progress-bar off
VENV_PIP =
else
INSTALL = $(BIN)/uv pip install --python $(BIN)/python
VENV_PIP = --without-pip
endif

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "Python >= 3.11 not found; install python3.12 (or 3.11)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV_PIP) $(VENV)
	$(PYTHON) -m pip --python $(BIN)/python install -q uv==$(UV_VERSION) \
		|| { $(BIN)/python -m ensurepip >/dev/null && $(BIN)/python -m pip install -q uv==$(UV_VERSION); }

# The demo installs what the product runs on (requirements/demo.txt), not the test and lint tooling.
$(DEMO_STAMP): pyproject.toml requirements/demo.txt | $(BIN)/python
	@echo "Installing the locked requirements/demo.txt into $(VENV) ($(INSTALLER))"
	$(INSTALL) -r requirements/demo.txt
	$(INSTALL) --no-deps -e .
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml requirements/dev.txt | $(BIN)/python
	@echo "Installing the locked requirements/dev.txt into $(VENV) ($(INSTALLER))"
	$(INSTALL) -r requirements/dev.txt
	$(INSTALL) --no-deps -e .
	touch $(STAMP) $(DEMO_STAMP)

# Re-resolve both locks after changing a requirement in pyproject.toml (uv asks the package index). The demo's lock
# is resolved within the dev lock, so its pins are the dev pins (tests/test_locks.py checks both against pyproject).
lock: | $(BIN)/python
	$(BIN)/uv pip install -q --python $(BIN)/python uv==$(UV_VERSION)
	$(BIN)/uv pip compile pyproject.toml --extra dev --universal --python-version 3.11 --no-emit-package provenance \
		-q -o requirements/dev.txt
	$(BIN)/uv pip compile pyproject.toml --universal --python-version 3.11 -c requirements/dev.txt \
		-q -o requirements/demo.txt

demo: $(DEMO_STAMP)
	$(BIN)/provenance demo

# The extras a walkthrough needs, added to the demo's .venv at the dev lock's pins: DataHub's mlflow and
# sql-queries sources and MLflow (docs/models.md), DataHub's dbt and postgres sources (docs/own-datahub.md).
mlflow dbt: $(DEMO_STAMP)
	$(INSTALL) -c requirements/dev.txt -e '.[$@]'

# `provenance diff` on the demo's DuckDB warehouse: today's transactions and a pull request's, no server needed.
diff-demo: $(DEMO_STAMP)
	$(BIN)/provenance demo --diff

# mypy's worker processes pay off on a cold cache only (a fresh clone: 30 s -> 16 s on 2 cores); on a warm one,
# starting them costs more than the check (1 s -> 6 s).
MYPY_WORKERS = $(if $(wildcard .mypy_cache),,-n 2)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy $(MYPY_WORKERS)

# Every time (not a stamp): a check of the binaries is instant, and a stamp would not notice one removed later.
system-deps:  # each pair quoted: a glob is for the script to match, not for this shell
	bash scripts/system_deps.sh $(foreach pair,$(SYSTEM_DEPS),'$(pair)')

# pytest-xdist workers: the suite waits on subprocesses (MCP servers, the CLI, Chromium, PostgreSQL) as much as it
# computes. tests/conftest.py groups the tests that share a chat server or the dbt world onto one worker.
TEST_WORKERS ?= 2

# Python caches the bytecode it compiles while the tests run, even where PYTHONDONTWRITEBYTECODE is set (as in many
# container images): else each of the suite's ~500 processes compiles every library it imports from source again
# (a command's imports: 11-13 CPU s instead of 4-5; tests/agent/cli took 373 s instead of 297 s on 2 cores).
CACHE_BYTECODE := PYTHONDONTWRITEBYTECODE=

test: $(STAMP) system-deps lint
	$(CACHE_BYTECODE) $(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=15

# The fast loop while working: lint, types and every test not marked slow or browser (no PostgreSQL, no Chromium,
# no dbt world). `make test` before a change is done.
check: $(STAMP) lint
	$(CACHE_BYTECODE) $(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadgroup -m "not slow and not browser"

# The chat UI on http://127.0.0.1:8000 (login provenance / $$PROVENANCE_CHAT_PASSWORD, default "provenance").
chat: $(DEMO_STAMP)
	@test -f "$${PROVENANCE_LITE_DB:-$(PROVENANCE_HOME)/catalog.db}" || $(BIN)/provenance seed
	$(BIN)/chainlit run chainlit_app.py --host 127.0.0.1 --port 8000

clean:
	rm -rf $(VENV) .provenance .pytest_cache .mypy_cache .ruff_cache .files
	find .chainlit/translations -name "*.json" ! -name en-US.json -delete
