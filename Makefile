# Two set-up commands: `make figures` and `make test`. Both create .venv with python3 when it is missing.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed-test
# CONSTRAINTS=.ci/figures-lock.txt installs the versions that made the published figures (docs/reliability.md)
CONSTRAINTS ?=
PIN     := $(if $(CONSTRAINTS),-c $(CONSTRAINTS),)
OLDEST  := .venv-oldest

.PHONY: test typecheck test-slow test-oldest upgrade figures venv lint bench clean docs docs-check docs-images

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet $(PIN) -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

# `make test` skips the tests marked slow (each over ~5 s); `make test-slow` runs them, and .ci/run runs both.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python .ci/typecheck.py
	$(BIN)/python -m pytest -n auto -m "not slow"

# mypy --strict on the public modules listed in pyproject.toml ([tool.decbounds-typecheck]); part of `make test`
typecheck: $(STAMP)
	$(BIN)/python .ci/typecheck.py

test-slow: $(STAMP)
	$(BIN)/python -m pytest -n auto -m slow

# The newest releases the ranges in pyproject.toml allow, as a fresh machine installs them (.ci/run).
upgrade: $(STAMP)
	$(BIN)/python -m pip install --quiet --upgrade --upgrade-strategy eager -e '.[test]'

# The suite again in a second venv with the oldest releases pyproject.toml admits (.ci/oldest.txt).
$(OLDEST)/.installed: pyproject.toml .ci/oldest.txt
	$(PY) -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install --quiet --upgrade pip
	$(OLDEST)/bin/python -m pip install --quiet -c .ci/oldest.txt -e '.[test]'
	touch $@

test-oldest: $(OLDEST)/.installed
	$(OLDEST)/bin/python -m pytest -n auto -m "not slow"

# Quick by default; FULL=1 for the full set.
figures: $(STAMP)
	$(BIN)/python -m decbounds.paper_figures $(if $(FULL),--full,)

# The documentation site, strict (any warning fails), into build/site/; the docs extra is installed once.
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The built site in headless Chromium (Debian's package, installed with apt when missing), with every request
# to another host blocked: console errors, failed requests, undecoded images, formulas with no size fail it;
# screenshots go to build/docs-check/ (.ci/docs_check.py). It reads the site `make docs` built last.
CHROMIUM ?= /usr/bin/chromium
docs-check: $(DOCS_STAMP)
	test -x $(CHROMIUM) || (apt-get update -qq && apt-get install -y -qq chromium)
	$(BIN)/python .ci/docs_check.py --chromium $(CHROMIUM)

# docs/img/ from a quick figure run (the results pages embed these copies; paper_figures/out/ is not in git)
docs-images: $(STAMP)
	$(BIN)/python -m decbounds.paper_figures --out build/figures
	$(BIN)/python docs/images.py build/figures

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) $(OLDEST) paper_figures/out build .pytest_cache .hypothesis
