"""The rules' entry: a message cut into sentences and clauses, each sentence's certainty,
and each clause dispatched to the reader that recognises it (procedures, episodes, facts)."""

from __future__ import annotations

import re
from datetime import datetime

from memories.extraction import clauses_words as LW  # the list-heading patterns, shared
from memories.extraction import rules_words as W
from memories.extraction.claims import NUMBER_WORDS
from memories.extraction.reported import SAYING, strip_reported
from memories.extraction.rules.build import Context, make_candidate
from memories.extraction.rules.episodes import read_episode
from memories.extraction.rules.facts import (
    make_fact,
    read_first_person_fact,
    read_preference_shapes,
    read_relation_fact,
    read_remembered_fact,
)
from memories.extraction.rules.procedures import (
    PROCESS_HEADING,
    are_steps,
    make_procedure,
    read_behavioral,
    read_constraint,
    read_workflow,
)
from memories.extraction.sentences import lexical, verb_lemmas
from memories.extraction.types import CONFIDENCE, Candidate


def classify_message(text: str, role: str, now: datetime) -> list[Candidate]:
    """All candidates in one message, in order, without repeats."""
    if role != "user":
        return []  # assistant and tool text never establishes facts about the user
    text = normalise(strip_reported(text))  # quotes, fiction, translations: not the user's
    found: list[Candidate] = []
    steps, text = _numbered_workflow(text)
    if steps is not None:
        found.append(steps)
    for sentence in _sentences(text):
        found.extend(_classify_sentence(sentence, now))
    unique: dict[str, Candidate] = {}
    for candidate in found:
        unique.setdefault(candidate.content.lower(), candidate)
    return list(unique.values())


# --- text shape -----------------------------------------------------------------------------
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_CONTRACTIONS = [
    (re.compile(p, re.IGNORECASE), r)
    for p, r in (
        (r"\b(i)'m\b", r"\1 am"),
        (r"\b(i|we|you|they)'ve\b", r"\1 have"),
        (r"\b(i|we|you|they)'d\b", r"\1 would"),
        (r"\b(i|we|you|they)'ll\b", r"\1 will"),
        (r"\b(we|you|they)'re\b", r"\1 are"),
        (r"\b(c)an't\b", r"\1annot"),
        (r"\b(w)on't\b", r"\1ill not"),
        (r"\b(do|does|did|is|are|was|were|have|has|had|would|should|could|must)n't\b", r"\1 not"),
    )
]
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_ABBREVIATION = re.compile(rf"(?:\b(?i:{W.ABBREVIATIONS})|\b[A-Z])\.$")
_PRONOUN_START = rf"(?i:{W.CLAUSE_SUBJECTS})\b"
_CLAUSE_SPLIT = re.compile(
    r"(\s*;\s*"
    rf"|,?\s+(?:{W.CLAUSE_CONJUNCTIONS})\s+(?=(?:now\s+)?{_PRONOUN_START})"
    rf"|,\s+(?:(?:and|but|so)\s+)?(?=(?:now\s+)?{_PRONOUN_START})"
    r"|,\s+(?=[A-Z][a-z]+\s+(?:is|are|was)\b))"
)
_COMPOUND_HEAD = re.compile(r"(?i:my|our|me and my)\s+[\w-]+(?:\s+[\w-]+)?|[A-Z][a-z]+")
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+(.+)$")


def normalise(text: str) -> str:
    text = text.translate(_QUOTES)
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return text


def _sentences(text: str) -> list[str]:
    parts = [p.strip() for p in _SENTENCE_END.split(text) if p and p.strip()]
    merged: list[str] = []
    for part in parts:
        # "St. Mary's", "Ursula K. Le Guin": a full stop that ends an abbreviation, not a sentence.
        if merged and _ABBREVIATION.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


def _clauses(sentence: str) -> list[str]:
    pieces = _CLAUSE_SPLIT.split(sentence)  # [clause, separator, clause, separator, ...]
    out: list[str] = []
    for index in range(0, len(pieces), 2):
        part = pieces[index].strip(" ,")
        separator = pieces[index - 1] if index else ""
        if not part:
            continue
        if out and re.fullmatch(r"[A-Z][a-z]+", out[-1]) and "," in separator:
            out[-1] = f"{out[-1]}, {part}"  # "Anna, my manager, prefers ...": an appositive
        elif out and _COMPOUND_HEAD.fullmatch(out[-1]) and "and" in separator:
            out[-1] = f"{out[-1]} and {part}"  # "My partner and I share a car": one subject
        else:
            out.append(part)
    return out


def _numbered_workflow(text: str) -> tuple[Candidate | None, str]:
    """A heading plus two or more list items is one workflow; the rest is read as usual."""
    lines = text.splitlines()
    matches = [(i, m) for i, line in enumerate(lines) if (m := _LIST_ITEM.match(line))]
    if len(matches) < 2:
        return None, text
    items = [i for i, _ in matches]
    first = items[0]
    heading = lines[first - 1].strip() if first > 0 and lines[first - 1].strip() else ""
    steps = [m.group(1).strip().rstrip(".;") for _, m in matches]
    if (
        LW.ERRANDS.search(heading)
        or LW.REPLY_HEADING.search(heading)
        or LW.RULE_HEADING.search(heading)
    ):
        # a to-do list is errands for now; "How I like my answers:" lists orders, not steps
        return None, text
    if not (PROCESS_HEADING.search(heading) or are_steps(steps)):
        return None, text  # "I speak: Spanish, English": items, each read on its own
    body = "; ".join(steps)
    sentence = f"{heading.rstrip(':')}: {body}" if heading else f"Steps: {body}"
    used = set(items) | ({first - 1} if heading else set())
    rest = "\n".join(line for i, line in enumerate(lines) if i not in used)
    candidate = make_procedure("workflow", sentence, CONFIDENCE["stated"])
    return candidate, rest


# --- sentence-level reading --------------------------------------------------------------------
_LEAD = re.compile(
    rf"^(?:(?:{W.LEAD_MARKERS})\b[\s,:;!.-]*"
    # Words that also begin real sentences ("Update the docs", "No merges after 4pm")
    # count as markers only with punctuation after them.
    rf"|(?:{W.LEAD_MARKERS_WITH_PUNCTUATION})\s*[,:;!.-]+\s*"
    r"|now\s+(?=(?i:i|we)\b))",
    re.IGNORECASE,
)
_CERTAIN = re.compile(
    r"^(?:actually|correction|scratch that|update|sorry|oh wait|i meant)\b", re.IGNORECASE
)
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:(?:remember|do not forget|don't forget|keep in mind|for future reference)"
    r"(?:\s+that)?(?:\s+the following(?:\s+[\w-]+){0,3})?|note that|note:)\s*[:,]?\s*",
    re.IGNORECASE,
)
_REMEMBER_TO = re.compile(r"^(?:please\s+)?(?:remember|do not forget|don't forget)\s+to\s+", re.I)
_SPECULATIVE = re.compile(rf"\b(?:{W.SPECULATIVE})\b", re.IGNORECASE)
_LIKELY = re.compile(rf"\b(?:{W.LIKELY})\b", re.IGNORECASE)
_HEDGE_FRAME = re.compile(
    r"^(?:i think|i guess|i suppose|i believe|i feel like)\s+(?:that\s+)?", re.I
)
_HEDGE_TAIL = re.compile(
    r",?\s*(?:but\s+)?(?:(?:i am\s+)?not (?:100% )?sure(?: yet)?|i (?:suppose|guess|think))"
    r"\s*[.!]*$",
    re.IGNORECASE,
)
_HEDGE_ONLY = re.compile(
    r"^(?:(?:but\s+)?(?:i am\s+)?not (?:100% )?sure(?: yet)?|i (?:suppose|guess|think)"
    r"|(?:i am\s+)?not sure (?:if|whether).*)$",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    rf"^(?:{W.QUESTION_WORDS})\b|^(?:{W.QUESTION_AUXILIARIES})\s+(?:{W.QUESTION_SUBJECTS})\b",
    re.IGNORECASE,
)


_STANDING_REQUEST = re.compile(
    r"^(?:could|can|would|will) you(?: please)?\s+(?P<order>.+?)\s*\??$", re.IGNORECASE
)
_STANDING = re.compile(rf"\b(?:{W.STANDING})\b", re.IGNORECASE)


def _classify_sentence(sentence: str, now: datetime) -> list[Candidate]:
    # "Could you always answer in Spanish?" sets a standing rule; it is not a question.
    request = _STANDING_REQUEST.match(_strip_lead(sentence))
    if request and _STANDING.search(sentence):
        sentence = request["order"]
    if sentence.rstrip().endswith("?") or _QUESTION_START.match(_strip_lead(sentence)):
        return []
    confidence = _sentence_confidence(sentence)
    body = _time_lead_last(_strip_lead(sentence))
    workflow = read_workflow(body, confidence)
    if workflow is not None:
        return [workflow]
    out: list[Candidate] = []
    for clause in _clauses(body):
        candidate = _classify_clause(clause, Context(confidence, now))
        if candidate is not None:
            out.append(candidate)
            state = _state_begun(candidate)
            if state is not None:
                out.append(state)
    return out


# An event that begins a lasting state also states it: "Sam and I got married in June" is
# an episode, and the user is married to Sam from then on (a fact, which replaces "engaged").
_BEGUN = re.compile(
    r"^The user (?:and (?P<a>[A-Z][\w-]*) )?(?:just |finally |recently )?got "
    r"(?P<state>married|engaged)(?: to (?P<b>[A-Z][\w-]*))?\b"
)


def _state_begun(candidate: Candidate) -> Candidate | None:
    found = _BEGUN.match(candidate.content) if candidate.kind == "episode" else None
    if found is None or not (found["a"] or found["b"]) or (found["a"] and found["b"]):
        return None
    content = f"The user is {found['state']} to {found['a'] or found['b']}."
    return make_fact(content, "family", candidate.confidence, importance="significant")


# "These days I prefer tea": a time said first is read last ("I prefer tea these days"), so
# the clause opens with its subject as the rules expect.
_TIME_LEAD = re.compile(
    r"^(?P<when>these days|nowadays|lately|currently|at the moment|right now|this year|"
    r"for now|since then|as of (?:today|now))\s*,?\s+(?=(?:i|we|my|our)\b)",
    re.IGNORECASE,
)


def _time_lead_last(text: str) -> str:
    found = _TIME_LEAD.match(text)
    if found is None:
        return text
    rest = text[found.end() :].rstrip()
    end = rest[-1] if rest[-1:] in ".!" else ""
    return f"{rest.rstrip('.!')} {found['when'].lower()}{end}"


def _sentence_confidence(sentence: str) -> float:
    if _SPECULATIVE.search(sentence):
        return CONFIDENCE["speculative"]
    if _LIKELY.search(sentence):
        return CONFIDENCE["likely"]
    if _CERTAIN.match(sentence) or _REMEMBER.match(_strip_lead(sentence)):
        return CONFIDENCE["certain"]
    return CONFIDENCE["stated"]


def _strip_lead(text: str) -> str:
    previous = None
    text = text.strip()
    while previous != text:
        previous = text
        text = _LEAD.sub("", text, count=1).strip()
    return text


# --- clause dispatch -
_ABOUT_ASSISTANT = re.compile(
    r"^(?:you|the assistant|the ai|the bot|the model)\s+(?:are|is|were|was|have|has|had|will be"
    r"|used to)\b|^you're\b",
    re.IGNORECASE,
)
# Someone else's words, as the reported stage reads them, and their wishes ("wants ...").
_SAYING = SAYING | {"want"}
_CREDENTIAL = re.compile(
    rf"\b(?:{W.CREDENTIALS})\s+(?:is|was|:|=)\s*\S",
    re.IGNORECASE,
)
# "I'd like you to use British spelling" is the order "use British spelling".
_WISH_FOR_ASSISTANT = re.compile(
    r"^(?:i would like|i want|i need|i would prefer|i prefer|i would love)"
    r" (?:it if )?you(?: to)?\s+",
    re.IGNORECASE,
)
# "Quick one: I'm vegan" - a short label before a first-person statement.
_SHORT_LABEL = re.compile(r"^[\w' -]{1,20}:\s+(?=(?:i|we|my|our)\b)", re.IGNORECASE)
# Chat drops the subject: "Not a fan of podcasts", "Just got back from Japan", "Love it here".
_DROPPED_I_AM = re.compile(
    r"^(?:(?:not|really|totally|probably|definitely|still|also|just|never)\s+)*"
    r"(?:(?:a|an)\s+(?:big\s+|huge\s+)?fan of|into|allergic|going to|planning (?:to|on)"
    r"|thinking (?:about|of)|considering|learning)\b",
    re.IGNORECASE,
)
_DROPPED_I = re.compile(
    r"^(?:(?:just|finally|recently|really|totally|absolutely|honestly)\s+)*"
    r"(?:love|hate|adore|enjoy|got back|got home)\b",
    re.IGNORECASE,
)


def _restore_subject(clause: str) -> str:
    if len(clause.split()) < 3:
        return clause
    if _DROPPED_I_AM.match(clause):
        return f"I am {clause[0].lower()}{clause[1:]}"
    if _DROPPED_I.match(clause):
        return f"I {clause[0].lower()}{clause[1:]}"
    return clause


def _classify_clause(clause: str, ctx: Context) -> Candidate | None:
    clause = _HEDGE_TAIL.sub("", _strip_lead(clause)).strip(" ,.!")
    remembered = bool(_REMEMBER.match(clause))
    if _REMEMBER_TO.match(clause):
        clause, remembered = _REMEMBER_TO.sub("", clause), False  # "remember to X" is an order
    elif remembered:
        clause = _REMEMBER.sub("", clause)
    clause = _HEDGE_FRAME.sub("", clause).strip(" ,.!")
    clause = _WISH_FOR_ASSISTANT.sub("", _SHORT_LABEL.sub("", clause))
    clause = _restore_subject(clause)
    if len(clause.split()) < 2 or _HEDGE_ONLY.match(clause) or _QUESTION_START.match(clause):
        return None
    if _ABOUT_ASSISTANT.match(clause):
        return None  # claims about the assistant ("you are now DAN") are not user memories
    if _CREDENTIAL.search(clause):
        return None  # a memory store is no place for passwords, keys or card numbers
    if _reported_by_someone_else(clause):
        return None
    for rule in (read_behavioral, read_constraint):
        found = rule(clause, ctx.confidence)
        if found is not None:
            return found
    return (
        _counted_at_home(clause, ctx.confidence)
        or read_episode(clause, ctx)
        or read_relation_fact(clause, ctx.confidence)
        or read_first_person_fact(clause, ctx.confidence)
        or read_preference_shapes(clause, ctx.confidence)
        or (read_remembered_fact(clause, ctx.confidence) if remembered else None)
    )


# "There are three cats in our house": how many the user (and their family) have.
_THERE_ARE = re.compile(
    r"^(?:now\s+|so\s+)?there\s+(?:are|is)\s+(?:now\s+)?(?P<n>\d+|(?:"
    + "|".join(w for w in NUMBER_WORDS if len(w) > 2)
    + r"))\s+(?P<thing>[a-z]+)\s+(?:in|at)\s+(?P<whose>my|our)\s+"
    r"(?:house|home|flat|apartment|household|family|life|place)\b",
    re.IGNORECASE,
)


# "so three dogs now", "it's three cats, not two": a count of the household said without a
# verb, after "we got another one" or a correction; what is counted must be the household's.
_BARE_COUNT = re.compile(
    r"(?:^|,\s*)(?:(?:so|and|now|that's|that makes|it's|it is|make that|we're at|we are at)\s+)*"
    r"(?P<n>\d+|(?:" + "|".join(w for w in NUMBER_WORDS if len(w) > 2) + r"))\s+"
    r"(?P<thing>kids|children|daughters|sons|dogs|cats|puppies|kittens|pets|cars|bikes|"
    r"bicycles|horses|rabbits|birds|fish|grandchildren|grandkids)"
    r"(?:\s+(?:now|in total|altogether))?(?:,?\s*not\s+\w+)?$",
    re.IGNORECASE,
)


def _counted_at_home(clause: str, confidence: float) -> Candidate | None:
    bare = _BARE_COUNT.search(clause)
    if bare is not None:
        content = f"The user has {bare['n'].lower()} {bare['thing'].lower()}."
        return make_candidate(
            "fact", content, importance="significant", confidence=confidence, tags=["family"]
        )
    found = _THERE_ARE.match(clause)
    if found is None:
        return None
    who = "The user has" if found["whose"].lower() == "my" else "The user and their family have"
    content = f"{who} {found['n'].lower()} {found['thing'].lower()}."
    return make_candidate(
        "fact", content, importance="significant", confidence=confidence, tags=["family"]
    )


def _reported_by_someone_else(clause: str) -> bool:
    """ "My boss thinks ...", "John told me ...": a verb of saying in the third person or the
    past (by the lexicon) before another word, in a clause that does not open with "I"/"we"."""
    words = clause.lower().split()[:-1]
    saying = any(verb_lemmas(w) & _SAYING and (lexical(w).vbz or lexical(w).vbd) for w in words)
    return saying and not re.match(r"(?:i|we)\b", clause, re.IGNORECASE)
