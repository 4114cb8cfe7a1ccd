"""guardMemory: the firewall between what a message says and what may be learnt from it.

Three entry points, all pure:

- ``skip_reason(source)``: whole sources never mined (system messages, text assembled from
  recalled memories, empty text).
- ``strip_recalled(text)``: removes the blocks the context builder injects
  (``<spaceduck-memories>...</spaceduck-memories>`` and ``<system>...</system>``), so a memory is
  never re-extracted from its own recall. An unclosed opening tag drops the rest of the text:
  a truncated block is still recalled text.
- ``check(candidate, source)``: per-candidate rejection reason, or None. Codes:

  - ``secret: <shape>``: the title, content, summary or a tag holds a credential
    (``spaceduck.core.credentials.find_secret``), whoever proposed it. Checked first.
  - ``assistant_user_fact``: an assistant message stating a fact about the user (a slot, or
    content about "the user"/"user"/"you"). Assistants paraphrase and hallucinate; only the user
    is an authority on the user.
  - ``tool_user_fact``: the same from tool output, unless the candidate came from the API stage.
  - ``question``: content ending in "?", or opening like a question (see ``starts_like_question``),
    that states nothing else: "I'm reading Dune, a great story. What about you?" keeps its
    statement (``asks_only``).
  - ``poison_value``: a placeholder instead of a value ("unknown", "N/A", "not provided", ...);
    "none"/"null"/"undefined" only count for facts about the user or with a slot, so "The API
    returns null for missing rows." survives.
  - ``fragment``: fewer than 3 words, no clause (``sentences.is_sentence``: subject + finite verb
    per an English verb lexicon, an auxiliary/modal, or an imperative), or an opening
    conjunction ("and", "but", "because", "if", ...) with no main clause after a comma/"then",
  or an elliptical reply of closed-class words only ("Never did really.", "Not anymore
  though": ``sentences.is_elliptical``).

  - ``unresolved_reference``: a verb about a pronoun and nothing else ("Use that from now
    on.", "The user's team got another one."): what it means was said elsewhere.

Known limits: English only; word lists, not a parser. Conditional inversion ("Should the build
fail, roll back.") is recognised only for should/had/were with a comma.
"""

from __future__ import annotations

import re

from memories.extraction.sentences import (
    is_elliptical,
    is_sentence,
    is_vague,
    lexical,
    split_sentences,
)
from memories.extraction.types import Candidate, Source
from spaceduck.core.credentials import secret_reason


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


RECALL_TAGS = ("spaceduck-memories", "system")

_BLOCKS = [
    re.compile(rf"<\s*{tag}\b[^>]{{0,500}}>.*?(?:<\s*/\s*{tag}\s*>|\Z)", re.IGNORECASE | re.DOTALL)
    for tag in RECALL_TAGS
]
_STRAY_CLOSERS = re.compile(r"<\s*/\s*(?:" + "|".join(RECALL_TAGS) + r")\s*>", re.IGNORECASE)


def skip_reason(source: Source) -> str | None:
    """Why nothing at all may be extracted from ``source``; None when it may be mined."""
    if source.role == "system":
        return "system_message"
    if source.from_recall:
        return "recalled_memory"
    if not strip_recalled(source.text or "").strip():
        return "empty"
    return None


def strip_recalled(text: str) -> str:
    """``text`` without injected memory/system blocks (each replaced by a line break)."""
    if "<" not in text:
        return text
    for block in _BLOCKS:
        text = block.sub("\n", text)
    return _STRAY_CLOSERS.sub("\n", text)


# --- Questions --------------------------------------------------------------------------------

_WH = _words("who whom whose what where when why how which")
_WH_CONTRACTED = _words(
    "what's where's who's how's when's why's what're who're where're how'd what'd who'd"
)
_QUESTION_AUX = _words("""
    do does did is are was were am can could would should will shall may might must have has had
    isn't aren't don't doesn't didn't can't won't wouldn't shouldn't couldn't wasn't weren't
    haven't hasn't hadn't
    """)
_SUBJECTS = _words("""
    i you we they he she it there this that these those the a an my your our their his her its
    user users anyone someone somebody anybody everyone everybody any all i'm you're
    """)
_HOW_QUESTION = _words("many much long often far old come about")
_CONDITIONAL_INVERSION = _words("should had were")
_LEAD_WORDS = re.compile(r"[a-z']+")


def starts_like_question(text: str) -> bool:
    """Whether ``text`` opens like a question even without a question mark.

    "Where do I live", "Is the user vegan", "What's my name", "How many cats": yes.
    "When deploying, run the migrations", "Do not push on Fridays", "What the user wants is
    speed": no (a wh-word must be followed by an auxiliary; an auxiliary by a subject).
    """
    words = _LEAD_WORDS.findall(text[:80].lower().replace("\u2019", "'"))
    if not words:
        return False
    first = words[0]
    second = words[1] if len(words) > 1 else ""
    if first in _WH_CONTRACTED:
        return True
    if first in _WH:
        return (
            second in _QUESTION_AUX
            or (first == "how" and second in _HOW_QUESTION)
            or (first == "what" and second in ("about", "if"))
        )
    if first in _QUESTION_AUX and second in _SUBJECTS:
        return not (first in _CONDITIONAL_INVERSION and "," in text)
    return False


def is_question(text: str) -> bool:
    """Ends with a question mark, or ``starts_like_question``."""
    stripped = text.rstrip().rstrip("\"')]\u201d\u2019")
    return stripped.endswith("?") or starts_like_question(stripped)


MIN_STATEMENT_WORDS = 3


def asks_only(text: str) -> bool:
    """Whether ``text`` is a question (``is_question``) with no statement beside it.

    A statement is a sentence of at least MIN_STATEMENT_WORDS words that is a clause
    (``is_sentence``) and not a question. A turn such as "I'm reading Dune by Frank Herbert.
    What about you?" carries a fact; "Hey Mel! How have you been?" does not.
    """
    if not is_question(text):
        return False
    return not any(
        len(_WORDS.findall(sentence)) >= MIN_STATEMENT_WORDS
        and is_sentence(sentence)
        and not is_question(sentence)
        for sentence in split_sentences(text)
    )


# --- Poison values ----------------------------------------------------------------------------

# Placeholders that are never a real value.
_POISON = (
    r"unknown|not\s+(?:provided|specified|mentioned|given|stated|known|available|applicable|"
    r"disclosed|shared|set)|unspecified|undisclosed|no\s+info(?:rmation)?|no\s+data|n/a|n\.a\.|tbd|"
    r"tba|tbc|\[?redacted\]?|<redacted>|i\s+don'?t\s+know|(?:we|i)\s+do\s+not\s+know|"
    r"none\s+(?:given|provided)|not\s+sure|\?+"
)
# Programming-ish empties: poison only where a person's attribute was expected.
_WEAK_POISON = r"none|null|nil|undefined|empty|nothing|blank|-+"
_VALUE_LEAD = r"(?:^|\b(?:is|are|was|were|be|in|at|as|for|of|by)\b|[:=])\s*"
_POISON_CLAUSE = re.compile(rf"{_VALUE_LEAD}[\"'(]*(?:{_POISON})[\"')]*\s*$", re.IGNORECASE)
_WEAK_POISON_CLAUSE = re.compile(
    rf"{_VALUE_LEAD}[\"'(]*(?:{_WEAK_POISON})[\"')]*\s*$", re.IGNORECASE
)
_CLAUSE_SPLIT = re.compile(r"[.;,!]+(?:\s+|$)")
_ABOUT_USER = re.compile(r"^\s*(?:the\s+user\b|user\b|you\b)|\bthe\s+user\b", re.IGNORECASE)


def _is_about_user(candidate: Candidate) -> bool:
    return bool(candidate.slot) or bool(_ABOUT_USER.search(candidate.content))


def _has_poison(candidate: Candidate) -> bool:
    about_user = _is_about_user(candidate)
    for clause in _CLAUSE_SPLIT.split(candidate.content.strip()):
        clause = clause.strip()
        if not clause:
            continue
        if _POISON_CLAUSE.search(clause):
            return True
        if about_user and _WEAK_POISON_CLAUSE.search(clause):
            return True
    return False


# --- Fragments --------------------------------------------------------------------------------

_CONJUNCTIONS = _words("""
    and but or nor yet so because since although though unless whereas while if when whenever
    after before until till as once
    """)
_MAIN_CLAUSE = re.compile(r"[,;]\s*[^\W_]+\W+[^\W_]+|\bthen\b", re.IGNORECASE)
_WORDS = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")


def _is_fragment(content: str) -> bool:
    words = _WORDS.findall(content)
    if len(words) < 3:
        return True
    if words[0].lower() in _CONJUNCTIONS and not _MAIN_CLAUSE.search(content):
        return True
    return is_elliptical(content) or not (is_sentence(content) or _parsed_as_clause(content))


def _parsed_as_clause(content: str) -> bool:
    """The parse's word when the word lists see no clause ("The user once lived in
    Hamburg.": an adverb between the subject and its verb): a verb with its subject.
    A parser that cannot load leaves the lists' answer."""
    from django.core.exceptions import ImproperlyConfigured

    from spaceduck.core.parse import parse

    try:
        doc = parse(content)
    except ImproperlyConfigured:
        return False
    return any(
        t.dep_ == "ROOT"
        and t.pos_ in ("VERB", "AUX")
        and t.tag_ != "VB"  # "Run the tests": an order, read as one by the lists
        and lexical(t.lower_).verb  # not "Grafana dashboards for the API" misread
        and any(c.dep_ in ("nsubj", "nsubjpass") for c in t.children)
        for t in doc
    )


def check(candidate: Candidate, source: Source) -> str | None:
    """Why ``candidate`` (extracted from ``source``) must not be stored; None when it may."""
    secret = secret_reason(candidate.content, candidate.title, candidate.summary, *candidate.tags)
    if secret is not None:
        return secret
    if candidate.kind == "fact" and _is_about_user(candidate):
        if source.role == "assistant":
            return "assistant_user_fact"
        if source.role == "tool" and candidate.stage != "api":
            return "tool_user_fact"
    content = candidate.content.strip()
    if asks_only(content):
        return "question"
    if _has_poison(candidate):
        return "poison_value"
    if _is_fragment(content):
        return "fragment"
    if is_vague(content):
        return "unresolved_reference"
    return None
