# gradviz tasks. `make run` and `make test` set everything up on a fresh machine first.
#   run / test      local set-up (requirements-local.txt: PyPI's torch, CUDA build on Linux)
#   run-cpu         the CPU-only set Community Cloud installs (requirements.txt), then the app
#   test-fast       every test but the browser and slow ones; test-deploy: tests/deploy only
#   lint, format, bench, screenshots (the browser tests, which write docs/screenshots/), clean
#   gpu-check       every GPU claim on a real GPU, results in docs/gpu/ (DRY=1: no GPU, CPU halves;
#                   OUT=DIR elsewhere; GPU_CHECK_PY=python to use; no set-up: a GPU machine's own)
.PHONY: setup setup-dev setup-cpu run run-cpu test test-fast test-deploy lint format bench screenshots clean gpu-check

setup:
	scripts/setup.sh

setup-dev:
	scripts/setup.sh --dev

setup-cpu:
	scripts/setup.sh --cpu

# Local mode is for this machine only: listen on loopback, and answer only loopback names
# (DNS rebinding). Community Cloud runs `streamlit run app.py` itself and gets public mode.
LOCAL = --server.address 127.0.0.1 --server.allowedHosts localhost --server.allowedHosts 127.0.0.1

run: setup
	.venv/bin/streamlit run app.py $(LOCAL)

run-cpu: setup-cpu
	.venv/bin/streamlit run app.py $(LOCAL)

test: setup-dev
	.venv/bin/ruff check .
	PYTHONPATH=src .venv/bin/lint-imports
	.venv/bin/python -m pytest -q

test-fast:
	.venv/bin/python -m pytest -q -m "not e2e and not slow"

test-deploy:
	.venv/bin/python -m pytest -q tests/deploy

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	PYTHONPATH=src .venv/bin/lint-imports
	.venv/bin/python scripts/architecture.py --check

format:
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .

# A GPU machine is used as it is (its own Python and torch, nothing installed): .venv's Python
# where there is one, else python3.
GPU_CHECK_PY ?= $(shell test -x .venv/bin/python && echo .venv/bin/python || echo python3)

gpu-check:
	$(GPU_CHECK_PY) bench/gpu_check.py $(if $(DRY),--dry-run) $(if $(OUT),--out $(OUT))

bench:
	.venv/bin/python bench/render_bench.py

screenshots:
	.venv/bin/python -m pytest -q -m e2e

clean:
	rm -rf .venv .pytest_cache .ruff_cache build *.egg-info src/*.egg-info
