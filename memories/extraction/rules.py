"""The offline classification stage: memories from one message by rules, no model.

``memories.extraction.pipeline.classify`` calls ``classify_message`` when the chat provider
has no model; it produces the same ``Candidate`` structure as the model does (stage="rules").
A message is read sentence by sentence; a sentence that holds ordered steps is
one workflow, otherwise each clause ("I love cycling | and I have two cats")
goes through these rules, first match wins:

1. skipped: questions, claims about the assistant ("you are now ..."),
   credential values ("the wifi password is ..."), and what other people said
   or think ("My boss thinks ...", "John told me ...");
2. behavioral: how the assistant should talk to the user ("Please answer
   briefly", "Reply in French", "Call me by my first name", "I'd like you to
   use British spelling") -> procedure/behavioral;
3. constraint: a hard rule ("Never deploy on Fridays", "We only use Python
   3.11", "Code reviews are mandatory", "Responses must include a request id")
   -> procedure/constraint;
4. episode: the user, their team or family did something ("I decided to switch
   to Postgres", "We launched v2 yesterday", "Our daughter was born in May",
   any dated past action) -> episode, with ``time_hint`` and, for simple
   relative hints, ``occurred_at``;
5. fact: preferences, diet and health, family and pets, tools, languages,
   habits, experience and plans ("I prefer tea", "My dog is called Rex",
   "I never eat fast food", "I might move to Berlin", "tabs > spaces").

Conventions (the benchmark and the pipeline rely on them):

- Greetings, thanks, acknowledgements, questions and one-off requests give no
  candidate at all (``[]``): nothing memory-shaped was said.
- A first-person statement about a passing state ("I'm so tired today") gives
  a candidate with ``retention="reject"``, ``reject_reason="ephemeral_noise"``,
  so the extraction record shows why it was not kept.
- Hedged statements ("I might", "maybe", "I think", "probably") are kept with
  confidence ``speculative`` or ``likely`` (below 0.7), so they end up as
  pending candidates rather than trusted memories.
- Identity statements (name, age, location, employer, role, email ...) are
  left to the regex stage: these rules skip them and never set ``slot``.
- Only user messages are read. Assistant and tool text never establishes
  facts about the user, so it gives ``[]``.
- Content is one canonical third-person sentence ("The user prefers tea over
  coffee."; "we" is the user's team, or family when the sentence is about home
  life). Relative dates in episodes are replaced by absolute ones, so the memory
  does not go stale ("yesterday" -> "on 2 June 2025").

Known limits: no coreference ("My son does too", "it is my favourite" are
skipped), no paraphrase, English only, one memory per clause (so "I use
Obsidian for notes and Todoist for tasks" is a single fact), clefts and
self-answered questions ("it's Linear we use now", "Favourite season? Autumn")
are missed, and every rule is a list of words someone chose. The word lists live in
``rules_words.py``; this module holds the patterns built from them and the logic. Measure
changes with ``manage.py bench extraction``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from memories.extraction import clauses_words as LW  # the list-heading patterns, shared
from memories.extraction import regex_words as RW
from memories.extraction import rules_words as W
from memories.extraction.claims import NUMBER_WORDS
from memories.extraction.classify import (
    clean_tags,
    clip_title,
    date_phrase,
    find_time_hint,
    is_relative_hint,
    resolve_time_hint,
)
from memories.extraction.reported import strip_reported
from memories.extraction.sentences import lexical
from memories.extraction.types import CONFIDENCE, IMPORTANCE, Candidate


@dataclass(frozen=True)
class _Context:
    """What the whole sentence says about every clause in it."""

    confidence: float
    now: datetime


def classify_message(text: str, role: str, now: datetime) -> list[Candidate]:
    """All candidates in one message, in order, without repeats."""
    if role != "user":
        return []  # assistant and tool text never establishes facts about the user
    text = _normalise(strip_reported(text))  # quotes, fiction, translations: not the user's
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


def _normalise(text: str) -> str:
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
    if not (_PROCESS_HEADING.search(heading) or are_steps(steps)):
        return None, text  # "I speak: Spanish, English": items, each read on its own
    body = "; ".join(steps)
    sentence = f"{heading.rstrip(':')}: {body}" if heading else f"Steps: {body}"
    used = set(items) | ({first - 1} if heading else set())
    rest = "\n".join(line for i, line in enumerate(lines) if i not in used)
    candidate = _procedure("workflow", sentence, CONFIDENCE["stated"])
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
    workflow = _workflow(body, confidence)
    if workflow is not None:
        return [workflow]
    out: list[Candidate] = []
    for clause in _clauses(body):
        candidate = _classify_clause(clause, _Context(confidence, now))
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
    return _fact(content, "family", candidate.confidence, importance="significant")


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


# --- procedures --------------------------------------------------------------------------------
_WORKFLOW_HEADING = re.compile(
    r"^(?:(?:the|my|our)\s+)?(?:[\w-]+\s+){0,3}"
    rf"(?:{W.WORKFLOW_NOUNS})"
    r"(?:\s+(?:for|to|when)\s+[^:]{1,60})?\s*(?:is|are)?\s*:\s*\S",
    re.IGNORECASE,
)
_ONE_STATEMENT = re.compile(r"^\s*(?:i|we)\b[^,;]*$", re.IGNORECASE)
_WORKFLOW_OPENER = re.compile(r"^(?:to|for|when|whenever|before|after|if|once)\b", re.I)
_STEP_WORDS = re.compile(r"\b(?:first|then|next|after that|afterwards)\b", re.IGNORECASE)
_STYLE = re.compile(rf"\b(?:{W.STYLE_CUES})\b", re.IGNORECASE)
_ASSISTANT_IMPERATIVE = re.compile(
    r"^(?:please\s+|kindly\s+|just\s+)?(?:always\s+|never\s+|do not\s+|don't\s+)?"
    rf"(?:{W.ASSISTANT_VERBS})\b",
    re.IGNORECASE,
)
# "Talk to me like a friend", "Reply without the fluff": a manner of speaking is a standing
# instruction even without a style word; "Answer this question" has no manner and is a request.
_MANNER = re.compile(
    r"^(?:please\s+)?(?:always\s+)?(?:talk|speak|reply|respond|answer|write)(?:\s+to\s+me)?"
    r"\s+(?:like|as if|as though|without|with(?:out)? (?:less|more)|more|less)\b",
    re.IGNORECASE,
)
_WHEN_YOU = re.compile(
    r"\b(?:when|whenever|if) you\b|\byour (?:answers|responses|replies)\b"
    r"|^(?:when|whenever) (?:explaining|answering|replying|writing|summari[sz]ing|reviewing)\b",
    re.IGNORECASE,
)
_NAMED_CALL = re.compile(r"(?<!not )(?<!never )\bcall me (?!by\b)[A-Z]")
_CONSTRAINT_IMPERATIVE = re.compile(
    rf"^(?:please\s+)?(?:{W.CONSTRAINT_OPENERS}"
    r"|no \w+(?: \w+)? (?:on|after|before|in|during|without|outside|from))\b",
    re.IGNORECASE,
)
_TEAM_RULE = re.compile(
    r"^(?:maybe\s+|perhaps\s+|probably\s+)?(?:we|our team|the team)\s+"
    r"(?:(?:(?:should|must|will)\s+)?(?:never|always|only)|must)\b",
    re.IGNORECASE,
)
_RULE_PREFIX = re.compile(
    r"^(?:our|the|my|a)\s+(?:(?:house|team|golden|one|main|new)\s+)?(?:rule|policy|convention)s?"
    r"(?:\s+(?:is|are))?(?:\s+(?:to|that))?\s*[:\s]\s*",
    re.IGNORECASE,
)
_SUBJECT_MUST = re.compile(
    r"^(?!i\b|we\b)(?:[\w.-]+\s+){1,5}?(?:must|shall|may|should|can|cannot)\s+(?:not\s+|never\s+)?"
    r"|^(?!i\b|we\b)(?:[\w.-]+\s+){1,5}?(?:is|are)\s+(?:not allowed|never allowed|forbidden)\b",
    re.IGNORECASE,
)
_MUST_WORDS = re.compile(r"\b(?:must|shall|never|not allowed|forbidden|cannot)\b", re.IGNORECASE)
# A rule stated about things rather than people: "Code reviews are mandatory", "Secrets go in
# Vault, never in the code". Personal subjects are excluded: "I never eat meat" is a habit.
_IMPERSONAL_RULE = re.compile(
    rf"\b(?:{W.RULE_WORDS})\b"
    rf"|\b(?:needs?|requires?)\s+(?:at least\s+)?(?:\w+\s+)?(?:{W.REQUIRED_THINGS})\b",
    re.IGNORECASE,
)
_PERSONAL_SUBJECT = re.compile(
    rf"^(?:{W.PERSONAL_SUBJECTS}|{W.RELATIONS})\b"
    r"|^[A-Z][a-z]+\s+(?:is|was|has|never)\b",
    re.IGNORECASE,
)
_PLEASE = re.compile(r"^(?:please|kindly)\s+|,?\s+please[.!]?$", re.IGNORECASE)


_LABELLED_STEPS = re.compile(r"^[^:,]{1,60}:\s*(?P<steps>.+)$")


def _workflow(sentence: str, confidence: float) -> Candidate | None:
    """Ordered steps in one sentence: a "process is:" heading, "to X, first A, then B",
    or "<label>: A, B, then C"."""
    if _WORKFLOW_HEADING.match(sentence):
        body = sentence.split(":", 1)[1]
        if _ONE_STATEMENT.match(body):
            return None  # "My routine: I run 5 km every morning" is a habit, not steps
        return _procedure("workflow", sentence, confidence)
    labelled = _LABELLED_STEPS.match(sentence)
    label = sentence.split(":", 1)[0]
    if labelled and (LW.ERRANDS.search(label) or LW.REPLY_HEADING.search(label)):
        return None  # "TODO: fix tests, update docs", "Summary of your answer: restart, ..."
    if labelled and _is_step_list(labelled["steps"]):
        return _procedure("workflow", sentence, confidence)
    opener = _WORKFLOW_OPENER.match(sentence) and "," in sentence
    # "When you give me code, write it in TypeScript, not JavaScript" is one order, not steps.
    steps = sentence.split(",")[1:]
    if opener and (_STEP_WORDS.search(sentence) or (len(steps) >= 2 and are_steps(steps))):
        return _procedure("workflow", sentence, confidence)
    return None


def _is_step_list(text: str) -> bool:
    commas = text.count(",")
    if commas >= 1 and _STEP_WORDS.search(text):
        return True
    return commas >= 2 and are_steps(text.split(","))


# A heading that names a way of doing something: "How I do laundry:", "Deploy flow for X:".
_PROCESS_HEADING = re.compile(
    rf"\b(?:how (?:i|we|to)|{W.WORKFLOW_NOUNS}|flow|every (?:day|morning|evening|week|month"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|prep)\b|^(?:to|when|before"
    r"|after|once)\b|\b(?:daily|weekly|monthly|quarterly)\s*:",
    re.IGNORECASE,
)


def are_steps(items: list[str]) -> bool:
    """Whether most items are actions: they open with a verb's base form ("cook a batch of
    rice", "roast vegetables"), not a noun ("Raycast", "Spanish (native)")."""
    opened = [_opens_with_action(item) for item in items if item.strip()]
    return len(opened) >= 2 and sum(opened) * 2 > len(opened)


def _opens_with_action(item: str) -> bool:
    words = re.findall(r"[A-Za-z']+", item)
    if not words:
        return False
    first = words[0].lower()
    if first in {"then", "first", "next", "finally", "and"} and len(words) > 1:
        first = words[1].lower()
    info = lexical(first)
    return info.base and not (info.noun and len(words) == 1)


def _behavioral(clause: str, confidence: float) -> Candidate | None:
    if _NAMED_CALL.search(clause):
        return None  # "call me Alex" is the user's name: the regex stage's job
    directed = _ASSISTANT_IMPERATIVE.match(clause) or _WHEN_YOU.search(clause)
    if (directed and _STYLE.search(clause)) or _MANNER.match(clause):
        return _procedure("behavioral", _PLEASE.sub("", clause), confidence)
    return None


def _constraint(clause: str, confidence: float) -> Candidate | None:
    text = clause
    rule = _RULE_PREFIX.match(text)
    if rule:
        text = text[rule.end() :]
    core = re.sub(r"^(?:maybe|perhaps|probably)\s+", "", text, flags=re.IGNORECASE)
    imperative = _CONSTRAINT_IMPERATIVE.match(core)
    must = _SUBJECT_MUST.match(core) and _MUST_WORDS.search(core)
    impersonal = _IMPERSONAL_RULE.search(core) and not _PERSONAL_SUBJECT.match(core)
    if rule or imperative or _TEAM_RULE.match(text) or must or impersonal:
        return _procedure("constraint", _PLEASE.sub("", text), confidence)
    return None


def _procedure(subtype: str, text: str, confidence: float) -> Candidate:
    content = _sentence_case(_third_person(text, plural_we=True))
    importance = {"constraint": "core", "workflow": "significant", "behavioral": "significant"}
    return _candidate(
        "procedure",
        content,
        importance=importance[subtype],
        confidence=confidence,
        tags=[subtype],
        subtype=subtype,
    )


# --- clause dispatch -
_ABOUT_ASSISTANT = re.compile(
    r"^(?:you|the assistant|the ai|the bot|the model)\s+(?:are|is|were|was|have|has|had|will be"
    r"|used to)\b|^you're\b",
    re.IGNORECASE,
)
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


# A reporting verb followed by what a report starts with ("said that", "told me", "thinks we"),
# so nouns such as "claims" in "sources for factual claims" are not mistaken for one.
_REPORTED = re.compile(
    rf"\b(?:{W.REPORTING_VERBS})\s+(?:{W.REPORT_STARTS}|[A-Z]\w*)\b",
    re.IGNORECASE,
)


def _classify_clause(clause: str, ctx: _Context) -> Candidate | None:
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
    for rule in (_behavioral, _constraint):
        found = rule(clause, ctx.confidence)
        if found is not None:
            return found
    return (
        _counted_at_home(clause, ctx.confidence)
        or _episode(clause, ctx)
        or _relation_fact(clause, ctx.confidence)
        or _first_person_fact(clause, ctx.confidence)
        or _preference_shapes(clause, ctx.confidence)
        or (_remembered_fact(clause, ctx.confidence) if remembered else None)
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
        return _candidate(
            "fact", content, importance="significant", confidence=confidence, tags=["family"]
        )
    found = _THERE_ARE.match(clause)
    if found is None:
        return None
    who = "The user has" if found["whose"].lower() == "my" else "The user and their family have"
    content = f"{who} {found['n'].lower()} {found['thing'].lower()}."
    return _candidate(
        "fact", content, importance="significant", confidence=confidence, tags=["family"]
    )


def _reported_by_someone_else(clause: str) -> bool:
    """ "My boss thinks ...", "John told me ...": someone else's words, not the user's facts."""
    match = _REPORTED.search(clause)
    if not match:
        return False
    subject = clause[: match.start()].strip().lower()
    return not re.match(r"^(?:i|we)\b", subject)


# --- episodes -
_EPISODE_SUBJECT = re.compile(r"\b(i|we)\s+", re.IGNORECASE)
# "Our daughter was born in May", "My dad retired last year": milestones of the user's family.
_FAMILY_EVENT = re.compile(
    rf"^(?:my|our)\s+(?:[\w-]+\s+)?(?:{W.FAMILY_EVENT_RELATIONS})\s+(?:just\s+|finally\s+)?"
    rf"(?P<verb>{W.FAMILY_EVENTS})\b",
    re.IGNORECASE,
)
_SUBJECTLESS = re.compile(r"^(?:(?:just|finally|recently|officially)\s+)?([a-z]+)\b", re.IGNORECASE)
_MILESTONES = re.compile(rf"\b(?:{W.MILESTONES})\b", re.IGNORECASE)


_USED_TO_FEEL = re.compile(
    r"^(?:i|we)\s+used\s+to\s+(?:really\s+)?(?:love|like|enjoy|hate|dislike|adore|prefer)\b",
    re.IGNORECASE,
)


def _episode(clause: str, ctx: _Context) -> Candidate | None:
    if _USED_TO_FEEL.match(clause):
        # "I used to love jazz": a feeling that held, not an event (no action to date).
        return _fact(clause, _topic_tag(clause) or "preference", ctx.confidence, importance=None)
    subject, verb = _past_event(clause)
    if subject is None:
        return None
    hint = find_time_hint(clause)
    when = resolve_time_hint(hint, ctx.now) if hint else None
    text = _subject_first(clause) if subject else f"I {clause[0].lower()}{clause[1:]}"
    if hint and is_relative_hint(hint):
        text = _drop_phrase(text, hint)
    content = _third_person(text, past=True)
    if hint and is_relative_hint(hint):
        content += f" {date_phrase(hint, when)}" if when else f" ({hint})"
    milestone = bool(_MILESTONES.search(clause))
    tag = "decision" if verb in W.DECISION_VERBS else "event"
    return _candidate(
        "episode",
        _sentence_case(content),
        importance="significant" if milestone or tag == "decision" else "standard",
        confidence=ctx.confidence,
        tags=[tag, *(["milestone"] if milestone else [])],
        time_hint=hint,
        occurred_at=when,
        text=clause,
    )


def _past_event(clause: str) -> tuple[str | None, str]:
    """(subject, verb) when the user, their team or family did something; ("", verb) when
    the subject was dropped ("Moved to Amsterdam in May"); (None, "") otherwise."""
    family = _FAMILY_EVENT.match(clause)
    if family:
        return "family", family["verb"].lower()
    for match in _EPISODE_SUBJECT.finditer(clause):
        words = clause[match.end() :].lower().split()
        verb = _skip_adverbs(words)
        if verb in {"have", "has"}:  # "we have just launched", "I've decided": done, so an event
            participle = _skip_adverbs(words[words.index(verb) + 1 :])
            if participle in W.EVENT_VERBS - {"had", "got", "been"}:
                return match.group(1).lower(), participle
        if verb in W.EVENT_VERBS and _is_event_use(verb, words):
            return match.group(1).lower(), verb
        if _is_dated_past(verb, words, clause):
            return match.group(1).lower(), verb
        break  # only the first subject: "after I left, we ..." is too ambiguous for rules
    # "Moved to Amsterdam in May": people drop the "I"; three words at least, so "Got it" is not.
    lead = _SUBJECTLESS.match(clause)
    if lead and len(clause.split()) >= 3 and lead.group(1).lower() in W.SUBJECTLESS_EVENTS:
        return "", lead.group(1).lower()
    return None, ""


def _is_dated_past(verb: str, words: list[str], clause: str) -> bool:
    """Any past-tense action with a date is an event: "I handed in my notice this morning",
    "I was diagnosed with ADHD last year". States ("I was tired yesterday") are not."""
    if verb in {"was", "were"}:
        after = _skip_adverbs(words[words.index(verb) + 1 :])
        return after in W.PASSIVE_EVENTS or (_is_participle(after) and bool(find_time_hint(clause)))
    if verb in W.STATIVE_PAST:
        return False
    return _is_participle(verb) and bool(find_time_hint(clause))


def _is_participle(word: str) -> bool:
    return (len(word) > 4 and word.endswith("ed") and word not in W.NOT_PAST_ED) or (
        word in W.MODAL_OR_PAST and word not in W.MODALS
    )


def _is_event_use(verb: str, words: list[str]) -> bool:
    """Rule out verbs that are only events in some uses ("had a baby" yes, "had a cold" no)."""
    after = words[words.index(verb) + 1 : words.index(verb) + 3] if verb in words else []
    if verb == "had":
        return bool(after) and after[-1] in W.HAD_EVENTS
    if verb == "got":
        return bool(after) and (after[0].endswith("ed") or after[0] in W.GOT_EVENT_STARTS)
    if verb == "went":
        return bool(after) and after[0] in W.WENT_EVENT_STARTS
    if verb == "ended":
        return after[:1] == ["up"]
    return True


def _without_adverbs(words: list[str]) -> list[str]:
    """``words`` from the first one that is not an adverb ("never been to" -> "been to")."""
    first = _skip_adverbs(words)
    return words[words.index(first) :] if first in words else []


def _skip_adverbs(words: list[str]) -> str:
    i = 0
    while i < len(words):
        pair = " ".join(words[i : i + 2])
        if pair in W.ADVERB_PAIRS:
            i += 2
        elif words[i] in W.ADVERBS:
            i += 1
        else:
            return words[i].strip(",.!")
    return ""


def _subject_first(clause: str) -> str:
    """ "After a long search we picked X" -> "we picked X after a long search": the canonical
    sentence starts with who did it."""
    match = _EPISODE_SUBJECT.search(clause)
    if not match or match.start() == 0:
        return clause
    lead = clause[: match.start()].strip(" ,")
    if find_time_hint(lead) == lead or re.search(r"\b(?:my|our)\s*$", lead, re.IGNORECASE):
        return clause  # "Yesterday I ..." is handled as a date; "my wife and I" is a subject
    if re.search(r"\band\s*$", lead, re.IGNORECASE):
        return clause
    return f"{clause[match.start() :]} {lead[0].lower()}{lead[1:]}"


def _drop_phrase(text: str, phrase: str) -> str:
    pattern = re.compile(rf"\s*,?\s*\b{re.escape(phrase)}\b\s*,?", re.IGNORECASE)
    return " ".join(pattern.sub(" ", text, count=1).split()).strip(" ,")


# --- facts -
_RELATION_SUBJECT = re.compile(
    rf"^(?:my|our)\s+(?:[\w-]+\s+)?(?:{W.RELATIONS})(?:'s)?\s+(?P<rest>.+)$", re.IGNORECASE
)
_RELATION_APPOSITIVE = re.compile(
    rf"^[A-Z][a-z]+,\s+my\s+(?:[\w-]+\s+)?(?:{W.RELATIONS}),\s+(?P<rest>.+)$", re.IGNORECASE
)
_PET = re.compile(rf"\b(?:{W.PETS})", re.IGNORECASE)
_WORK_RELATION = re.compile(rf"\b(?:{W.WORK_RELATIONS})\b", re.IGNORECASE)
_NAME_IS_RELATION = re.compile(rf"^[A-Z][a-z]+\s+is\s+my\s+(?:[\w-]+\s+)?(?:{W.RELATIONS})\b")
_RELATION_VERB = re.compile(
    rf"^(?:(?:[A-Z][a-z]+|also|still|really)\s+)?(?:{W.RELATION_VERBS})\b",
    re.IGNORECASE,
)
_FAVOURITE = re.compile(r"\bfavou?rite\b", re.IGNORECASE)
_PLAN_PROGRESSIVE = re.compile(rf"^(?:{W.PLAN_PROGRESSIVES})\b", re.IGNORECASE)
# "I'm switching to a four-day week": a change under way is a plan, not yet an event.
_LIFE_CHANGE = re.compile(rf"^(?:{W.LIFE_CHANGES})\b", re.IGNORECASE)
_COPULA_FACTS = re.compile(
    rf"^(?:an?\s+)?(?:(?:big|huge|massive|total)\s+)?(?:{W.COPULA_FACTS})", re.IGNORECASE
)
_COPULA_TAGS = tuple((tag, re.compile(words)) for tag, words in W.COPULA_TAGS)
_TRANSIENT = re.compile(
    rf"^(?:so |really |very |a bit |kind of |super |quite |feeling )*(?:{W.TRANSIENT_STATES})\b",
    re.IGNORECASE,
)
# "I'm in a bad mood today": a state said of today only passes ("as of today" starts one).
_PASSING_TIME = re.compile(
    r"(?<!\bof )(?<!\bfrom )(?<!\bsince )(?<!\bstarting )\b(?:today|tonight|"
    r"this (?:morning|afternoon|evening)|right now|rn|atm)\W*$",
    re.IGNORECASE,
)
_NOT_ANYMORE_COPULA = re.compile(r"\b(is|are) not (.+?)\s+any ?more\b", re.IGNORECASE)
_NOT_ANYMORE_VERB = re.compile(r"\bdoes not (\w+)(.*?)\s+any ?more\b", re.IGNORECASE)


def _relation_fact(clause: str, confidence: float) -> Candidate | None:
    """Family, pets, team: "My sister lives in Madrid", "Anna, my manager, prefers ..."."""
    if _FAVOURITE.search(clause) and re.search(r"\bmy\b", clause, re.IGNORECASE):
        return _fact(clause, "preference", confidence, importance="standard")
    match = _RELATION_SUBJECT.match(clause) or _RELATION_APPOSITIVE.match(clause)
    if match and _RELATION_VERB.match(match.group("rest")):
        tag = "pets" if _PET.search(clause) else "family"
        if _WORK_RELATION.search(clause):
            tag = "work"
        return _fact(clause, tag, confidence, importance="significant")
    if _NAME_IS_RELATION.match(clause):
        return _fact(clause, "family", confidence, importance="significant")
    return None


_FIRST_PERSON_SUBJECT = re.compile(
    r"^(?:(?:maybe|perhaps|probably)\s+)?(?:(?:my|our)\s+(?:[\w-]+\s+)?[\w-]+\s+and\s+i"
    r"|[A-Z][a-z]+\s+and\s+i|i|we)\s+",
    re.IGNORECASE,
)
# "tabs > spaces", "a thriller over a romcom any day": preferences without a verb.
_BETTER_THAN = re.compile(r"^(?P<a>[\w+#. -]{1,40}?)\s*>\s*(?P<b>[\w+#. -]{1,40}?)(?:,.*)?$")
_ANY_DAY = re.compile(
    r"^(?:give me\s+|i(?: would)? (?:take|pick|choose)\s+)?(?P<a>.+?)\s+over\s+(?P<b>.+?)"
    r"\s+any day\b",
    re.IGNORECASE,
)
# "Pineapple on pizza is disgusting": an opinion held by the user about a named thing.
_OPINION = re.compile(
    rf"^(?P<thing>(?!(?:{W.NOT_OPINION_SUBJECTS})\b)[\w+#'. -]{{2,40}}?)\s+(?:is|are)\s+"
    r"(?:so\s+|really\s+|totally\s+|just\s+|absolutely\s+)?"
    rf"(?P<verdict>{W.OPINION_VERDICTS})\b",
    re.IGNORECASE,
)


_NOTHING_BEATS = re.compile(
    r"^(?:nothing beats|nothing compares to|there is nothing like|you cannot beat)\s+\S", re.I
)


def _preference_shapes(clause: str, confidence: float) -> Candidate | None:
    """Preferences people write without "I prefer"."""
    if _NOTHING_BEATS.match(clause):
        sentence = f"The user thinks {clause[0].lower()}{clause[1:]}"
        return _candidate(
            "fact",
            _sentence_case(sentence),
            importance="standard",
            confidence=confidence,
            tags=["preference"],
        )
    for pattern in (_BETTER_THAN, _ANY_DAY):
        match = pattern.match(clause)
        if match:
            sentence = f"The user prefers {match['a'].strip()} over {match['b'].strip()}"
            return _candidate(
                "fact",
                _sentence_case(sentence),
                importance="standard",
                confidence=confidence,
                tags=["preference"],
            )
    match = _OPINION.match(clause)
    if match:
        sentence = (
            f"The user thinks {match['thing'][0].lower()}{match['thing'][1:]} "
            + clause[match.end("thing") :].strip()
        )
        return _candidate(
            "fact",
            _sentence_case(sentence),
            importance="standard",
            confidence=confidence,
            tags=["preference", "opinion"],
        )
    return None


def _first_person_fact(clause: str, confidence: float) -> Candidate | None:
    match = _FIRST_PERSON_SUBJECT.match(clause)
    if not match:
        return None
    words = [w.strip(",.!()") for w in clause[match.end() :].split()]
    lower = [w.lower() for w in words]
    head = _skip_adverbs(lower)
    if not head:
        return None
    at = lower.index(head)
    rest_words, rest_lower = words[at + 1 :], lower[at + 1 :]
    if head in {"am", "are"}:
        return _copula_fact(clause, rest_words, confidence)
    if head == "have" and rest_lower[:1] == ["got"]:  # "I've got a MacBook" is "I have"
        rest_lower = rest_lower[1:]
    if head in {"do", "does"} and rest_lower[:1] == ["not"]:
        head = _skip_adverbs(rest_lower[1:])
        rest_lower = rest_lower[rest_lower.index(head) + 1 :] if head else []
    if head in W.MODALS:
        return _modal_fact(clause, head, rest_lower, confidence)
    return _verb_fact(clause, head, _without_adverbs(rest_lower), confidence)


def _copula_fact(clause: str, rest: list[str], confidence: float) -> Candidate | None:
    words = [w for w in rest if w.lower() not in W.ADVERBS | {"not", "no", "longer"}]
    complement = " ".join(words)
    if not complement:
        return None
    if _TRANSIENT.match(complement) or _PASSING_TIME.search(complement):
        return _candidate(
            "fact",
            _sentence_case(_third_person(clause)),
            importance="trivial",
            confidence=confidence,
            tags=["mood"],
            retention="reject",
            reject_reason="ephemeral_noise",
        )
    if _PLAN_PROGRESSIVE.match(complement) or _LIFE_CHANGE.match(complement):
        return _fact(clause, "plan", min(confidence, CONFIDENCE["likely"]), importance="standard")
    if words[0].lower() in W.NATIONALITIES:
        return _fact(clause, "background", confidence, importance="standard")
    if _COPULA_FACTS.match(complement):
        return _fact(clause, _copula_tag(complement), confidence, importance=None)
    return None  # "I am Sam", "I am 34", "I am a nurse", "I am in Denver": identity slots


def _copula_tag(complement: str) -> str:
    lower = complement.lower()
    return next((tag for tag, pattern in _COPULA_TAGS if pattern.search(lower)), "personal")


def _modal_fact(clause: str, modal: str, rest: list[str], confidence: float) -> Candidate | None:
    tail = rest[1:] if rest[:1] == ["not"] else rest
    verb = _skip_adverbs(tail)
    if modal == "would" and verb in {"rather", "prefer", "like", "love"}:
        return _fact(clause, "preference", confidence, importance="standard")
    if modal == "cannot" and (verb in {"stand", "bear"} or tail[:3] == ["get", "enough", "of"]):
        return _fact(clause, "preference", confidence, importance="standard")
    if modal in {"might", "may", "could", "will"} and verb and verb not in {"be", "have", "not"}:
        plan_confidence = min(confidence, CONFIDENCE["likely"])
        return _fact(clause, "plan", plan_confidence, importance="standard")
    after_be = tail[tail.index("be") + 1 :] if verb == "be" else []
    if modal in {"might", "may", "will"} and after_be[:1] and after_be[0].endswith("ing"):
        # "I may be changing jobs": a plan in the progressive
        return _fact(clause, "plan", min(confidence, CONFIDENCE["likely"]), importance="standard")
    return None


def _verb_fact(clause: str, verb: str, rest: list[str], confidence: float) -> Candidate | None:
    if verb in W.PREFERENCE_VERBS and verb not in {"stand", "mind", "rather"}:
        return _fact(clause, "preference", confidence, importance="standard")
    if verb == "have":
        return _have_fact(clause, rest, confidence)
    if verb == "go" and rest[:1] and (rest[0] in {"to", "for"} or rest[0].endswith("ing")):
        return _fact(clause, _topic_tag(clause) or "habit", confidence, importance=None)
    if verb == "take" and rest[:1] and rest[0] not in W.TAKE_NOT_HABIT:
        return _fact(clause, _topic_tag(clause) or "habit", confidence, importance=None)
    if verb in W.PLAN_VERBS and rest[:1] == ["to"]:
        return _fact(clause, "plan", min(confidence, CONFIDENCE["likely"]), importance="standard")
    if verb in W.HABIT_VERBS:
        if verb == "work" and _without_adverbs(rest)[:1] in (["at"], ["for"], ["as"], ["in"]):
            return None  # "I work at Acme", "I work remotely for X": identity slots
        return _fact(clause, _topic_tag(clause) or "habit", confidence, importance=None)
    return None


_TASKS_LEFT = re.compile(
    r"\bto\s+(?:do|finish|write|read|grade|review|fix|submit|complete|make|prepare|send|"
    r"answer)\b|\b(?:left|due)\b(?!\s+(?:handed|hand))",
    re.IGNORECASE,
)


def _have_fact(clause: str, rest: list[str], confidence: float) -> Candidate | None:
    if rest[:1] and (rest[0] == "been" or _is_participle(rest[0])):
        # "I have been playing piano for 20 years", "I have never owned a car": experience
        return _fact(clause, _topic_tag(clause) or "experience", confidence, importance=None)
    if _TASKS_LEFT.search(clause):
        return None  # "I have six write-ups to do": work for today, not something owned
    if rest[:1] and rest[0] in W.HAVE_OBJECTS:  # "I have two kids", "I have type 1 diabetes"
        return _fact(clause, _topic_tag(clause) or "personal", confidence, importance=None)
    return None  # "I have a question", "I have to go" and the like say nothing lasting


def _remembered_fact(clause: str, confidence: float) -> Candidate | None:
    """After "remember that": any plain statement the user asked to keep."""
    if len(clause.split()) < 3 or re.match(r"^you\b", clause, re.IGNORECASE):
        return None  # "remember that you are ..." is about the assistant, not the user
    return _fact(clause, "note", confidence, importance="significant")


def _fact(clause: str, tag: str, confidence: float, *, importance: str | None) -> Candidate:
    text = _third_person(clause)
    text = _NOT_ANYMORE_COPULA.sub(r"\1 no longer \2", text)
    text = _NOT_ANYMORE_VERB.sub(lambda m: f"no longer {_third_singular(m[1])}{m[2]}", text)
    level = importance or _importance_for(clause)
    return _candidate(
        "fact", _sentence_case(text), importance=level, confidence=confidence, tags=[tag]
    )


_IMPORTANCE = tuple((level, re.compile(stems)) for level, stems in W.IMPORTANCE_STEMS)


def _importance_for(clause: str) -> str:
    lower = clause.lower()  # "critical": getting it wrong can hurt the user
    return next((level for level, pattern in _IMPORTANCE if pattern.search(lower)), "standard")


# --- canonical sentences -
_PRONOUNS = re.compile(r"\b(I|me|my|mine|myself|we|us|our|ours|ourselves)\b", re.IGNORECASE)
_SUBJECT_VERB = re.compile(
    r"\x00(?P<subject>the user|the user's team|the user's family)"
    r"(?P<adverbs>(?:\s+(?:kind of|sort of|no longer|pretty much|"
    + "|".join(sorted(W.ADVERBS))
    + r"))*)\s+(?P<verb>[A-Za-z]+)\b",
    re.IGNORECASE,
)
_THEY_VERB = re.compile(r"\x01they(\s+\w+)??\s+(am|was)\b")


_COMPOUND_SUBJECT = re.compile(
    r"\b(?:my|our)\s+((?:[\w-]+\s+)?[\w-]+)\s+and\s+I\b|\b([A-Z][a-z]+)\s+and\s+I\b"
    r"|\bme\s+and\s+my\s+([\w-]+)\b",
    re.IGNORECASE,
)
_FAMILY_OUR = re.compile(rf"\bour\s+(?=(?:[\w-]+\s+)?(?:{W.RELATIONS})\b)", re.IGNORECASE)
# "We" is a household, not a team, when the sentence is about home life.
_HOUSEHOLD = re.compile(rf"\b(?:{W.HOUSEHOLD})\b", re.IGNORECASE)
# "We moved to Munich": a household moves to a place ("we moved to Postgres" is the team's).
_HOUSEHOLD_MOVE = re.compile(r"\b(?:moved|relocated|moving)\s+(?:back\s+|over\s+)?to\s+[A-Z]")
_NOT_A_HOME = re.compile(rf"\b(?:{RW.NOT_A_HOME})\b", re.IGNORECASE)


# "We got married in June": the couple, not the whole family.
_COUPLE = re.compile(
    r"\b(?:married|engaged|wedding|honeymoon|anniversary|dating|broke up|split up)\b", re.I
)


def _is_household(text: str) -> bool:
    return bool(_HOUSEHOLD.search(text)) or bool(
        _HOUSEHOLD_MOVE.search(text) and not _NOT_A_HOME.search(text)
    )


def _third_person(text: str, *, past: bool = False, plural_we: bool = False) -> str:
    """Rewrite first-person text about "the user": "I love my dog" -> "the user loves their dog".

    ``plural_we`` turns "we" into "the user and their team", for steps and rules where
    several verbs follow one subject ("we branch, fix and cherry-pick") and a singular
    subject would leave all but the first verb unconjugated.
    """
    state = {
        "user": False,
        "team": False,
        "family": _is_household(text),
        "couple": bool(_COUPLE.search(text)),
        "plural": plural_we,
    }
    compound = _COMPOUND_SUBJECT.search(text)
    if compound:  # "my wife and I bought" -> "the user and their wife bought" (plural, as written)
        other = f"their {compound[1]}" if compound[1] else compound[2] or f"their {compound[3]}"
        text = f"{text[: compound.start()]}\x02the user and {other}{text[compound.end() :]}"
        state["user"] = state["team"] = True  # later "our"/"we" are "their"/"they"
    if not re.search(r"\bwe\b", text, re.IGNORECASE):
        text = _FAMILY_OUR.sub("my ", text)  # "our daughter" without "we" is the user's daughter

    text = _PRONOUNS.sub(lambda m: _swap_pronoun(m[1].lower(), state), text)
    text = _SUBJECT_VERB.sub(lambda m: _conjugate(m, past), text)
    text = _THEY_VERB.sub(
        lambda m: f"\x01they{m[1] or ''} {'are' if m[2] == 'am' else 'were'}", text
    )
    return text.replace("\x00", "").replace("\x01", "").replace("\x02", "")


def _swap_pronoun(word: str, state: dict[str, bool]) -> str:
    if word in {"i", "me", "my", "mine", "myself"}:
        first = not state["user"]
        state["user"] = True
        if word == "i":
            return "\x00the user" if first else "\x01they"
        return {
            "me": "the user" if first else "them",
            "my": "the user's" if first else "their",
            "mine": "the user's" if first else "theirs",
            "myself": "themselves",
        }[word]
    first = not state["team"]
    state["team"] = True
    group = "partner" if state.get("couple") else "family" if state["family"] else "team"
    if word == "we":
        # A household's "we" includes the user ("we have two cats": the user has them);
        # a team's is the team.
        if first and (state["plural"] or state["family"] or state.get("couple")):
            return f"the user and their {group}"
        return f"\x00the user's {group}" if first else "they"
    owner = "couple" if group == "partner" else group
    return {
        "us": f"the {owner}" if first else "them",
        "our": f"the {owner}'s" if first else "their",
        "ours": f"the {owner}'s" if first else "theirs",
        "ourselves": "themselves",
    }[word]


def _conjugate(match: re.Match[str], past: bool) -> str:
    verb = match["verb"]
    return f"\x00{match['subject']}{match['adverbs']} {_third_singular(verb, past=past)}"


def _third_singular(verb: str, *, past: bool = False) -> str:
    lower = verb.lower()
    if lower in W.IRREGULAR_3RD:
        return W.IRREGULAR_3RD[lower]
    if lower in W.MODAL_OR_PAST or (past and lower in W.AMBIGUOUS_PAST):
        return verb
    if lower.endswith("ed") and lower not in W.NOT_PAST_ED:
        return verb
    if not lower.isalpha() or lower in {"no", "not", "a", "the"}:
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def _sentence_case(text: str) -> str:
    text = " ".join(text.split()).strip(" ,;:")
    text = re.sub(r"[!.]+$", "", text)
    if not text:
        return text
    return text[0].upper() + text[1:] + "."


# --- building candidates -
_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (tag, re.compile(rf"\b(?:{words})\b", re.IGNORECASE)) for tag, words in W.TOPICS
)


def _topic_tag(text: str) -> str:
    return next((tag for tag, pattern in _TOPICS if pattern.search(text)), "")


def _candidate(
    kind: str,
    content: str,
    *,
    importance: str,
    confidence: float,
    tags: list[str],
    subtype: str = "",
    time_hint: str = "",
    occurred_at: datetime | None = None,
    retention: str = "store",
    reject_reason: str = "",
    text: str = "",
) -> Candidate:
    topics = [tag for tag, pattern in _TOPICS if pattern.search(text or content)]
    title = re.sub(r"^The user(?:'s)? ", "", content)
    return Candidate(
        kind=kind,
        content=content,
        title=clip_title(title[:1].upper() + title[1:]),
        summary=content if len(content) <= 160 else clip_title(content, 160),
        importance=IMPORTANCE[importance],
        confidence=confidence,
        tags=clean_tags(tags + topics) or [kind],
        procedure_subtype=subtype,
        time_hint=time_hint,
        occurred_at=occurred_at,
        retention="reject" if retention == "reject" else "store",
        reject_reason=reject_reason,
        stage="rules",
    )
