"""Text the user reports rather than asserts: quotes, fiction, translations, hypotheticals.

"In my story the main character says: I am 35 and I live in Oslo" is not the user's age
or city; neither is "translate to German: 'I live in Vienna'", nor "My name is Bond. jk
it's Steve" before the "jk". ``strip_reported(text)`` blanks such spans, so no stage finds
a first-person statement inside them, and ``reported_spans(text)`` lists them, so the
firewall can refuse an identity slot whose value only occurs there, whoever proposed it
(the rules or a model).

What counts as reported (by structure, not by topic):

- a *framed* passage: a clause ending in ":" whose lead names a frame (saying, writing,
  translating, quoting, a story, a character, an example, a template ...), up to the end of
  its paragraph;
- a *framed sentence*: one opening with a fiction or hypothesis frame ("In my story",
  "Imagine", "Pretend", "Suppose", "Hypothetically", "What if", "Let's say", "If I were"),
  or a counterfactual ("If I had more money, I would ..."), or someone else's account
  ("According to my sister, I'm a terrible cook");
- *someone else's words* (from the parse): the clause of a verb of saying, telling or
  thinking whose subject is not the user, with its complement ("My boss thinks we should
  ...", "John told me he's moving", "You said I work at ...");
- *quoted* words: three or more words inside double, single or typographic quotes;
- everything before a *retraction* ("jk", "just kidding", "only joking", a closing "/s"):
  the user took it back ("no kidding" is emphasis, not a retraction);
- a *sarcastic* sentence: a mocking opener ("Oh sure", "Yeah right", "As if"), a weaker
  opener ("Sure,", "Yeah, because", "Right, and") with a mock intensifier in the same
  sentence ("totally", "obviously", "secretly", "of course"), a tail that says the
  opposite ("..., said no one ever"), or the sentence a lone "Not." takes back;
- a *paste*: a fenced code block, a traceback (to the end of its paragraph), and lines
  that read as logs or code (a leading timestamp or log level, an exception line, a stack
  frame, a JSON object, a statement such as ``user.city = 'Oslo'`` or ``print('...')``).

Known limits: English frames only; sarcasm without a marker ("I'm the Pope") is taken at
its word; what someone else said is read only as well as the parse reads the sentence.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from memories.extraction.sentences import verb_lemmas
from spaceduck.core.stemming import stem

if TYPE_CHECKING:
    from spacy.tokens import Token

_FRAME_WORDS = (
    r"say|says|said|saying|write|writes|wrote|writing|written|translate|translates|translated|"
    r"translating|translation|quote|quotes|quoted|quoting|story|stories|novel|book|script|"
    r"screenplay|poem|lyrics|song|character|narrator|protagonist|hero|villain|dialogue|"
    r"example|e\.g\.|sample|template|draft|reads|tweet|caption|roleplay|role-play|pretend|"
    r"imagine|hypothetical|hypothetically|scenario|game|dream|joke|prompt|reply|respond|"
    r"email|letter|sentence|phrase|proofread|rephrase|paraphrase|grammar|spelling|"
    r"summarize|summarise|test|testing"
)
# A lead clause (no sentence end inside) that names a frame, then ":" and the passage.
_FRAMED_PASSAGE = re.compile(
    rf"(?im)(?:^|(?<=[.!?]\s))[^.!?:\n]{{0,160}}\b(?:{_FRAME_WORDS})\b[^.!?:\n]{{0,80}}:"
    r"(?P<passage>[^\n]*(?:\n(?!\s*\n)[^\n]*)*)"
)
# "New email: ann@new.example" is a contact detail under a label, not an email quoted.
_CONTACT_LABEL = re.compile(
    r"\s*(?:(?:my|new|updated|current|work|personal|main|primary|private)\s+)*"
    r"e-?mail(?:\s+address)?\s*$",
    re.IGNORECASE,
)
_FRAMED_SENTENCE = re.compile(
    r"(?im)(?:^|(?<=[.!?:]\s)|(?<=\n))\s*(?P<passage>(?:in\s+(?:my|the|a|our|this)\s+"
    r"(?:story|novel|book|script|screenplay|poem|game|dream|fiction|fanfic|campaign|"
    r"roleplay|scenario|example)|imagine|pretend|suppose|supposing|hypothetically|"
    r"what\s+if|let'?s\s+say|if\s+i\s+were|say\s+i\s+was|my\s+character"
    r"|according\s+to\s+(?!me\b|my\s+(?:records|notes|calendar|doctor)\b)"
    # a counterfactual: "If I won the lottery I'd move to Oslo", "If I had more money, I
    # would buy a flat" (an open condition, "If I'm late I'll call", is not one)
    r"|(?:even\s+)?if\s+(?:i|we)\b(?=[^.!?\n]*(?:\bwould\b|\bcould\b|\bmight\b|'d\b)))"
    r"\b[^.!?\n]*[.!?]?)"
)
_QUOTES = re.compile(
    r"\"(?P<a>[^\"\n]+)\"|\u201c(?P<b>[^\u201d\n]+)\u201d|\u00ab(?P<c>[^\u00bb\n]+)\u00bb"
    r"|\u201e(?P<d>[^\u201c\u201d\n]+)[\u201c\u201d]|(?<![A-Za-z])'(?P<e>[^'\n]+)'(?![A-Za-z])"
    r"|\u2018(?P<f>[^\u2019\n]+)\u2019"
)
_RETRACTION = re.compile(
    r"(?i)(?<!no )\b(?:jk|j/k|just\s+kidding|just\s+joking|only\s+joking|kidding\s+aside)\b"
    r"|(?<![\w/])/s\b(?=\W*$)"
)
# Sarcasm, by its markers (English): the sentence says the opposite of what it means.
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|(?=\n)|$)")
_MOCKING_OPENER = re.compile(
    r"^\W*(?:(?:oh|ah)\s+(?:sure|totally|absolutely|of\s+course|yeah\s*,?\s*right)\b"
    r"|(?:yeah|yea|yah|sure)\s*,?\s*right\b|as\s+if\b)",
    re.IGNORECASE,
)
_WEAK_OPENER = re.compile(
    r"^\W*(?:oh\s+)?(?:sure|yeah|right|great|because)\b\s*[,!.]?\s*"
    r"(?:(?:and|because)\b)?",
    re.IGNORECASE,
)
_MOCK_INTENSIFIER = re.compile(
    r"\b(?:totally|obviously|clearly|secretly|naturally)\b",
    re.IGNORECASE,
)
_OPPOSITE_TAIL = re.compile(
    r"\b(?:said\s+no\s*(?:one|body)\s+ever|yeah,?\s+right|as\s+if)\W*$", re.IGNORECASE
)
_TAKEN_BACK = re.compile(r"^\W*not\s*[.!]+\W*$", re.IGNORECASE)
# Pastes: code and logs are not the user speaking.
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_TRACEBACK = re.compile(
    r"(?m)^[ \t]*Traceback \(most recent call last\):.*?(?=\n[ \t]*\n|\Z)", re.S
)
_LEVELS = r"ERROR|WARN|WARNING|INFO|DEBUG|TRACE|FATAL|CRITICAL"
_PASTED_LINE = re.compile(
    r"(?m)^[ \t]*(?:"
    r"\[?\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}"  # 2024-05-01 12:00:03 ...
    r"|\[?\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\]?\s"  # 12:00:03 ...
    # [ERROR] ..., ERROR:root:..., ERROR app.views: ... ("WARNING: I'm allergic" is the user)
    rf"|\[(?:{_LEVELS})\]|(?:{_LEVELS}):[\w.]+:|(?:{_LEVELS})\s+\w+(?:\.\w+)+:?\s"
    r"|(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception):\s"  # ValueError: ...
    r"|File \"[^\"\n]+\", line \d+"  # a Python stack frame
    r"|at [\w.$<>]+\([\w.:]*\)"  # a Java/JS stack frame
    r"|[{\[]\s*\"[^\"\n]*\"\s*:"  # {"name": ...
    r"|(?:>>>|\$)\s+\S"  # a prompt
    r"|(?:def|class)\s+\w+\s*[(:]|import\s+[\w.]+\s*$|from\s+[\w.]+\s+import\s"
    r"|(?:const|let|var)\s+\w+\s*=|function\s*\w*\s*\("
    r"|[\w.\[\]'\"]+\.\w+\s*=\s*\S"  # user.city = ...
    r"|\w+(?:\.\w+)*\(['\"]"  # print('...
    r").*$"
)


@lru_cache(maxsize=512)
def reported_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every reported span of ``text``, merged, in order."""
    spans: list[tuple[int, int]] = []
    for match in _FRAMED_PASSAGE.finditer(text):
        if not _CONTACT_LABEL.match(text, match.start(), match.start("passage") - 1):
            spans.append(match.span("passage"))
    for match in _FRAMED_SENTENCE.finditer(text):
        spans.append(match.span("passage"))
    for match in _QUOTES.finditer(text):
        inner = next(g for g in match.groups() if g is not None)
        if len(inner.split()) >= 3:
            spans.append(match.span())
    retractions = list(_RETRACTION.finditer(text))
    if retractions:
        spans.append((0, retractions[-1].end()))
    spans.extend(_sarcastic(text))
    spans.extend(_pasted(text))
    spans.extend(_said_by_others(text))
    return _merged(spans)


# --- Someone else's words, read from the parse ------------------------------------------------
# Verbs whose complement is their subject's words or thoughts.
SAYING = frozenset(
    {"say", "tell", "think", "believe", "reckon", "claim", "suggest", "recommend", "mention",
     "announce", "advise", "ask", "write", "insist"}
)  # fmt: skip
_USER = frozenset({"i", "we"})


def _said_by_others(text: str) -> list[tuple[int, int]]:
    """ "My boss thinks we should ...", "John told me he's moving", "You said I work at ...":
    the clause of a verb of saying whose subject is not the user, with its complement, but
    not a clause coordinated with it ("..., but I live in Oslo"). Only a sentence with a form
    of such a verb (by the lexicon) after a word other than "I"/"we" is parsed."""
    from spaceduck.core.parse import pipeline

    spans: list[tuple[int, int]] = []
    for sentence in _SENTENCE.finditer(text):
        if not _may_report(sentence.group()):
            continue
        at = sentence.start()
        parsed = pipeline()(sentence.group(), disable=["ner"])  # no entities: half the time
        spans += [_reach(verb, at) for verb in parsed if _reports(verb)]
    return spans


def _may_report(sentence: str) -> bool:
    """A form of a verb of saying after a word other than "I"/"we" ("I think" is the user's)."""
    words = [w.strip(",.!?;:\"'") for w in sentence.lower().split()]
    return any(
        verb_lemmas(w) & SAYING and words[i - 1] not in _USER for i, w in enumerate(words) if i
    )


def _reach(verb: Token, at: int) -> tuple[int, int]:
    """The verb's clause (from ``at``): its subject, and what follows it up to a clause
    coordinated with it; a clause before it ("I'm allergic, my stomach says no") is not it."""
    subject = next(c for c in verb.children if c.dep_ == "nsubj")
    after = [c for c in verb.rights if c.dep_ not in ("cc", "conj", "punct")]
    start = min(subject.left_edge.idx, verb.idx)
    last = after[-1].right_edge if after else verb
    return at + start, at + last.idx + len(last)


def _reports(verb: Token) -> bool:
    """Whether ``verb`` says, with a subject other than the user, that something is so: a
    clause after it, or whom it was told to ("told me")."""
    if verb.lemma_ not in SAYING or verb.pos_ != "VERB":
        return False
    subject = [t.lower_ for c in verb.children if c.dep_ == "nsubj" for t in c.subtree]
    told = any(c.dep_ in ("dobj", "dative") and c.pos_ == "PRON" for c in verb.rights)
    clause = any(c.dep_ in ("ccomp", "xcomp", "parataxis") for c in verb.rights)
    return bool(subject) and not _USER & set(subject) and (clause or told)


def _sarcastic(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    previous: tuple[int, int] | None = None
    for match in _SENTENCE.finditer(text):
        sentence = match.group()
        if not sentence.strip():
            continue
        if _TAKEN_BACK.match(sentence) and previous is not None:
            spans.append((previous[0], match.end()))  # "I just LOVE Mondays. Not."
        elif (
            _MOCKING_OPENER.match(sentence)
            or _OPPOSITE_TAIL.search(sentence)
            or _weak_but_mocking(sentence)
        ):
            spans.append(match.span())
        previous = match.span()
    return spans


def _weak_but_mocking(sentence: str) -> bool:
    """ "Sure, I totally speak twelve languages": a weak opener, then a mock intensifier."""
    opener = _WEAK_OPENER.match(sentence)
    return opener is not None and _MOCK_INTENSIFIER.search(sentence, opener.end()) is not None


def _pasted(text: str) -> list[tuple[int, int]]:
    spans = [m.span() for m in _FENCE.finditer(text)]
    spans += [m.span() for m in _TRACEBACK.finditer(text)]
    spans += [m.span() for m in _PASTED_LINE.finditer(text)]
    return spans


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


@lru_cache(maxsize=512)
def strip_reported(text: str) -> str:
    """``text`` with every reported span replaced by a sentence break, so the clauses
    around a span are never glued into one."""
    spans = reported_spans(text)
    if not spans:
        return text
    kept: list[str] = []
    at = 0
    for start, end in spans:
        kept.append(text[at:start])
        kept.append(" . ")
        at = end
    kept.append(text[at:])
    return "".join(kept)


# --- Doubt: the user may not mean it --------------------------------------------------------
# Weaker signs than the markers above: a first-person feeling shouted in capitals ("I just
# LOVE Mondays" without the "Not."), a laugh or an eye-roll closing the sentence ("I'm the
# CEO lol", "I adore queues 🙄"). Such a statement is not reported (it may well be meant),
# but it is not believed on its own either: it waits as a candidate, and a memory it would
# replace waits for a person (the conflict inbox).
_SHOUTED_FEELING = re.compile(r"\bI\s+(?:\w+\s+)?(?:LOVE|ADORE|ENJOY|LIKE|HATE)\b")
_LAUGH_OR_ROLL = re.compile(
    r"(?:\b(?:lol|lmao|rofl|haha+|hehe+)\b|\U0001F644|\U0001F602|\U0001F923|\U0001F612)"
    r"[\s.!?]*$",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|me)\b", re.IGNORECASE)
_CONTENT_WORD = re.compile(r"[a-z][a-z-]{2,}")
# Stems of the canonical sentence's frame ("The user works as ..."): shared by any two.
_FRAME_WORDS_OF_A_MEMORY = (
    "the user and just really lol haha work live like love name has have are was with for from"
)
_NOT_CONTENT = frozenset(stem(w) for w in _FRAME_WORDS_OF_A_MEMORY.split(" "))


@lru_cache(maxsize=512)
def doubtful(text: str) -> tuple[tuple[str, str], ...]:
    """(sentence, why the user may not mean it) for each such sentence of ``text``."""
    found: list[tuple[str, str]] = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group().strip()
        if not _FIRST_PERSON.search(sentence):
            continue
        if _SHOUTED_FEELING.search(sentence):
            found.append((sentence, "may be sarcasm: a feeling shouted in capitals"))
        elif _LAUGH_OR_ROLL.search(sentence):
            found.append((sentence, "may be a joke: the sentence ends in a laugh or an eye-roll"))
    return tuple(found)


def doubt_about(content: str, text: str) -> str:
    """Why the user may not mean the statement ``content`` read from ``text`` ("" when no
    doubtful sentence of ``text`` shares a content word with it, compared by stem)."""
    words = _content_words(content)
    for sentence, why in doubtful(text):
        if words & _content_words(sentence):
            return why
    return ""


def _content_words(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _CONTENT_WORD.findall(text.lower())) - _NOT_CONTENT


def only_reported(text: str, value: str) -> bool:
    """Whether ``value`` occurs in ``text`` and every occurrence lies in a reported span."""
    needle = value.strip().lower()
    if not needle:
        return False
    haystack = text.lower()
    starts = [m.start() for m in re.finditer(re.escape(needle), haystack)]
    if not starts:
        return False
    spans = reported_spans(text)
    return all(any(s <= at and at + len(needle) <= e for s, e in spans) for at in starts)
