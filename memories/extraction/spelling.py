"""Chat spelling, read as standard English before the rules look at a message.

People type "im jonas btw", "my nmae is Gareth", "i wrk at microsfot", "u can call me Bex". The
regex stage and the clause reader key on a small set of words ("name", "work", "live", "I am"),
so a typo in one of those hides the whole statement. ``read_chat`` fixes two things only:

1. chat spellings of function words ("im", "ive", "u", "r", "pls", "dont", "w/", "yo");
2. a misspelt trigger word: an unknown word one edit (a swap, a missing, extra or wrong letter)
   away from a word the extraction rules key on ("nmae" -> "name", "liev" -> "live").

Everything else, names and values included, is left as typed: "microsfot" stays "microsfot",
so the memory quotes the user. A word the lexicon knows is never changed.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memories.extraction.claims import NUMBER_WORDS
from memories.extraction.sentences import is_known_word

# A whole token only ("r" in "priya.r@example.com" is no "are"), and lower case only, or
# capitalised at most: "Ive" in "Jony Ive" and "Ur" in "the ruins of Ur" are names.
_CHAT_SPELLINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"(?<![\w.@/'-])(?:{pattern})(?![\w.@/'-])"), replacement)
    for pattern, replacement in (
        (r"i", "I"),
        (r"[iI]m", "I'm"),
        (r"ive", "I've"),
        (r"id(?=\s+(?:like|love|prefer|rather)\b)", "I'd"),
        (r"u", "you"),
        (r"ur", "your"),
        (r"r", "are"),
        (r"[pP]ls|[pP]lz", "please"),
        (
            r"([dD]o|[dD]oes|[dD]id|[iI]s|[aA]re|[wW]as|[wW]ere|[hH]ave|[hH]as|[cC]ould|[wW]ould"
            r"|[sS]hould)nt",
            r"\1n't",
        ),
        (r"[cC]ant", "can't"),
        (r"[wW]ont", "won't"),
        (r"gonna", "going to"),
        (r"wanna", "want to"),
        (r"tryna", "trying to"),
        (r"yrs", "years"),
        (r"[bB]day", "birthday"),
        (r"[fF]av|[fF]ave", "favourite"),
    )
)
_WITH = re.compile(r"(?<![\w/])w/\s*", re.IGNORECASE)
_YEARS_OLD = re.compile(
    r"\b(\d{1,3})\s*(?:yo\b|y/o\b|y\.o\.?|yrs? old\b)", re.IGNORECASE
)  # not "Yo, Dev here"
# The words the extraction rules key on: the only ones a typo is repaired towards.
TRIGGERS = frozenset(
    [
        "name",
        "have",
        "birthday",
        "work",
        "works",
        "working",
        "live",
        "lives",
        "living",
        "email",
        "mail",
        "phone",
        "number",
        "years",
        "old",
        "prefer",
        "allergic",
        "the",
        "and",
        "daughter",
        "son",
        "wife",
        "husband",
        "partner",
        "from",
        "moved",
        "based",
        "called",
        "pronouns",
        "favourite",
        "vegetarian",
        "vegan",
        "anymore",
        "because",
    ]
)
# A plain word, not part of an email, URL, path or identifier ("liev.wrk@example.com").
_TOKEN = re.compile(r"(?<![\w.@/:+-])[A-Za-z]+(?![\w@/:+-]|\.\w)")


def read_chat(text: str) -> str:
    """``text`` with chat spellings and misspelt trigger words repaired (see module doc)."""
    for pattern, replacement in _CHAT_SPELLINGS:
        text = pattern.sub(replacement, text)
    text = _WITH.sub("with ", text)
    text = _YEARS_OLD.sub(r"\1 years old", text)
    return _TOKEN.sub(lambda m: _repaired(m.group()), text)


def _repaired(word: str) -> str:
    lower = word.lower()
    if len(lower) < 3 or word != lower or lower in TRIGGERS or lower in NUMBER_WORDS:
        return word  # capitalised words are names; short ones too ambiguous; "five" is no "live"
    fixed = _nearest_trigger(lower)
    return fixed if fixed else word


@lru_cache(maxsize=8192)
def _nearest_trigger(lower: str) -> str:
    if is_known_word(lower):
        return ""
    if lower.endswith("in") and len(lower) > 4 and is_known_word(lower + "g"):
        return lower + "g"  # "goin", "workin", "livin": a dropped g
    for trigger in sorted(TRIGGERS, key=len):
        if abs(len(trigger) - len(lower)) <= 1 and len(trigger) >= 4 and _one_edit(lower, trigger):
            return trigger
    return ""


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one swap of neighbours, insertion, deletion or change."""
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and (a[diff[1]] == b[diff[0]])
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))
