"""Facts by rules: relations, preferences, first-person states, counts and what the user has."""

from __future__ import annotations

import re

from memories.extraction import rules_words as W
from memories.extraction.rules.build import make_candidate, topic_tag
from memories.extraction.rules.person import (
    is_participle,
    sentence_case,
    skip_adverbs,
    third_person,
    third_singular,
    without_adverbs,
)
from memories.extraction.types import CONFIDENCE, Candidate

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


def read_relation_fact(clause: str, confidence: float) -> Candidate | None:
    """Family, pets, team: "My sister lives in Madrid", "Anna, my manager, prefers ..."."""
    if _FAVOURITE.search(clause) and re.search(r"\bmy\b", clause, re.IGNORECASE):
        return make_fact(clause, "preference", confidence, importance="standard")
    match = _RELATION_SUBJECT.match(clause) or _RELATION_APPOSITIVE.match(clause)
    if match and _RELATION_VERB.match(match.group("rest")):
        tag = "pets" if _PET.search(clause) else "family"
        if _WORK_RELATION.search(clause):
            tag = "work"
        return make_fact(clause, tag, confidence, importance="significant")
    if _NAME_IS_RELATION.match(clause):
        return make_fact(clause, "family", confidence, importance="significant")
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


def read_preference_shapes(clause: str, confidence: float) -> Candidate | None:
    """Preferences people write without "I prefer"."""
    if _NOTHING_BEATS.match(clause):
        sentence = f"The user thinks {clause[0].lower()}{clause[1:]}"
        return make_candidate(
            "fact",
            sentence_case(sentence),
            importance="standard",
            confidence=confidence,
            tags=["preference"],
        )
    for pattern in (_BETTER_THAN, _ANY_DAY):
        match = pattern.match(clause)
        if match:
            sentence = f"The user prefers {match['a'].strip()} over {match['b'].strip()}"
            return make_candidate(
                "fact",
                sentence_case(sentence),
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
        return make_candidate(
            "fact",
            sentence_case(sentence),
            importance="standard",
            confidence=confidence,
            tags=["preference", "opinion"],
        )
    return None


def read_first_person_fact(clause: str, confidence: float) -> Candidate | None:
    match = _FIRST_PERSON_SUBJECT.match(clause)
    if not match:
        return None
    words = [w.strip(",.!()") for w in clause[match.end() :].split()]
    lower = [w.lower() for w in words]
    head = skip_adverbs(lower)
    if not head:
        return None
    at = lower.index(head)
    rest_words, rest_lower = words[at + 1 :], lower[at + 1 :]
    if head in {"am", "are"}:
        return _copula_fact(clause, rest_words, confidence)
    if head == "have" and rest_lower[:1] == ["got"]:  # "I've got a MacBook" is "I have"
        rest_lower = rest_lower[1:]
    if head in {"do", "does"} and rest_lower[:1] == ["not"]:
        head = skip_adverbs(rest_lower[1:])
        rest_lower = rest_lower[rest_lower.index(head) + 1 :] if head else []
    if head in W.MODALS:
        return _modal_fact(clause, head, rest_lower, confidence)
    return _verb_fact(clause, head, without_adverbs(rest_lower), confidence)


def _copula_fact(clause: str, rest: list[str], confidence: float) -> Candidate | None:
    words = [w for w in rest if w.lower() not in W.ADVERBS | {"not", "no", "longer"}]
    complement = " ".join(words)
    if not complement:
        return None
    if _TRANSIENT.match(complement) or _PASSING_TIME.search(complement):
        return make_candidate(
            "fact",
            sentence_case(third_person(clause)),
            importance="trivial",
            confidence=confidence,
            tags=["mood"],
            retention="reject",
            reject_reason="ephemeral_noise",
        )
    if _PLAN_PROGRESSIVE.match(complement) or _LIFE_CHANGE.match(complement):
        return make_fact(
            clause, "plan", min(confidence, CONFIDENCE["likely"]), importance="standard"
        )
    if words[0].lower() in W.NATIONALITIES:
        return make_fact(clause, "background", confidence, importance="standard")
    if _COPULA_FACTS.match(complement):
        return make_fact(clause, _copula_tag(complement), confidence, importance=None)
    return None  # "I am Sam", "I am 34", "I am a nurse", "I am in Denver": identity slots


def _copula_tag(complement: str) -> str:
    lower = complement.lower()
    return next((tag for tag, pattern in _COPULA_TAGS if pattern.search(lower)), "personal")


def _modal_fact(clause: str, modal: str, rest: list[str], confidence: float) -> Candidate | None:
    tail = rest[1:] if rest[:1] == ["not"] else rest
    verb = skip_adverbs(tail)
    if modal == "would" and verb in {"rather", "prefer", "like", "love"}:
        return make_fact(clause, "preference", confidence, importance="standard")
    if modal == "cannot" and (verb in {"stand", "bear"} or tail[:3] == ["get", "enough", "of"]):
        return make_fact(clause, "preference", confidence, importance="standard")
    if modal in {"might", "may", "could", "will"} and verb and verb not in {"be", "have", "not"}:
        plan_confidence = min(confidence, CONFIDENCE["likely"])
        return make_fact(clause, "plan", plan_confidence, importance="standard")
    after_be = tail[tail.index("be") + 1 :] if verb == "be" else []
    if modal in {"might", "may", "will"} and after_be[:1] and after_be[0].endswith("ing"):
        # "I may be changing jobs": a plan in the progressive
        return make_fact(
            clause, "plan", min(confidence, CONFIDENCE["likely"]), importance="standard"
        )
    return None


def _verb_fact(clause: str, verb: str, rest: list[str], confidence: float) -> Candidate | None:
    if verb in W.PREFERENCE_VERBS and verb not in {"stand", "mind", "rather"}:
        return make_fact(clause, "preference", confidence, importance="standard")
    if verb == "have":
        return _have_fact(clause, rest, confidence)
    if verb == "go" and rest[:1] and (rest[0] in {"to", "for"} or rest[0].endswith("ing")):
        return make_fact(clause, topic_tag(clause) or "habit", confidence, importance=None)
    if verb == "take" and rest[:1] and rest[0] not in W.TAKE_NOT_HABIT:
        return make_fact(clause, topic_tag(clause) or "habit", confidence, importance=None)
    if verb in W.PLAN_VERBS and rest[:1] == ["to"]:
        return make_fact(
            clause, "plan", min(confidence, CONFIDENCE["likely"]), importance="standard"
        )
    if verb in W.HABIT_VERBS:
        if verb == "work" and without_adverbs(rest)[:1] in (["at"], ["for"], ["as"], ["in"]):
            return None  # "I work at Acme", "I work remotely for X": identity slots
        return make_fact(clause, topic_tag(clause) or "habit", confidence, importance=None)
    return None


_TASKS_LEFT = re.compile(
    r"\bto\s+(?:do|finish|write|read|grade|review|fix|submit|complete|make|prepare|send|"
    r"answer)\b|\b(?:left|due)\b(?!\s+(?:handed|hand))",
    re.IGNORECASE,
)


def _have_fact(clause: str, rest: list[str], confidence: float) -> Candidate | None:
    if rest[:1] and (rest[0] == "been" or is_participle(rest[0])):
        # "I have been playing piano for 20 years", "I have never owned a car": experience
        return make_fact(clause, topic_tag(clause) or "experience", confidence, importance=None)
    if _TASKS_LEFT.search(clause):
        return None  # "I have six write-ups to do": work for today, not something owned
    if rest[:1] and rest[0] in W.HAVE_OBJECTS:  # "I have two kids", "I have type 1 diabetes"
        return make_fact(clause, topic_tag(clause) or "personal", confidence, importance=None)
    return None  # "I have a question", "I have to go" and the like say nothing lasting


def read_remembered_fact(clause: str, confidence: float) -> Candidate | None:
    """After "remember that": any plain statement the user asked to keep."""
    if len(clause.split()) < 3 or re.match(r"^you\b", clause, re.IGNORECASE):
        return None  # "remember that you are ..." is about the assistant, not the user
    return make_fact(clause, "note", confidence, importance="significant")


def make_fact(clause: str, tag: str, confidence: float, *, importance: str | None) -> Candidate:
    text = third_person(clause)
    text = _NOT_ANYMORE_COPULA.sub(r"\1 no longer \2", text)
    text = _NOT_ANYMORE_VERB.sub(lambda m: f"no longer {third_singular(m[1])}{m[2]}", text)
    level = importance or _importance_for(clause)
    return make_candidate(
        "fact", sentence_case(text), importance=level, confidence=confidence, tags=[tag]
    )


_IMPORTANCE = tuple((level, re.compile(stems)) for level, stems in W.IMPORTANCE_STEMS)


def _importance_for(clause: str) -> str:
    lower = clause.lower()  # "critical": getting it wrong can hurt the user
    return next((level for level, pattern in _IMPORTANCE if pattern.search(lower)), "standard")
