"""Find everything stored about a person: the namespaces and rows a string occurs in.

The dashboard's ``/people/`` page reads through here (staff only). Search is a plain
case-insensitive substring match (SQL ``LIKE``/``ILIKE``) over memories (title and
content), facts (key and value), messages and notes, in every namespace: the keyword
index is per namespace (its postings are keyed by namespace), so it cannot answer
"where, anywhere, is 'alice@example.com'", and a reviewer looking for a person's data
wants exact strings (an e-mail address, a name), not ranked stems. So this is a scan,
reported as a search-like page by ``bench pages``. Each kind is paged on its own
(newest first, ``PAGE`` rows), so one common word cannot hide the other kinds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Count, Q, QuerySet

from memories.models import Fact, Memory, Message, Thread
from notes.models import Note
from spaceduck.core.errors import InvalidInput
from spaceduck.ops.erasure import canonical, stored_counts

PAGE = 20
MAX_QUERY = 200
KINDS: tuple[str, ...] = ("memories", "facts", "messages", "notes")
MAX_NAMESPACES = 50  # namespaces listed for one query


@dataclass(frozen=True)
class Hit:
    kind: str
    namespace: str
    key: str  # the row's id (memories, messages, notes) or the fact's key
    text: str
    thread_id: str = ""  # messages: the thread they belong to


@dataclass
class KindPage:
    kind: str
    hits: list[Hit]
    page: int
    more: bool


@dataclass
class Found:
    query: str
    namespaces: list[str]
    kinds: list[KindPage] = field(default_factory=list)


def clean_query(text: str) -> str:
    query = " ".join(text.split())
    if len(query) > MAX_QUERY:
        raise InvalidInput(f"search for at most {MAX_QUERY} characters")
    return query


def search(text: str, *, kind: str = "", page: int = 1) -> Found:
    """The rows of each kind that hold ``text``, and the namespaces named like it or
    holding those rows.

    ``kind`` limits the rows to one kind (to page through it); ``page`` counts from 1.
    """
    query = clean_query(text)
    if kind and kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}")
    if page < 1:
        raise InvalidInput("page counts from 1")
    if not query:
        return Found(query, [])
    found = Found(query, [])
    for name in (kind,) if kind else KINDS:
        found.kinds.append(_page(name, query, page))
    # The namespaces named like the query, and those holding the rows found.
    holding = {hit.namespace for kind_page in found.kinds for hit in kind_page.hits}
    found.namespaces = sorted(set(namespaces_named(query)) | holding)
    return found


def namespaces_named(query: str) -> list[str]:
    """Namespaces whose name holds ``query`` (any case), from every table that has one."""
    names: set[str] = set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT namespace FROM memories_namespace_count "
            "WHERE n > 0 AND lower(namespace) LIKE %s ESCAPE '\\'",
            [f"%{_escape_like(query.lower())}%"],
        )
        names.update(row[0] for row in cursor.fetchall())
    for model in (Thread, Fact, Note):
        rows = model._default_manager.filter(namespace__icontains=query)  # type: ignore[attr-defined]
        names.update(rows.values_list("namespace", flat=True).distinct()[:MAX_NAMESPACES])
    return sorted(names)[:MAX_NAMESPACES]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _page(kind: str, query: str, page: int) -> KindPage:
    rows, to_hit = _SOURCES[kind](query)
    shown, more = _window(rows, page)
    return KindPage(kind, [to_hit(row) for row in shown], page, more)


def _matching(rows: QuerySet[Any], query: str, *fields: str) -> QuerySet[Any]:
    """Rows where any field holds ``query``; every row when the query is empty."""
    if not query:
        return rows
    match = Q()
    for name in fields:
        for form in _forms(query):
            match |= Q(**{f"{name}__icontains": form})
    return rows.filter(match)


def _forms(query: str) -> set[str]:
    """The query as stored text may hold it. SQLite's LIKE folds the case of ASCII letters
    only ("Zoë" would miss "ZOË"), and a JSON column (a message's content, a fact's value)
    is stored with non-ASCII characters escaped ("caf\u00e9"), so the query's common
    casings are tried, each also as JSON escapes."""
    if query.isascii():
        return {query}
    casings = {query, query.lower(), query.upper(), query.title(), query.capitalize()}
    return casings | {json.dumps(form)[1:-1] for form in casings}


def _window(rows: QuerySet[Any], page: int) -> tuple[list[Any], bool]:
    """Page ``page`` of ``rows`` (PAGE of them) and whether another page follows."""
    start = (page - 1) * PAGE
    window = list(rows[start : start + PAGE + 1])
    return window[:PAGE], len(window) > PAGE


def _memories(query: str) -> tuple[QuerySet[Any], Callable[[Any], Hit]]:
    rows = _matching(Memory.objects.all(), query, "content", "title")
    rows = rows.only("id", "namespace", "content").order_by("-id")
    return rows, lambda m: Hit("memories", m.namespace, str(m.pk), m.content)


def _facts(query: str) -> tuple[QuerySet[Any], Callable[[Any], Hit]]:
    rows = _matching(Fact.objects.all(), query, "key", "value")
    rows = rows.order_by("-updated_at", "-id")
    return rows, lambda f: Hit("facts", f.namespace, f.key, str(f.value))


def _messages(query: str) -> tuple[QuerySet[Any], Callable[[Any], Hit]]:
    rows = _matching(Message.objects.all(), query, "content").select_related("thread")
    rows = rows.order_by("-created_at", "-id")
    return rows, lambda m: Hit(
        "messages",
        m.thread.namespace,
        m.client_id,
        m.content if isinstance(m.content, str) else str(m.content),
        thread_id=m.thread_id,
    )


def _notes(query: str) -> tuple[QuerySet[Any], Callable[[Any], Hit]]:
    rows = _matching(Note.objects.all(), query, "body").order_by("-id")
    return rows, lambda n: Hit("notes", n.namespace, n.client_id, n.body)


_SOURCES: dict[str, Callable[[str], tuple[QuerySet[Any], Callable[[Any], Hit]]]] = {
    "memories": _memories,
    "facts": _facts,
    "messages": _messages,
    "notes": _notes,
}


@dataclass
class Person:
    """One namespace as the person page shows it: what it holds and its newest rows."""

    namespace: str
    counts: dict[str, int]
    recent: list[KindPage]


# A person's page lists threads rather than single messages: newest messages across a
# namespace's threads is a sort of every message it holds (36 ms at 10k messages), and a
# thread, with its title and size, is what a reviewer opens next.
PERSON_KINDS: tuple[str, ...] = ("memories", "facts", "threads", "notes")


def person(namespace: str, *, kind: str = "", page: int = 1) -> Person:
    ns = canonical(namespace)  # 422 for a malformed one
    if kind and kind not in PERSON_KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(PERSON_KINDS)}")
    if page < 1:
        raise InvalidInput("page counts from 1")
    counts = stored_counts(ns)
    recent = [_namespace_page(ns, name, page) for name in ((kind,) if kind else PERSON_KINDS)]
    return Person(ns, counts, recent)


def _thread_page(ns: str, page: int) -> KindPage:
    rows = Thread.objects.filter(namespace=ns).order_by("-updated_at", "-id")
    shown, more = _window(rows, page)
    # Sizes of the shown threads only: counting in the page's query would join and group
    # every message of the namespace before the LIMIT.
    sizes = dict(
        Message.objects.filter(thread__in=shown)
        .values_list("thread_id")
        .annotate(n=Count("id"))
        .values_list("thread_id", "n")
    )
    hits = [
        Hit(
            "threads",
            t.namespace,
            t.pk,
            f"{t.title or t.pk} ({_messages_label(sizes.get(t.pk, 0))})",
            t.pk,
        )
        for t in shown
    ]
    return KindPage("threads", hits, page, more)


def _messages_label(n: int) -> str:
    return "1 message" if n == 1 else f"{n} messages"


def _namespace_page(ns: str, kind: str, page: int) -> KindPage:
    if kind == "threads":
        return _thread_page(ns, page)
    rows, to_hit = _SOURCES[kind]("")
    rows = rows.filter(namespace=ns)
    shown, more = _window(rows, page)
    return KindPage(kind, [to_hit(row) for row in shown], page, more)
