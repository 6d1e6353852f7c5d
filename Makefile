# Two commands do everything on a fresh Debian machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
APT_PACKAGES := e2fsprogs xfsprogs btrfs-progs util-linux fdisk fio sysstat passwd postgresql-15 mdadm lvm2
RESULTS ?= results/demo-$(shell date +%Y%m%d-%H%M%S)

.PHONY: setup demo test unit integration clean

# Idempotent: installs only what is missing.
setup: $(BIN)/pgfsbench
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  missing=""; for p in $(APT_PACKAGES); do \
	    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  fi; \
	fi

$(BIN)/pgfsbench: pyproject.toml
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq python3-venv; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

demo: setup
	$(BIN)/pgfsbench run quick --results $(RESULTS)
	@echo "The report is at $(RESULTS)/report.html"

test: setup
	$(BIN)/pytest -q -ra

unit: setup
	$(BIN)/pytest -q tests/unit

integration: setup
	$(BIN)/pytest -q -ra tests/integration

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
