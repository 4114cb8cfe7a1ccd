"""Hybrid recall: one implementation for the API, the context builder and the dashboard.

1. vector list: exact KNN over the namespace's vectors (vector_index.search),
   clamp(top_k x 3, 30, 200) candidates;
2. keyword list: FTS5 BM25 over title/content/summary/tags inside the
   namespace, clamp(top_k x 2, 20, 100) candidates, the query as literal text;
3. reciprocal rank fusion (k = 60) of the two lists, in Python;
4. multipliers: importance (0.7 + 0.3 x importance), confidence
   (0.6 + 0.4 x confidence), recency max(0.5, decay) with age from
   last_seen_at and a half-life per scope, scope boost (thread 1.5,
   project 1.2, global 1.0); superseded memories (only when asked for) x 0.1;
5. filters on the loaded rows: status, kinds, expiry, minimum confidence,
   scope context (other threads' and other projects' memories never come
   back), task isolation.

Each list runs as its own capped query; MATCH is never combined with joins or
filters in one WHERE (DESIGN: that can be orders of magnitude slower).
Every hit carries an explanation whose factors multiply to its score.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from memories import vector_index
from memories.models import Memory, MemoryStatus
from memories.staleness import decay, reactivate
from spaceduck.fts import MAX_TERMS, literal_terms
from spaceduck.providers import get_embedder

RRF_K = 60
SCOPE_BOOST = {"thread": 1.5, "project": 1.2, "global": 1.0}
SUPERSEDED_FACTOR = 0.1
RECENCY_FLOOR = 0.5
# The namespace column only restricts: weight 0 keeps it out of the BM25 score.
_FTS_SQL = (
    "SELECT rowid, bm25(memories_fts, 1.0, 1.0, 1.0, 1.0, 0.0) AS score FROM memories_fts "
    "WHERE memories_fts MATCH %s ORDER BY score LIMIT %s"
)


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


@dataclass
class RecallQuery:
    namespace: str
    text: str
    top_k: int = 10
    kinds: Sequence[str] | None = None
    statuses: Sequence[str] = (MemoryStatus.ACTIVE,)
    scopes: Sequence[str] | None = None
    thread_id: str | None = None
    project_id: str | None = None
    min_confidence: float = 0.35
    include_superseded: bool = False
    exclude_task_memories: bool = False
    source_task_id: str | None = None
    semantic: bool | None = None  # None: settings.RECALL_SEMANTIC
    now: datetime | None = None
    # For callers that already embedded ``text`` with the configured embedder
    # (benchmarks, batch jobs): used instead of embedding it again.
    vector: np.ndarray | None = None
    # Which ranked lists to fuse: "vector", "keyword" or both (evaluation, debugging).
    lists: Sequence[str] = ("vector", "keyword")


@dataclass
class Explanation:
    vector_rank: int | None = None
    cosine: float | None = None
    keyword_rank: int | None = None
    bm25: float | None = None
    rrf: float = 0.0
    importance: float = 1.0
    confidence: float = 1.0
    recency: float = 1.0
    scope: float = 1.0
    superseded: float = 1.0
    final: float = 0.0
    match_source: str = "hybrid"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class RecallHit:
    memory: Memory
    score: float
    match_source: str
    explanation: Explanation = field(repr=False)


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
_WORD = re.compile(r"\w+")
# Inflection endings stripped before a prefix match: "painting" also finds
# "paints" and "painted" (the FTS tokenizer does no stemming).
_SUFFIXES = ("ings", "ing", "ied", "ies", "ed", "es", "s")
MIN_STEM = 4


def keyword_terms(text: str) -> list[tuple[str, bool]]:
    """The query's words for the keyword list as (term, is_prefix), de-duplicated in order.

    Words are runs of letters/digits (so "Caroline's" is "caroline"), lower-cased;
    stopwords are dropped unless nothing else is left; a long word is matched as
    the prefix of its stem.
    """
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(" ".join(literal_terms(text)))))
    content = [w for w in words if w not in STOPWORDS]
    out: dict[tuple[str, bool], None] = {}
    for word in content or words:
        stem = word
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
                stem = word[: -len(suffix)]
                break
        out.setdefault((stem, stem != word), None)
    return list(out)[:MAX_TERMS]


def fts_expression(namespace: str, text: str) -> str | None:
    """OR of the query's keyword terms, restricted to the namespace's phrase.

    Every term is a quoted FTS5 string (never FTS syntax); stems end in `` *``.
    """
    terms = keyword_terms(text)
    if not terms:
        return None
    words = " OR ".join('"' + t.replace('"', '""') + '"' + (" *" if p else "") for t, p in terms)
    phrase = '"' + " ".join(literal_terms(namespace.replace(":", " "))).replace('"', '""') + '"'
    return f"namespace : {phrase} AND {{title content summary tags}} : ({words})"


def keyword_list(namespace: str, text: str, limit: int) -> list[tuple[int, float]]:
    expression = fts_expression(namespace, text)
    if expression is None:
        return []
    with connection.cursor() as cursor:
        rows = cursor.execute(_FTS_SQL, [expression, limit]).fetchall()
    return [(int(rowid), float(score)) for rowid, score in rows]


def vector_list(query: RecallQuery, limit: int) -> list[tuple[int, float]]:
    semantic = settings.RECALL_SEMANTIC if query.semantic is None else query.semantic
    if not semantic or "vector" not in query.lists:
        return []
    vector = get_embedder().embed([query.text])[0] if query.vector is None else query.vector
    return vector_index.search(query.namespace, vector, limit)


def _row_filter(query: RecallQuery, now: datetime) -> Q:
    statuses = {*query.statuses, MemoryStatus.STALE}  # stale: the fallback below
    if query.include_superseded:
        statuses.add(MemoryStatus.SUPERSEDED)
    where = Q(namespace=query.namespace, status__in=statuses)
    where &= Q(expires_at__isnull=True) | Q(expires_at__gt=now)
    where &= Q(confidence__gte=query.min_confidence)
    if query.kinds:
        where &= Q(kind__in=list(query.kinds))
    if query.scopes:
        where &= Q(scope__in=list(query.scopes))
    in_scope = Q(scope="global")
    if query.thread_id:
        in_scope |= Q(scope="thread", scope_id=query.thread_id)
    if query.project_id:
        in_scope |= Q(scope="project", scope_id=query.project_id)
    where &= in_scope
    if query.exclude_task_memories:
        where &= Q(source_task_id="")
    elif query.source_task_id:
        where &= Q(source_task_id="") | Q(source_task_id=query.source_task_id)
    return where


def _explain(
    memory: Memory,
    vector: dict[int, tuple[int, float]],
    keyword: dict[int, tuple[int, float]],
    now: datetime,
) -> Explanation:
    e = Explanation()
    if memory.pk in vector:
        e.vector_rank, e.cosine = vector[memory.pk][0], round(vector[memory.pk][1], 6)
        e.rrf += 1.0 / (RRF_K + e.vector_rank)
    if memory.pk in keyword:
        e.keyword_rank, e.bm25 = keyword[memory.pk][0], round(keyword[memory.pk][1], 6)
        e.rrf += 1.0 / (RRF_K + e.keyword_rank)
    e.match_source = (
        "hybrid"
        if memory.pk in vector and memory.pk in keyword
        else "vector"
        if memory.pk in vector
        else "fts"
    )
    e.importance = 0.7 + 0.3 * memory.importance
    e.confidence = 0.6 + 0.4 * memory.confidence
    e.recency = max(RECENCY_FLOOR, decay(memory.last_seen_at, memory.scope, now))
    e.scope = SCOPE_BOOST.get(memory.scope, 1.0)
    if memory.status == MemoryStatus.SUPERSEDED:
        e.superseded = SUPERSEDED_FACTOR
    e.final = e.rrf * e.importance * e.confidence * e.recency * e.scope * e.superseded
    return e


def _ranked(ids: list[tuple[int, float]]) -> dict[int, tuple[int, float]]:
    return {memory_id: (rank, score) for rank, (memory_id, score) in enumerate(ids, start=1)}


def recall(query: RecallQuery) -> list[RecallHit]:
    """The top_k memories for the query, best first, each with its explanation."""
    now = query.now or timezone.now()
    vector = _ranked(vector_list(query, clamp(query.top_k * 3, 30, 200)))
    keyword = _ranked(
        keyword_list(query.namespace, query.text, clamp(query.top_k * 2, 20, 100))
        if "keyword" in query.lists
        else []
    )
    rows = Memory.objects.filter(_row_filter(query, now), pk__in=set(vector) | set(keyword))
    hits = [
        RecallHit(m, e.final, e.match_source, e)
        for m in rows
        for e in [_explain(m, vector, keyword, now)]
    ]
    present = {hit.memory.pk for hit in hits}
    hits = [
        h
        for h in hits
        if not (h.memory.status == MemoryStatus.SUPERSEDED and h.memory.superseded_by_id in present)
    ]
    hits.sort(key=lambda h: (-h.score, -h.memory.pk))
    return _with_stale_fallback(hits, query.top_k)


def _with_stale_fallback(hits: list[RecallHit], top_k: int) -> list[RecallHit]:
    """Stale memories only fill the page when live ones run short; recalled ones revive."""
    live = [h for h in hits if h.memory.status != MemoryStatus.STALE]
    if len(live) >= top_k:
        return live[:top_k]
    stale = [h for h in hits if h.memory.status == MemoryStatus.STALE][: top_k - len(live)]
    for hit in stale:
        reactivate(hit.memory, actor="recall", reason="recalled while stale")
    return sorted(live + stale, key=lambda h: (-h.score, -h.memory.pk))
