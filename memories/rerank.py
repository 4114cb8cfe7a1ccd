"""Recall's second stage: re-score the candidates with more evidence than two ranks.

The first stage (memories.recall) fuses a vector list and a keyword list by their
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
- ``date``: how well ``occurred_at`` fits a date the query names (memories.dates);
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
spaceduck/benchmarks/locomo.py); the weights ship in ``rerank.json`` beside this
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
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from memories.dates import date_match, query_dates
from memories.extraction.sentences import split_sentences
from spaceduck.fts import index_terms

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
    ranges: Sequence[Any]  # memories.dates.DateRange values
    subject: str | None = None  # the first name: whom the question is about


@dataclass(slots=True)
class Candidate:
    """One candidate as the second stage sees it."""

    memory_id: int
    cosine: float | None
    log_base: float
    content: str
    context: str
    occurred_at: datetime | None
    vector_rank: int | None = None
    keyword_rank: int | None = None
    # The memories written just before and after it (memories.recall.widen): ids, texts
    # and cosines with the query; and whether it joined the pool as such a neighbour.
    before_id: int | None = None
    after_id: int | None = None
    before: str = ""
    after: str = ""
    before_cosine: float = 0.0
    after_cosine: float = 0.0
    widened: bool = False


def query_evidence(text: str, now: datetime) -> QueryEvidence:
    from memories.recall import keyword_terms

    terms = frozenset(term for term, _ in keyword_terms(text))
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


@dataclass(frozen=True)
class _Pool:
    """What one candidate's features read from the whole pool."""

    floor_cosine: float  # the vector list's last cosine: a bound for the ones it missed
    rarity: dict[str, float]  # each query term's weight among the candidates
    total_rarity: float  # their sum
    share: dict[int, float]  # memory id -> first-stage score as a share of the best's
    days: Counter[date]  # candidates per day they occurred
    size: int

    def share_of(self, terms: Collection[str]) -> float:
        """The rarity-weighted share of the query's terms that ``terms`` holds."""
        if not self.total_rarity:
            return 0.0
        return sum(self.rarity[t] for t in terms) / self.total_rarity


def features(query: QueryEvidence, candidate: Candidate, pool: _Pool) -> list[float]:
    """The FEATURES of one candidate, in order."""
    terms, names = query.terms, query.names
    content, context = _words(candidate.content), _words(candidate.context)
    found = terms & content
    known = content | context  # what the neighbours' words are not counted for
    cosine = candidate.cosine if candidate.cosine is not None else pool.floor_cosine - 0.05
    speaker = _speaker(candidate.content)
    before_score = pool.share.get(candidate.before_id, 0.0) if candidate.before_id else 0.0
    share = pool.share_of
    return [
        cosine,
        float(candidate.keyword_rank is not None),
        len(found) / len(terms) if terms else 0.0,
        len((terms & context) - found) / len(terms) if terms else 0.0,
        share(found),
        date_match(query.ranges, candidate.occurred_at) if query.ranges else 0.0,
        1.0 / (1 + candidate.vector_rank) if candidate.vector_rank else 0.0,
        1.0 / (1 + candidate.keyword_rank) if candidate.keyword_rank else 0.0,
        _same_day(candidate, pool),
        float(speaker is not None and speaker in names),
        float(speaker is not None and speaker == query.subject),
        share((terms & _words(candidate.before)) - known) if candidate.before else 0.0,
        share((terms & _words(candidate.after)) - known) if candidate.after else 0.0,
        candidate.before_cosine,
        candidate.after_cosine,
        before_score,
        float(candidate.widened),
        _asks(candidate.content),
        before_score * _asks(candidate.before) if before_score else 0.0,
    ]


@lru_cache(maxsize=65_536)
def _asks(text: str) -> float:
    """The share of its sentences that are questions: a memory that asks is rarely the
    answer, while the one written after a question that matched often is."""
    if "?" not in text:
        return 0.0  # most memories: no need to split them
    sentences = split_sentences(_CAPTION.sub("", text))
    return sum(s.endswith("?") for s in sentences) / len(sentences) if sentences else 0.0


def term_rarity(query: QueryEvidence, candidates: Sequence[Candidate]) -> dict[str, float]:
    """log(1 + n / df) of each query term over the candidates' content: a word only a few
    of them hold tells more about which one is meant (an IDF over the pool, which costs
    nothing more than the words already read)."""
    if not query.terms:
        return {}
    words = [_words(c.content) for c in candidates]
    n = len(candidates)
    return {t: math.log(1 + n / (1 + sum(t in w for w in words))) for t in query.terms}


def feature_matrix(query: QueryEvidence, candidates: Sequence[Candidate]) -> np.ndarray:
    """Every candidate's FEATURES, one row each."""
    if not candidates:
        return np.zeros((0, len(FEATURES)))
    cosines = [c.cosine for c in candidates if c.vector_rank is not None and c.cosine is not None]
    top = max(c.log_base for c in candidates)
    rarity = term_rarity(query, candidates)
    pool = _Pool(
        floor_cosine=min(cosines) if cosines else 0.0,
        rarity=rarity,
        total_rarity=sum(rarity.values()),
        share={c.memory_id: math.exp(c.log_base - top) for c in candidates},
        days=Counter(c.occurred_at.date() for c in candidates if c.occurred_at is not None),
        size=len(candidates),
    )
    return np.array([features(query, c, pool) for c in candidates])


def _same_day(candidate: Candidate, pool: _Pool) -> float:
    """The share of the other candidates that occurred on its day."""
    if candidate.occurred_at is None:
        return 0.0
    return (pool.days[candidate.occurred_at.date()] - 1) / max(1, pool.size - 1)


def multipliers(
    query: QueryEvidence, candidates: Sequence[Candidate], fitted: Weights
) -> list[float]:
    """Each candidate's second-stage multiplier, exp(score - log_base - c)."""
    if not candidates:
        return []
    # Row by row, not a BLAS product: a matrix-vector product may round a row differently
    # by where it sits in the matrix, and the pool's order follows the database's row
    # order, which a dump and restore (or PostgreSQL's MVCC) changes.
    scores = (feature_matrix(query, candidates) * fitted.vector()).sum(axis=1)
    exponents = [
        (fitted.base - 1.0) * candidate.log_base + score
        for candidate, score in zip(candidates, scores.tolist(), strict=True)
    ]
    # Only the order matters: shifted so the best candidate's factor is about 1, the
    # factors stay readable and no score underflows to 0.
    top = max(exponents)
    return [math.exp(max(_MIN_EXPONENT, exponent - top)) for exponent in exponents]
