"""The FTS5 keyword index of memories (the contentless table ``memories_fts``).

Layout (migration 0008): title, content, summary and tags are indexed with
every word stored as ``<namespace key><stem>`` (``spaceduck.core.fts.namespaced_terms``,
called by the triggers through the SQL function ``spaceduck_terms``; stems since
migration 0015, ``spaceduck.core.stemming``). So each
namespace has its own postings: a query never reads another namespace's
documents, and the document frequencies BM25 weighs terms by are the
namespace's own (one tenant's vocabulary never shifts another's ranking).

Cost model, measured at 100k memories in one namespace (2 cores): BM25 scores
every document that matches any query term, ~1.5 us each, so a word found in
90% of the namespace costs ~150 ms per query while adding almost nothing to the
ranking (its IDF is close to 0). ``search`` therefore first counts each term's
documents, a walk over its postings stopped at ``MAX_MATCHED_DOCS + 1``, and
keeps the rarest terms while their documents add up to at most
``MAX_MATCHED_DOCS``. A term more common than that is left to the vector list.
When all the terms together match few enough documents (the usual case in
namespaces of a few thousand memories) one count of their OR replaces the
per-term counts. On PostgreSQL a GIN count cannot stop early (it builds the whole
bitmap first), so the terms' counts are read from their document frequencies, all in
one look-up with the pending check (keyword_pg.flushed_counts; 1M memories in one
namespace), and when they add up to at most the bound the OR is not counted at all; the
terms kept are the same.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

from django.db import DatabaseError, connection, transaction

from memories.store import keyword_pg
from spaceduck.core.fts import MAX_TERMS, index_terms, index_words, namespace_key
from spaceduck.core.stemming import stem

# The most documents one keyword query may score: ~1.3 ms of BM25 here, well
# under the vector list's ~12 ms at 100k memories. Measured (bench recall at
# 100k, budgets alternated per query): p95 of recall 20.9 ms at 500 vs 23.1 at
# 1,000 and 26.0 at 2,000; LoCoMo hybrid recall@10 0.728 at 500, 0.727 at 1,000.
MAX_MATCHED_DOCS = 500

Term = tuple[str, bool]  # (index term, match as a prefix)

# Phrases found matching more than MAX_MATCHED_DOCS documents are remembered
# per process for COMMON_TTL seconds: a word that common stays common, and
# counting it again walks MAX_MATCHED_DOCS postings on every query (~1 ms of a
# 100k-memory recall). Smaller counts are never remembered, so a new memory is
# findable by its words at once.
COMMON_TTL = 300.0
COMMON_MAX = 10_000
_COMMON: OrderedDict[tuple[str, str], float] = OrderedDict()
_COMMON_LOCK = threading.Lock()

_COUNT_SQL = (
    "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH %s LIMIT %s)"
)
_MATCHING_SQL = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH %s ORDER BY rowid"
_BM25_SQL = (
    "SELECT rowid, bm25(memories_fts) AS score FROM memories_fts "
    "WHERE memories_fts MATCH %s ORDER BY score LIMIT %s"
)


# Function words that carry no topic: dropped from the keyword query (when
# anything else is left), so BM25 ranks on the words that matter and a question
# like "What did she say about the move?" does not match every row.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t d ll m re ve
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


def keyword_terms(text: str) -> list[tuple[str, bool]]:
    """The query's terms for the keyword list as (term, is_prefix), de-duplicated in order.

    Words are the keyword index's words (runs of letters/digits, case and
    diacritics folded, so "Caroline's" is "caroline" + "s"); stopwords are
    dropped unless nothing else is left; each word becomes its stem, as the index
    stores it (``spaceduck.core.stemming``): "painting" finds "paints" and "painted",
    "met" finds "meeting".

    Stems are matched exactly, never as prefixes: the stemmer already joins a word's
    inflections, while a stem's prefix matches unrelated words ("car" would find
    "card" and "career") and makes FTS5 read the postings of every term it starts.
    Recall queries are whole sentences, not words being typed, so an unfinished last
    word is not a case to serve.
    """
    words = list(dict.fromkeys(index_words(text)))
    content = [w for w in words if w not in STOPWORDS]
    terms = dict.fromkeys(stem(word) for word in content or words)
    return [(term, False) for term in terms][:MAX_TERMS]


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def phrase(namespace: str, word: str, *, prefix: bool = False) -> str:
    """One FTS5 phrase (on PostgreSQL, one tsquery term) for ``word`` in the namespace.

    ``word`` must be an index term (``spaceduck.core.fts.index_terms``, a stem): it is
    checked to be a single index word, which every stem is. It is not stemmed
    again (Snowball is not idempotent: "agreed" -> "agre" -> "agr").
    """
    if index_words(word) != [word]:
        raise ValueError(f"not a single index word: {word!r}")
    if _postgres():
        return keyword_pg.query_term(namespace_key(namespace), word, prefix=prefix)
    return f'"{namespace_key(namespace)}{word}"' + (" *" if prefix else "")


def _any(phrases: Sequence[str]) -> str:
    return (" | " if _postgres() else " OR ").join(phrases)


def search(namespace: str, terms: Sequence[Term], limit: int) -> list[tuple[int, float]]:
    """Memory ids of the namespace matching any of ``terms``, best BM25 first, as (id, bm25).

    Lower bm25 is better (FTS5's sign). Terms too common to score cheaply are
    skipped, see the module docstring.
    """
    if not terms or limit <= 0:
        return []
    phrases = {phrase(namespace, word, prefix=prefix): (word, prefix) for word, prefix in terms}
    # PostgreSQL: the pending memories indexed first, and each term's count read with it.
    each = keyword_pg.flushed_counts(namespace, list(phrases)) if _postgres() else None
    with connection.cursor() as cursor:
        kept = _selective(cursor, list(phrases), each)
        if not kept:
            return []
        if _postgres():
            query = keyword_pg.BM25_SQL, _bm25_params(namespace, kept, phrases, limit)
        else:
            query = _BM25_SQL, [_any(kept), limit]
        found = cursor.execute(*query).fetchall()
    return [(int(rowid), float(score)) for rowid, score in found]


def _bm25_params(
    namespace: str, kept: list[str], phrases: dict[str, Term], limit: int
) -> dict[str, object]:
    key = namespace_key(namespace)
    return {
        "terms": [keyword_pg.lexeme(key, phrases[text][0]) for text in kept],
        "prefixes": [phrases[text][1] for text in kept],
        "namespace": namespace,
        "query": _any(kept),
        "limit": limit,
    }


def _selective(cursor: object, phrases: list[str], each: dict[str, int] | None = None) -> list[str]:
    """The rarest phrases whose matching documents add up to at most MAX_MATCHED_DOCS.

    ``each``: every phrase's count, when known (PostgreSQL: the lexemes' frequencies);
    when they add up to at most the bound, so does their union: no index count."""
    phrases = [p for p in dict.fromkeys(phrases) if not _known_common(p)]
    if each is not None and sum(each[p] for p in phrases) <= MAX_MATCHED_DOCS:
        return phrases
    if len(phrases) > 1 and _union_fits(cursor, phrases, each):
        return phrases  # all of them fit: one count instead of one per phrase
    counted = sorted((each[p] if each is not None else _documents(cursor, p), p) for p in phrases)
    for count, text in counted:
        if count > MAX_MATCHED_DOCS:
            _remember_common(text)
    kept: list[str] = []
    total = 0
    for count, text in counted:
        if count == 0:
            continue
        if total + count > MAX_MATCHED_DOCS:
            break
        kept.append(text)
        total += count
    return kept


def _union_fits(cursor: object, phrases: list[str], each: dict[str, int] | None) -> bool:
    """Whether the documents matching any of ``phrases`` are at most MAX_MATCHED_DOCS; with
    every phrase's count known, one over the bound answers no, else only the index counts."""
    if each is None:
        return _documents(cursor, _any(phrases)) <= MAX_MATCHED_DOCS
    if max(each[p] for p in phrases) > MAX_MATCHED_DOCS:
        return False
    return keyword_pg.indexed_count(cursor, _any(phrases), MAX_MATCHED_DOCS) <= MAX_MATCHED_DOCS


def _common_key(text: str) -> tuple[str, str]:
    return str(connection.settings_dict["NAME"]), text


def _known_common(text: str) -> bool:
    seen = _COMMON.get(_common_key(text))
    return seen is not None and time.monotonic() - seen < COMMON_TTL


def _remember_common(text: str) -> None:
    with _COMMON_LOCK:
        _COMMON[_common_key(text)] = time.monotonic()
        _COMMON.move_to_end(_common_key(text))
        while len(_COMMON) > COMMON_MAX:
            _COMMON.popitem(last=False)


def forget_common() -> None:
    """Drop the remembered common phrases (tests, or after bulk deletes)."""
    with _COMMON_LOCK:
        _COMMON.clear()


def _documents(cursor: object, text: str) -> int:
    """How many documents match the phrase, counted up to MAX_MATCHED_DOCS + 1.

    On PostgreSQL from the terms' document frequencies where they decide it
    (keyword_pg.document_count: a GIN count walks every posting of a common word)."""
    if _postgres():
        return keyword_pg.document_count(cursor, text, MAX_MATCHED_DOCS)
    row = cursor.execute(_COUNT_SQL, [text, MAX_MATCHED_DOCS + 1]).fetchone()  # type: ignore[attr-defined]
    return int(row[0])


def matching_ids(namespace: str, text: str) -> list[int]:
    """Every memory id of the namespace whose index holds all of ``text``'s terms, ascending.

    For checks and tests: it does not skip common words and does not rank. Words are
    stemmed as the index stores them, so "kites" also finds a memory saying "kite".
    """
    terms = index_terms(text)
    if not terms:
        return []
    phrases = [phrase(namespace, term) for term in dict.fromkeys(terms)]
    with connection.cursor() as cursor:
        if _postgres():
            keyword_pg.flush(namespace)
            query = keyword_pg.MATCHING_SQL, [namespace, " & ".join(phrases)]
        else:
            query = _MATCHING_SQL, [" AND ".join(phrases)]
        rows = cursor.execute(*query).fetchall()
    return [int(row[0]) for row in rows]


# --- Counting and repairing the index (integrity checks, reindex, import) -------
# The indexed columns of migration 0009 (tests/memories/test_integrity.py checks
# that this matches the triggers). Each value goes through spaceduck_terms, as the
# triggers do, so a repaired row is exactly what the insert trigger would write.
COLUMNS = keyword_pg.COLUMNS
# One %_docsize row per indexed document (FTS5's shadow table; the index is
# contentless, so its rows cannot be read back, only counted by id).
_INDEXED_IDS_SQL = "SELECT id FROM memories_fts_docsize"
_TERMS = ", ".join(f"spaceduck_terms(namespace, {column})" for column in COLUMNS)
_INDEX_SQL = (
    f"INSERT INTO memories_fts(rowid, {', '.join(COLUMNS)}) "
    f"SELECT id, {_TERMS} FROM memories_memory WHERE id IN ({{ids}})"
)
_DELETE_ROW_SQL = "DELETE FROM memories_fts WHERE rowid = %s"
_DELETE_ALL_SQL = "INSERT INTO memories_fts(memories_fts) VALUES ('delete-all')"
_INDEX_ALL_SQL = (
    f"INSERT INTO memories_fts(rowid, {', '.join(COLUMNS)}) "
    f"SELECT id, {_TERMS} FROM memories_memory"
)


def indexed_ids_sql() -> str:
    """A query of the indexed memory ids (column ``id``), current once ``catch_up`` ran."""
    return keyword_pg.INDEXED_IDS_SQL if _postgres() else _INDEXED_IDS_SQL


def catch_up() -> int:
    """Bring the whole index up to date before reading it outside ``search``: nothing on
    SQLite, whose triggers index as they write; on PostgreSQL, index every pending memory
    (keyword_pg). Returns how many memories were indexed."""
    return keyword_pg.flush_all() if _postgres() else 0


def count_rows() -> int:
    """How many documents (memories) the keyword index holds."""
    catch_up()
    with connection.cursor() as cursor:
        sql = f"SELECT count(*) FROM ({indexed_ids_sql()}) AS indexed"
        return int(cursor.execute(sql).fetchone()[0])


def index_rows(memory_ids: Sequence[int]) -> int:
    """(Re)index these memories from their rows; returns how many were indexed.

    A memory already indexed is removed first, so this never duplicates a row.
    Call it inside the caller's transaction when the rows may change meanwhile.
    """
    ids = [int(memory_id) for memory_id in memory_ids]
    if not ids:
        return 0
    if _postgres():
        return keyword_pg.index_rows(ids)
    with connection.cursor() as cursor:
        cursor.executemany(_DELETE_ROW_SQL, [(memory_id,) for memory_id in ids])
        cursor.execute(_INDEX_SQL.format(ids=",".join(map(str, ids))))
        return max(cursor.rowcount, 0)


def delete_rows(memory_ids: Sequence[int]) -> None:
    """Remove these ids' documents from the index (for rows whose memory is gone)."""
    if _postgres():
        keyword_pg.delete_rows(memory_ids)
        return
    with connection.cursor() as cursor:
        cursor.executemany(_DELETE_ROW_SQL, [(int(memory_id),) for memory_id in memory_ids])


# FTS5 writes each transaction's documents as a new segment and merges them only in
# groups (automerge): a database written one message at a time keeps dozens of
# segments, and every term lookup seeks each of them. Measured on the bench recall
# database (100k memories + 100k in other namespaces, bulk-loaded in batches): the
# keyword list's document counts took 2.4 ms on average, 7 ms at p95, before merging.
# ``merge`` with a negative page count merges segments of every level, like
# ``optimize`` but in steps of MERGE_PAGES leaf pages, each its own short write.
MERGE_PAGES = 1000
_MERGE_SQL = "INSERT INTO memories_fts(memories_fts, rank) VALUES ('merge', %s)"


def merge_segments(max_steps: int = 10_000) -> int:
    """Merge the index's segments (the hourly maintenance task, and after an import);
    returns how many steps wrote something. Each step is one transaction of about
    MERGE_PAGES pages, so writers wait at most one step. Nothing to do off SQLite."""
    if connection.vendor != "sqlite":
        return 0
    steps = 0
    while steps < max_steps:
        with transaction.atomic(), connection.cursor() as cursor:
            raw = connection.connection
            before = raw.total_changes
            cursor.execute(_MERGE_SQL, [-MERGE_PAGES])
            # SQLite's documented test: fewer than 2 changes means nothing was merged.
            if raw.total_changes - before < 2:
                return steps
        steps += 1
    return steps


# The index is contentless (``contentless_delete=1``): deleting a document cannot remove
# its terms, whose text the index no longer has, so FTS5 marks it deleted and drops its
# entries when the segments holding them are merged. ``optimize`` merges them all into one
# segment at once. Measured on 100k synthetic documents of 25 terms (16 MB index): 0.15 s,
# nearly all of it rewriting the index; the index right after is exactly as a fresh build.
_OPTIMIZE_SQL = "INSERT INTO memories_fts(memories_fts) VALUES ('optimize')"


def purge_deleted() -> None:
    """Remove deleted memories' terms from the index now (``spaceduck.core.db.scrub``: after
    every delete and erase). PostgreSQL: index the pending marks, deletes among them, so no
    keyword row of a deleted memory is left to query."""
    if _postgres():
        keyword_pg.flush_all()
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_OPTIMIZE_SQL)


def problems() -> list[str]:
    """What the index's own consistency check finds ([] when it is sound): FTS5's
    ``integrity-check`` on SQLite, keyword_pg.problems on PostgreSQL."""
    if _postgres():
        return keyword_pg.problems()
    try:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
    except DatabaseError as exc:
        return [str(exc)]
    return []


def rebuild() -> int:
    """Empty the index and index every memory again; returns how many were indexed."""
    if _postgres():
        count = keyword_pg.rebuild()
        forget_common()
        return count
    with connection.cursor() as cursor:
        cursor.execute(_DELETE_ALL_SQL)
        cursor.execute(_INDEX_ALL_SQL)
        count = max(cursor.rowcount, 0)
    forget_common()
    return count
