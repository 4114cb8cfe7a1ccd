"""A clause as a canonical third-person sentence ("The user plays the cello.")."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memories.extraction.claims import USER
from memories.extraction.understanding.holders import _said_without_i
from memories.extraction.understanding.moods import _past_same_form
from memories.extraction.understanding.tree import (
    _aside,
    _clause_tokens,
    _own,
    _subject,
    _time_frame,
)
from memories.extraction.understanding.words import _SPACE

if TYPE_CHECKING:
    from spacy.tokens import Token


# --- rendering a clause in the third person ------------------------------------------------

_PERSON = {"i": "the user", "me": "the user", "my": "their", "mine": "theirs", "we": "the user",
           "us": "the user", "our": "their", "ours": "theirs", "myself": "themselves",
           "ourselves": "themselves"}  # fmt: skip
_THIRD = {"am": "is", "'m": "is", "are": "is", "'re": "is", "was": "was", "were": "was",
          "have": "has", "'ve": "has", "do": "does", "ca": "can", "wo": "will"}  # fmt: skip
_ES = ("s", "sh", "ch", "x", "z", "o")
_PLURAL = {"'re": "are", "'ve": "have", "'d": "would", "'ll": "will"}


def render(
    head: Token,
    holder: str,
    obj: Token | None = None,
    variant: Token | None = None,
    chain: list[Token] | None = None,
) -> str:
    """The clause as a canonical sentence: "The user plays the piano."; with ``variant``,
    the object ``obj`` is that conjunct of ``chain`` alone ("is allergic to shellfish")."""
    keep = _clause_tokens(head)
    if obj is not None and variant is not None and chain and len(chain) > 1:
        keep = _one_conjunct(keep, obj, variant, chain)
    while keep and (keep[-1].is_punct or keep[-1].dep_ == "cc"):
        keep.pop()
    keep = _without_opener(head, keep)
    subject = _subject(head)
    # "Tom, my flatmate, works at Google": no comma between the subject and its verb.
    keep = [
        t
        for t in keep
        if not (t.lower_ == "," and subject is not None and t.i == subject.i + 1 == head.i - 1)
    ]
    words: list[str] = []
    subject_done = False
    for token in keep:
        lower = token.lower_
        if token.dep_ in ("nsubj", "nsubjpass") and not subject_done and lower in ("i", "we"):
            # "we" at home: the user and their family, as the readers of claims take it
            words.append("The user" if lower == "i" else "The user and their family")
            subject_done = True
            continue
        if (
            token.dep_ in ("nsubj", "nsubjpass")
            and lower in ("he", "she", "they")
            and holder != USER
        ):
            words.append(_holder_words(holder))
            continue
        if token.i in token.doc.user_data.get("antecedents", {}):
            words.append(token.doc.user_data["antecedents"][token.i])
        elif lower in ("my", "our") and not words:
            words.append("The user's")
        elif lower in ("my", "our") and holder != USER and token.tag_ == "PRP$":
            words.append("the user's")  # "Marta covers my on-call": the user's, not Marta's
        elif lower in _PERSON and token.tag_ in ("PRP", "PRP$"):
            words.append(_PERSON[lower])
        elif lower == "n't":
            words.append("not")
        elif lower in ("ca", "wo") and token.tag_ == "MD":
            words.append(_THIRD[lower])
        elif lower in _PLURAL and subject_done and words[0].endswith("family"):
            words.append(_PLURAL[lower])  # "we're" -> "the user and their family are"
        elif _finite_first_person(token, holder):
            words.append(_third_person(token))
        elif token is head and _bare_conjunct(head):
            words.append(_third_person(token, verb=True))
        else:
            words.append(token.text)
    sentence = _join(words, keep)
    if _subject(head) is None and _said_without_i(head):
        sentence = f"The user {sentence[:1].lower()}{sentence[1:]}"
    elif (
        head.dep_ == "conj"
        and _subject(head) is not None
        and all(c.dep_ not in ("nsubj", "nsubjpass") for c in head.children)
    ):
        sentence = f"{_holder_words(holder)} {sentence}"
    sentence = _NO_LONGER.sub(_no_longer, sentence.replace("can not ", "cannot "))
    sentence = sentence[:1].upper() + sentence[1:]
    return sentence.rstrip(" ,;:-") + "."


_NO_LONGER = re.compile(r"\b(?:(?:does|do) not|(is|are|was) not)\b(.*?)\s*\bany ?more\b")


def _no_longer(found: re.Match[str]) -> str:
    """ "does not play tennis anymore" -> "no longer plays tennis", as the readers and
    people expect it; "is not vegetarian anymore" -> "is no longer vegetarian"."""
    if found.group(1):
        return f"{found.group(1)} no longer{found.group(2)}"
    verb, _, tail = found.group(2).strip().partition(" ")
    return f"no longer {_third_word(verb)} {tail}".rstrip()


def _third_word(verb: str) -> str:
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + ("es" if verb.endswith(_ES) else "s")


def _one_conjunct(keep: list[Token], obj: Token, variant: Token, chain: list[Token]) -> list[Token]:
    """The clause's words with ``variant`` alone where the coordinated objects stood."""
    own = _own(variant)
    mine = {t.i for t in own}
    gone = {t.i for c in chain for t in c.subtree} - mine
    at = min(t.i for t in _own(obj))
    kept = [t for t in keep if t.i not in gone]
    return [t for t in kept if t.i < at] + own + [t for t in kept if t.i > at and t.i not in mine]


def _without_opener(head: Token, tokens: list[Token]) -> list[Token]:
    """Without what is said before the subject ("Actually, I ...", "Oh, we ..."): the
    message keeps it (the memory's context), the canonical sentence starts with its subject."""
    subject = _subject(head)
    if subject is None:  # a chat clause: what comes before its verb ("already on it, got rid")
        gone = {
            t.i
            for c in head.children
            if c.i < head.i and c.dep_ not in ("aux", "auxpass", "neg")
            for t in c.subtree
        }
        return [t for t in tokens if t.i not in gone]
    gone = {
        t.i
        for c in head.children
        if c.i < subject.i
        and (c.dep_ in ("advmod", "intj", "punct", "cc") or _time_frame(c) or _aside(c, subject))
        for t in c.subtree
    }
    return [t for t in tokens if t.i not in gone]


def _finite_first_person(token: Token, holder: str) -> bool:
    """A verb agreeing with "I" or "we": the first auxiliary, or the verb when it has none
    (not a past with the present's form: "I quit in March")."""
    if _past_same_form(token):
        return False
    if token.tag_ not in ("VBP", "VB", "VBD") or (
        token.tag_ == "VB"
        and any(c.dep_ in ("aux", "auxpass") or c.tag_ == "TO" for c in token.children)
    ):
        return False
    if token.tag_ == "VB" and token.dep_ in ("xcomp", "aux", "conj"):
        return False
    subject = _subject(token if token.dep_ not in ("aux", "auxpass") else token.head)
    return subject is not None and subject.lower_ == "i"


def _bare_conjunct(head: Token) -> bool:
    """A coordinated verb sharing the first clause's subject ("... and work at ...")."""
    return (
        head.dep_ == "conj"
        and head.tag_ in ("VBP", "VB", "NN")
        and not any(c.dep_ in ("nsubj", "aux") for c in head.children)
    )


def _third_person(token: Token, *, verb: bool = False) -> str:
    lower = token.lower_
    if lower in _THIRD:
        return _THIRD[lower]
    if token.tag_ not in ("VBP", "VB") and not verb:
        return token.text
    word = token.text
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(_ES) else "s")


def _join(words: list[str], tokens: list[Token]) -> str:
    out = ""
    before: Token | None = None
    for word, token in zip(words, tokens, strict=True):
        glued = word.startswith("'") or (token.is_punct and word not in ("(", '"'))
        # "left-handed", "e-mail": written together, kept together (words not rewritten)
        together = (
            before is not None
            and before.i == token.i - 1
            and not before.whitespace_
            and word == token.text
            and out.endswith(before.text)
        )
        if out and not (glued or together):
            out += " "
        out += word
        before = token
    return _SPACE.sub(" ", out).replace("( ", "(").strip()


def _holder_words(holder: str) -> str:
    if holder == USER:
        return "The user"
    if holder.startswith("user's "):
        return f"The user's {holder[7:]}"
    return holder.title()
