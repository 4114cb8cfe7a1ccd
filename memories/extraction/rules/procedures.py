"""Procedures by rules: workflows (numbered or "first ... then"), behavioural requests
and constraints on the assistant."""

from __future__ import annotations

import re

from memories.extraction import clauses_words as LW  # the list-heading patterns, shared
from memories.extraction import rules_words as W
from memories.extraction.rules.build import make_candidate
from memories.extraction.rules.person import sentence_case, third_person
from memories.extraction.sentences import lexical
from memories.extraction.types import Candidate

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


def read_workflow(sentence: str, confidence: float) -> Candidate | None:
    """Ordered steps in one sentence: a "process is:" heading, "to X, first A, then B",
    or "<label>: A, B, then C"."""
    if _WORKFLOW_HEADING.match(sentence):
        body = sentence.split(":", 1)[1]
        if _ONE_STATEMENT.match(body):
            return None  # "My routine: I run 5 km every morning" is a habit, not steps
        return make_procedure("workflow", sentence, confidence)
    labelled = _LABELLED_STEPS.match(sentence)
    label = sentence.split(":", 1)[0]
    if labelled and (LW.ERRANDS.search(label) or LW.REPLY_HEADING.search(label)):
        return None  # "TODO: fix tests, update docs", "Summary of your answer: restart, ..."
    if labelled and _is_step_list(labelled["steps"]):
        return make_procedure("workflow", sentence, confidence)
    opener = _WORKFLOW_OPENER.match(sentence) and "," in sentence
    # "When you give me code, write it in TypeScript, not JavaScript" is one order, not steps.
    steps = sentence.split(",")[1:]
    if opener and (_STEP_WORDS.search(sentence) or (len(steps) >= 2 and are_steps(steps))):
        return make_procedure("workflow", sentence, confidence)
    return None


def _is_step_list(text: str) -> bool:
    commas = text.count(",")
    if commas >= 1 and _STEP_WORDS.search(text):
        return True
    return commas >= 2 and are_steps(text.split(","))


# A heading that names a way of doing something: "How I do laundry:", "Deploy flow for X:".
PROCESS_HEADING = re.compile(
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


def read_behavioral(clause: str, confidence: float) -> Candidate | None:
    if _NAMED_CALL.search(clause):
        return None  # "call me Alex" is the user's name: the regex stage's job
    directed = _ASSISTANT_IMPERATIVE.match(clause) or _WHEN_YOU.search(clause)
    if (directed and _STYLE.search(clause)) or _MANNER.match(clause):
        return make_procedure("behavioral", _PLEASE.sub("", clause), confidence)
    return None


def read_constraint(clause: str, confidence: float) -> Candidate | None:
    text = clause
    rule = _RULE_PREFIX.match(text)
    if rule:
        text = text[rule.end() :]
    core = re.sub(r"^(?:maybe|perhaps|probably)\s+", "", text, flags=re.IGNORECASE)
    imperative = _CONSTRAINT_IMPERATIVE.match(core)
    must = _SUBJECT_MUST.match(core) and _MUST_WORDS.search(core)
    impersonal = _IMPERSONAL_RULE.search(core) and not _PERSONAL_SUBJECT.match(core)
    if rule or imperative or _TEAM_RULE.match(text) or must or impersonal:
        return make_procedure("constraint", _PLEASE.sub("", text), confidence)
    return None


def make_procedure(subtype: str, text: str, confidence: float) -> Candidate:
    content = sentence_case(third_person(text, plural_we=True))
    importance = {"constraint": "core", "workflow": "significant", "behavioral": "significant"}
    return make_candidate(
        "procedure",
        content,
        importance=importance[subtype],
        confidence=confidence,
        tags=[subtype],
        subtype=subtype,
    )
