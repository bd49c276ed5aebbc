# gradviz tasks. `make run` and `make test` set everything up on a fresh machine first.
.PHONY: setup setup-dev run test test-fast lint format bench screenshots clean

setup:
	scripts/setup.sh

setup-dev:
	scripts/setup.sh --dev

run: setup
	.venv/bin/streamlit run app.py

test: setup-dev
	.venv/bin/ruff check .
	.venv/bin/python -m pytest -q

test-fast:
	.venv/bin/python -m pytest -q -m "not e2e and not slow"

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

format:
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .

bench:
	.venv/bin/python bench/render_bench.py

screenshots:
	.venv/bin/python -m pytest -q -m e2e

clean:
	rm -rf .venv .pytest_cache .ruff_cache build *.egg-info src/*.egg-info
