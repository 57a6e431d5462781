# The README's two commands:
#   make run   - create .venv, install the pinned requirements, launch the dashboard on localhost
#   make test  - create .venv, install the test requirements, run the lint gate (make lint), then the whole suite
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501

.PHONY: run lint test samples bench clean

$(VENV)/.installed: requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	# installs the `reliability-audit` command (.venv/bin/reliability-audit); deps come from requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

$(VENV)/.installed-test: requirements-test.txt $(VENV)/.installed
	$(PY) -m pip install --quiet -r requirements-test.txt
	touch $@

samples: $(VENV)/.installed
	$(PY) -m audit_core.data.samples

run: $(VENV)/.installed
	$(PY) -m streamlit run app.py --server.address 127.0.0.1 --server.port $(PORT)

# ruff and mypy over the library, the CLI and the app's components (config in pyproject.toml)
lint: $(VENV)/.installed-test
	$(PY) -m ruff check audit_core audit_cli components
	$(PY) -m mypy audit_core audit_cli components

# The suite runs in 3 worker processes (pytest-xdist); loadgroup keeps each xdist_group together on one worker
# (the "serial" group: the wall-clock bound of the regex test and the concurrent-sessions load test).
# Serially: make test PYTEST_ARGS="-n 0"
PYTEST_ARGS ?= -n 3 --dist loadgroup
test: lint
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.installed
	$(PY) benchmarks/bench_parallel.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
