"""Huey tasks of the memories app: extraction after every message, periodic maintenance.

Every process imports this module at start-up (MemoriesConfig.ready registers the tasks),
so each task imports what it runs when it runs: the extraction pipeline, the write path
and numpy cost ~0.5 s of CPU that `manage.py help` or a web process that only enqueues
need not pay.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from huey import crontab
from huey.contrib.djhuey import db_periodic_task, db_task, lock_task

from spaceduck.core.queue import queued


@queued("extract_message")
@db_task()
def extract_message(extraction_id: int) -> None:
    """Run one attempt; on a provider failure schedule the next with backoff.

    Returns nothing: huey keeps a task's non-None result in its queue file until
    someone reads it, and the outcome lives on the Extraction record.
    """
    from memories.write.runner import retry_delay, run_extraction

    record = run_extraction(extraction_id)
    if record is None:
        return
    delay = retry_delay(record)
    if delay is not None and not settings.HUEY_IMMEDIATE:
        extract_message.schedule((extraction_id,), delay=delay)


@queued("reembed_index")
@db_task()
@lock_task("reembed")
def reembed_index(job_id: int) -> None:
    """Settings > Memory > Embeddings: every memory's vector from the new embedder, then the
    switch (memories.upkeep.reembed). One at a time: the lock keeps a second worker out."""
    from memories.upkeep.reembed import run_reembed

    run_reembed(job_id)


@db_periodic_task(crontab(minute=f"*/{settings.TTL_GC_EVERY_MINUTES}"))
@lock_task("ttl-gc")
def expire_facts() -> int:
    from memories.upkeep.compaction import run_ttl_gc

    return run_ttl_gc()


@db_periodic_task(crontab(minute=f"*/{settings.COMPACTION_EVERY_MINUTES}"))
@lock_task("compaction")
def compact_threads() -> dict[str, Any]:
    from memories.upkeep.compaction import run_compaction

    return run_compaction()


@db_periodic_task(crontab(minute=f"*/{settings.KEYWORD_MERGE_EVERY_MINUTES}"))
@lock_task("keyword-merge")
def merge_keyword_index() -> int:
    """Keep the keyword index quick to read: on SQLite merge its segments (fewer seeks a
    query), on PostgreSQL index the memories of namespaces nobody searched lately."""
    from memories.store import keyword_index

    return keyword_index.catch_up() + keyword_index.merge_segments()


@db_periodic_task(crontab(minute=f"*/{settings.KEYWORD_MERGE_EVERY_MINUTES}"))
@lock_task("vector-index")
def index_large_namespaces() -> bool:
    """PostgreSQL: build the HNSW index once a namespace is large enough to be searched
    through it (vector_index.ensure_index); a lock of its own: the build takes minutes."""
    from memories.store import vector_index

    return vector_index.ensure_index()


@db_periodic_task(crontab(minute=f"*/{settings.STALE_EVERY_MINUTES}"))
@lock_task("staleness")
def mark_stale_memories() -> int:
    """Active memories unseen for SPACEDUCK_STALE_AFTER_DAYS with decay below the threshold."""
    from memories.upkeep.staleness import mark_stale

    return mark_stale()
