"""Hybrid recall: one implementation for the API, the context builder and the dashboard.

1. vector list: exact KNN over the namespace's vectors (vector_index.search),
   clamp(top_k x 2, 20, 200) candidates;
2. keyword list: FTS5 BM25 over title/content/summary/tags inside the
   namespace (keyword_index: per-namespace postings; words too common to
   score cheaply are left out), clamp(top_k x 2, 20, 100) candidates, the
   query as literal text;
3. reciprocal rank fusion (k = 60) of the two lists, in Python;
4. multipliers: importance (0.7 + 0.3 x importance), confidence
   (0.6 + 0.4 x confidence), recency max(0.5, decay) with age from
   last_seen_at and a half-life per scope, scope boost (thread 1.5,
   project 1.2, global 1.0); superseded memories (only when asked for) x 0.1;
5. filters on the loaded rows: status, kinds, expiry (expires_at and
   valid_until), minimum confidence, scope context (other threads' and other
   projects' memories never come back), task isolation;
6. neighbour bonus (conversational context): a hit whose source message is
   the same as, or next to, another hit's source message in the same thread
   gets NEIGHBOUR_WEIGHT x that hit's fused score added to its own before the
   multipliers (a turn is often answered or continued by the next one);
7. second stage (memories.recall.rerank, on by default): the pool is widened with the
   memories written just before and after the best WIDEN_TOP candidates (same
   namespace, within WRITTEN_TOGETHER: an answer is often the turn after the one
   that matched; each enters with the neighbour bonus of the hit it was written
   beside), then every candidate is re-scored by a fitted model; its factor is
   ``second_stage`` in the explanation.

Each list runs as its own capped query; MATCH is never combined with joins or
filters in one WHERE (DESIGN: that can be orders of magnitude slower).
Every hit carries an explanation: (rrf + neighbour) times its multipliers (the
second stage's included) is its score.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from django.utils import timezone

from memories.models import Memory, MemoryStatus, lapsed
from memories.recall import rerank
from memories.store import keyword_index, vector_index
from memories.store.selectors import memory_rows, message_neighbours, written_around
from memories.upkeep.staleness import decays, reactivate
from spaceduck.core import runtime
from spaceduck.core.db.fast import ReadPlan, read_plan
from spaceduck.core.providers import get_embedder, query_vector

RRF_K = 60
SCOPE_BOOST = {"thread": 1.5, "project": 1.2, "global": 1.0}
SUPERSEDED_FACTOR = 0.1
RECENCY_FLOOR = 0.5
# Share of a neighbouring hit's fused score added to a hit (see _add_neighbour_bonus).
# Measured on LoCoMo (bench locomo): 0.1 helped recall@5 most; 0.25 and more hurt.
NEIGHBOUR_WEIGHT = 0.1
# Below this cosine, a hit with no keyword match is a weak match (RecallHit.weak).
# MiniLM puts unrelated sentences at 0.0-0.25 and paraphrases at 0.5 and more.
WEAK_COSINE = 0.3
# The second stage's pool also holds the memories written just before and after the
# best WIDEN_TOP candidates (an answer is often the turn after the one that matches the
# question's words); written within WRITTEN_TOGETHER of each other (occurred_at, or
# created_at when there is none), two memories are one conversation's neighbours.
WIDEN_TOP = 20
WRITTEN_TOGETHER = timedelta(hours=1)
# The lists' depth at least (top_k x 2 above that). Measured on LoCoMo after the second
# stage: vector 20 + keyword 20 is as good as 30 + 20 or 50 + 30, and 15 + 15 worse.
VECTOR_POOL = 20
KEYWORD_POOL = 20


def vector_depth(top_k: int) -> int:
    """How many memories the vector list brings to the fusion for ``top_k`` results."""
    return clamp(top_k * 2, VECTOR_POOL, 200)


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
    # Task isolation (see visible_task_ids): False and no source_task_id sees every
    # memory (the dashboard); None is an agent's default: an interactive caller
    # (no source_task_id) is given no memories written by scheduled tasks.
    exclude_task_memories: bool | None = False
    source_task_id: str | None = None
    semantic: bool | None = None  # None: Settings > Memory (SPACEDUCK_RECALL_SEMANTIC)
    now: datetime | None = None
    # For callers that already embedded ``text`` with the configured embedder
    # (benchmarks, batch jobs): used instead of embedding it again.
    vector: np.ndarray | None = None
    # Which ranked lists to fuse: "vector", "keyword" or both (evaluation, debugging).
    lists: Sequence[str] = ("vector", "keyword")
    # Re-score the fused candidates (memories.recall.rerank); off: the fusion's order alone.
    second_stage: bool = True
    # When the question is asked: what "last week" or "in October" is relative to
    # (None: now). A benchmark replaying old conversations sets it.
    asked_at: datetime | None = None


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
    # The second stage's multiplier (memories.recall.rerank) and the dates the query named.
    second_stage: float = 1.0
    dates: list[str] = field(default_factory=list)
    # Added to rrf: NEIGHBOUR_WEIGHT x the fused score of the hit neighbour_of.
    neighbour: float = 0.0
    neighbour_of: int | None = None
    final: float = 0.0
    match_source: str = "hybrid"
    # Where the second stage moved it: its rank among the candidates before and after the
    # stage (None when the stage is off), and the features it read, each with its value and
    # its part of the exponent (the fitted weight x the value), the non-zero ones.
    rank_before: int | None = None
    rank_after: int | None = None
    features: list[dict[str, float | str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @property
    def keyword_score(self) -> float | None:
        """BM25 as people expect it, higher for a better match (FTS5's ``bm25`` is lower)."""
        return None if self.bm25 is None else -self.bm25

    def product(self) -> float:
        """The score: the fused score plus the neighbour bonus, times every multiplier."""
        return (
            (self.rrf + self.neighbour)
            * self.importance
            * self.confidence
            * self.recency
            * self.scope
            * self.superseded
            * self.second_stage
        )


@dataclass
class RecallHit:
    memory: Memory
    score: float
    match_source: str
    explanation: Explanation = field(repr=False)

    @property
    def weak(self) -> bool:
        """Its only evidence is a distant vector neighbour: no query word matched and the
        cosine is below WEAK_COSINE. Vector search always returns *something*; people
        reviewing results should see such hits apart, not as answers."""
        e = self.explanation
        return e.keyword_rank is None and (e.cosine is None or e.cosine < WEAK_COSINE)


def keyword_list(namespace: str, text: str, limit: int) -> list[tuple[int, float]]:
    return keyword_index.search(namespace, keyword_index.keyword_terms(text), limit)


def vector_list(query: RecallQuery, limit: int) -> list[tuple[int, float]]:
    return _vector_scan(query, limit).hits


def _vector_scan(query: RecallQuery, limit: int) -> vector_index.Scan:
    """The vector list, with every memory's cosine kept (empty: semantic recall is off)."""
    semantic = runtime.recall_semantic() if query.semantic is None else query.semantic
    if not semantic or "vector" not in query.lists:
        return vector_index.Scan([])
    vector = query_vector(get_embedder(), query.text) if query.vector is None else query.vector
    try:
        return vector_index.scan(query.namespace, vector, limit)
    except vector_index.DimensionMismatch:
        if query.vector is not None:
            raise
    # The embedder was just switched (memories.upkeep.reembed) and this process had not yet read
    # it: read the settings now and embed the query again.
    runtime.forget_cached()
    vector = query_vector(get_embedder(), query.text)
    return vector_index.scan(query.namespace, vector, limit)


def visible_task_ids(
    *, source_task_id: str | None, exclude_task_memories: bool | None
) -> frozenset[str] | None:
    """Task isolation: the ``source_task_id`` values whose memories a caller is given
    (``""``: written outside any task); None: every memory. Recall and the context's
    constraints both obey it.

    - ``exclude_task_memories`` true: untasked memories only, task or not;
    - a task (``source_task_id``): its own memories and the untasked ones, never
      another task's (false does not open other tasks' memories to it);
    - no task: ``exclude_task_memories`` None, an agent's default, leaves out what
      scheduled tasks wrote (an interactive context is not fed a task's working
      notes); false asks for them too.
    """
    if exclude_task_memories:
        return frozenset({""})
    if source_task_id:
        return frozenset({"", source_task_id})
    if exclude_task_memories is None:
        return frozenset({""})
    return None


def _statuses(query: RecallQuery) -> set[str]:
    statuses = {*query.statuses, MemoryStatus.STALE}  # stale: the fallback below
    if query.include_superseded:
        statuses.add(MemoryStatus.SUPERSEDED)
    return statuses


def _admitted(
    memory: _Row,
    query: RecallQuery,
    statuses: set[str],
    tasks: frozenset[str] | None,
    now: datetime,
) -> bool:
    """The read filters, on a loaded candidate (the lists are at most 300 rows)."""
    if memory.namespace != query.namespace or memory.status not in statuses:
        return False
    if lapsed(memory, now):  # past expires_at or valid_until
        return False
    if memory.confidence < query.min_confidence:
        return False
    if (query.kinds and memory.kind not in query.kinds) or (
        query.scopes and memory.scope not in query.scopes
    ):
        return False
    if not _in_scope(memory, query):
        return False
    return tasks is None or memory.source_task_id in tasks


def _in_scope(memory: _Row, query: RecallQuery) -> bool:
    """Other threads' and other projects' memories never come back."""
    if memory.scope == "thread":
        return bool(query.thread_id) and memory.scope_id == query.thread_id
    if memory.scope == "project":
        return bool(query.project_id) and memory.scope_id == query.project_id
    return memory.scope == "global"


class _Row(NamedTuple):
    """The columns the filters and the multipliers read, for every candidate."""

    id: int
    namespace: str
    kind: str
    status: str
    scope: str
    scope_id: str
    source_task_id: str
    importance: float
    confidence: float
    expires_at: datetime | None
    valid_until: datetime | None
    last_seen_at: datetime
    superseded_by_id: int | None
    source_message_id: str | None
    occurred_at: datetime | None
    created_at: datetime


def _rows(ids: set[int]) -> tuple[list[_Row], dict[int, Sequence[object]]]:
    """The candidates by primary key, in one raw query: their filter and score
    columns, and each whole row (memory id -> row) to build the winners from.

    The lists hold up to 300 ids and only top_k of them are returned, so model
    instances are built for the winners only. Raw SQL because the ORM compiles
    a fresh statement per call (~1 ms here).
    """
    found = memory_rows(ids)
    pick = _row_picker(read_plan(Memory))
    rows = []
    for whole in found:
        # The plan returns datetimes as stored: naive UTC ISO text.
        values: tuple[Any, ...] = pick(whole)
        *head, expires, valid_until, seen, superseded_by, message, occurred, created = values
        rows.append(
            _Row._make(
                (
                    *head,
                    expires and _aware(expires),
                    valid_until and _aware(valid_until),
                    _aware(seen),
                    superseded_by,
                    message,
                    occurred and _aware(occurred),
                    _aware(created),
                )
            )
        )
    return rows, {row.id: whole for row, whole in zip(rows, found, strict=True)}


@lru_cache(maxsize=4)
def _row_picker(plan: ReadPlan) -> Callable[[Sequence[object]], tuple[object, ...]]:
    """_Row's fields out of a whole row (the read plan's columns), in _Row's order."""
    return itemgetter(*(plan.index(name) for name in _Row._fields))


def _aware(value: str | datetime) -> datetime:
    # Django keeps SQLite datetimes as naive UTC text; the ORM adds the zone on read.
    if isinstance(value, str):
        try:
            # Parsed with its zone: ~6x faster than parsing, then replace(tzinfo=UTC)
            # (~200 values a recall).
            return datetime.fromisoformat(value + "+00:00")
        except ValueError:  # text that carries its own offset
            value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


# Where a candidate came from (Explanation.match_source), by Scores.source.
SOURCES = ("hybrid", "vector", "fts", "neighbour")
_NEIGHBOUR = SOURCES.index("neighbour")


@dataclass
class Scores:
    """Every candidate's score parts, entry i of each array for candidate i: Explanation's
    fields as arrays, so scoring the pool makes no object per candidate; ``explanation``
    builds one for a hit returned."""

    vector_rank: npt.NDArray[np.int64]  # 0: not in the vector list
    cosine: npt.NDArray[np.float64]  # the vector list's cosine, NaN when not in it
    keyword_rank: npt.NDArray[np.int64]  # 0: not in the keyword list
    bm25: npt.NDArray[np.float64]  # NaN when not in the keyword list
    rrf: npt.NDArray[np.float64]
    neighbour: npt.NDArray[np.float64]
    neighbour_of: npt.NDArray[np.int64]  # the memory id whose rrf gave the bonus, -1: none
    importance: npt.NDArray[np.float64]
    confidence: npt.NDArray[np.float64]
    recency: npt.NDArray[np.float64]
    scope: npt.NDArray[np.float64]
    superseded: npt.NDArray[np.float64]
    second_stage: npt.NDArray[np.float64]
    source: npt.NDArray[np.int64]  # index in SOURCES

    @classmethod
    def of(
        cls,
        rows: Sequence[_Row],
        vector: dict[int, tuple[int, float]],
        keyword: dict[int, tuple[int, float]],
        now: datetime,
    ) -> Scores:
        """The first stage's parts of ``rows``: fused ranks and the multipliers."""
        none = (0, math.nan)
        in_vector = [vector.get(row.id, none) for row in rows]
        in_keyword = [keyword.get(row.id, none) for row in rows]
        vector_rank = np.array([rank for rank, _ in in_vector], dtype=np.int64)
        keyword_rank = np.array([rank for rank, _ in in_keyword], dtype=np.int64)
        rrf = _fused(vector_rank) + _fused(keyword_rank)
        found = (vector_rank > 0).astype(np.int64) * 2 + (keyword_rank > 0)
        return cls(
            vector_rank=vector_rank,
            cosine=np.array([cosine for _, cosine in in_vector], dtype=np.float64),
            keyword_rank=keyword_rank,
            bm25=np.array([bm25 for _, bm25 in in_keyword], dtype=np.float64),
            rrf=rrf,
            neighbour=np.zeros(len(rows)),
            neighbour_of=np.full(len(rows), -1, dtype=np.int64),
            importance=0.7 + 0.3 * np.array([row.importance for row in rows], dtype=np.float64),
            confidence=0.6 + 0.4 * np.array([row.confidence for row in rows], dtype=np.float64),
            recency=np.maximum(
                RECENCY_FLOOR,
                np.array(decays(((row.last_seen_at, row.scope) for row in rows), now)),
            ),
            scope=np.array([SCOPE_BOOST.get(row.scope, 1.0) for row in rows], dtype=np.float64),
            superseded=np.array(
                [
                    SUPERSEDED_FACTOR if row.status == MemoryStatus.SUPERSEDED else 1.0
                    for row in rows
                ],
                dtype=np.float64,
            ),
            second_stage=np.ones(len(rows)),
            # found by both lists (3): hybrid; by the vector list (2); by the keyword list (1)
            source=np.array([0, 2, 1, 0], dtype=np.int64)[found],
        )

    def final(self) -> npt.NDArray[np.float64]:
        """Every candidate's score, multiplied in Explanation.product's order (the same
        float for the same parts)."""
        return (
            (self.rrf + self.neighbour)
            * self.importance
            * self.confidence
            * self.recency
            * self.scope
            * self.superseded
            * self.second_stage
        )

    def take(self, at: npt.NDArray[np.int64]) -> Scores:
        """The candidates at positions ``at``, in that order."""
        return Scores(**{name: getattr(self, name)[at] for name in _SCORE_FIELDS})

    def extended(self, other: Scores) -> Scores:
        return Scores(
            **{
                name: np.concatenate([getattr(self, name), getattr(other, name)])
                for name in _SCORE_FIELDS
            }
        )

    def explanation(self, i: int, dates: list[str]) -> Explanation:
        """Candidate ``i``'s explanation."""
        e = Explanation(
            rrf=float(self.rrf[i]),
            importance=float(self.importance[i]),
            confidence=float(self.confidence[i]),
            recency=float(self.recency[i]),
            scope=float(self.scope[i]),
            superseded=float(self.superseded[i]),
            second_stage=float(self.second_stage[i]),
            dates=list(dates),
            neighbour=float(self.neighbour[i]),
            match_source=SOURCES[int(self.source[i])],
        )
        if self.vector_rank[i]:
            e.vector_rank, e.cosine = int(self.vector_rank[i]), round(float(self.cosine[i]), 6)
        if self.keyword_rank[i]:
            e.keyword_rank, e.bm25 = int(self.keyword_rank[i]), round(float(self.bm25[i]), 6)
        if self.neighbour_of[i] >= 0:
            e.neighbour_of = int(self.neighbour_of[i])
        e.final = e.product()
        return e


_SCORE_FIELDS = tuple(Scores.__dataclass_fields__)


def _fused(ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """Reciprocal rank fusion's part of one list: 1 / (RRF_K + rank), 0 when not in it."""
    return np.where(ranks > 0, 1.0 / (RRF_K + ranks), 0.0)


def _ranked(ids: list[tuple[int, float]]) -> dict[int, tuple[int, float]]:
    return {memory_id: (rank, score) for rank, (memory_id, score) in enumerate(ids, start=1)}


@dataclass
class Candidates:
    """The first stage's admitted candidates (fused, multiplied, neighbour bonus added):
    entry i of ``scores``' arrays is ``rows[i]``."""

    rows: list[_Row]
    scores: Scores
    whole: dict[int, Sequence[object]]  # memory id -> its whole row (read_plan order)
    now: datetime
    scan: vector_index.Scan = field(default_factory=lambda: vector_index.Scan([]))
    # memory id -> (previous, next) memory written together with it (see widen).
    adjacent: dict[int, tuple[int | None, int | None]] = field(default_factory=dict)
    # The read filters' statuses and visible tasks (first_stage's), for what widen adds.
    statuses: set[str] = field(default_factory=set)
    tasks: frozenset[str] | None = None
    dates: list[str] = field(default_factory=list)  # the dates the query named
    # The second stage's feature matrix (a row per candidate) and the weights it used.
    features: npt.NDArray[np.float64] | None = None
    weights: rerank.Weights | None = None

    @property
    def ids(self) -> npt.NDArray[np.int64]:
        return np.array([row.id for row in self.rows], dtype=np.int64)

    def ranked(self) -> npt.NDArray[np.int64]:
        """Positions best first: by score, ties by the newer memory (higher id)."""
        return np.lexsort((-self.ids, -self.scores.final()))


def recall(query: RecallQuery) -> list[RecallHit]:
    """The top_k memories for the query, best first, each with its explanation."""
    found = first_stage(query)
    if query.second_stage and found.rows:
        widen(query, found)
        _second_stage(query, found)
    chosen = _with_stale_fallback(found, query.top_k)
    plan = read_plan(Memory)
    hits = []
    moved = _ranks_moved(found)
    for i in chosen:
        e = found.scores.explanation(i, found.dates)
        if moved is not None:
            e.rank_before, e.rank_after = moved.before[i], moved.after[i]
            e.features = moved.features_of(i)
        row = found.whole[found.rows[i].id]
        hits.append(RecallHit(plan.instance(Memory, row), e.final, e.match_source, e))
    for hit in hits:
        if hit.memory.status == MemoryStatus.STALE:
            reactivate(hit.memory, actor="recall", reason="recalled while stale")
    return hits


def first_stage(query: RecallQuery) -> Candidates:
    """Both lists, fused and filtered, with the multipliers and the neighbour bonus."""
    now = query.now or timezone.now()
    scan = _vector_scan(query, vector_depth(query.top_k))
    vector = _ranked(scan.hits)
    keyword = _ranked(
        keyword_list(query.namespace, query.text, clamp(query.top_k * 2, KEYWORD_POOL, 100))
        if "keyword" in query.lists
        else []
    )
    statuses = _statuses(query)
    tasks = visible_task_ids(
        source_task_id=query.source_task_id, exclude_task_memories=query.exclude_task_memories
    )
    loaded, whole = _rows(set(vector) | set(keyword))
    admitted = [row for row in loaded if _admitted(row, query, statuses, tasks, now)]
    present = {row.id for row in admitted}
    rows = [
        row
        for row in admitted
        if not (row.status == MemoryStatus.SUPERSEDED and row.superseded_by_id in present)
    ]
    found = Candidates(rows, Scores.of(rows, vector, keyword, now), whole, now, scan)
    found.statuses, found.tasks = statuses, tasks
    _add_neighbour_bonus(found)
    return found


def widen(query: RecallQuery, found: Candidates, top: int = WIDEN_TOP) -> None:
    """Add to the pool the memories written together with its best WIDEN_TOP candidates,
    in place, and note each candidate's written-together neighbours (``adjacent``).

    A widened memory enters as a neighbour: its fused score is NEIGHBOUR_WEIGHT x the
    rrf of the candidate it was written beside, so its explanation still adds up. Only the
    best ``top`` get neighbours read (the others' cost ~1 ms at 100k for no measured gain
    on LoCoMo)."""
    best = found.ranked()[:top].tolist()
    around = written_around(found.rows[i].id for i in best)
    present = {row.id: row for row in found.rows}
    rows, whole = _rows(
        {i for pair in around.values() for i in pair if i is not None and i not in present}
    )
    found.whole.update(whole)
    loaded = {row.id: row for row in rows} | present
    found.adjacent = {
        i: (_beside(loaded, i, before), _beside(loaded, i, after))
        for i, (before, after) in around.items()
    }
    added: list[_Row] = []
    bonus: list[tuple[float, int]] = []  # (neighbour bonus, the candidate it came from)
    for i in best:
        row = found.rows[i]
        before, after = found.adjacent[row.id]
        for other, pair in ((before, (None, row.id)), (after, (row.id, None))):
            if other is None or other in found.adjacent or other in present:
                continue  # already a candidate (found by a list): listed once, as found
            new = loaded[other]
            if not _admitted(new, query, found.statuses, found.tasks, found.now) or (
                new.superseded_by_id is not None and new.superseded_by_id in found.adjacent
            ):
                continue  # as in the first stage: never beside its superseder
            added.append(new)
            bonus.append((NEIGHBOUR_WEIGHT * float(found.scores.rrf[i]), row.id))
            found.adjacent[other] = pair
    if added:
        scores = Scores.of(added, {}, {}, found.now)
        scores.source[:] = _NEIGHBOUR
        scores.neighbour[:] = [value for value, _ in bonus]
        scores.neighbour_of[:] = [of for _, of in bonus]
        found.rows += added
        found.scores = found.scores.extended(scores)


def _beside(loaded: dict[int, _Row], memory_id: int, other: int | None) -> int | None:
    """``other`` if it was written together with ``memory_id`` (WRITTEN_TOGETHER)."""
    if other is None or other not in loaded:
        return None
    here, there = loaded[memory_id], loaded[other]
    if here.occurred_at is not None and there.occurred_at is not None:
        a, b = here.occurred_at, there.occurred_at
    elif here.occurred_at is None and there.occurred_at is None:
        a, b = here.created_at, there.created_at
    else:
        return None  # one says when it happened, the other when it was written
    return other if abs(a - b) <= WRITTEN_TOGETHER else None


def _second_stage(query: RecallQuery, found: Candidates) -> None:
    """Multiply each candidate's score by the second stage's factor, in place."""
    fitted = rerank.weights()
    if fitted is None:
        return
    evidence, pool = rerank_inputs(query, found)
    found.dates = [r.text for r in evidence.ranges]
    found.features, found.weights = rerank.feature_matrix(evidence, pool), fitted
    multipliers = rerank.multipliers(evidence, pool, fitted, matrix=found.features)
    found.scores.second_stage = np.array(multipliers)


@dataclass
class _Moved:
    """What the second stage did: each candidate's rank (1 = best) before and after it, and
    the features it read with the weights it used."""

    before: list[int]
    after: list[int]
    matrix: npt.NDArray[np.float64]
    weights: npt.NDArray[np.float64]

    def features_of(self, i: int) -> list[dict[str, float | str]]:
        """Candidate ``i``'s non-zero features: name, value, weight x value."""
        return [
            {"name": name, "value": round(value, 6), "weighted": round(value * weight, 6)}
            for name, value, weight in zip(
                rerank.FEATURES, self.matrix[i].tolist(), self.weights.tolist(), strict=True
            )
            if value
        ]


def _ranks_moved(found: Candidates) -> _Moved | None:
    """None when the stage did not run. Before: the same order without its factor (ties
    by the newer id, as ``Candidates.ranked``)."""
    if found.features is None or found.weights is None:
        return None
    scores = found.scores
    before_scores = scores.final() / scores.second_stage  # the factor is exp(..) > 0
    before = _rank_of(np.lexsort((-found.ids, -before_scores)))
    return _Moved(before, _rank_of(found.ranked()), found.features, found.weights.vector())


def _rank_of(order: npt.NDArray[np.int64]) -> list[int]:
    ranks = [0] * len(order)
    for rank, position in enumerate(order.tolist(), start=1):
        ranks[position] = rank
    return ranks


def rerank_inputs(
    query: RecallQuery, found: Candidates
) -> tuple[rerank.QueryEvidence, rerank.Pool]:
    """What the second stage reads, for the recall above and for fitting its weights."""
    evidence = rerank.query_evidence(query.text, query.asked_at or found.now)
    whole, rows, scores = found.whole, found.rows, found.scores
    at = read_plan(Memory).index("content"), read_plan(Memory).index("context")
    cosine = _cosines(found)
    position = {row.id: i for i, row in enumerate(rows)}
    adjacent = [found.adjacent.get(row.id, (None, None)) for row in rows]
    listed = [round(c, 6) for c in scores.cosine.tolist()]  # as the explanation shows it
    return evidence, rerank.Pool(
        ids=found.ids,
        # NaN: no vector (neither the scan nor the vector list has it)
        cosine=np.array([cosine.get(row.id, c) for row, c in zip(rows, listed, strict=True)]),
        log_base=np.array([math.log(max(f, 1e-12)) for f in scores.final().tolist()]),
        vector_rank=scores.vector_rank,
        keyword_rank=scores.keyword_rank,
        occurred_at=[row.occurred_at for row in rows],
        content=[str(whole[row.id][at[0]] or "") for row in rows],
        context=[str(whole[row.id][at[1]] or "") for row in rows],
        before=[_text(whole, before, at[0]) for before, _ in adjacent],
        after=[_text(whole, after, at[0]) for _, after in adjacent],
        before_at=np.array([position.get(b, -1) if b else -1 for b, _ in adjacent], np.int64),
        before_cosine=np.array([cosine.get(b, 0.0) if b else 0.0 for b, _ in adjacent]),
        after_cosine=np.array([cosine.get(a, 0.0) if a else 0.0 for _, a in adjacent]),
        widened=scores.source == _NEIGHBOUR,
    )


def _cosines(found: Candidates) -> dict[int, float]:
    """The query's cosine with every candidate and its written-together neighbours."""
    ids = {i for pair in found.adjacent.values() for i in pair if i is not None}
    return found.scan.cosines(ids | {row.id for row in found.rows})


def _text(whole: dict[int, Sequence[object]], memory_id: int | None, at: int) -> str:
    return str(whole[memory_id][at] or "") if memory_id is not None else ""


def _add_neighbour_bonus(found: Candidates) -> None:
    """Add NEIGHBOUR_WEIGHT x the best neighbouring hit's rrf to each hit, in place.

    Neighbours are hits whose source messages are the same message or adjacent
    messages of one thread. Only hits already found by a list take part (no
    expansion); the bonus comes from the neighbour's own rrf, never from a bonus.
    """
    by_message: dict[str, list[int]] = {}
    for i, row in enumerate(found.rows):
        if row.source_message_id:
            by_message.setdefault(row.source_message_id, []).append(i)
    if len(by_message) < 2 and all(len(v) < 2 for v in by_message.values()):
        return  # nobody has a neighbour: skip the query
    neighbours = message_neighbours(set(by_message))
    rows, rrf = found.rows, found.scores.rrf.tolist()
    for message_id, here in by_message.items():
        around = list(here)
        for other in neighbours.get(message_id, (None, None)):
            around += by_message.get(other, []) if other else []
        for i in here:
            others = [j for j in around if rows[j].id != rows[i].id]
            if not others:
                continue
            best = max(others, key=lambda j: (rrf[j], -rows[j].id))
            found.scores.neighbour[i] = NEIGHBOUR_WEIGHT * rrf[best]
            found.scores.neighbour_of[i] = rows[best].id


def _with_stale_fallback(found: Candidates, top_k: int) -> list[int]:
    """The positions of the hits returned, best first. Stale memories only fill the page
    when live ones run short (recall revives them)."""
    order = found.ranked().tolist()
    stale = [found.rows[i].status == MemoryStatus.STALE for i in range(len(found.rows))]
    live = [i for i in order if not stale[i]]
    if len(live) >= top_k:
        return live[:top_k]
    chosen = set(live + [i for i in order if stale[i]][: top_k - len(live)])
    return [i for i in order if i in chosen]
