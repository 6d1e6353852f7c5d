# Two commands do everything on a fresh Debian machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# fonts-liberation: chromium only recommends it, and the report's browser tests need a font.
# libfuse2: the crash workload's recording layer (mfusepy loads it).
APT_PACKAGES := e2fsprogs xfsprogs btrfs-progs btrfs-compsize util-linux fdisk fio sysstat passwd postgresql-15 mdadm lvm2 zfs-fuse libfuse2 chromium fonts-liberation
RESULTS ?= results/demo-$(shell date +%Y%m%d-%H%M%S)
# What apt, dpkg and pip print goes here, not to the screen: one line per step there.
SETUP_LOG ?= /tmp/pgfsbench-setup.log

.PHONY: setup demo test lint unit integration docs clean plotly-bundle

# Idempotent: installs only what is missing, without recommended packages (mdadm would
# bring a mail server with it).
setup: $(BIN)/pgfsbench
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

$(BIN)/pgfsbench: pyproject.toml
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || \
	  { [ "$$(id -u)" = 0 ] && echo "setup: installing python3-venv" && \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	        --no-install-recommends python3-venv; } >>$(SETUP_LOG) 2>&1; } || \
	  { echo "setup: python3-venv is missing and could not be installed; see $(SETUP_LOG)" >&2; exit 1; }
	@echo "setup: the Python environment in $(VENV) (output in $(SETUP_LOG))"
	@{ $(PYTHON) -m venv $(VENV) && $(BIN)/pip install -q --upgrade pip && \
	   $(BIN)/pip install -q -e '.[test,docs]'; } >>$(SETUP_LOG) 2>&1 || \
	  { echo "setup: pip install failed; see $(SETUP_LOG)" >&2; exit 1; }
	@touch $@

demo: setup
	$(BIN)/pgfsbench run quick --results $(RESULTS)
	@echo "The report is at $(RESULTS)/report.html"

# Lint and types first: seconds, and they fail the build before the long suite starts.
test: lint
	$(BIN)/pytest -q -ra --durations=25

# ruff (lint and format, [tool.ruff]) and mypy (types, [tool.mypy]) as configured in pyproject.toml.
lint: setup
	$(BIN)/ruff check
	$(BIN)/ruff format --check
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest -q tests/unit

integration: setup
	$(BIN)/pytest -q -ra tests/integration

# The documentation site (mkdocs + material) into site/; --strict: a warning or a broken
# link fails it (make test builds it too: tests/unit/test_docs_build.py). Material's
# banner about MkDocs 2.0 is not a warning about these docs.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Rebuilds the report's vendored partial plotly.js from its pinned npm packages (needs node
# and npm); setup never does: the built file is committed. See
# src/pgfsbench/report/vendor/README.md.
plotly-bundle:
	sh src/pgfsbench/report/vendor/build.sh

clean:
	rm -rf $(VENV) build site *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
