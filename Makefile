# What each target needs:
#   make try                      a Python venv only (no root, no apt): the shipped campaign's
#                                 answer in the terminal and its report.html
#   make unit, make lint, make docs   the venv with the test and docs tools (no root, no apt)
#   make demo, make test          root on Debian 12: the apt packages too (mkfs tools,
#                                 PostgreSQL 15, zfs-fuse, chromium ...), then the venv
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The versions make installs (and CI tests): pyproject.toml says the ranges pgfsbench works
# with, constraints.txt the exact versions of everything installed.
CONSTRAINTS := constraints.txt
# fonts-liberation: chromium only recommends it, and the report's browser tests need a font.
# libfuse2: the crash workload's recording layer (mfusepy loads it).
APT_PACKAGES := e2fsprogs xfsprogs btrfs-progs btrfs-compsize util-linux fdisk fio sysstat passwd postgresql-15 mdadm lvm2 zfs-fuse libfuse2 chromium fonts-liberation
RESULTS ?= results/demo-$(shell date +%Y%m%d-%H%M%S)
# make try's results directory: the shipped campaign unpacked (made afresh each time).
TRY := results/try
# The unit tests make unit runs (make unit TESTS=tests/unit/test_units.py: some of them).
TESTS ?= tests/unit
# What apt, dpkg and pip print goes here, not to the screen: one line per step there.
SETUP_LOG ?= /tmp/pgfsbench-setup.log

.PHONY: setup apt venv dev try demo test lint unit integration docs clean plotly-bundle

# Everything make test needs. Idempotent: installs only what is missing.
setup: apt dev

# As root with apt: the system packages the integration tests and campaigns use, without
# recommended packages (mdadm would bring a mail server with it). Anyone else: nothing.
apt:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  missing=""; for p in $(APT_PACKAGES); do \
	    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    echo "setup: installing$$missing (output in $(SETUP_LOG))"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	        --no-install-recommends $$missing; } >>$(SETUP_LOG) 2>&1 || \
	      { echo "setup: apt-get install failed; see $(SETUP_LOG)" >&2; exit 1; }; \
	  fi; \
	fi

# pgfsbench and its runtime dependencies (make try).
venv: $(VENV)/.runtime
# ... and the test, lint and docs tools (make unit, lint, docs).
dev: $(VENV)/.dev

$(BIN)/python:
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || \
	  { [ "$$(id -u)" = 0 ] && echo "setup: installing python3-venv" && \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	        --no-install-recommends python3-venv; } >>$(SETUP_LOG) 2>&1; } || \
	  { echo "setup: python3-venv is missing (as root: apt-get install python3-venv); see $(SETUP_LOG)" >&2; exit 1; }
	@echo "setup: the Python environment in $(VENV) (output in $(SETUP_LOG))"
	@{ $(PYTHON) -m venv $(VENV) && $(BIN)/pip install -q --upgrade pip; } >>$(SETUP_LOG) 2>&1 || \
	  { echo "setup: making $(VENV) failed; see $(SETUP_LOG)" >&2; exit 1; }

$(VENV)/.runtime: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	@echo "setup: pgfsbench and its dependencies into $(VENV) (output in $(SETUP_LOG))"
	@$(BIN)/pip install -q -c $(CONSTRAINTS) -e . >>$(SETUP_LOG) 2>&1 || \
	  { echo "setup: pip install failed; see $(SETUP_LOG)" >&2; exit 1; }
	@touch $@

$(VENV)/.dev: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	@echo "setup: pgfsbench with its test and docs tools into $(VENV) (output in $(SETUP_LOG))"
	@$(BIN)/pip install -q -c $(CONSTRAINTS) -e '.[test,docs]' >>$(SETUP_LOG) 2>&1 || \
	  { echo "setup: pip install failed; see $(SETUP_LOG)" >&2; exit 1; }
	@touch $@ $(VENV)/.runtime

# The campaign the docs show (tests/fixtures/quick_demo_results.db.gz: the default plan as
# make demo ran it on a quiet 2-core VM), read as any results directory is read.
try: venv
	@rm -rf $(TRY) && mkdir -p $(TRY)
	@gzip -dc tests/fixtures/quick_demo_results.db.gz > $(TRY)/results.db
	$(BIN)/pgfsbench show $(TRY)
	$(BIN)/pgfsbench report $(TRY)
	@echo "Next: $(BIN)/pgfsbench advise $(TRY), $(BIN)/pgfsbench compare $(TRY), and make demo (as root) to measure this machine."

demo: setup
	$(BIN)/pgfsbench run quick --results $(RESULTS)
	@echo "The report is at $(RESULTS)/report.html"

# Lint and types first: seconds, and they fail the build before the long suite starts.
# sync: the venv and caches just written go to disk now, not during the first campaign,
# which would take that writeback for someone else's load and run its visit again.
test: setup lint
	sync
	$(BIN)/pytest -q -ra --durations=25

# ruff (lint and format, [tool.ruff]) and mypy (types, [tool.mypy]) as configured in pyproject.toml.
lint: dev
	$(BIN)/ruff check
	$(BIN)/ruff format --check
	$(BIN)/mypy

unit: dev
	$(BIN)/pytest -q $(TESTS)

integration: setup
	sync
	$(BIN)/pytest -q -ra tests/integration

# The documentation site (mkdocs + material) into site/; --strict: a warning or a broken
# link fails it (make test builds it too: tests/unit/test_docs_build.py). Material's
# banner about MkDocs 2.0 is not a warning about these docs.
docs: dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Rebuilds the report's vendored partial plotly.js from its pinned npm packages (needs node
# and npm); setup never does: the built file is committed. See
# src/pgfsbench/report/vendor/README.md.
plotly-bundle:
	sh src/pgfsbench/report/vendor/build.sh

clean:
	rm -rf $(VENV) build site *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
