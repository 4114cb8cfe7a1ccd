"""Find everything stored about a person: the namespaces and rows a string occurs in.

The dashboard's ``/people/`` page reads through here (staff only). Search is a plain
case-insensitive substring match (SQL ``LIKE``/``ILIKE``) over every field that stores
text: memories (content, title, summary, tags, context), their history (what an edit or
a status change recorded), facts (key, value, provenance), threads (title), messages
(content and provenance), notes (every text field) and extraction records (the
candidates they proposed and the errors of their attempts), in every namespace. The
keyword index is per namespace (its postings are keyed by namespace), so it cannot
answer "where, anywhere, is 'alice@example.com'", and a reviewer looking for a person's
data wants exact strings (an e-mail address, a name), not ranked stems. So this is a
scan, reported as a search-like page by ``bench pages``. Each kind is paged on its own
(newest first, ``PAGE`` rows), so one common word cannot hide the other kinds. The kinds
are the ones ``manage.py erase`` removes (``spaceduck.ops.erasure.KINDS``), so what is
found here is what an erase request is checked against.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Count, Q, QuerySet

from memories.models import Extraction, Fact, Memory, MemoryEvent, Message, Thread
from memories.store.selectors import has_control_characters
from notes.models import Note
from spaceduck.core.errors import InvalidInput
from spaceduck.core.limits import check_length
from spaceduck.ops.erasure import canonical, stored_counts

PAGE = 20
MAX_QUERY = 200
KINDS: tuple[str, ...] = (
    "memories",
    "facts",
    "threads",
    "messages",
    "notes",
    "extractions",
    "history",
)
MAX_NAMESPACES = 50  # namespaces listed for one query
EXCERPT = 240  # characters of a hit's text shown around the match


@dataclass(frozen=True)
class Hit:
    kind: str
    namespace: str
    key: str  # the row's id (memories, messages, notes, ...), the fact's key, the memory's id
    text: str
    thread_id: str = ""  # messages and threads: the thread they belong to
    field: str = ""  # the field that holds the query (search hits only)


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


@dataclass(frozen=True)
class Source:
    """One kind of row: where it is, which fields hold text, how a row becomes a hit."""

    rows: Callable[[], QuerySet[Any]]  # every row, newest first
    fields: tuple[str, ...]  # searched, in the order a hit names the one that matched
    namespace: str  # the lookup that gives a row's namespace
    hit: Callable[[Any, str, str], Hit]  # (row, the field matched, its text) -> Hit


def clean_query(text: str) -> str:
    query = " ".join(text.split())
    check_length(query, field="the search", limit=MAX_QUERY)
    # No stored text holds one (every write refuses them), and PostgreSQL refuses NUL
    # in a query parameter outright.
    if has_control_characters(query):
        raise InvalidInput("search text must not contain control characters")
    return query


def search(text: str, *, kind: str = "", page: int = 1) -> Found:
    """The rows of each kind that hold ``text``, and the namespaces named like it or
    holding such rows.

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
    kinds = (kind,) if kind else KINDS
    for name in kinds:
        found.kinds.append(_page(name, query, page))
    holding = {hit.namespace for kind_page in found.kinds for hit in kind_page.hits}
    # A kind whose rows all fit on the page names its namespaces already; one with more
    # (a common word) may hold the string in namespaces no shown row is from.
    for kind_page in found.kinds:
        if (kind_page.more or kind_page.page > 1) and len(holding) < MAX_NAMESPACES:
            holding |= _holding(kind_page.kind, query, holding)
    found.namespaces = sorted(set(namespaces_named(query)) | holding)[:MAX_NAMESPACES]
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
    source = _SOURCES[kind]
    rows = _matching(source.rows(), query, *source.fields)
    shown, more = _window(rows, page)
    return KindPage(kind, [_hit(source, row, query) for row in shown], page, more)


def _holding(kind: str, query: str, known: set[str]) -> set[str]:
    """Namespaces holding rows of ``kind`` that hold ``query``, beyond the ``known`` ones:
    a common word's first page shows a few namespaces, an erase request needs them all."""
    source = _SOURCES[kind]
    rows = _matching(source.rows(), query, *source.fields).exclude(
        **{f"{source.namespace}__in": list(known)}
    )
    names = rows.order_by().values_list(source.namespace, flat=True).distinct()
    return set(names[: MAX_NAMESPACES - len(known)])


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
    only ("Zoë" would miss "ZOË"), so the query's common casings are tried. A JSON column
    (a message's content and provenance, a fact's value, tags, candidates) is matched as
    its stored text (PostgreSQL: ``jsonb::text``), where quotes and backslashes are
    escaped and, on SQLite, non-ASCII characters too ("caf\\u00e9"; records written with
    ``ensure_ascii=False`` keep them as they are): each casing is also tried as its JSON
    escapes."""
    casings = {query}
    if not query.isascii():
        casings |= {query.lower(), query.upper(), query.title(), query.capitalize()}
    return casings | {json.dumps(form)[1:-1] for form in casings}


def _window(rows: QuerySet[Any], page: int) -> tuple[list[Any], bool]:
    """Page ``page`` of ``rows`` (PAGE of them) and whether another page follows."""
    start = (page - 1) * PAGE
    window = list(rows[start : start + PAGE + 1])
    return window[:PAGE], len(window) > PAGE


def _hit(source: Source, row: Any, query: str) -> Hit:
    """The hit naming the first field that holds ``query``, with the text around it."""
    texts = [(name, _text(_value(row, name))) for name in source.fields]
    folded = query.casefold()
    name, text = next(((name, text) for name, text in texts if folded in text.casefold()), texts[0])
    return source.hit(row, name, _excerpt(text, folded))


def _value(row: Any, path: str) -> Any:
    for part in path.split("__"):
        row = getattr(row, part)
    return row


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _excerpt(text: str, folded_query: str) -> str:
    """At most EXCERPT characters of ``text``, from a little before the match."""
    if len(text) <= EXCERPT:
        return text
    at = text.casefold().find(folded_query) if folded_query else -1
    start = max(0, at - EXCERPT // 4) if at > 0 else 0
    excerpt = text[start : start + EXCERPT]
    return ("…" if start else "") + excerpt + ("…" if start + EXCERPT < len(text) else "")


def _memories() -> QuerySet[Any]:
    return Memory.objects.only(
        "id", "namespace", "content", "title", "summary", "tags", "context"
    ).order_by("-id")


def _memory_hit(m: Any, name: str, text: str) -> Hit:
    return Hit("memories", m.namespace, str(m.pk), text, field=name)


def _fact_hit(f: Any, name: str, text: str) -> Hit:
    return Hit("facts", f.namespace, f.key, text, field=name)


def _thread_hit(t: Any, name: str, text: str) -> Hit:
    return Hit("threads", t.namespace, t.pk, text, thread_id=t.pk, field=name)


def _message_hit(m: Any, name: str, text: str) -> Hit:
    return Hit("messages", m.thread.namespace, m.client_id, text, thread_id=m.thread_id, field=name)


def _note_hit(n: Any, name: str, text: str) -> Hit:
    return Hit("notes", n.namespace, n.client_id, text, field=name)


def _extraction_hit(e: Any, name: str, text: str) -> Hit:
    return Hit("extractions", e.namespace, str(e.pk), text, thread_id=e.thread_id, field=name)


def _history_hit(e: Any, name: str, text: str) -> Hit:
    return Hit("history", e.namespace, str(e.memory_id), f"{e.event}: {text}", field=name)


_SOURCES: dict[str, Source] = {
    "memories": Source(
        _memories,
        ("content", "title", "summary", "tags", "context"),
        "namespace",
        _memory_hit,
    ),
    "facts": Source(
        lambda: Fact.objects.order_by("-updated_at", "-id"),
        ("value", "key", "provenance"),
        "namespace",
        _fact_hit,
    ),
    "threads": Source(
        lambda: Thread.objects.order_by("-updated_at", "-id"), ("title",), "namespace", _thread_hit
    ),
    "messages": Source(
        lambda: Message.objects.select_related("thread").order_by("-created_at", "-id"),
        ("content", "provenance"),
        "thread__namespace",
        _message_hit,
    ),
    "notes": Source(
        lambda: Note.objects.order_by("-id"),
        ("body", "uid", "kind", "tags", "author", "status_by", "provenance"),
        "namespace",
        _note_hit,
    ),
    "extractions": Source(
        lambda: Extraction.objects.order_by("-id"),
        ("candidates", "errors"),
        "namespace",
        _extraction_hit,
    ),
    "history": Source(
        lambda: MemoryEvent.objects.order_by("-id"),
        ("data", "reason"),
        "namespace",
        _history_hit,
    ),
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
    source = _SOURCES[kind]
    shown, more = _window(source.rows().filter(namespace=ns), page)
    # A fact's value is JSON, shown indented as on the facts page (a search hit keeps the
    # excerpt around the match on one line).
    text = _pretty if kind == "facts" else _text
    return KindPage(
        kind,
        [source.hit(row, "", text(_value(row, source.fields[0]))) for row in shown],
        page,
        more,
    )


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
