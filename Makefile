# The two commands the README promises: `make run` and `make test`.
# Each sets up what it needs first (a virtualenv in .venv), so both work on a
# fresh machine with Python 3.11+.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU build of torch is enough for the bundled demos and ~10x smaller than
# the CUDA build; set TORCH=torch to get PyPI's default (CUDA) build instead.
TORCH ?= torch==2.13.0

.PHONY: run test lint setup system-deps clean

$(BIN)/quizlab: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "$(TORCH)" numpy
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

setup: $(BIN)/quizlab

run: setup
	$(BIN)/quizlab serve

system-deps:
	scripts/system-deps

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: setup system-deps lint
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) data test-artifacts .pytest_cache .mypy_cache .ruff_cache
