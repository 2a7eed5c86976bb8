# The two commands a newcomer needs: `make build` and `make test`. Both install what they need.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-stamp
export CINESUB_HOME ?= $(CURDIR)/var

.PHONY: setup build test bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml requirements.lock scripts/setup.sh
	bash scripts/setup.sh
	touch $(STAMP)

build: setup
	$(BIN)/cinesub build --sample
	$(BIN)/cinesub hollywood build --sample

test: setup
	$(BIN)/python -m pytest -n 2 --dist loadfile -q

bench: setup
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf var test-artifacts .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +
