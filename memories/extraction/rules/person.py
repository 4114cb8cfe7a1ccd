"""Canonical sentences: a first-person clause in the third person ("I live" -> "The user
lives"; a household or couple's "we" as the user and their family or partner)."""

from __future__ import annotations

import re

from memories.extraction import regex_words as RW
from memories.extraction import rules_words as W
from memories.extraction.sentences import is_known_word, lexical

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


def third_person(text: str, *, past: bool = False, plural_we: bool = False) -> str:
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
    return f"\x00{match['subject']}{match['adverbs']} {third_singular(verb, past=past)}"


# The forms of be and have the third person changes beyond a suffix.
_IRREGULAR = {"am": "is", "are": "is", "be": "is", "were": "was", "have": "has"}
_MODALS = frozenset({"can", "will", "shall", "may", "must", "ought"})


def third_singular(verb: str, *, past: bool = False) -> str:
    """``verb`` after "the user": "love" -> "loves", "go" -> "goes", "am" -> "is". A past form
    ("went", "used"), a modal ("can", "could") or a word the lexicon knows as no verb ("also",
    "rather") stays as it is; a form that is present and past of one verb ("read", "quit")
    stays only in a story (``past``)."""
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    forms = lexical(lower)
    if not lower.isalpha() or forms.lemmas & _MODALS or (is_known_word(lower) and not forms.verb):
        return verb
    if (forms.present_past and past) or (forms.only_past and not forms.present_past):
        return verb
    if not forms.known and lower.endswith("ed"):
        return verb  # "dockerized"
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def sentence_case(text: str) -> str:
    text = " ".join(text.split()).strip(" ,;:")
    text = re.sub(r"[!.]+$", "", text)
    if not text:
        return text
    return text[0].upper() + text[1:] + "."


def is_participle(word: str) -> bool:
    """A past tense or participle ("promoted", "went", "born"), or an unknown word in -ed."""
    forms = lexical(word)
    unknown_past = not forms.known and len(word) > 4 and word.endswith("ed")
    return forms.vbd or forms.vbn or unknown_past


def without_adverbs(words: list[str]) -> list[str]:
    """``words`` from the first one that is not an adverb ("never been to" -> "been to")."""
    first = skip_adverbs(words)
    return words[words.index(first) :] if first in words else []


def skip_adverbs(words: list[str]) -> str:
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
