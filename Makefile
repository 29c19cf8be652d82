# Two set-up commands: `make figures` and `make test`. Both create .venv with python3 when it is missing.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed-test

.PHONY: test figures venv lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n auto

# Quick by default; FULL=1 for the full set.
figures: $(STAMP)
	$(BIN)/python -m decbounds.paper_figures $(if $(FULL),--full,)

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) paper_figures/out .pytest_cache .hypothesis
