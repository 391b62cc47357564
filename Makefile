# SandMLE — every entry point a user or CI needs. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch==2.13.0 is the CPU build on these machines; an unpinned torch would pull a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0
OUT ?= outputs
CHECK_DIRS := src tests recipes

.PHONY: install install-dev bwrap demo test test-fast quality style bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.core-installed: $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.dev-installed: $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/pip install -q "$(TORCH_SPEC)"
	$(BIN)/pip install -q -e ".[train,llm,dev]"
	touch $@ $(VENV)/.core-installed

install: $(VENV)/.core-installed

install-dev: $(VENV)/.dev-installed

# The sandbox isolates agent code with bubblewrap (+ libseccomp for its syscall filter); install them when we can
# (root + apt), else the sandbox falls back to a plain subprocess and says `isolation: none` loudly.
bwrap:
	@{ command -v bwrap >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q libseccomp.so.2; } || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap libseccomp2) >/dev/null 2>&1 \
	      || echo "warning: could not install bubblewrap; sandbox tests run with isolation: none"; \
	  else echo "warning: bwrap missing and not root; sandbox tests run with isolation: none"; fi; }

demo: install bwrap
	$(BIN)/sandmle demo --out $(OUT)/demo

test: install-dev bwrap
	$(BIN)/python -m pytest -q --timeout=900

test-fast: install-dev bwrap
	$(BIN)/python -m pytest -q -m "not slow" --timeout=300

quality: install-dev
	$(BIN)/ruff check $(CHECK_DIRS)
	$(BIN)/ruff format --check $(CHECK_DIRS)

style: install-dev
	$(BIN)/ruff check --fix $(CHECK_DIRS)
	$(BIN)/ruff format $(CHECK_DIRS)

bench: install-dev bwrap
	$(BIN)/sandmle bench --out $(OUT)/bench

clean:
	rm -rf $(OUT) .pytest_cache .ruff_cache
