"""Recall's second stage: re-score the fused candidates with more evidence than two ranks.

The first stage (memories.recall) fuses a vector list and a keyword list by their
ranks. On LoCoMo most missed evidence was already among the candidates and lost in
the fusion (a turn at vector rank 5 with no keyword hit fused to rank 36). This stage
looks at each candidate's own values and words:

- ``log_base``: the first stage's score (rrf + neighbour, times the multipliers), as a log;
- ``cosine`` and ``in_vector``: the query's cosine (an upper bound below the list's last
  cosine for a candidate the vector list did not return) and whether the list had it;
- ``in_keyword``: whether the keyword list had it (its BM25 value is left out: FTS5's
  statistics shift after deletes and re-inserts, and an imported copy must give the
  same answers as the database it came from; the rank is in ``keyword_rr``);
- ``coverage`` / ``context_coverage``: the share of the query's content words (stemmed,
  as the keyword index stores them) found in the memory's content, or only in its context;
- ``all_words``: every content word of the query is in the content or context;
- ``names``: the share of the query's names (capitalised words) found in the content;
- ``date``: how well ``occurred_at`` fits a date the query names (memories.dates);
- ``neighbour``: an adjacent turn of the same thread is also a candidate;
- ``vector_rr`` / ``keyword_rr``: 1 / (1 + rank) in each list (0 when absent);
- ``speaker``: the memory is a turn ("Name: ...") said by a name the query asks about;
- ``rare_coverage``: like ``coverage``, each query word weighted by how few candidates
  hold it (``term_rarity``);
- ``same_day``: the share of the other candidates that occurred on the same day (a
  conversation's turns about one topic cluster in one session; memories written
  without a thread have no neighbours, but they have dates).

The score is ``w_base * log_base + w . features``, a listwise model (a softmax over
each question's candidates) fitted on part of
the LoCoMo dev conversations and validated on the rest (``manage.py bench locomo
--fit``, see spaceduck/benchmarks/locomo.py); the weights ship in ``rerank.json``
beside this module. In the explanation the stage is one multiplier,
``second_stage = exp(score - log_base - c)`` with ``c`` the same for every candidate of
a query (the best gets about 1), so the score is still the product of the parts shown
and the order is the model's.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from memories.dates import date_match, query_dates
from spaceduck.fts import index_terms

WEIGHTS_FILE = Path(__file__).with_name("rerank.json")
FEATURES = (
    "cosine",
    "in_vector",
    "in_keyword",
    "coverage",
    "context_coverage",
    "all_words",
    "names",
    "date",
    "neighbour",
    "vector_rr",
    "keyword_rr",
    "same_day",
    "speaker",
    "rare_coverage",
)
# A capitalised word that is not the first of a sentence: a name ("Caroline", "Paris").
_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
# Who says it: a leading "Name:" (a transcript turn), after an optional "[date]".
_SPEAKER = re.compile(r"^(?:\[[^\]]*\]\s*)?([A-Z][\w.-]{1,40}):")
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


@dataclass
class Candidate:
    """One first-stage candidate as the second stage sees it."""

    cosine: float | None
    bm25: float | None  # FTS5's value: lower is better
    log_base: float
    content: str
    context: str
    occurred_at: datetime | None
    neighbour: bool
    vector_rank: int | None = None
    keyword_rank: int | None = None
    same_day: float = 0.0  # share of the other candidates that occurred the same day


def query_evidence(text: str, now: datetime) -> QueryEvidence:
    from memories.recall import keyword_terms

    terms = frozenset(term for term, _ in keyword_terms(text))
    names = frozenset(w for name in _NAME.findall(text) for w in _words(name))
    return QueryEvidence(terms, names, query_dates(text, now))


@lru_cache(maxsize=65_536)
def _words(text: str) -> frozenset[str]:
    return frozenset(index_terms(text))


@lru_cache(maxsize=65_536)
def _speaker(content: str) -> str | None:
    match = _SPEAKER.match(content)
    terms = index_terms(match[1]) if match else []
    return terms[0] if len(terms) == 1 else None


def features(
    query: QueryEvidence,
    candidate: Candidate,
    floor_cosine: float,
    rarity: dict[str, float],
) -> list[float]:
    """The FEATURES of one candidate, in order. ``floor_cosine``: the vector list's last
    cosine, an upper bound for candidates it did not return; ``rarity``: each query
    term's weight among the candidates (``term_rarity``)."""
    content, context = _words(candidate.content), _words(candidate.context)
    terms, names = query.terms, query.names
    found = terms & content
    cosine = candidate.cosine if candidate.cosine is not None else floor_cosine - 0.05
    return [
        cosine,
        float(candidate.cosine is not None),
        float(candidate.bm25 is not None),
        len(found) / len(terms) if terms else 0.0,
        len((terms & context) - found) / len(terms) if terms else 0.0,
        float(bool(terms) and terms <= (content | context)),
        len(names & content) / len(names) if names else 0.0,
        date_match(query.ranges, candidate.occurred_at) if query.ranges else 0.0,
        float(candidate.neighbour),
        1.0 / (1 + candidate.vector_rank) if candidate.vector_rank else 0.0,
        1.0 / (1 + candidate.keyword_rank) if candidate.keyword_rank else 0.0,
        candidate.same_day,
        float(_speaker(candidate.content) in names) if names else 0.0,
        sum(rarity[t] for t in found) / sum(rarity.values()) if rarity else 0.0,
    ]


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
    cosines = [c.cosine for c in candidates if c.cosine is not None]
    floor = min(cosines) if cosines else 0.0
    rarity = term_rarity(query, candidates)
    return np.array([features(query, c, floor, rarity) for c in candidates])


def multipliers(
    query: QueryEvidence, candidates: Sequence[Candidate], fitted: Weights
) -> list[float]:
    """Each candidate's second-stage multiplier, exp(score - log_base - c)."""
    if not candidates:
        return []
    scores = feature_matrix(query, candidates) @ fitted.vector()
    exponents = [
        (fitted.base - 1.0) * candidate.log_base + score
        for candidate, score in zip(candidates, scores.tolist(), strict=True)
    ]
    # Only the order matters: shifted so the best candidate's factor is about 1, the
    # factors stay readable and no score underflows to 0.
    top = max(exponents)
    return [math.exp(max(_MIN_EXPONENT, exponent - top)) for exponent in exponents]
