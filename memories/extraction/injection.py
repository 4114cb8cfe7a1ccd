"""Prompt-injection detection for text that is about to become a memory.

A stored memory is replayed into future prompts, so an instruction hidden in a message would
otherwise be obeyed long after the conversation that carried it. ``scan`` names the pattern
families a text matches; ``is_injection`` turns that into a decision for a mode:

- ``strict`` (autonomous tasks, tool output): one family is enough.
- ``relaxed`` (people chatting): two families, because ordinary chat trips single families
  ("act as", "system:", "override") far more often than real attacks trip only one.

Text is normalised before matching: NFKC (full-width and other compatibility forms fold to
ASCII), zero-width and bidi control characters removed ("ign\\u200bore" -> "ignore"), and a
small table of Cyrillic/Greek look-alike letters mapped to Latin. Matching is case-insensitive,
except the "DAN" persona which must be upper case (Dan is a name).

Families (``FAMILIES``): role_marker, instruction_override, tool_call, identity_reframing,
exfiltration. Operator patterns (``extra_patterns``) are regexes matched case-insensitively on the
normalised text, each its own family ``custom:<n>`` (n counts from 1 in the given order).

Known limits: English phrasings only; letter-spacing ("i g n o r e"), paraphrase and
translation evade it; a line starting "System:" in pasted logs counts as a role marker.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from memories.extraction.types import InjectionMode

# Zero-width, joiners, bidi controls, soft hyphen, BOM: invisible, and used to split keywords.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
# Look-alike letters NFKC leaves alone (Cyrillic and Greek); enough for the usual tricks.
_CONFUSABLES = str.maketrans(
    {
        "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c",
        "\u0443": "y", "\u0445": "x", "\u0456": "i", "\u0458": "j", "\u0455": "s",
        "\u0501": "d", "\u04bb": "h", "\u0410": "A", "\u0412": "B", "\u0415": "E",
        "\u041a": "K", "\u041c": "M", "\u041d": "H", "\u041e": "O", "\u0420": "P",
        "\u0421": "C", "\u0422": "T", "\u0425": "X", "\u0406": "I", "\u0408": "J",
        "\u0405": "S", "\u03bf": "o", "\u03b1": "a", "\u03b5": "e", "\u03b9": "i",
        "\u03ba": "k", "\u03bd": "v", "\u03c1": "p", "\u03c4": "t", "\u03c5": "u",
        "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z", "\u0397": "H",
        "\u0399": "I", "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O",
        "\u03a1": "P", "\u03a4": "T", "\u03a5": "Y", "\u03a7": "X", "\u0261": "g",
        "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
    }
)  # fmt: skip

_OVERRIDE_VERB = r"(?:ignore|disregard|forget|override|bypass|abandon|discard)"
_PRIOR = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|"
    r"all|your|developer)"
)
_RULES = (
    r"(?:instructions?|prompts?|rules|directives?|guidelines|commands?|context|programming|"
    r"constraints|guardrails|restrictions|policies|messages|orders)"
)
# Sentence start, or after words that make "act as"/"pretend" an order to the model.
_IMPERATIVE_LEAD = (
    r"(?:^|[.!?:;,\n]\s*|\b(?:please|now|just|you\s+(?:will|must|should|shall|are\s+to|need\s+to)|"
    r"i\s+want\s+you\s+to|i\s+need\s+you\s+to|i'd\s+like\s+you\s+to)\s+)"
)

_FAMILY_SOURCES: dict[str, tuple[str, ...]] = {
    "role_marker": (
        r"^[ \t>*#-]*(?:system|assistant|developer)\s*:",
        r"^[ \t>*#-]*(?:human|ai)\s*:\s*\S",
        r"<\|\s*(?:im_start|im_end|system|assistant|user|endoftext|begin_of_text|"
        r"start_header_id|end_header_id|eot_id)\s*\|>",
        r"\[/?INST\]",
        r"<</?SYS>>",
        r"^\s*#{2,}\s*(?:instruction|instructions|system|system\s+prompt|response)\b",
        r"<\s*/?\s*(?:system|system[-_]prompt|assistant)\s*>",
    ),
    "instruction_override": (
        rf"\b{_OVERRIDE_VERB}\s+(?:(?:all|any|of|the|your|my|these|those)\s+){{0,3}}"
        rf"{_PRIOR}\s+(?:\w+\s+){{0,2}}{_RULES}\b",
        r"\bforget\s+(?:everything|all)\s+(?:you(?:'ve|\s+have|\s+were|\s+know)|above|before|"
        r"previously|prior|so\s+far|that\s+came\s+before)",
        r"\bforget\s+everything\s*(?:[.!]|$)",
        r"\b(?:ignore|disregard)\s+(?:all\s+(?:of\s+)?)?(?:the\s+|everything\s+)above"
        r"\s*(?:[.,;:!]|and\b|$)",
        r"\b(?:new|updated|revised|real|actual)\s+(?:system\s+)?instructions?\s*:",
        r"\b(?:system|admin|developer|safety|security)\s+override\b",
        r"\boverride\s+(?:your|the|all|any)\s+(?:\w+\s+){0,2}(?:instructions|rules|safety|"
        r"guidelines|programming|system\s+prompt|restrictions|filters)",
        r"\byou\s+must\s+now\s+(?:ignore|obey|follow|act|respond|answer|only|always|never|"
        r"comply|pretend|reveal|forget|disregard|output|say|reply|become|be\s+(?:a|an|my))\b",
        r"\bdo\s+not\s+(?:follow|obey)\s+(?:your|the|any)\s+(?:\w+\s+){0,2}"
        r"(?:instructions|rules|guidelines)",
    ),
    "tool_call": (
        r"<\s*/?\s*(?:tool_call|tool_calls|tool_use|tool_result|function_call|function_calls|"
        r"invoke|antml:invoke|tool)\b[^>]*>",
        r"<\|\s*(?:tool|tool_call|tool_calls|python_tag|plugin|function)[^|>]*\|>",
        r"```\s*(?:tool|tool_code|tool_call|function|function_call)\b",
        r"\{\s*\"(?:name|tool|function|tool_name)\"\s*:\s*\"[^\"]*\"\s*,\s*"
        r"\"(?:arguments|parameters|args|input)\"\s*:",
        r"\"tool_calls\"\s*:",
    ),
    "identity_reframing": (
        r"\byou\s+are\s+now\s+(?:a|an|the|my|in|no\s+longer|free|unrestricted|unfiltered|"
        r"uncensored|jailbroken|going\s+to|called|named|known\s+as)\b",
        rf"{_IMPERATIVE_LEAD}act\s+as\s+(?:if\s+you|though\s+you|a|an|my|the|dan\b)",
        rf"{_IMPERATIVE_LEAD}pretend\s+(?:to\s+be|you\s+are|that\s+you|you're)",
        r"\bpretend\s+(?:that\s+)?you(?:'re|\s+are)\b",
        r"\bfrom\s+now\s+on,?\s+you(?:'re|\s+are|\s+will|\s+must|\s+shall|\s+should)\b",
        r"\byour\s+new\s+(?:role|persona|identity|name|instructions|task|purpose|goal|"
        r"objective)\s+(?:is|are|:)",
        r"\bjail\s*-?\s*br(?:eak|oken|eaking)\b",
        r"(?-i:\bDAN\b)",
        r"\bdo\s+anything\s+now\b",
        r"\b(?:dan|jailbreak|unrestricted|unfiltered|uncensored)\s+mode\b",
    ),
    "exfiltration": (
        r"\b(?:reveal|print|show|repeat|output|display|tell\s+me|give\s+me|leak|dump|share|"
        r"write\s+out|recite|paste|expose)\s+(?:me\s+)?(?:your|the)\s+(?:(?:full|entire|"
        r"complete|original|hidden|initial|secret|exact|internal|verbatim)\s+)*"
        r"(?:system\s+prompt|system\s+message|initial\s+prompt|hidden\s+prompt|"
        r"developer\s+message|pre-?prompt)",
        r"\b(?:reveal|print|show|repeat|output|display|tell\s+me|give\s+me|leak|dump|share|"
        r"write\s+out|recite|paste)\s+(?:me\s+)?your\s+(?:(?:full|entire|complete|original|"
        r"hidden|initial|secret|exact|internal)\s+)*(?:instructions|prompt|rules|guidelines|"
        r"configuration)",
        r"\bwhat\s+(?:is|are|was|were)\s+your\s+(?:system\s+prompt|(?:initial|original|hidden|"
        r"exact)\s+(?:instructions|prompt))",
        r"\brepeat\s+(?:all\s+|everything\s+|the\s+(?:text|words|lines)\s+)(?:above|before\s+this)",
    ),
}

# A family's regex only runs when its lower-cased text contains one of these: a cheap C-level
# substring test that skips most of the regex work on ordinary chat. Every pattern of a family
# needs at least one of its needles to match.
_FAMILY_NEEDLES: dict[str, tuple[str, ...]] = {
    "role_marker": (
        "system",
        "assistant",
        "developer",
        "human",
        "ai",
        "<|",
        "inst]",
        "sys>>",
        "##",
    ),
    "instruction_override": (
        "ignore",
        "disregard",
        "forget",
        "override",
        "bypass",
        "abandon",
        "discard",
        "instruction",
        "must now",
        "follow",
        "obey",
    ),
    "tool_call": ("<", "```", '"tool_calls"', '"name"', '"tool', '"function'),
    "identity_reframing": (
        "you are now",
        "act as",
        "pretend",
        "from now on",
        "your new",
        "jail",
        "dan",
        "anything now",
        "mode",
    ),
    "exfiltration": (
        "prompt",
        "message",
        "instructions",
        "rules",
        "guidelines",
        "configuration",
        "repeat",
    ),
}

FAMILIES: tuple[str, ...] = tuple(_FAMILY_SOURCES)
_FLAGS = re.IGNORECASE | re.MULTILINE
_FAMILY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile("|".join(f"(?:{source})" for source in sources), _FLAGS))
    for name, sources in _FAMILY_SOURCES.items()
)


def normalize(text: str) -> str:
    """The form patterns are matched against (NFKC, invisibles removed, look-alikes folded)."""
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text)
    return text.translate(_CONFUSABLES)


@lru_cache(maxsize=32)
def _compile_extra(patterns: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    compiled = []
    for number, pattern in enumerate(patterns, start=1):
        try:
            compiled.append((f"custom:{number}", re.compile(pattern, _FLAGS)))
        except (re.error, TypeError) as error:
            raise ValueError(f"invalid injection pattern #{number} {pattern!r}: {error}") from None
    return tuple(compiled)


def scan(text: str, extra_patterns: Sequence[str] = ()) -> list[str]:
    """Names of the pattern families ``text`` matches, each once, in ``FAMILIES`` order."""
    extra = _compile_extra(tuple(extra_patterns))
    normal = normalize(text)
    lowered = normal.lower()
    names = [
        name
        for name, pattern in _FAMILY_PATTERNS
        if any(needle in lowered for needle in _FAMILY_NEEDLES[name]) and pattern.search(normal)
    ]
    return names + [name for name, pattern in extra if pattern.search(normal)]


def is_injection(text: str, mode: InjectionMode, extra_patterns: Sequence[str] = ()) -> bool:
    """Whether ``text`` is an injection attempt: strict needs one family, relaxed two."""
    if mode not in ("strict", "relaxed"):
        raise ValueError(f"unknown injection mode {mode!r} (expected 'strict' or 'relaxed')")
    threshold = 1 if mode == "strict" else 2
    return len(scan(text, extra_patterns)) >= threshold
