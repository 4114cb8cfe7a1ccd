"""Switching the embedder from Settings > Memory while the service keeps answering.

``reembed_start`` checks the new provider/model/dimensions (a dimension the model cannot make
is refused with a message) and queues ``run_reembed`` in the worker. The worker embeds every
memory with the new embedder into a staging table (``memories_vec_staging``) beside the index
in use, which keeps serving recall and writes with the old embedder all along; the page shows
``done``/``total``. Vectors written meanwhile are found through the index's change log
(``vector_index.namespace_versions`` / ``changed_ids``) and embedded again.

The switch is one transaction that no other writer of vectors enters (SQLite's IMMEDIATE;
on PostgreSQL a lock on the vector table, ``vector_index.lock_writers``): the last
changes are embedded, the vec0 table is rebuilt from the staging rows at the new dimension
(which moves the index epoch, so every process reloads its cached vectors), the fingerprint
is recorded and the embedder settings change (``runtime.settings_update``, recorded). Other
processes pick the new embedder up within ``SETTINGS_REFRESH_SECONDS``; what they wrote in
that window with the old one is embedded again once it has passed (``_repair``), and a query
embedded with the old one is retried (``recall.vector_list``).

A failed job (provider error, worker stopped) leaves the index in use untouched; it can be
started again. ``manage.py reindex`` remains the offline way (service stopped).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.utils import timezone

from memories.models import Memory, ReembedJob
from memories.store import vector_index
from spaceduck.core import runtime
from spaceduck.core.errors import Conflict, InvalidInput
from spaceduck.core.providers import Embedder, embedder_for, get_embedder
from spaceduck.core.providers.embeddings.base import Fingerprint
from spaceduck.core.queue import enqueue
from spaceduck.models import VectorIndexState

logger = logging.getLogger(__name__)

BATCH = 64
CATCH_UP_PASSES = 3
# A running job whose row has not moved for this long is taken for dead (worker stopped).
STALE_AFTER = timedelta(minutes=5)
# What each OpenAI model can return (it shortens on request, never lengthens).
OPENAI_MAX_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
LOCAL_DIMENSIONS = 384
HASH_DIMENSIONS = (8, 4096)

_STAGING_DROP = f"DROP TABLE IF EXISTS {vector_index.STAGING_TABLE}"
_STAGING_DELETE = f"DELETE FROM {vector_index.STAGING_TABLE} WHERE memory_id = %s"
_STAGING_ROWS = (
    f"SELECT s.memory_id, m.namespace, s.embedding FROM {vector_index.STAGING_TABLE} AS s "
    "JOIN memories_memory AS m ON m.id = s.memory_id"
)


# --- Starting -----------------------------------------------------------------------------


def _conf(provider: str, model: str, dimensions: int | None) -> tuple[tuple[str, object], ...]:
    conf = {
        **settings.SPACEDUCK_EMBEDDINGS,
        "provider": provider,
        "model": model or None,
        "dimensions": dimensions,
    }
    return tuple(sorted(conf.items()))


def target_embedder(*, provider: str, model: str, dimensions: int | None) -> Embedder:
    """The embedder a switch would use; InvalidInput says why it cannot be built."""
    model = (model or "").strip()
    _check_shape(provider, model, dimensions)
    try:
        return embedder_for(_conf(provider, model, dimensions))
    except ImproperlyConfigured as exc:
        raise InvalidInput(str(exc)) from None


def _check_shape(provider: str, model: str, dimensions: int | None) -> None:
    if provider not in settings.EMBEDDING_PROVIDERS:
        raise InvalidInput(
            f"unknown embedding provider {provider!r}; one of "
            f"{', '.join(settings.EMBEDDING_PROVIDERS)}"
        )
    if provider == "local":
        if dimensions not in (None, LOCAL_DIMENSIONS):
            raise InvalidInput(
                f"the local model (all-MiniLM-L6-v2) makes {LOCAL_DIMENSIONS}-dimensional "
                f"vectors; {dimensions} does not fit it"
            )
    elif provider == "hash":
        low, high = HASH_DIMENSIONS
        if model:
            raise InvalidInput("the hash provider has no model to choose; leave the model empty")
        if dimensions is None or not low <= dimensions <= high:
            raise InvalidInput(f"the hash provider needs dimensions from {low} to {high}")
    else:
        settings_conf = settings.SPACEDUCK_EMBEDDINGS
        if not (settings_conf.get("base_url") or settings_conf.get("api_key")):
            raise InvalidInput(
                "the openai provider needs SPACEDUCK_EMBEDDING_BASE_URL or "
                "SPACEDUCK_EMBEDDING_API_KEY in the environment (keys are not set from a page)"
            )
        if not model or dimensions is None:
            raise InvalidInput("the openai provider needs a model name and its dimensions")
        most = OPENAI_MAX_DIMENSIONS.get(model)
        if most is not None and dimensions > most:
            raise InvalidInput(
                f"{model} returns at most {most} dimensions; {dimensions} does not fit it"
            )


def active_job() -> ReembedJob | None:
    return ReembedJob.objects.filter(
        status__in=[ReembedJob.Status.QUEUED, ReembedJob.Status.RUNNING]
    ).first()


def latest_job() -> ReembedJob | None:
    return ReembedJob.objects.first()


def reembed_start(*, provider: str, model: str, dimensions: int | None, actor: str) -> ReembedJob:
    """Queue a re-embedding to the given embedder (InvalidInput: it does not fit; Conflict:
    one is running, or the index already uses it)."""
    target = target_embedder(provider=provider, model=model, dimensions=dimensions).fingerprint
    with transaction.atomic():
        running = active_job()
        if running is not None and running.updated_at > timezone.now() - STALE_AFTER:
            raise Conflict(
                f"a re-embedding is already under way (job {running.pk}: "
                f"{running.done} of {running.total} memories)"
            )
        if running is not None:
            _fail(running, "abandoned: no progress for 5 minutes (was the worker stopped?)")
        if target == get_embedder().fingerprint:
            raise Conflict(f"the index already uses {target}")
        job = ReembedJob.objects.create(
            provider=target.provider,
            model=(model or "").strip(),
            dimensions=target.dimensions,
            started_by=actor,
        )
        transaction.on_commit(lambda: enqueue("reembed_index", job.pk))
    return job


# --- Running ------------------------------------------------------------------------------


def run_reembed(job_id: int) -> ReembedJob | None:
    """The whole job in the worker; None when it was not queued (already taken or gone)."""
    taken = ReembedJob.objects.filter(pk=job_id, status=ReembedJob.Status.QUEUED).update(
        status=ReembedJob.Status.RUNNING, updated_at=timezone.now()
    )
    if not taken:
        return None
    job = ReembedJob.objects.get(pk=job_id)
    embedder = embedder_for(_conf(job.provider, job.model, job.dimensions))
    try:
        versions = _build(job, embedder)
        versions = _switch(job, embedder, versions)
    except Exception as exc:  # any failure: the index in use was never touched
        logger.exception("re-embedding job %s failed", job.pk)
        _drop_staging()
        _fail(job, str(exc)[:2000] or type(exc).__name__)
        return job
    _drop_staging()
    _repair(embedder, versions)
    return job


def _fail(job: ReembedJob, error: str) -> None:
    job.status, job.error = ReembedJob.Status.FAILED, error
    job.save(update_fields=["status", "error", "updated_at"])


def _build(job: ReembedJob, embedder: Embedder) -> dict[str, int]:
    """Every memory's new vector into the staging table; the vector counters it is current
    with (the change log says what to embed again)."""
    with connection.cursor() as cursor:
        vector_index.create_staging(cursor)
    versions = vector_index.namespace_versions()
    job.total = Memory.objects.count()
    job.save(update_fields=["total", "updated_at"])
    after = 0
    while batch := list(Memory.objects.filter(pk__gt=after).order_by("pk")[:BATCH]):
        _stage(embedder, batch)
        after = batch[-1].pk
        job.done += len(batch)
        job.save(update_fields=["done", "updated_at"])
    for _ in range(CATCH_UP_PASSES):
        versions, changed = _changed_since(versions)
        if not changed:
            break
        _stage_ids(embedder, changed)
    return versions


def _switch(job: ReembedJob, embedder: Embedder, versions: dict[str, int]) -> dict[str, int]:
    target = embedder.fingerprint
    with transaction.atomic():
        with connection.cursor() as cursor:
            vector_index.lock_writers(cursor)  # nothing written between the catch-up and the swap
        _, changed = _changed_since(versions)
        _stage_ids(embedder, changed)
        with connection.cursor() as cursor:
            vector_index.replace_from(cursor, _STAGING_ROWS, target.dimensions)
        _record_fingerprint(target)
        runtime.settings_update(
            values={
                "embedding_provider": target.provider,
                "embedding_model": job.model,
                "embedding_dimensions": target.dimensions,
            },
            actor=job.started_by,
            switching_embedder=True,
        )
        job.status, job.switched_at = ReembedJob.Status.DONE, timezone.now()
        job.done = job.total = Memory.objects.count()
        job.save(update_fields=["status", "switched_at", "done", "total", "updated_at"])
        after = vector_index.namespace_versions()
    vector_index.cache_clear()
    return after


def _record_fingerprint(target: Fingerprint) -> None:
    VectorIndexState.objects.update_or_create(
        name=vector_index.INDEX_NAME,
        defaults={
            "provider": target.provider,
            "model": target.model,
            "dimensions": target.dimensions,
            "target_provider": "",
            "target_model": "",
            "target_dimensions": None,
            "resume_after_id": 0,
        },
    )


def _repair(embedder: Embedder, versions: dict[str, int]) -> None:
    """Once every process has had time to read the new settings, embed again what was
    written right after the switch, possibly with the old embedder."""
    time.sleep(2 * float(settings.SETTINGS_REFRESH_SECONDS) + 0.5)
    _, changed = _changed_since(versions)
    memories = list(Memory.objects.filter(pk__in=changed))
    for start in range(0, len(memories), BATCH):
        batch = memories[start : start + BATCH]
        vectors = embedder.embed([_text(m) for m in batch])
        with transaction.atomic():
            vector_index.upsert((m.pk, m.namespace, v) for m, v in zip(batch, vectors, strict=True))


def _changed_since(versions: dict[str, int]) -> tuple[dict[str, int], set[int]]:
    now = vector_index.namespace_versions()
    changed: set[int] = set()
    for namespace, until in now.items():
        since = versions.get(namespace, 0)
        if until <= since:
            continue
        ids = vector_index.changed_ids(namespace, since, until)
        if ids is None:  # the log was pruned past ``since``: take the whole namespace
            ids = set(Memory.objects.filter(namespace=namespace).values_list("pk", flat=True))
        changed |= ids
    return now, changed


def _text(memory: Memory) -> str:
    from memories.write.services import embedding_text

    return embedding_text(memory)


def _stage(embedder: Embedder, memories: list[Memory]) -> None:
    vectors = embedder.embed([_text(m) for m in memories])
    with transaction.atomic(), connection.cursor() as cursor:
        vector_index.put_staging(cursor, zip((m.pk for m in memories), vectors, strict=True))


def _stage_ids(embedder: Embedder, ids: Iterable[int]) -> None:
    wanted = sorted(ids)
    for start in range(0, len(wanted), BATCH):
        chunk = wanted[start : start + BATCH]
        found = list(Memory.objects.filter(pk__in=chunk))
        gone = set(chunk) - {m.pk for m in found}
        if found:
            _stage(embedder, found)
        if gone:
            with connection.cursor() as cursor:
                cursor.executemany(_STAGING_DELETE, [(i,) for i in gone])


def _drop_staging() -> None:
    with connection.cursor() as cursor:
        cursor.execute(_STAGING_DROP)
