# Simulusion: `make run` starts the platform, `make test` runs every test.
# Needs GNU make, python3 (3.11 or 3.12) and access to PyPI; uv is installed with pip when missing.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.PHONY: help setup run test gen check-gen check bench lint

# uv: the one on PATH, else the one pip puts in the user's base (or `python3 -m uv`).
# A recursive variable: looked up again in each recipe, so after `setup` has installed it.
UV ?= $(shell command -v uv 2>/dev/null || { u="$$(python3 -m site --user-base 2>/dev/null)/bin/uv"; test -x "$$u" && echo "$$u"; } || echo "python3 -m uv")
RUN := $(UV) run --no-sync

# Python writes its bytecode caches (__pycache__ in .venv and beside the sources) even where the
# caller's environment says not to: the platform is a handful of Python processes, and the tests
# start hundreds; without the caches each of them compiles every module it imports again, about
# half of a service's start-up CPU.
unexport PYTHONDONTWRITEBYTECODE

help:
	@echo "make run        build the web app if its sources changed, start the platform (http://127.0.0.1:8000, Ctrl-C to stop)"
	@echo "make test       check generated code, lint and types, then the tests (each member in its own env, then web/)"
	@echo "make gen        regenerate libs/contracts from the .proto files, the web app's API types from the gateway, the Grafana dashboards"
	@echo "make check-gen  fail if the generated code differs from the .proto files, the gateway's OpenAPI or the dashboards' code"
	@echo "make check      ruff, mypy (strict on every member) and the layer rules (lint-imports)"
	@echo "make bench      run the benchmarks (bench/*.py)"
	@echo "make lint       ruff"

# Installs uv when missing, then the workspace (every package, dev tools) into .venv.
setup:
	@bash scripts/install_system_deps.sh
	@if ! $(UV) --version >/dev/null 2>&1; then \
	  command -v python3 >/dev/null 2>&1 || { echo "error: python3 not found: install Python 3.11 or 3.12 (e.g. apt-get install python3 python3-pip)" >&2; exit 1; }; \
	  echo "uv not found: installing it with pip (python3 -m pip install --user uv)"; \
	  python3 -m pip install --user --quiet uv 2>/dev/null \
	    || python3 -m pip install --user --quiet --break-system-packages uv 2>/dev/null \
	    || pip install --quiet uv 2>/dev/null \
	    || { echo "error: could not install uv: pip is missing or failed; install pip (apt-get install python3-pip) or uv (https://docs.astral.sh/uv/)" >&2; exit 1; }; \
	fi
	@uv="$(UV)"; $$uv --version >/dev/null 2>&1 || uv="$$(python3 -m site --user-base)/bin/uv"; \
	  $$uv --version >/dev/null 2>&1 || uv="python3 -m uv"; \
	  if [ -f uv.lock ]; then $$uv sync --all-packages --frozen; else $$uv sync --all-packages; fi

# The web app (web/ -> web/dist, served at /) is built first when its sources changed; without
# Node.js 20+, or when its build fails, the platform still starts (the script says why).
run: setup
	@$(RUN) python scripts/build_web.py --keep-going
	$(RUN) python -m platform_local

# Each workspace member's tests in an environment of that member alone (.venvs/<name>, kept
# between runs), then the cross-service tests/ in the workspace's; a summary with the times.
test: setup check-gen check
	@UV="$(UV)" $(RUN) python scripts/test_members.py

# libs/contracts from the .proto files; web/openapi.json from the gateway and the web app's
# client types (web/src/api/schema.d.ts) from it (scripts/gen_web.py: needs Node.js 20+);
# deploy/grafana's dashboards from scripts/grafana_dashboards (scripts/gen_dashboards.py).
gen: setup
	$(RUN) bash scripts/gen_contracts.sh
	$(RUN) python scripts/gen_web.py
	$(RUN) python scripts/gen_dashboards.py

# Temporal's rule: regenerate and fail on any difference. It compares the generated files
# before and after `make gen` (in a fresh clone: the committed ones), so uncommitted but
# consistent contract work passes locally too.
GENERATED := libs/contracts/src/simulusion web/openapi.json web/src/api/schema.d.ts web/src/gen
# the Grafana dashboards (scripts/gen_dashboards.py), and their copies in the chart
GENERATED += deploy/grafana deploy/helm/simulusion-platform/files/dashboards
check-gen: setup
	@snapshot() { find $(GENERATED) -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum; }; \
	  before="$$(snapshot)"; \
	  out="$$($(RUN) bash scripts/gen_contracts.sh 2>&1)" || { echo "$$out" >&2; exit 1; }; \
	  out="$$($(RUN) python scripts/gen_web.py 2>&1)" || { echo "$$out" >&2; exit 1; }; \
	  out="$$($(RUN) python scripts/gen_dashboards.py 2>&1)" || { echo "$$out" >&2; exit 1; }; \
	  after="$$(snapshot)"; \
	  if [ "$$before" != "$$after" ]; then \
	    changed="$$(diff <(echo "$$before") <(echo "$$after") | grep '^[<>]' | awk '{print $$NF}' | sort -u | paste -sd' ' - || true)"; \
	    echo "check-gen: generated files differ from their sources (.proto files, the gateway's OpenAPI, scripts/grafana_dashboards): $$changed" >&2; \
	    echo "check-gen: run make gen and commit them" >&2; exit 1; \
	  fi; echo "check-gen: generated code is up to date"

bench: setup
	@shopt -s nullglob; files=(bench/*.py); \
	  if [ $${#files[@]} -eq 0 ]; then echo "no benchmarks in bench/"; fi; \
	  for f in "$${files[@]}"; do echo "== $$f"; $(RUN) python "$$f"; done

lint: setup
	$(RUN) ruff check .

# The settings of all three are in pyproject.toml: mypy checks the packages it lists there, and
# lint-imports the layer rules of docs/architecture.md ([tool.importlinter]).
check: lint
	$(RUN) mypy
	$(RUN) lint-imports --no-cache
