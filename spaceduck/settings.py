"""Django settings for spaceduck.

Everything configurable comes from ``SPACEDUCK_*`` environment variables read
through the typed helpers in :mod:`spaceduck.core.env`; the README lists them all.
"""

from __future__ import annotations

import os
import secrets
from importlib.util import find_spec
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from spaceduck.core.db.urls import postgres_database
from spaceduck.core.env import (
    env_bool,
    env_choice,
    env_float,
    env_http_url,
    env_int,
    env_list,
    env_optional_int,
    env_optional_str,
    env_str,
)
from spaceduck.core.optional_imports import import_without
from spaceduck.core.private_files import make_private_dir, write_private_text

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("SPACEDUCK_DATA_DIR", str(BASE_DIR / "var"))).resolve()
# 0700: the database, the queue and the secret key live here (spaceduck.core.private_files).
make_private_dir(DATA_DIR)


def _secret_key() -> str:
    """Use the configured key, else one generated once and kept beside the database."""
    configured = env_optional_str("SPACEDUCK_SECRET_KEY")
    if configured:
        return configured
    key_file = DATA_DIR / "secret_key"
    # Created 0600 with its content in one go: never readable by others, even for a moment.
    write_private_text(key_file, secrets.token_urlsafe(50))
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("SPACEDUCK_DEBUG", False)
ALLOWED_HOSTS = env_list(
    "SPACEDUCK_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"]
)
CSRF_TRUSTED_ORIGINS = env_list("SPACEDUCK_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    # The admin, its modules discovered when first needed (spaceduck/apps.py says why).
    "spaceduck.apps.LazyAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.humanize",
    # Its widget templates, for FORM_RENDERER below.
    "django.forms",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    # django-ninja is not an app here: installing it imports the whole package (~0.2 s) in
    # every command. Its templates and static files, from which /api/docs serves Swagger UI
    # offline (not from a CDN), are in TEMPLATES' and STATICFILES_DIRS (NINJA_DIR).
    # Before huey's app: its `run_huey` command is replaced by spaceduck's (the same consumer
    # with the heartbeat and crash recovery; spaceduck/management/commands/run_huey.py).
    "spaceduck",
    "huey.contrib.djhuey",
    "memories",
    "notes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # After auth: an htmx request without a session gets HX-Redirect to the login page.
    "spaceduck.core.sessions.HtmxLoginRedirect",
    # After htmx's: a bare 405 becomes the error page, or the message area for htmx.
    "spaceduck.core.pages.MethodNotAllowedPage",
]
# A form without a valid CSRF token: the error page with the navigation, not Django's own.
CSRF_FAILURE_VIEW = "spaceduck.core.pages.csrf_failure"

ROOT_URLCONF = "spaceduck.urls"
WSGI_APPLICATION = "spaceduck.wsgi.application"
ASGI_APPLICATION = "spaceduck.asgi.application"

# Found without importing the package (see INSTALLED_APPS).
NINJA_DIR = Path(find_spec("ninja").submodule_search_locations[0])  # type: ignore[union-attr,index]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates", NINJA_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memories.web.context_processors.review_counts",
                "notes.context_processors.review_counts",
            ],
        },
    }
]

# Widgets are rendered with the templates above, so that templates/ can override one of Django's
# (templates/admin/widgets/split_datetime.html: labels for the admin's date and time inputs).
FORM_RENDERER = "django.forms.renderers.TemplatesSetting"

# --- Storage -----------------------------------------------------------------
# SQLite overwrites deleted content with zeros ("on"): what erase and delete promise. "fast"
# skips it where that would cost I/O and leaves deleted bytes on free pages; "off" is
# SQLite's default. Anything but "on" breaks the promise: it exists to measure the cost.
SQLITE_SECURE_DELETE = env_choice("SPACEDUCK_SQLITE_SECURE_DELETE", "on", ("on", "fast", "off"))
DATABASE_PATH = Path(env_str("SPACEDUCK_DATABASE_PATH", str(DATA_DIR / "spaceduck.sqlite3")))
DATABASES = {
    "default": {
        # Our backend: Django's SQLite backend on a SQLite build that can load
        # extensions, with sqlite-vec loaded on every connection.
        "ENGINE": "spaceduck.core.db.backend",
        "NAME": str(DATABASE_PATH),
        "OPTIONS": {
            # IMMEDIATE takes the write lock at BEGIN, so the web process and
            # the worker queue behind the busy timeout instead of failing with
            # "database is locked" when a read transaction later tries to write.
            "transaction_mode": "IMMEDIATE",
            "timeout": env_float("SPACEDUCK_DATABASE_TIMEOUT", 20.0, minimum=5.0),
            # secure_delete: a deleted row's bytes are overwritten, not left on a free page
            # (README, Privacy; `bench ingest --secure-delete off,fast,on` measures its cost).
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
            f"PRAGMA secure_delete={SQLITE_SECURE_DELETE}",
        },
        "TEST": {"NAME": env_optional_str("SPACEDUCK_TEST_DATABASE_PATH")},
        # Keep each thread's connection between requests: opening one loads
        # sqlite-vec, registers functions and sets PRAGMAs (~2 ms a request here,
        # measured with `bench load`). Health checks drop a connection that broke.
        "CONN_MAX_AGE": env_int("SPACEDUCK_DATABASE_CONN_MAX_AGE", 600, minimum=0),
        "CONN_HEALTH_CHECKS": True,
    }
}
# SPACEDUCK_DATABASE_URL=postgres://... runs the service on PostgreSQL instead.
DATABASE_URL = env_optional_str("SPACEDUCK_DATABASE_URL")
# PostgreSQL: the write path's statements prepared server-side (spaceduck.core.db.fast.hot_cursor);
# false for a connection pooler in transaction mode that cannot keep prepared statements.
DATABASE_PREPARE = env_bool("SPACEDUCK_DATABASE_PREPARE", True)
if DATABASE_URL:
    DATABASES["default"] = postgres_database(
        DATABASE_URL, conn_max_age=DATABASES["default"]["CONN_MAX_AGE"]
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Providers ---------------------------------------------------------------
EMBEDDING_PROVIDERS = ("local", "hash", "openai")
CHAT_PROVIDERS = ("heuristic", "openai")

SPACEDUCK_EMBEDDINGS = {
    "provider": env_choice("SPACEDUCK_EMBEDDING_PROVIDER", "local", EMBEDDING_PROVIDERS),
    "model": env_optional_str("SPACEDUCK_EMBEDDING_MODEL"),
    "dimensions": env_optional_int("SPACEDUCK_EMBEDDING_DIMENSIONS", minimum=1),
    "base_url": env_optional_str("SPACEDUCK_EMBEDDING_BASE_URL"),
    "api_key": env_optional_str("SPACEDUCK_EMBEDDING_API_KEY"),
    "timeout": env_float("SPACEDUCK_EMBEDDING_TIMEOUT", 30.0, minimum=0.1),
    "batch_size": env_int("SPACEDUCK_EMBEDDING_BATCH_SIZE", 64, minimum=1),
}
SPACEDUCK_CHAT = {
    "provider": env_choice("SPACEDUCK_CHAT_PROVIDER", "heuristic", CHAT_PROVIDERS),
    "model": env_optional_str("SPACEDUCK_CHAT_MODEL"),
    "base_url": env_optional_str("SPACEDUCK_CHAT_BASE_URL"),
    "api_key": env_optional_str("SPACEDUCK_CHAT_API_KEY"),
    "timeout": env_float("SPACEDUCK_CHAT_TIMEOUT", 60.0, minimum=0.1),
}
for _name, _conf in (("EMBEDDING", SPACEDUCK_EMBEDDINGS), ("CHAT", SPACEDUCK_CHAT)):
    if _conf["provider"] == "openai" and not (_conf["base_url"] or _conf["api_key"]):
        raise ImproperlyConfigured(
            f"SPACEDUCK_{_name}_PROVIDER=openai needs SPACEDUCK_{_name}_BASE_URL "
            f"(any OpenAI-compatible server) or SPACEDUCK_{_name}_API_KEY (api.openai.com)."
        )

# --- Background work -----------------------------------------------------------
REDIS_URL = env_optional_str("SPACEDUCK_REDIS_URL")
# huey's storage module would import redis and psycopg (the latter for a queue the service
# never uses), ~0.4 s at every start: only what the queue needs (optional_imports.py).
import_without("huey.storage", ("psycopg",) if REDIS_URL else ("psycopg", "redis"))
HUEY_IMMEDIATE = env_bool("SPACEDUCK_HUEY_IMMEDIATE", False)
HUEY_WORKERS = env_int("SPACEDUCK_WORKERS", 2, minimum=1)
HUEY = {
    "name": "spaceduck",
    "immediate": HUEY_IMMEDIATE,
    "results": True,
    "utc": True,
    "consumer": {"workers": HUEY_WORKERS, "worker_type": "thread"},
}
if HUEY_IMMEDIATE:
    pass  # djhuey uses an in-memory storage in immediate mode
elif REDIS_URL:
    HUEY.update({"huey_class": "huey.RedisHuey", "url": REDIS_URL})
else:
    from spaceduck.core.queue import QueueStorage

    HUEY.update(
        {
            "huey_class": "huey.SqliteHuey",
            "storage_class": QueueStorage,
            "filename": str(
                Path(
                    env_str("SPACEDUCK_QUEUE_PATH", str(DATABASE_PATH.with_suffix(".huey.sqlite3")))
                )
            ),
        }
    )

# Crash safety: a running extraction is leased to its worker, whose heartbeat
# renews the lease; an expired lease (the worker died) puts it back in the queue.
EXTRACTION_LEASE_SECONDS = env_int("SPACEDUCK_EXTRACTION_LEASE_SECONDS", 60, minimum=1)
WORKER_HEARTBEAT_SECONDS = env_float("SPACEDUCK_WORKER_HEARTBEAT_SECONDS", 10.0, minimum=0.1)
# How often a worker looks for expired leases and queued records missing from the queue.
RECOVERY_EVERY_SECONDS = env_float("SPACEDUCK_RECOVERY_EVERY_SECONDS", 30.0, minimum=0.1)
# /api/health says "degraded" when no worker has beaten for this long, or when an
# extraction has been due (queued) for this long.
WORKER_STALE_SECONDS = env_int("SPACEDUCK_WORKER_STALE_SECONDS", 60, minimum=1)
EXTRACTION_STUCK_SECONDS = env_int("SPACEDUCK_EXTRACTION_STUCK_SECONDS", 300, minimum=1)
# Where the MCP endpoint (manage.py mcp --http) listens, HOST:PORT: /api/health asks it and
# says "degraded" when it does not answer. `serve --mcp HOST:PORT` sets it for its web server.
MCP_ADDRESS = env_str("SPACEDUCK_MCP_ADDRESS", "")
# When `serve` started its web server and worker (a Unix time; serve sets it for them, 0 is
# "not under serve"): /api/health says "starting", not "degraded", until the worker's first
# heartbeat was due (spaceduck.core.worker.worker_state).
SERVE_STARTED_AT = env_float("SPACEDUCK_SERVE_STARTED_AT", 0.0, minimum=0.0)

# --- Webhooks (spaceduck.core.webhooks): tell a reviewer that something waits -----------
# Optional: unset, nothing is sent. A new conflict, a new candidate and a pending note are
# POSTed as JSON by the worker, signed with HMAC-SHA256 of the secret (X-Spaceduck-Signature),
# retried with doubling delays, every attempt logged (WebhookDelivery).
WEBHOOK_URL = env_http_url("SPACEDUCK_WEBHOOK_URL")
WEBHOOK_SECRET = env_optional_str("SPACEDUCK_WEBHOOK_SECRET") or ""
WEBHOOK_RETRIES = env_int("SPACEDUCK_WEBHOOK_RETRIES", 5, minimum=0)
WEBHOOK_RETRY_SECONDS = env_float("SPACEDUCK_WEBHOOK_RETRY_SECONDS", 30.0, minimum=0.0)
WEBHOOK_TIMEOUT_SECONDS = env_float("SPACEDUCK_WEBHOOK_TIMEOUT_SECONDS", 5.0, minimum=0.1)

# --- Web server (manage.py serve: gunicorn) ---------------------------------------------
# Processes rather than threads: requests are CPU-bound Python, so threads of one
# process wait for its GIL. `bench load` at 8 clients on 2 cores: 4x2 gave write
# p95 ~95-114 ms against ~110-130 for 2x4. Each process holds its own vector cache
# (~100 MB RSS with 10k memories), hence the cap.
WEB_WORKERS = env_int("SPACEDUCK_WEB_WORKERS", min(2 * (os.cpu_count() or 1), 8), minimum=1)
WEB_THREADS = env_int("SPACEDUCK_WEB_THREADS", 2, minimum=1)
WEB_TIMEOUT = env_int("SPACEDUCK_WEB_TIMEOUT", 60, minimum=1)

# --- Long-term memory ------------------------------------------------------------
# These give the defaults; Settings > Memory in the dashboard can override the ones listed in
# spaceduck.core.runtime.SPECS, and every process re-reads those overrides this often.
SETTINGS_REFRESH_SECONDS = env_float("SPACEDUCK_SETTINGS_REFRESH_SECONDS", 2.0, minimum=0.0)
MEMORY_ENABLED = env_bool("SPACEDUCK_MEMORY_ENABLED", True)
# Off: recall is keyword-only (still filtered and multiplied).
RECALL_SEMANTIC = env_bool("SPACEDUCK_RECALL_SEMANTIC", True)
# Extra prompt-injection regexes (one per line, or separated by ";;").
INJECTION_PATTERNS = [
    p.strip()
    for p in env_str("SPACEDUCK_INJECTION_PATTERNS", "").replace(";;", "\n").splitlines()
    if p.strip()
]
TASK_MAX_MEMORY_WRITES = env_int("SPACEDUCK_TASK_MAX_MEMORY_WRITES", 10, minimum=0)
DEDUP_THRESHOLD = env_float("SPACEDUCK_DEDUP_THRESHOLD", 0.92, minimum=0.0)
TOPIC_THRESHOLD = env_float("SPACEDUCK_TOPIC_THRESHOLD", 0.60, minimum=0.0)
ACTIVE_CONFIDENCE = env_float("SPACEDUCK_ACTIVE_CONFIDENCE", 0.7, minimum=0.0)
EXTRACTION_RETRIES = env_int("SPACEDUCK_EXTRACTION_RETRIES", 3, minimum=0)
EXTRACTION_RETRY_DELAY = env_int("SPACEDUCK_EXTRACTION_RETRY_DELAY", 10, minimum=0)
# Staleness: a memory's decay halves every half-life (thread 30 days, global 90,
# project configurable) counted from when it was last seen. An active memory
# unseen for STALE_AFTER_DAYS whose decay is below STALE_DECAY_BELOW turns stale.
PROJECT_HALF_LIFE_DAYS = env_float("SPACEDUCK_PROJECT_HALF_LIFE_DAYS", 60.0, minimum=0.001)
STALE_AFTER_DAYS = env_float("SPACEDUCK_STALE_AFTER_DAYS", 60.0, minimum=0.0)
STALE_DECAY_BELOW = env_float("SPACEDUCK_STALE_DECAY_BELOW", 0.5, minimum=0.0)
if STALE_DECAY_BELOW > 1:
    raise ImproperlyConfigured(
        f"SPACEDUCK_STALE_DECAY_BELOW={STALE_DECAY_BELOW!r} must be between 0 and 1 "
        "(0 never marks anything stale)."
    )
STALE_EVERY_MINUTES = env_int("SPACEDUCK_STALE_EVERY_MINUTES", 60, minimum=1)
if STALE_EVERY_MINUTES > 60:
    raise ImproperlyConfigured(
        f"SPACEDUCK_STALE_EVERY_MINUTES={STALE_EVERY_MINUTES!r} must be between 1 and 60."
    )
# Context building (POST /api/context): default token budgets for the memory
# block and for the history. A thread whose live history (latest summary + the
# messages after it) passes 85% of the history budget gets its older part
# summarised by the periodic compaction (non-destructive: no message is deleted).
CONTEXT_MEMORY_BUDGET = env_int("SPACEDUCK_CONTEXT_MEMORY_BUDGET", 2000, minimum=0)
CONTEXT_HISTORY_BUDGET = env_int("SPACEDUCK_CONTEXT_HISTORY_BUDGET", 4000, minimum=1)
CONVERSATION_COMPACTION = env_bool("SPACEDUCK_CONVERSATION_COMPACTION", True)

# --- Maintenance ---------------------------------------------------------------
TTL_GC_EVERY_MINUTES = env_int("SPACEDUCK_TTL_GC_EVERY_MINUTES", 5, minimum=1)
COMPACTION_EVERY_MINUTES = env_int("SPACEDUCK_COMPACTION_EVERY_MINUTES", 60, minimum=1)
# Merging the keyword index's segments (memories.store.keyword_index.merge_segments).
KEYWORD_MERGE_EVERY_MINUTES = env_int("SPACEDUCK_KEYWORD_MERGE_EVERY_MINUTES", 30, minimum=1)
# PostgreSQL only: namespaces with at least this many memories are searched through
# pgvector's HNSW index (approximate, nothing cached per process); smaller ones through
# the in-process copy (memories.store.vector_index: int8 codes, then the best scored exactly).
# ef_search: candidates a query walks. Measured at 1M memories in one namespace (hash
# vectors of the bench's texts, 200 queries, k=20, share of the exact top 20 reached,
# ties counted): HNSW 0.877 at ef_search 100 (p50 8 / p95 10 ms), 0.909 at 200 (14 / 18),
# 0.935 at 400 (25 / 35); the copy 1.000 (17 / 26; numpy's exact scan 50 / 73). So the
# copy serves namespaces up to 1.5M (a 1M one holds ~2.2 GB per process, float32 + codes,
# within vector_index.MAX_CACHED_VECTORS with room for others); HNSW the larger ones.
VECTOR_INDEX_MIN_ROWS = env_int("SPACEDUCK_VECTOR_INDEX_MIN_ROWS", 1_500_000, minimum=1)
VECTOR_INDEX_EF_SEARCH = env_int("SPACEDUCK_VECTOR_INDEX_EF_SEARCH", 100, minimum=1)
# Destructive processors are off unless configured: summaries replace old
# messages, the token limit deletes them.
SUMMARIZER_ENABLED = env_bool("SPACEDUCK_SUMMARIZER_ENABLED", False)
THREAD_MAX_TOKENS = env_optional_int("SPACEDUCK_THREAD_MAX_TOKENS", minimum=0)

# --- Size limits -----------------------------------------------------------------
# Enforced by the services (API, Python API, CLI and admin alike; spaceduck.core.limits):
# over a limit is a 413 (or 422 where the schema declares it) and nothing is written.
# Extraction time grows with the message, so MAX_MESSAGE_BYTES also bounds a
# worker's time per message (~1 s at 64 KiB with the heuristic rules).
# Credentials in conversation (a message's content and provenance, a thread's title; the
# detectors of spaceduck.core.credentials) are replaced by "[redacted: <shape>]" before it
# is stored, so no page, API answer, export or context shows them. False keeps them as sent.
# Memories, notes and facts holding a credential are refused either way.
REDACT_SECRETS = env_bool("SPACEDUCK_REDACT_SECRETS", True)
MAX_REQUEST_BYTES = env_int("SPACEDUCK_MAX_REQUEST_BYTES", 1024 * 1024, minimum=1024)
MAX_MESSAGE_BYTES = env_int("SPACEDUCK_MAX_MESSAGE_BYTES", 64 * 1024, minimum=1)
MAX_NOTE_BODY_BYTES = env_int("SPACEDUCK_MAX_NOTE_BODY_BYTES", 64 * 1024, minimum=1)
MAX_FACT_VALUE_BYTES = env_int("SPACEDUCK_MAX_FACT_VALUE_BYTES", 64 * 1024, minimum=1)
# Memories are single statements: the gate rejects longer candidates (never cuts them).
MAX_MEMORY_CONTENT_CHARS = env_int("SPACEDUCK_MAX_MEMORY_CONTENT_CHARS", 1000, minimum=12)
MAX_MEMORY_TITLE_CHARS = env_int("SPACEDUCK_MAX_MEMORY_TITLE_CHARS", 200, minimum=1)
if MAX_MEMORY_TITLE_CHARS > 200:
    raise ImproperlyConfigured(
        f"SPACEDUCK_MAX_MEMORY_TITLE_CHARS={MAX_MEMORY_TITLE_CHARS!r} must be between 1 and 200 "
        "(the title column's size)."
    )
MAX_MEMORY_TAGS = env_int("SPACEDUCK_MAX_MEMORY_TAGS", 20, minimum=1)
# Django reads at most this much of a request body (RequestDataTooBig -> 413 in the API).
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES

# --- Auth / web ---------------------------------------------------------------
LOGIN_URL = "admin:login"  # spaceduck's login page (spaceduck.admin sets its template)
LOGIN_REDIRECT_URL = "/"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
TOKEN_LAST_USED_RESOLUTION_SECONDS = env_int("SPACEDUCK_TOKEN_TOUCH_SECONDS", 60, minimum=0)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise serves from the finders; this keeps it quiet
STATICFILES_DIRS = [BASE_DIR / "static", NINJA_DIR / "static"]
WHITENOISE_USE_FINDERS = True

# Logs go to the console (no log files): a service manager keeps them. Search text, query
# values, namespace ids in paths and e-mail addresses are replaced before a line is written
# (spaceduck.core.logs): on the handler, and on the loggers that write request paths, so the
# records themselves are clean for any other handler. gunicorn's access log: `serve`.
_REDACTED_LOGGER = {"filters": ["redact_urls"]}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact_urls": {"()": "spaceduck.core.logs.RedactUrls"}},
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["redact_urls"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("SPACEDUCK_LOG_LEVEL", "INFO")},
    "loggers": {
        "huey": {"level": "INFO", "propagate": False},
        "django.request": _REDACTED_LOGGER,
        "django.security.csrf": _REDACTED_LOGGER,
        # runserver's request lines ("GET /people/?q=... HTTP/1.1"), to the console.
        "django.server": {
            **_REDACTED_LOGGER,
            "handlers": ["console"],
            "level": "INFO",
            "propagate": False,
        },
    },
}
