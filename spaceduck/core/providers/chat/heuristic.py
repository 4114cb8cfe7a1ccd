"""The offline chat provider: deterministic rules, no model, no network.

``summarize`` is extractive: the first sentence of each text, in order, without
repeats, cut to ``max_words``. It never rephrases, so it never invents.

``arbitrate`` applies two rules to short first-person-style facts:

1. Negation: the statements are the same once "not"/"never"/"no longer" (and
   the "do"/"does" that carries them) are removed, and exactly one is negated:
   "I like tea" vs "I don't like tea".
2. Same subject, different value: both read "<subject> <relation> <value>" with
   the same subject and a single-valued relation (is/are/am, live(s) in,
   work(s) at/for, prefer(s)) and neither value contains the other:
   "I live in Paris" vs "I live in Tokyo".

It has no model, so ``complete_json`` and ``complete_text`` refuse (``has_model``
is false): the offline classification rules are extraction logic and live in
``memories.extraction.rules``, which ``memories.extraction.classify.classify``
uses for this provider.

Known limits of ``arbitrate``, accepted for an offline fallback: no synonyms or paraphrase ("I
moved to Tokyo" is not matched against "I live in Paris"); "is" is treated as
single-valued, so "I am a doctor" vs "I am tired" is a false contradiction;
"like"/"love" are not single-valued (liking tea and coffee is fine), so only
their negation counts; tense and time ("used to") are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from spaceduck.core.providers.chat.base import Arbitration
from spaceduck.core.providers.errors import ProviderError

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[\w']+")
_CONTRACTIONS = (
    (re.compile(r"\bcan't\b"), "can not"),
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"n't\b"), " not"),
    (re.compile(r"\bi'm\b"), "i am"),
    (re.compile(r"'re\b"), " are"),
    (re.compile(r"\b(he|she|it|that)'s\b"), r"\1 is"),
)
_ARTICLES = frozenset({"a", "an", "the"})
# Phrase (as words) -> canonical relation. Longer phrases are tried first.
_RELATIONS: dict[tuple[str, ...], str] = {
    ("lives", "in"): "live in",
    ("live", "in"): "live in",
    ("works", "at"): "work at",
    ("work", "at"): "work at",
    ("works", "for"): "work at",
    ("work", "for"): "work at",
    ("prefers",): "prefer",
    ("prefer",): "prefer",
    ("is",): "be",
    ("are",): "be",
    ("am",): "be",
}
_MAX_SUBJECT_WORDS = 6  # a relation word further in is part of a clause, not the predicate


class HeuristicChat:
    name = "heuristic"
    model = "rules-v1"
    has_model = False

    def summarize(self, *, texts: Sequence[str], max_words: int = 120) -> str:
        sentences: list[str] = []
        seen: set[str] = set()
        for text in texts:
            sentence = _first_sentence(text)
            key = " ".join(_WORD.findall(sentence.lower()))
            if sentence and key not in seen:
                seen.add(key)
                sentences.append(sentence)
        return _trim_words(" ".join(sentences), max(max_words, 1))

    def arbitrate(self, *, existing: str, candidate: str) -> Arbitration:
        old, new = _words(existing), _words(candidate)
        old_negated, old_core = _split_negation(old)
        new_negated, new_core = _split_negation(new)
        if old_core and _stems(old_core) == _stems(new_core) and old_negated != new_negated:
            return Arbitration(
                "contradiction",
                f"negation rule: one statement denies the other ({' '.join(old_core)!r})",
            )
        if not (old_negated or new_negated):
            verdict = _compare_claims(old, new)
            if verdict:
                return verdict
        return Arbitration(
            "consistent", "no rule fired: no negation and no shared subject with a different value"
        )

    def complete_json(
        self, *, system: str, user: str, schema_name: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        raise ProviderError(f"the heuristic chat provider has no model to answer {schema_name!r}")

    def complete_text(
        self,
        *,
        user: str,
        system: str | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> str:
        raise ProviderError(
            "the heuristic chat provider has no model to answer in free text; "
            "set SPACEDUCK_CHAT_PROVIDER=openai"
        )


# --- summarize helpers -------------------------------------------------------------
def _first_sentence(text: str) -> str:
    sentence = _SENTENCE_END.split(" ".join(text.split()), maxsplit=1)[0].strip()
    # Joined sentences need an end mark, or "I live in Paris I like tea" runs together.
    if sentence and sentence[-1] not in ".!?":
        sentence += "."
    return sentence


def _trim_words(text: str, max_words: int) -> str:
    words = text.split()
    if len(words) <= max_words:
        return text
    return " ".join(words[:max_words]).rstrip(".,;:!?") + "..."


# --- arbitrate helpers ---------------------------------------------------------------
def _words(statement: str) -> list[str]:
    text = statement.lower().replace("\u2019", "'")
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return _WORD.findall(text)


def _split_negation(words: list[str]) -> tuple[bool, list[str]]:
    """(is negated, the words without the negation) — "do not like x" -> (True, "like x")."""
    core: list[str] = []
    negated = False
    i = 0
    while i < len(words):
        word, following = words[i], words[i + 1] if i + 1 < len(words) else ""
        if word in {"do", "does", "did"} and following == "not":
            negated, i = True, i + 2
        elif word in {"not", "never"}:
            negated, i = True, i + 1
        elif word == "no" and following == "longer":
            negated, i = True, i + 2
        else:
            core.append(word)
            i += 1
    return negated, core


def _stems(words: list[str]) -> list[str]:
    # Crude: folds "likes"/"like" after "does not"; applied to both sides alike.
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words]


def _claim(words: list[str]) -> tuple[tuple[str, ...], str, tuple[str, ...]] | None:
    """(subject, relation, value) at the first relation phrase, or None."""
    for start in range(1, min(len(words), _MAX_SUBJECT_WORDS + 1)):
        for phrase, relation in _RELATIONS.items():
            end = start + len(phrase)
            if tuple(words[start:end]) == phrase and end < len(words):
                subject = tuple(w for w in words[:start] if w not in _ARTICLES)
                value = tuple(w for w in words[end:] if w not in _ARTICLES)
                if subject and value:
                    return subject, relation, value
    return None


def _compare_claims(old: list[str], new: list[str]) -> Arbitration | None:
    old_claim, new_claim = _claim(old), _claim(new)
    if old_claim is None or new_claim is None or old_claim[:2] != new_claim[:2]:
        return None
    subject, relation, old_value = old_claim
    new_value = new_claim[2]
    # "Paris" vs "Paris, France" adds detail; only disjoint-looking values conflict.
    if set(old_value) <= set(new_value) or set(new_value) <= set(old_value):
        return None
    return Arbitration(
        "contradiction",
        f"same-subject rule: '{' '.join(subject)}' ({relation}) was "
        f"{' '.join(old_value)!r}, now {' '.join(new_value)!r}",
    )
