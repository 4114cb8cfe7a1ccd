"""Huey tasks of the memories app: periodic maintenance."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from huey import crontab
from huey.contrib.djhuey import db_periodic_task, lock_task

from memories.compaction import run_compaction, run_ttl_gc


@db_periodic_task(crontab(minute=f"*/{settings.TTL_GC_EVERY_MINUTES}"))
@lock_task("ttl-gc")
def expire_facts() -> int:
    return run_ttl_gc()


@db_periodic_task(crontab(minute=f"*/{settings.COMPACTION_EVERY_MINUTES}"))
@lock_task("compaction")
def compact_threads() -> dict[str, Any]:
    return run_compaction()
