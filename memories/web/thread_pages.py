"""Read queries of the dashboard's thread pages: threads by latest activity, one thread's
messages with their compaction summaries and extraction records.

The JSON API's thread reads (memories.store.selectors.list_threads, list_messages) stay
where they are; this module adds what a person browsing needs on top: pages,
counts and what happened to each message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, QuerySet

from memories.models import Extraction, Message, MessageRole, Thread
from memories.store.positions import TextPosition
from memories.store.selectors import get_thread, list_messages
from memories.upkeep.compaction import SUMMARY_MARKER, is_summary
from memories.write.extraction_log import extractions_by_message

THREAD_PAGE_SIZE = 50
MESSAGE_PAGE_SIZE = 100

# --- Threads, the most recently active first ------------------------------------------------


@dataclass
class ThreadPage:
    threads: list[Thread]  # each with ``message_count``
    older: TextPosition | None
    newer: TextPosition | None


def _threads(namespace: str) -> QuerySet[Thread]:
    threads = Thread.objects.all()
    return threads.filter(namespace=namespace) if namespace else threads


def thread_page(
    *,
    namespace: str = "",
    after: TextPosition | None = None,
    before: TextPosition | None = None,
    size: int = THREAD_PAGE_SIZE,
) -> ThreadPage:
    """One page of threads (of one namespace, or all), the latest activity first."""
    threads = _threads(namespace)
    if before is not None:
        rows = list(
            threads.filter(before.newer("updated_at")).order_by("updated_at", "id")[: size + 1]
        )
        page = rows[:size][::-1]
        older = TextPosition.of(page[-1], "updated_at") if page else None
        newer = TextPosition.of(page[0], "updated_at") if page and len(rows) > size else None
    else:
        if after is not None:
            threads = threads.filter(after.older("updated_at"))
        rows = list(threads.order_by("-updated_at", "-id")[: size + 1])
        page = rows[:size]
        older = TextPosition.of(page[-1], "updated_at") if len(rows) > size else None
        newer = TextPosition.of(page[0], "updated_at") if after is not None and page else None
    counts = dict(
        Message.objects.filter(thread_id__in=[t.pk for t in page])
        .order_by()
        .values_list("thread_id")
        .annotate(n=Count("id"))
        .values_list("thread_id", "n")
    )
    for thread in page:
        thread.message_count = counts.get(thread.pk, 0)  # type: ignore[attr-defined]
    return ThreadPage(page, older, newer)


def thread_count(*, namespace: str = "") -> int:
    return _threads(namespace).count()


def thread_namespaces(*, limit: int = 100) -> list[str]:
    """Namespaces holding threads, for the filter's suggestions."""
    rows = Thread.objects.order_by("namespace").values_list("namespace", flat=True).distinct()
    return list(rows[:limit])


# --- One thread ------------------------------------------------------------------------------


@dataclass
class MessageRow:
    message: Message
    text: str  # the content as a person reads it: text, or indented JSON
    is_json: bool
    summary: dict[str, Any] | None  # the compaction marker when this is a summary
    extraction: Extraction | None  # its newest extraction record
    extracted: bool  # whether messages like it are extracted at all (system ones are not)


@dataclass
class ThreadMessages:
    thread: Thread
    rows: list[MessageRow]
    older: str | None  # "before" cursor (a message id) for the older page, if any
    newer: str | None  # "after" cursor for the newer page, if any
    total: int


def display_content(content: Any) -> tuple[str, bool]:
    if isinstance(content, str):
        return content, False
    return json.dumps(content, ensure_ascii=False, indent=2), True


def _summary(message: Message) -> dict[str, Any] | None:
    if not is_summary(message):
        return None
    marker = (message.provenance or {}).get(SUMMARY_MARKER)
    return marker if isinstance(marker, dict) else {}


def thread_messages(
    *,
    thread_id: str,
    before: str | None = None,
    after: str | None = None,
    size: int = MESSAGE_PAGE_SIZE,
) -> ThreadMessages:
    """A page of the thread's messages in reading order: the newest ``size`` by default,
    else those just before (older than) or after (newer than) a message id of the thread.

    NotFound for an unknown thread; InvalidInput for a cursor that is not one of its messages.
    """
    thread = get_thread(thread_id)
    rows = list_messages(thread.pk, limit=size + 1, before=before, after=after)
    if after is not None:
        more_newer, more_older = len(rows) > size, True
        rows = rows[:size]
    else:
        more_older, more_newer = len(rows) > size, before is not None
        rows = rows[-size:]
    records = extractions_by_message([m.pk for m in rows])
    page = []
    for message in rows:
        text, is_json = display_content(message.content)
        page.append(
            MessageRow(
                message=message,
                text=text,
                is_json=is_json,
                summary=_summary(message),
                extraction=records.get(message.pk),
                extracted=message.role != MessageRole.SYSTEM,
            )
        )
    older = (rows[0].pk if rows else before or after) if more_older else None
    newer = (rows[-1].pk if rows else after or before) if more_newer else None
    total = Message.objects.filter(thread=thread).count()
    return ThreadMessages(thread, page, older, newer, total)
