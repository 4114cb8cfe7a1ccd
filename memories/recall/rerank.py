"""Recall's second stage: re-score the candidates with more evidence than two ranks.

The first stage (memories.recall.hybrid) fuses a vector list and a keyword list by their
ranks. On LoCoMo most missed evidence was already among the candidates and lost in
the fusion (a turn at vector rank 5 with no keyword hit fused to rank 36), or was the
turn written just after a candidate (the answer after the question that matched:
``recall.widen`` adds those to the pool). This stage looks at each candidate's own
values and words, and at the memories written just before and after it:

- ``log_base``: the first stage's score (rrf + neighbour, times the multipliers), as a log;
- ``cosine``: the query's cosine (the stored vector's; without vectors, an upper bound
  below the vector list's last cosine);
- ``in_keyword``: whether the keyword list had it (its BM25 value is left out: FTS5's
  statistics shift after deletes and re-inserts, and an imported copy must give the
  same answers as the database it came from; the rank is in ``keyword_rr``);
- ``coverage`` / ``context_coverage``: the share of the query's content words (stemmed,
  as the keyword index stores them) found in the memory's content, or only in its context;
- ``rare_coverage``: like ``coverage``, each query word weighted by how few candidates
  hold it (``term_rarity``);
- ``date``: how well ``occurred_at`` fits a date the query names (memories.recall.dates);
- ``vector_rr`` / ``keyword_rr``: 1 / (1 + rank) in each list (0 when absent);
- ``same_day``: the share of the other candidates that occurred on the same day (a
  conversation's turns about one topic cluster in one session);
- ``speaker`` / ``subject``: the memory is a turn ("Name: ...") said by a name the
  query holds / by its first name (whom the question is about);
- ``before_coverage`` / ``after_coverage``: the rarity-weighted share of the query's
  words found only in the memory written just before / after it;
- ``before_cosine`` / ``after_cosine``: their cosines with the query;
- ``before_score``: the first-stage score of the memory written before it, as a share
  of the best candidate's (0 when it is not a candidate);
- ``widened``: it joined the pool as such a neighbour, not from a list;
- ``asks``: the share of its sentences that are questions (rarely the answer);
- ``answers``: ``before_score`` when the memory before it asks (the answer to a
  question that matched).

The score is ``w_base * log_base + w . features``, a listwise model (a softmax over
each question's candidates) fitted on part of the LoCoMo dev conversations and
validated on the rest (``manage.py bench locomo --fit``, see
spaceduck/ops/benchmarks/locomo.py); the weights ship in ``rerank.json`` beside this
module. In the explanation the stage is one multiplier,
``second_stage = exp(score - log_base - c)`` with ``c`` the same for every candidate of
a query (the best gets about 1), so the score is still the product of the parts shown
and the order is the model's.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memories.extraction.sentences import split_sentences
from memories.recall.dates import date_match, query_dates
from memories.store import keyword_index
from spaceduck.core.fts import index_terms

WEIGHTS_FILE = Path(__file__).with_name("rerank.json")
FEATURES = (
    "cosine",
    "in_keyword",
    "coverage",
    "context_coverage",
    "rare_coverage",
    "date",
    "vector_rr",
    "keyword_rr",
    "same_day",
    "speaker",
    "subject",
    "before_coverage",
    "after_coverage",
    "before_cosine",
    "after_cosine",
    "before_score",
    "widened",
    "asks",
    "answers",
)
# A capitalised word that is not the first of a sentence: a name ("Caroline", "Paris").
_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
# Who says it: a leading "Name:" (a transcript turn), after an optional "[date]".
_SPEAKER = re.compile(r"^(?:\[[^\]]*\]\s*)?([A-Z][\w.-]{1,40}):")
# A trailing bracketed note (a shared photo's caption).
_CAPTION = re.compile(r"\s*\[[^\]]*\]\s*$")
# exp(-600) is still above 0: a factor never underflows, whatever the weights.
_MIN_EXPONENT = -600.0


@dataclass(frozen=True)
class Weights:
    base: float
    features: dict[str, float]
    fitted_on: list[str] = field(default_factory=list)
    validated_on: list[str] = field(default_factory=list)

    def vector(self) -> np.ndarray:
        return np.array([self.features.get(name, 0.0) for name in FEATURES])


@lru_cache(maxsize=1)
def weights() -> Weights | None:
    """The shipped weights, or None when the file is missing (the stage is then off)."""
    if not WEIGHTS_FILE.is_file():
        return None
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    return Weights(
        base=float(data["base"]),
        features={k: float(v) for k, v in data["features"].items()},
        fitted_on=list(data.get("fitted_on", [])),
        validated_on=list(data.get("validated_on", [])),
    )


@dataclass
class QueryEvidence:
    """What the second stage reads from the query, computed once per recall."""

    terms: frozenset[str]  # content words, as the keyword index stores them
    names: frozenset[str]  # capitalised words, as index words
    ranges: Sequence[Any]  # memories.recall.dates.DateRange values
    subject: str | None = None  # the first name: whom the question is about


@dataclass
class Pool:
    """Every candidate as the second stage sees it: entry i of each field is candidate i
    (arrays, and lists for the texts), so the features are computed over the whole pool at
    once instead of one Python object per candidate."""

    ids: npt.NDArray[np.int64]
    cosine: npt.NDArray[np.float64]  # the query's cosine; NaN: the memory has no vector
    log_base: npt.NDArray[np.float64]
    vector_rank: npt.NDArray[np.int64]  # rank in the vector list, 0: not in it
    keyword_rank: npt.NDArray[np.int64]  # rank in the keyword list, 0: not in it
    occurred_at: list[datetime | None]
    content: list[str]
    context: list[str]
    # The memories written just before and after it (memories.recall.hybrid.widen): texts,
    # cosines with the query, and where the one before sits in the pool (-1: not in it);
    # and whether it joined the pool as such a neighbour.
    before: list[str]
    after: list[str]
    before_at: npt.NDArray[np.int64]
    before_cosine: npt.NDArray[np.float64]
    after_cosine: npt.NDArray[np.float64]
    widened: npt.NDArray[np.bool_]

    @property
    def size(self) -> int:
        return int(self.ids.size)


def query_evidence(text: str, now: datetime) -> QueryEvidence:
    terms = frozenset(term for term, _ in keyword_index.keyword_terms(text))
    names = [w for name in _NAME.findall(text) for w in index_terms(name)]
    subject = names[0] if names else None
    return QueryEvidence(terms, frozenset(names), query_dates(text, now), subject)


@lru_cache(maxsize=65_536)
def _words(text: str) -> frozenset[str]:
    return frozenset(index_terms(text))


@lru_cache(maxsize=65_536)
def _speaker(content: str) -> str | None:
    match = _SPEAKER.match(content)
    terms = index_terms(match[1]) if match else []
    return terms[0] if len(terms) == 1 else None


@lru_cache(maxsize=65_536)
def _asks(text: str) -> float:
    """The share of its sentences that are questions: a memory that asks is rarely the
    answer, while the one written after a question that matched often is."""
    if "?" not in text:
        return 0.0  # most memories: no need to split them
    sentences = split_sentences(_CAPTION.sub("", text))
    return sum(s.endswith("?") for s in sentences) / len(sentences) if sentences else 0.0


def term_rarity(terms: Sequence[str], holds: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """log(1 + n / df) of each query term over the candidates' content (``holds``: which
    candidate holds which term): a word only a few of them hold tells more about which one
    is meant (an IDF over the pool, which costs nothing more than the words already read)."""
    n, counts = holds.shape[0], holds.sum(axis=0).tolist()
    return np.array([math.log(1 + n / (1 + df)) for df in counts[: len(terms)]])


def _holds(terms: Sequence[str], texts: Sequence[str]) -> npt.NDArray[np.bool_]:
    """(texts, terms): whether each text holds each query term, as the index stores it."""
    holds = np.zeros((len(texts), len(terms)), dtype=bool)
    for row, text in enumerate(texts):
        if text:
            words = _words(text)
            holds[row] = [term in words for term in terms]
    return holds


def feature_matrix(query: QueryEvidence, pool: Pool) -> npt.NDArray[np.float64]:
    """Every candidate's FEATURES, one row each, computed column by column over the pool."""
    n = pool.size
    if not n:
        return np.zeros((0, len(FEATURES)))
    terms = sorted(query.terms)
    content, context = _holds(terms, pool.content), _holds(terms, pool.context)
    rarity = term_rarity(terms, content)
    total = float(rarity.sum())

    def share(holds: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
        """The rarity-weighted share of the query's terms each candidate holds."""
        return (holds * rarity).sum(axis=1) / total if total else np.zeros(n)

    known = content | context  # what the neighbours' words are not counted for
    listed = ~np.isnan(pool.cosine) & (pool.vector_rank > 0)
    floor = float(pool.cosine[listed].min()) if listed.any() else 0.0
    share_of_best = np.exp(pool.log_base - pool.log_base.max())
    before = pool.before_at >= 0
    before_score = np.where(before, share_of_best[np.where(before, pool.before_at, 0)], 0.0)
    asks = np.array([_asks(text) for text in pool.content])
    speakers = [_speaker(text) for text in pool.content]
    columns = {
        "cosine": np.where(np.isnan(pool.cosine), floor - 0.05, pool.cosine),
        "in_keyword": (pool.keyword_rank > 0).astype(float),
        "coverage": content.sum(axis=1) / len(terms) if terms else np.zeros(n),
        "context_coverage": (context & ~content).sum(axis=1) / len(terms) if terms else np.zeros(n),
        "rare_coverage": share(content),
        "date": np.array([date_match(query.ranges, at) for at in pool.occurred_at])
        if query.ranges
        else np.zeros(n),
        "vector_rr": _reciprocal_ranks(pool.vector_rank),
        "keyword_rr": _reciprocal_ranks(pool.keyword_rank),
        "same_day": _same_day(pool.occurred_at),
        "speaker": np.array([s is not None and s in query.names for s in speakers], dtype=float),
        "subject": np.array([s is not None and s == query.subject for s in speakers], dtype=float),
        "before_coverage": share(_holds(terms, pool.before) & ~known),
        "after_coverage": share(_holds(terms, pool.after) & ~known),
        "before_cosine": pool.before_cosine,
        "after_cosine": pool.after_cosine,
        "before_score": before_score,
        "widened": pool.widened.astype(float),
        "asks": asks,
        "answers": before_score * np.array([_asks(text) for text in pool.before]),
    }
    return np.column_stack([columns[name] for name in FEATURES]).astype(np.float64)


def _reciprocal_ranks(ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """1 / (1 + rank) in a list, 0 for the candidates it did not hold (rank 0)."""
    return np.where(ranks > 0, 1.0 / (1 + ranks), 0.0)


def _same_day(occurred: Sequence[datetime | None]) -> npt.NDArray[np.float64]:
    """The share of the other candidates that occurred on each one's day (0 without a date)."""
    days = Counter(at.date() for at in occurred if at is not None)
    others = max(1, len(occurred) - 1)
    return np.array([(days[at.date()] - 1) / others if at else 0.0 for at in occurred])


def multipliers(
    query: QueryEvidence,
    pool: Pool,
    fitted: Weights,
    matrix: npt.NDArray[np.float64] | None = None,
) -> list[float]:
    """Each candidate's second-stage multiplier, exp(score - log_base - c); ``matrix`` is
    the pool's feature_matrix when the caller has it already (recall keeps it to explain)."""
    if not pool.size:
        return []
    features = feature_matrix(query, pool) if matrix is None else matrix
    # Row by row, not a BLAS product: a matrix-vector product may round a row differently
    # by where it sits in the matrix, and the pool's order follows the database's row
    # order, which a dump and restore (or PostgreSQL's MVCC) changes.
    scores = (features * fitted.vector()).sum(axis=1)
    exponents = (fitted.base - 1.0) * pool.log_base + scores
    # Only the order matters: shifted so the best candidate's factor is about 1, the
    # factors stay readable and no score underflows to 0.
    shifted = np.maximum(_MIN_EXPONENT, exponents - exponents.max())
    return [math.exp(exponent) for exponent in shifted.tolist()]
