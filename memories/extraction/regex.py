"""The regex stage: identity facts and explicit "remember that ..." requests in USER messages.

Deterministic and cheap (it runs on every message), so it is conservative: a miss is repaired by
the LLM stage, a wrong identity fact supersedes a right one. It only fires on first-person
statements in a plain declarative clause.

What it extracts (``extract``):

- Slots (``types.SLOTS``), as canonical third-person sentences:
  name ("my name is Ada" — certain; "call me Ada", "I'm Ada" at sentence start — stated),
  age ("I'm 34", "I am 34 years old", "I just turned 40"), location ("I live in / I moved to /
  I'm based in / I relocated to X"), employer ("I work at/for X", "I just joined X", "I'm an
  engineer at X"), role ("I work as a nurse", "I'm a software engineer" only when the head noun is
  a known occupation), email, phone, pronouns, birthday.
- "remember (that) ...", "please remember ...", "don't forget (that) ...": the clause as a fact in
  the third person; "remember to always/never ..." as a procedure (never/not -> constraint,
  always -> behavioral). Slots inside the clause are extracted as slots instead.

What it refuses: questions (a "?" closing the clause, or a question opening the sentence),
negated or hedged clauses ("I don't live in", "I no longer work at", "if I lived", "he thinks
I live"), other people ("my sister lives in Rome"), past or future states ("I used to live",
"I'm moving to"), quoted text (code blocks, "> " lines, double-quoted spans of 3+ words) and
injected memory blocks.

Values stop at punctuation, conjunctions, prepositions and time words ("I moved to Tokyo last
month" -> Tokyo). Proper-noun values must be capitalised, unless the whole sentence is typed in
lower case (then a small block list guards against "i live in peace", and a place is
title-cased). One candidate per slot per message (the most confident, then the first).

Known limits: English only; digits only for ages; "Trinidad and Tobago" stops at "and";
nationalities and other capitalised adjectives after "I'm" are excluded by a list, not grammar.
The word lists live in ``regex_words.py``; this module holds the patterns and the logic.
"""

from __future__ import annotations

from memories.extraction.introductions import intro_hits
from memories.extraction.remember import remember_candidate, remember_clause, uncovered_words
from memories.extraction.slots import CORE_SLOTS, SLOT_TITLES, Hit, prepare, sentences, slot_hits
from memories.extraction.types import IMPORTANCE, Candidate

# --- Entry point -------------------------------------------------------------------------------


def _candidate(hit: Hit) -> Candidate:
    importance = IMPORTANCE["core"] if hit.slot in CORE_SLOTS else IMPORTANCE["significant"]
    return Candidate(
        kind="fact",
        content=hit.content,
        title=SLOT_TITLES[hit.slot],
        importance=importance,
        confidence=hit.confidence,
        tags=["identity", hit.slot],
        slot=hit.slot,
        stage="regex",
    )


def extract(text: str) -> list[Candidate]:
    """Identity facts and explicit remember-requests in a USER message, in text order."""
    if not text or not text.strip():
        return []
    found: list[tuple[int, Candidate | Hit]] = []
    order = 0
    for sentence in sentences(prepare(text)):
        clause = remember_clause(sentence)
        if clause is not None:
            remembered = remember_candidate(clause)
            hits = [] if remembered and remembered.kind == "procedure" else slot_hits(clause)
            if remembered and (not hits or uncovered_words(clause, hits) >= 3):
                found.append((order, remembered))
                order += 1
        else:
            hits = slot_hits(sentence)
        for hit in sorted(hits, key=lambda h: h.start):
            found.append((order, hit))
            order += 1

    named = any(isinstance(item, Hit) and item.slot == "name" for _, item in found)
    for hit in intro_hits(text, named):
        found.append((order, hit))  # after the sentence readings: those win a tie
        order += 1

    # One candidate per slot: the most confident, then the earliest.
    best: dict[str, tuple[int, Hit]] = {}
    for position, item in found:
        if isinstance(item, Hit):
            current = best.get(item.slot)
            if current is None or item.confidence > current[1].confidence:
                best[item.slot] = (position, item)
    keep = {position for position, _ in best.values()}
    candidates: list[Candidate] = []
    seen: set[str] = set()
    for position, item in found:
        if isinstance(item, Hit):
            if position not in keep:
                continue
            candidate = _candidate(item)
        else:
            candidate = item
        key = candidate.content.lower()
        if key not in seen:
            seen.add(key)
            candidates.append(candidate)
    return candidates
