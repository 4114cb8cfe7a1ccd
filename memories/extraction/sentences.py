"""Is this text a sentence? A structural check backed by an English verb lexicon.

The guard's ``fragment`` rule and the regex stage's clause check ask one question: does the
text contain a clause, or is it a noun phrase ("the blue car", "Kubernetes cluster config") or
a dangling piece ("and then the")? A word list of "verbs we thought of" answers it wrongly for
every verb nobody listed ("Grafana scrapes the exporter", "My router forwards port 22"), so
this module looks at structure instead and asks a lexicon only which forms a word can take.

The lexicon is lemminflect's (AGID-derived English lemma and inflection tables, shipped inside
the wheel; no model download, no network). Lookups are cached per word.

A text is a sentence when one of these holds (tokens are words; punctuation breaks adjacency):

1. an auxiliary, copula or modal (is, was, has, does, can, will, must, ...), or a contraction
   carrying one (don't, I'm, we've, it's, there's);
2. subject + finite verb: a token that is a 3rd-person -s form (VBZ) or a past tense (VBD) of a
   verb, right after a subject-ish token (a pronoun, a noun, a name, a number, an unknown word
   such as a product name; adverbs like "usually" in between are skipped). A bare form (VBP,
   "they deploy", "users love") counts only after a plural or I/you/we/they subject;
3. an imperative: the text or a clause after a comma/semicolon/colon/"then" opens with a bare
   verb ("Run the tests", "Where possible, use UTC"), or with "always"/"never"/"please" + a word;
4. diary style: the text opens with a past tense followed by more words ("Moved to Oslo in May").

Words the lexicon does not know are handled by shape: an unknown lowercase word ending in -ed
after a subject is a past tense ("the job dockerized ..."), and one ending in -s after a subject
and followed by more words is a 3rd-person form ("Our team upserts rows nightly").

Known limits: English only. Noun compounds whose last noun is also a verb ("the server logs")
read as sentences; the check errs on keeping, since a lost fact costs more than a kept phrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


AUXILIARIES = _words("""
    is are was were be been am has have had do does did can could will would shall should may
    might must ought isn't aren't wasn't weren't hasn't haven't hadn't don't doesn't didn't
    can't cannot couldn't won't wouldn't shan't shouldn't mustn't
    """)
_VERB_CONTRACTIONS = ("n't", "'re", "'m", "'ve", "'ll", "'d")
# "'s" is "is"/"has" only after these; after a noun it is usually a possessive.
_S_IS = _words("""
    it's that's he's she's there's here's what's who's where's everything's nothing's
    everyone's someone's something's this's name's
    """)
_PRONOUN_SUBJECTS = _words("""
    he she it one this that who which everyone everybody someone somebody nobody anyone anybody
    everything something nothing anything each either neither none another
    """)
_PLURAL_SUBJECTS = _words("""
    i you we they these those both all many most some few several others people police cattle
    """)
# Never a subject: determiners, possessives, prepositions, conjunctions, particles.
_FUNCTION_WORDS = _words("""
    the a an my your our their his her its whose every no any such what
    of in on at to for from by with about into onto over under after before between through
    during without within across against along among around behind below beneath beside besides
    beyond despite down inside near off out outside past per since than toward towards until up
    upon via vs versus like unlike
    and or but nor so yet because if when whenever while although though unless whereas as once
    then not also
    """)
_DETERMINERS = _words("""
    the a an my your our their his her its this that these those every each no any some
    several many few another which what whose
    """)
# Skipped when looking back from a verb to its subject ("the user usually prefers").
_ADVERBS = _words("""
    also always never often still just only already now usually sometimes rarely seldom even
    really actually currently mostly generally typically finally recently soon again ever hardly
    all both each not no longer then probably definitely certainly mainly
    """)
_OBJECT_PRONOUNS = _words("me him her us them it")
_COORDINATORS = _words("and or but nor yet so")
_IMPERATIVE_CUES = _words("always never please only no")
# May open an imperative clause: "first run make build", "and finally tag the release".
_CLAUSE_ADVERBS = _words("first then next finally just also again now later afterwards")

_CLOSED_CLASS = (
    AUXILIARIES
    | _PRONOUN_SUBJECTS
    | _PLURAL_SUBJECTS
    | _FUNCTION_WORDS
    | _DETERMINERS
    | _ADVERBS
    | _OBJECT_PRONOUNS
    | _CLAUSE_ADVERBS
    | _words("i there here")
)

_TOKEN = re.compile(r"[^\W_]+(?:['\u2019.\-/][^\W_]+)*|[,;:()\[\]\"\u2014\u2013]")
_BREAK = frozenset(',;:()[]"\u2014\u2013')


@dataclass(frozen=True)
class _Word:
    known: bool = False  # the lexicon has it at all
    noun: bool = False
    plural_noun: bool = False
    adj: bool = False
    adv: bool = False
    verb: bool = False  # any verb reading
    vbz: bool = False  # runs, compiles
    vbd: bool = False  # ran, compiled (simple past)
    vbn: bool = False  # run, compiled, gone (past participle)
    base: bool = False  # run, compile (VB/VBP)
    gerund: bool = False  # running
    only_past: bool = False  # went, found (find): a past form of a verb, not also its present
    present_past: bool = False  # read, quit, put: the present and the past tense of one verb
    lemmas: frozenset[str] = frozenset()  # its verbs' base forms: "went" -> {"go"}


@lru_cache(maxsize=1)
def _lexicon() -> ModuleType:
    # Imported on first use: ~0.2 s to import, ~0.5 s to load its tables.
    import lemminflect

    return lemminflect


@lru_cache(maxsize=65536)
def _word(lower: str) -> _Word:
    lex = _lexicon()
    readings = lex.getAllLemmas(lower)
    if not readings:
        return _Word()
    noun_lemmas = readings.get("NOUN", ()) + readings.get("PROPN", ())
    verbs = readings.get("VERB", ())
    # The tags this form has, per verb lemma: "read" is VB, VBP, VBD and VBN of "read".
    tags = [
        {tag for tag, forms in lex.getAllInflections(lemma, upos="VERB").items() if lower in forms}
        for lemma in verbs
    ]
    every = set().union(*tags)
    return _Word(
        known=True,
        noun=bool(noun_lemmas) or "PRON" in readings,
        plural_noun=any(lemma != lower for lemma in noun_lemmas),
        adj="ADJ" in readings,
        adv="ADV" in readings,
        verb=bool(verbs),
        vbz="VBZ" in every,
        vbd="VBD" in every,
        vbn="VBN" in every,
        base=bool(every & {"VB", "VBP"}),
        gerund="VBG" in every,
        only_past=any(t & {"VBD", "VBN"} and not t & {"VB", "VBP"} for t in tags),
        present_past=any(t & {"VB", "VBP"} and "VBD" in t for t in tags),
        lemmas=frozenset(verbs),
    )


@lru_cache(maxsize=65536)
def verb_lemmas(lower: str) -> frozenset[str]:
    """The verbs a lowercase word is a form of ("told" -> {"tell"}): ``lexical(w).lemmas``
    without working out every form, for scanning whole messages."""
    return frozenset(_lexicon().getAllLemmas(lower).get("VERB", ()))


def lexical(lower: str) -> _Word:
    """What forms a lowercase word can take (noun, adjective, verb: 3rd person, past,
    participle, base, gerund) and its verbs' lemmas, from the lexicon; all false for a word it
    does not know."""
    return _word(lower)


def warm() -> None:
    """Load the lexicon now (~0.7 s, ~50 MB) instead of on the first check."""
    _word("runs")


def is_known_word(lower: str) -> bool:
    """Whether ``lower`` (a lowercase word) is an ordinary English word: a function word or one
    the lexicon knows. Names and brands ("grafana", "alice") are not."""
    return lower in _CLOSED_CLASS or _word(lower).known


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.replace("\u2019", "'"))


def _is_number(token: str) -> bool:
    return any(c.isdigit() for c in token)


def _subject(tokens: list[str], lowers: list[str], j: int) -> tuple[bool, bool | None]:
    """Whether token ``j`` can end a subject, and whether that subject is plural (None: unknown)."""
    token, lower = tokens[j], lowers[j]
    if lower in _PLURAL_SUBJECTS:
        return True, True
    if lower in _PRONOUN_SUBJECTS:
        return True, False
    if lower in _FUNCTION_WORDS or lower in AUXILIARIES or token in _BREAK:
        return False, False
    if _is_number(token):
        return True, True
    if lower.endswith("'s"):
        return False, False  # possessive: "the user's favourite colour"
    plural_by_and = _coordinated(tokens, lowers, j)
    word = _word(lower)
    if not word.known:
        # A name, a brand, a product ("Grafana", "Kubernetes") or a technical noun ("configs").
        # Its number is unknown ("Mitochondria produce", "Kubernetes cluster config"): a bare
        # verb after it counts only when a complement follows (see _opens_complement).
        return True, True if plural_by_and else None
    if word.noun:
        return True, word.plural_noun or plural_by_and
    if word.gerund:
        return True, False  # "Swimming helps my back."
    if word.adj and lower.endswith("est") and j >= 1 and lowers[j - 1] in _DETERMINERS:
        return True, False  # a superlative as a noun: "Our youngest hates broccoli."
    if word.verb and j >= 1 and lowers[j - 1] in _DETERMINERS:
        return True, False  # a verb used as a noun: "the deploy failed"
    return False, False


def _coordinated(tokens: list[str], lowers: list[str], j: int) -> bool:
    """Whether the noun phrase ending at ``j`` follows an "and": "my partner and I", "the user
    and their team"."""
    k = j - 1
    for _ in range(4):
        if k < 1 or tokens[k] in _BREAK:
            return False
        if lowers[k] == "and":
            return lowers[k - 1] not in _FUNCTION_WORDS and tokens[k - 1] not in _BREAK
        if lowers[k] in _FUNCTION_WORDS and lowers[k] not in _DETERMINERS:
            return False
        k -= 1
    return False


def _is_adverb(lowers: list[str], j: int) -> bool:
    """Words skipped between a subject and its verb: "usually", "absolutely", "kind of"."""
    lower = lowers[j]
    if lower in _ADVERBS:
        return True
    if lower == "of" and j >= 1 and lowers[j - 1] in ("kind", "sort"):
        return True
    if lower in ("kind", "sort") and j + 1 < len(lowers) and lowers[j + 1] == "of":
        return True
    word = _word(lower)
    return word.adv and not (word.noun or word.verb or lower in _FUNCTION_WORDS)


def _finite_after_subject(tokens: list[str], lowers: list[str], i: int) -> bool:
    lower = lowers[i]
    word = _word(lower)
    vbz, vbd, base = word.vbz, word.vbd, word.base
    if not word.known and lower.isalpha() and lower == tokens[i]:
        vbd = len(lower) >= 5 and lower.endswith("ed")
        vbz = (
            len(lower) >= 4
            and lower.endswith("s")
            and not lower.endswith(("ss", "us", "is"))
            and i + 1 < len(tokens)
            and tokens[i + 1] not in _BREAK
        )
    if not (vbz or vbd or base):
        return False
    j = i - 1
    while j >= 0 and _is_adverb(lowers, j):
        j -= 1
    if j < 0:
        return False
    is_subject, plural = _subject(tokens, lowers, j)
    if not is_subject:
        return False
    if vbz or vbd or plural:
        return True
    return plural is None and i + 1 < len(tokens) and _opens_complement(tokens, lowers, i + 1)


def _opens_complement(tokens: list[str], lowers: list[str], k: int) -> bool:
    """Whether token ``k`` can start what follows a verb: "the", "me", "to", "22", "quickly"."""
    lower = lowers[k]
    if lower in _COORDINATORS:
        return False  # "blue or green"
    return (
        lower in _FUNCTION_WORDS
        or lower in _DETERMINERS
        or lower in _PLURAL_SUBJECTS
        or lower in _PRONOUN_SUBJECTS
        or lower in _OBJECT_PRONOUNS
        or _is_number(tokens[k])
        or lower.endswith("ly")
        or _word(lower).adv
    )


def _imperative(tokens: list[str], lowers: list[str], k: int) -> bool:
    """Whether a clause opening at token ``k`` is an order: "Run the tests", "use UTC",
    "and finally tag the release", "No merges after 4pm"."""
    while k < len(tokens) and (lowers[k] in _COORDINATORS or lowers[k] in _CLAUSE_ADVERBS):
        k += 1
    if k + 1 >= len(tokens) or tokens[k + 1] in _BREAK:
        return False
    if lowers[k] in _IMPERATIVE_CUES:
        return True  # "always run ...", "never push ...", "please answer ..."
    following = _word(lowers[k + 1])
    if lowers[k] == "no":
        # A prohibition: "No merges after 4pm", "No smoking in the house".
        return k + 2 < len(tokens) and (following.plural_noun or following.vbz or following.gerund)
    first = _word(lowers[k])
    if not first.base:
        return False
    if not (first.noun or first.adj):
        return True  # a word that can only be a verb: "Rotate keys monthly."
    # Also a noun ("use", "check", "stop"): "Use tabs", "Check the logs", "use UTC", "Use
    # metric units", "Stop apologizing", but not "Section 2" or "Cluster config".
    if _is_number(tokens[k + 1]):
        return False
    return (
        _opens_complement(tokens, lowers, k + 1)
        or following.plural_noun
        or following.gerund
        or (following.adj and k + 2 < len(tokens))
        or not following.known
    )


def _clause_starts(tokens: list[str], lowers: list[str]) -> list[int]:
    """Token 0 and every token after a comma, semicolon, colon or "then"."""
    starts = [0]
    for i, token in enumerate(tokens[:-1]):
        if token in _BREAK or lowers[i] == "then":
            starts.append(i + 1)
    return starts


def is_sentence(text: str) -> bool:
    """Whether ``text`` contains a clause (see the module docstring for the rules)."""
    tokens = _tokens(text)
    if not tokens:
        return False
    lowers = [token.lower() for token in tokens]
    for lower in lowers:
        if lower in AUXILIARIES or lower in _S_IS or lower.endswith(_VERB_CONTRACTIONS):
            return True
    if any(_imperative(tokens, lowers, k) for k in _clause_starts(tokens, lowers)):
        return True
    if _word(lowers[0]).vbd and len(tokens) > 1 and tokens[1] not in _BREAK:
        return True  # diary style: "Moved to Amsterdam in May."
    return any(
        token not in _BREAK and _finite_after_subject(tokens, lowers, i)
        for i, token in enumerate(tokens)
        if i > 0
    )


# Words that add nothing to an auxiliary left alone ("never did really", "not anymore though").
_ELLIPSIS_FILLERS = _words("""
    too either neither though anymore any more longer really truly honestly indeed much very
    well some yes yeah yep nope nah ok okay maybe perhaps quite lol either way user user's
    """)


def is_elliptical(text: str) -> bool:
    """Whether ``text`` is an elliptical reply with nothing of its own to say: closed-class
    words only ("Never did really.", "Not anymore though, and then some.", "The user does
    too."), so what it is about is in another sentence, or nowhere."""
    lowers = [t.lower().replace("\u2019", "'") for t in _tokens(text) if t not in _BREAK]
    return bool(lowers) and all(
        word in _CLOSED_CLASS or word in _ELLIPSIS_FILLERS for word in lowers
    )


_REFERENCES = _words("it that this them those these one ones so")
_USER_SUBJECT = re.compile(r"^\W*the\s+user(?:'s\s+(?:team|family))?\b", re.IGNORECASE)
_TIME_WORDS = _words("""
    today tonight tomorrow yesterday week weekend month year now on forward going
    """)


_DETERMINING = _words("one that this these those")


def _a_noun_after(lowers: list[str], i: int) -> bool:
    if i + 1 >= len(lowers):
        return False
    after = lowers[i + 1]
    closed = after in _CLOSED_CLASS or after in _ELLIPSIS_FILLERS or after in _TIME_WORDS
    word = _word(after)
    return not closed and (word.noun or not word.known) and not (word.vbz or word.vbd)


def is_vague(text: str) -> bool:
    """Whether ``text`` says only a verb about a pronoun it never resolves ("Use that from
    now on.", "The user's team got another one.", "The user loves it."): what "that" or
    "one" is was in another sentence, and the memory alone would mean nothing."""
    lowers = [
        t.lower().replace("\u2019", "'")
        for t in _tokens(_USER_SUBJECT.sub("", text))
        if t not in _BREAK
    ]
    # "one kid", "that car": a numeral or a determiner before its noun refers to nothing
    # ("that annoys the user": a pronoun before a verb still does).
    referring = [
        word
        for i, word in enumerate(lowers)
        if word in _REFERENCES and not (word in _DETERMINING and _a_noun_after(lowers, i))
    ]
    if not referring:
        return False
    content = [
        word
        for word in lowers
        if word not in _CLOSED_CLASS and word not in _ELLIPSIS_FILLERS and word not in _TIME_WORDS
    ]
    return len(content) <= 1


# A sentence ends at ., ! or ? before a space, or at a line break. Abbreviations split too
# ("Dr. Smith"): the callers count questions and statements, which a split phrase still
# reads as or as neither; the extraction stages that cut facts out keep their own splitters.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")


def split_sentences(text: str) -> list[str]:
    """The non-empty sentences of ``text``, stripped (see _SENTENCE_BREAK)."""
    return [part.strip() for part in _SENTENCE_BREAK.split(text) if part.strip()]
