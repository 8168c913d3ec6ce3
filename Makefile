# The two commands: `make run` and `make test`. Each sets up .venv on first use with what it
# needs, and nothing more:
#   make run    the package and its optional provider (pycryptodome), then every self-test
#   make test   that plus the test, lint and docs tools (the `test` and `chart` extras)
# A stamp per set (.venv/.installed-run, .venv/.installed-test) reinstalls when pyproject.toml
# changes. A .venv made by another Python than $(PYTHON) (its pyvenv.cfg records another
# interpreter or version) is deleted and rebuilt: packages built for one interpreter do not
# load in another. `make clean` removes it by hand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test

# The API reference: pdoc over the public API only: the package (its alloc_* functions and
# lazy re-exports: Registry, the transforms, the records), the errors, the records and the
# name grammar, the transforms, and the PF_KEY and ESP packages users drive. Providers,
# templates, the registry's insides, the self-test manager and the CLI are implementation
# (their docstrings are read in the source). Without the search index (6.5 MB over every
# module) and the source listings, the reference is about 1.5 MB instead of 23 MB. The
# code's docstrings use reST roles (:class:`...`), which pdoc's default markdown would
# print as they are written.
API_DOCS := docs/api
PDOC_FLAGS := --docformat restructuredtext --no-search --no-show-source
PDOC_MODULES := cryptoapi cryptoapi.errors cryptoapi.alg cryptoapi.names cryptoapi.transforms \
	cryptoapi.pfkey cryptoapi.esp

# "interpreter version" of $(PYTHON), as `python -m venv` writes them into pyvenv.cfg, and
# as the existing .venv's pyvenv.cfg has them (virtualenv writes version_info instead).
PYTHON_ID := $(shell $(PYTHON) -c 'import os, sys; print(os.path.realpath(sys.executable), "%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)
VENV_ID := $(shell sed -nE 's/^executable *= *//p' $(VENV)/pyvenv.cfg 2>/dev/null) \
	$(shell sed -nE 's/^version(_info)? *= *([0-9]+\.[0-9]+\.[0-9]+).*/\2/p' $(VENV)/pyvenv.cfg 2>/dev/null)
ifneq ($(wildcard $(VENV)/pyvenv.cfg),)
ifneq ($(PYTHON_ID),)
ifneq ($(strip $(VENV_ID)),$(strip $(PYTHON_ID)))
STALE_VENV := stale-venv
endif
endif
endif

# Run before anything is deleted or created: a missing or too old $(PYTHON) changes nothing.
CHECK_PYTHON := $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || \
	{ echo "cryptoapi needs Python >= 3.11: '$(PYTHON)' is missing or older (make PYTHON=python3.12 ...)" >&2; exit 1; }

.PHONY: run test lint docs bench clean system-deps bench-deps stale-venv

$(RUN_STAMP): pyproject.toml $(STALE_VENV)
	@$(CHECK_PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[pycryptodome]'
	touch $@

$(TEST_STAMP): $(RUN_STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,chart]'
	touch $@

stale-venv:
	@$(CHECK_PYTHON)
	@echo "$(VENV) was made by $(strip $(VENV_ID)), not by $(PYTHON) ($(PYTHON_ID)): rebuilding it" >&2
	rm -rf $(VENV)

run: $(RUN_STAMP)
	$(BIN)/cryptoapi selftest

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

system-deps:
	bash scripts/system-deps

# tests/test_docs.py builds the same reference and fails on any pdoc warning.
test: lint system-deps
	$(BIN)/pytest -n 2

# pdoc reports broken docstrings on stderr and still exits 0: any output there fails.
docs: $(TEST_STAMP)
	rm -rf $(API_DOCS)
	@$(BIN)/pdoc $(PDOC_FLAGS) -o $(API_DOCS) $(PDOC_MODULES) 2>$(VENV)/pdoc-warnings; \
		status=$$?; cat $(VENV)/pdoc-warnings >&2; \
		if [ $$status -ne 0 ] || [ -s $(VENV)/pdoc-warnings ]; then \
			echo "make docs: pdoc failed or warned (above)" >&2; exit 1; fi
	@echo "API reference: $(API_DOCS)/index.html"

# Every benchmark, each in its own process (`python -m bench.NAME` runs one): a failure is
# reported and the rest still run; the summary lists the goals met and missed, and the
# target fails if any benchmark did. They need the test extra's peers (scapy, distributed),
# and bench.espd iperf3 and strongSwan (scripts/bench-deps; without them it skips, saying so).
bench: $(TEST_STAMP) bench-deps
	$(BIN)/python -m bench

bench-deps:
	bash scripts/bench-deps

clean:
	rm -rf $(VENV) $(API_DOCS) .mypy_cache .ruff_cache .pytest_cache .hypothesis
