"""The memories keyword index on PostgreSQL: tsvectors with a GIN index, ranked by BM25.

SQLite's FTS5 triggers call the Python tokenizer (``spaceduck_terms``) on every
write; a PostgreSQL trigger cannot. So the work is split (migration 0019):

- **Triggers mark.** Every insert, delete and indexed-column update of a memory
  appends (namespace, memory id) to ``memories_fts_pending``, in the writer's own
  transaction: a change is never lost, and writers never wait on the index.
- **Readers catch up.** Before a namespace's index is read, ``flush`` indexes its
  pending memories with the same Python tokenizer SQLite uses
  (``spaceduck.core.fts.index_terms``), so every search sees every committed change. The
  periodic keyword task and ``flush_all`` do the same for namespaces nobody searches.

Why this is correct under READ COMMITTED: a flush first deletes the committed
pending rows it sees, then reads the memories' current rows, so what it indexes is
at least as new as every mark it removed; a mark committed later stays for the next
flush. Flushes of one namespace queue on an advisory lock, so a search waits for a
flush in progress instead of missing the rows it is writing. Writers only insert
pending rows and flushers only write the index, so neither waits for the other.

Each document is the namespace key + stem of every word (``namespaced_terms``'s
terms) with the term's frequency as its positions, so one namespace's query reads
only its own postings, as on SQLite. ``memories_fts_stats`` keeps each namespace's
document count and total length for BM25's IDF and length normalisation; FTS5
counts the whole table instead, the one difference in ranking (measured in
docs/architecture.md). ``memories_fts_lexemes`` keeps each lexeme's document count,
kept by triggers on ``memories_fts`` (migration 0025), so that leaving out words too
common to score (keyword_index) reads a number instead of a posting list
(``document_count``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence

from django.db import connection, transaction

from spaceduck.core.db.locks import lock_for_write
from spaceduck.core.fts import index_terms, namespace_key

# PostgreSQL's limits: a lexeme is at most 2,047 bytes and keeps at most 256 positions.
MAX_LEXEME_BYTES = 2046
MAX_POSITIONS = 256
BATCH = 1000  # memories indexed per statement when catching up or rebuilding

# FTS5's bm25() constants (k1, b).
K1 = 1.2
B = 0.75

# The memory's indexed columns, in FTS5's column order (keyword_index.COLUMNS).
COLUMNS = ("title", "content", "summary", "tags", "context")

_PENDING_SQL = "SELECT EXISTS (SELECT 1 FROM memories_fts_pending WHERE namespace = %s)"
_PENDING_COUNTS_SQL = (
    "SELECT namespace, count(*) FROM memories_fts_pending GROUP BY namespace ORDER BY namespace"
)
GROUP_PENDING = 5000  # marks claimed per transaction by a flush
_CLAIM_GROUP_SQL = (
    "DELETE FROM memories_fts_pending WHERE ctid = ANY(ARRAY(SELECT ctid "
    "FROM memories_fts_pending WHERE namespace = ANY(%s) LIMIT %s)) RETURNING memory_id"
)
_ROWS_SQL = (
    "SELECT id, namespace, "
    + ", ".join(f"{column}::text" for column in COLUMNS)
    + " FROM memories_memory WHERE id = ANY(%s)"
)
_REMOVE_SQL = "DELETE FROM memories_fts WHERE memory_id = ANY(%s) RETURNING namespace, length"
_INSERT_SQL = (
    "INSERT INTO memories_fts (memory_id, namespace, length, terms) "
    "SELECT id, ns, len, doc::tsvector "
    "FROM unnest(%s::bigint[], %s::text[], %s::int[], %s::text[]) AS t(id, ns, len, doc)"
)
_STATS_SQL = (
    "INSERT INTO memories_fts_stats AS s (namespace, documents, length) "
    "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) "
    "ON CONFLICT (namespace) DO UPDATE "
    "SET documents = s.documents + excluded.documents, length = s.length + excluded.length"
)
_ALL_IDS_SQL = "SELECT id FROM memories_memory WHERE id > %s ORDER BY id LIMIT %s"
_STATS_CHECK_SQL = """
SELECT coalesce(a.namespace, s.namespace), a.documents, a.length, s.documents, s.length
FROM (SELECT namespace, count(*) AS documents, sum(length) AS length
      FROM memories_fts GROUP BY namespace) AS a
FULL JOIN (SELECT * FROM memories_fts_stats WHERE documents <> 0 OR length <> 0) AS s
    USING (namespace)
WHERE a.documents IS DISTINCT FROM s.documents OR a.length IS DISTINCT FROM s.length
"""
_STALE_SQL = (
    "SELECT f.memory_id FROM memories_fts AS f "
    "JOIN unnest(%s::bigint[], %s::text[], %s::int[], %s::text[]) AS t(id, ns, len, doc) "
    "ON f.memory_id = t.id "
    "WHERE (f.namespace, f.length, f.terms) IS DISTINCT FROM (t.ns, t.len, t.doc::tsvector) "
    "ORDER BY f.memory_id"
)
_CLEAR_SQL = "TRUNCATE memories_fts, memories_fts_stats, memories_fts_pending"

COUNT_SQL = (
    "SELECT count(*) FROM (SELECT 1 FROM memories_fts "
    "WHERE terms @@ %s::tsquery LIMIT %s) AS matched"
)
# The most documents any of these lexemes is in (memories_fts_lexemes, migration 0025).
_LARGEST_SQL = "SELECT coalesce(max(documents), 0) FROM memories_fts_lexemes WHERE lexeme = ANY(%s)"
_LEXEMES_CHECK_SQL = """
SELECT coalesce(a.lexeme, s.lexeme), a.documents, s.documents
FROM (SELECT u.lexeme, count(*) AS documents FROM memories_fts
      CROSS JOIN LATERAL unnest(terms) AS u GROUP BY u.lexeme) AS a
FULL JOIN memories_fts_lexemes AS s ON s.lexeme = a.lexeme
WHERE a.documents IS DISTINCT FROM s.documents
ORDER BY 1
"""
INDEXED_IDS_SQL = "SELECT memory_id AS id FROM memories_fts"
MATCHING_SQL = (
    "SELECT memory_id FROM memories_fts WHERE namespace = %s AND terms @@ %s::tsquery "
    "ORDER BY memory_id"
)
# BM25 as FTS5 computes it (sqlite/ext/fts5/fts5_aux.c), over the documents that match
# any kept term (at most keyword_index.MAX_MATCHED_DOCS). Those are all the documents
# holding any of the terms, so counting them per term gives each term's exact
# document frequency; N and avgdl are the namespace's. The terms are summed in query
# order, as FTS5 does: the same answer to the last bit however the rows were laid out.
BM25_SQL = f"""
WITH q AS (
    SELECT term, prefix, i
    FROM unnest(%(terms)s::text[], %(prefixes)s::bool[]) WITH ORDINALITY AS q(term, prefix, i)
), docs AS (
    SELECT memory_id, length, terms FROM memories_fts
    WHERE namespace = %(namespace)s AND terms @@ %(query)s::tsquery
), hits AS (
    SELECT d.memory_id, d.length, q.i, sum(array_length(u.positions, 1)) AS tf
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.terms) AS u
    JOIN q ON u.lexeme = q.term OR (q.prefix AND starts_with(u.lexeme, q.term))
    GROUP BY d.memory_id, d.length, q.i
), df AS (
    SELECT i, count(*) AS n FROM hits GROUP BY i
), stats AS (
    SELECT greatest(documents, 1)::float8 AS n,
           greatest(length::float8 / greatest(documents, 1), 1.0) AS avgdl
    FROM memories_fts_stats WHERE namespace = %(namespace)s
)
SELECT h.memory_id,
       -sum(greatest(ln((s.n - df.n + 0.5) / (df.n + 0.5)), 1e-6)
            * h.tf * {K1 + 1} / (h.tf + {K1} * ({1 - B} + {B} * h.length / s.avgdl))
            ORDER BY h.i) AS score
FROM hits AS h JOIN df USING (i) CROSS JOIN stats AS s
GROUP BY h.memory_id
ORDER BY score, h.memory_id
LIMIT %(limit)s
"""


def lexeme(key: str, term: str) -> str:
    """One index term as a tsvector lexeme: the namespace key and the term, cut to fit."""
    raw = (key + term).encode("utf-8")
    if len(raw) <= MAX_LEXEME_BYTES:
        return key + term
    return raw[:MAX_LEXEME_BYTES].decode("utf-8", errors="ignore")


def query_term(key: str, term: str, *, prefix: bool) -> str:
    """One term of a tsquery: a quoted lexeme (index terms hold only letters and digits)."""
    return f"'{lexeme(key, term)}'" + (":*" if prefix else "")


_FREQUENCIES_SQL = "SELECT lexeme, documents FROM memories_fts_lexemes WHERE lexeme = ANY(%s)"
# The same, with a row of NULL lexeme when the namespace has memories waiting to be indexed.
_PENDING_FREQUENCIES_SQL = (
    _FREQUENCIES_SQL + " UNION ALL SELECT NULL, 0 WHERE EXISTS "
    "(SELECT 1 FROM memories_fts_pending WHERE namespace = %s)"
)


def phrase_counts(cursor: object, phrases: Sequence[str]) -> dict[str, int] | None:
    """How many documents hold each phrase (``query_term``s), read in one look-up from the
    lexemes' frequencies; None when a phrase is a prefix (only the index counts those)."""
    if any(phrase.endswith(":*") for phrase in phrases):
        return None
    lexemes = [phrase[1:-1] for phrase in phrases]
    found = dict(cursor.execute(_FREQUENCIES_SQL, [lexemes]).fetchall())  # type: ignore[attr-defined]
    return _by_phrase(phrases, lexemes, found)


def flushed_counts(namespace: str, phrases: Sequence[str]) -> dict[str, int] | None:
    """``flush`` the namespace, then ``phrase_counts``: one statement when nothing is
    pending (every search but the first after a write)."""
    if not phrases or any(phrase.endswith(":*") for phrase in phrases):
        flush(namespace)
        return None
    lexemes = [phrase[1:-1] for phrase in phrases]
    with connection.cursor() as cursor:
        found = dict(cursor.execute(_PENDING_FREQUENCIES_SQL, [lexemes, namespace]).fetchall())
    if None not in found:
        return _by_phrase(phrases, lexemes, found)
    _flush_group([namespace])
    with connection.cursor() as cursor:
        return phrase_counts(cursor, phrases)


def _by_phrase(
    phrases: Sequence[str], lexemes: Sequence[str], found: dict[str | None, int]
) -> dict[str, int]:
    return {p: int(found.get(lexeme, 0)) for p, lexeme in zip(phrases, lexemes, strict=True)}


def document_count(cursor: object, query: str, most: int) -> int:
    """How many documents match ``query`` (``query_term``s joined by " | "), counted up to
    ``most + 1``: the answer of COUNT_SQL with LIMIT ``most + 1``, without its cost.

    A GIN scan is a bitmap, built in full before LIMIT stops anything: counting through
    it reads every posting of every term, a million for a common word in a namespace of
    a million memories. So the terms' document frequencies are read first (one look-up in
    ``memories_fts_lexemes``): when one of them is in more than ``most`` documents, so is
    the query; when it is a single whole term, that is its count. Otherwise (several
    terms, each in at most ``most`` documents, or a prefix) the index counts them, reading
    at most ``most`` postings per whole term.
    """
    terms = query.split(" | ")
    whole = [term[1:-1] for term in terms if not term.endswith(":*")]
    if whole:
        largest = int(cursor.execute(_LARGEST_SQL, [whole]).fetchone()[0])  # type: ignore[attr-defined]
        if largest > most:
            return most + 1
        if len(terms) == 1:
            return largest
    return indexed_count(cursor, query, most)


def indexed_count(cursor: object, query: str, most: int) -> int:
    """``document_count`` through the index alone: for terms each known to be in at most
    ``most`` documents (a GIN count then reads at most ``most`` postings per term)."""
    row = cursor.execute(COUNT_SQL, [query, most + 1]).fetchone()  # type: ignore[attr-defined]
    return int(row[0])


def document(namespace: str, texts: Iterable[str | None]) -> tuple[int, str]:
    """(length, tsvector text) of a memory whose indexed columns are ``texts``.

    The length is the number of words, as FTS5 counts a document; each lexeme's
    positions are 1..its frequency, which is all BM25 reads from them.
    """
    key = namespace_key(namespace)
    counts: Counter[str] = Counter()
    length = 0
    for text in texts:
        terms = index_terms(text)
        length += len(terms)
        counts.update(lexeme(key, term) for term in terms)
    parts = [
        f"'{word}':" + ",".join(map(str, range(1, min(n, MAX_POSITIONS) + 1)))
        for word, n in counts.items()
    ]
    return length, " ".join(parts)


def flush(namespace: str) -> int:
    """Index the namespace's pending memories; returns how many memories were (re)indexed.

    One cheap query when nothing is pending, which is every search but the first
    after a write.
    """
    with connection.cursor() as cursor:
        if not cursor.execute(_PENDING_SQL, [namespace]).fetchone()[0]:
            return 0
    return _flush_group([namespace])


def flush_all() -> int:
    """Index every namespace's pending memories (the periodic task, checks, imports).

    Namespaces go in groups of about GROUP_PENDING marks, one transaction each, their
    locks taken in name order (as every flush takes them: no deadlock), so a bulk load
    into thousands of small namespaces does not pay a transaction per namespace; a
    namespace with more marks is claimed GROUP_PENDING at a time (``_flush_group``).
    """
    with connection.cursor() as cursor:
        counts = cursor.execute(_PENDING_COUNTS_SQL).fetchall()
    indexed, group, marks = 0, [], 0
    for namespace, count in counts:
        group.append(namespace)
        marks += count
        if marks >= GROUP_PENDING:
            indexed += _flush_group(group)
            group, marks = [], 0
    return indexed + (_flush_group(group) if group else 0)


def _flush_group(namespaces: list[str]) -> int:
    """Claim and index the namespaces' marks under their locks, taken in the given order.

    At most GROUP_PENDING marks a transaction: each indexing statement updates the
    document counts of its lexemes (migration 0025's triggers), and a transaction that
    updates the same rows hundreds of times walks ever longer chains of its own row
    versions. Measured, 1M memories of one namespace in one transaction: 37% indexed
    after 430 s, each statement slower than the last (without the counts: all in 57 s).
    """
    indexed = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            lock_for_write(*(_lock_key(ns) for ns in namespaces))
            claimed = cursor.execute(_CLAIM_GROUP_SQL, [namespaces, GROUP_PENDING]).fetchall()
            indexed += index_rows(sorted({int(row[0]) for row in claimed}))
        if len(claimed) < GROUP_PENDING:
            return indexed


def _lock_key(namespace: str) -> str:
    return f"keyword-index:{namespace}"


def index_rows(memory_ids: Sequence[int]) -> int:
    """(Re)index these memories from their current rows, removing those that are gone;
    returns how many documents were written."""
    written = 0
    for start in range(0, len(memory_ids), BATCH):
        written += _index_batch(sorted(memory_ids[start : start + BATCH]))
    return written


def _documents(cursor: object, ids: list[int]) -> list[tuple[int, str, int, str]]:
    """(id, namespace, length, tsvector text) of these memories, as their rows are now."""
    rows = cursor.execute(_ROWS_SQL, [ids]).fetchall()  # type: ignore[attr-defined]
    return [(memory_id, ns, *document(ns, texts)) for memory_id, ns, *texts in rows]


def _index_batch(ids: list[int]) -> int:
    delta: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    with transaction.atomic(), connection.cursor() as cursor:
        new = _documents(cursor, ids)
        _remove(cursor, ids, delta)
        for _, namespace, length, _ in new:
            delta[namespace][0] += 1
            delta[namespace][1] += length
        if new:
            cursor.execute(_INSERT_SQL, [list(column) for column in zip(*new, strict=True)])
        _add_stats(cursor, delta)
    return len(new)


def _add_stats(cursor: object, delta: dict[str, list[int]]) -> None:
    changed = sorted((ns, d, n) for ns, (d, n) in delta.items() if d or n)  # one lock order
    if changed:
        namespaces, documents, lengths = (list(column) for column in zip(*changed, strict=True))
        cursor.execute(_STATS_SQL, [namespaces, documents, lengths])  # type: ignore[attr-defined]


def _remove(cursor: object, ids: list[int], delta: dict[str, list[int]]) -> None:
    """Delete these ids' documents, counting what leaves each namespace into ``delta``."""
    for namespace, length in cursor.execute(_REMOVE_SQL, [ids]).fetchall():  # type: ignore[attr-defined]
        delta[namespace][0] -= 1
        delta[namespace][1] -= length


def delete_rows(memory_ids: Sequence[int]) -> None:
    """Remove these ids' documents (memories that are gone)."""
    delta: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    with transaction.atomic(), connection.cursor() as cursor:
        _remove(cursor, sorted(int(i) for i in memory_ids), delta)
        _add_stats(cursor, delta)


def rebuild() -> int:
    """Empty the index and index every memory again; returns how many were indexed."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_CLEAR_SQL)
        return sum(_index_batch(ids) for ids in _all_ids(cursor))


def _all_ids(cursor: object) -> Iterator[list[int]]:
    """Every memory id, ascending, BATCH at a time."""
    last = 0
    while ids := [row[0] for row in cursor.execute(_ALL_IDS_SQL, [last, BATCH]).fetchall()]:  # type: ignore[attr-defined]
        yield ids
        last = ids[-1]


def problems() -> list[str]:
    """What is inconsistent in the index once caught up: statistics that do not add up to
    the documents, and documents that differ from what their memory's row gives now.

    PostgreSQL's counterpart of FTS5's ``integrity-check`` (tests, and whoever suspects
    the index); missing and orphaned documents are integrity.find_problems' part.
    """
    flush_all()
    found: list[str] = []
    with connection.cursor() as cursor:
        for namespace, *counts in cursor.execute(_STATS_CHECK_SQL).fetchall():
            found.append(f"statistics of {namespace!r}: documents/length {counts}")
        for term, documents, counted in cursor.execute(_LEXEMES_CHECK_SQL).fetchall():
            found.append(f"lexeme {term!r}: in {documents} documents, counted {counted}")
        for ids in _all_ids(cursor):
            expected = _documents(cursor, ids)
            columns = [list(column) for column in zip(*expected, strict=True)] or [[]] * 4
            for (memory_id,) in cursor.execute(_STALE_SQL, columns).fetchall():
                found.append(f"memory {memory_id}: its document is stale")
    return found
