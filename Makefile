# The two commands: `make run` and `make test`. Both set up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-test

.PHONY: run test lint bench clean system-deps

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,chart]'
	touch $@

run: $(STAMP)
	$(BIN)/cryptoapi selftest

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

system-deps:
	bash scripts/system-deps

test: lint system-deps
	$(BIN)/pytest -n 2

bench: $(STAMP)
	@for b in bench/[a-z]*.py; do m=$$(basename $$b .py); echo "== bench.$$m"; \
		$(BIN)/python -m bench.$$m || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
