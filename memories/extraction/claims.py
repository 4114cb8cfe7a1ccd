"""What a memory claims: subject, attribute, value and polarity, read from its canonical
sentence ("The user lives in Munich.", "The user's sister's birthday is May 3.").

Two memories about the same subject and attribute are about one thing: a new value or
polarity updates it, the same value restates it (memories.write.decide compares claims and
decides on them first, then on similarity; this module only reads them). So the attribute
names what can only have one value at a time: where the user lives, who they work for, how
they feel about jazz (``opinion:jazz``), how far they run (``habit:run``), how many cats
they have (``count:cat``).

Offline rules, English only, on the sentences the extraction stages write (third person,
"The user ..."). A sentence they do not recognise has no claim: the cosine band and the
arbiter decide for it, as before. The OpenAI-compatible classifier returns a claim in its
structured output; ``derive`` is the fallback when it omits one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

AFFIRMED, NEGATED, PAST = "affirmed", "negated", "past"
POLARITIES = (AFFIRMED, NEGATED, PAST)
USER = "user"
# How it was said. Only an asserted claim of the user is one of the user's beliefs; a
# hypothetical ("if I moved to Porto"), a question, a quotation or report ("Rita says ...")
# is never active on its own; a past state ("used to", "formerly") is an episode with its time.
ASSERTED, HYPOTHETICAL, QUESTION, REPORTED, PAST_STATE = (
    "asserted",
    "hypothetical",
    "question",
    "reported",
    "past",
)
MOODS = (ASSERTED, HYPOTHETICAL, QUESTION, REPORTED, PAST_STATE)
# A claim read from the parse about one thing the holder does, has or is ("about:piano",
# value "play"): several at once ("plays the piano", "owns a piano"), each ended alone.
ABOUT = "about:"

# People a sentence can be about instead of the user ("The user's sister lives in Rome").
RELATIVES = (
    "sister|brother|mother|father|mom|mum|dad|wife|husband|partner|boyfriend|girlfriend|son|"
    "daughter|aunt|uncle|cousin|grandmother|grandfather|grandma|grandpa|niece|nephew|friend|"
    "boss|manager|colleague|coworker|roommate|neighbour|neighbor|fiance|fiancee|team"
)
_LEAD = re.compile(r"^(?:(?:every|each) \w+|these days|nowadays|now|lately),?\s+", re.IGNORECASE)
_SUBJECT = re.compile(
    rf"^the user(?:'s (?:best |older |younger |little |big )?(?P<who>{RELATIVES}))?\b\s*",
    re.IGNORECASE,
)
# "The user and their family have two cats", "The user and Sam got married": the user is one
# of them (a household's "we"; a couple). A name is kept for the partner rules.
_WITH = re.compile(
    r"^[Tt]he user and (?:(?:their|his|her) (?:family|household|partner|wife|husband|kids|"
    r"children)|(?P<name>[A-Z][\w-]*))\s+",
)
# "Home for the user is Lisbon", "The user calls Lisbon home": where the user lives.
_HOME = re.compile(
    r"^(?:[Hh]ome for the user is|[Tt]he user calls (?P<c>[A-Z][^,]*?) home$|"
    r"[Tt]he user's home is)\s*(?P<v>(?:in\s+)?[A-Z].*|)$",
)
_NEGATION = re.compile(
    r"\b(?:no longer|not|never|does(?:n't| not)|is(?:n't| not)|stopped|quit|gave up|"
    r"gone off)\b",
    re.IGNORECASE,
)
_PAST = re.compile(r"\b(?:used to|formerly|previously|once)\b", re.IGNORECASE)
# Words of time or emphasis that do not change what is claimed.
_FILLER = re.compile(
    r"\b(?:now|these days|nowadays|anymore|any more|any longer|currently|actually|really|"
    r"still|again|just|at the moment|this year|since then|here|so far|for years|"
    r"(?:their|his|her|my) whole life|all (?:their|his|her|my) life)\b",
    re.IGNORECASE,
)
_SPACE = re.compile(r"\s+")
_TRAIL = re.compile(r"[\s.!,;:]+$")

NUMBER_WORDS = {
    "no": "0", "zero": "0", "one": "1", "a": "1", "an": "1", "two": "2", "three": "3",
    "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
    "eleven": "11", "twelve": "12",
}  # fmt: skip
_NUMBER = r"(?:\d+(?:\.\d+)?|" + "|".join(k for k in NUMBER_WORDS if len(k) > 2) + ")"
# Things counted under one name whatever the word ("kids", "children").
SAME_THING = {"kid": "child", "children": "child", "kids": "child", "puppy": "dog", "kitten": "cat"}
UNITS = r"(?:km|kilometers?|kilometres?|miles?|mi|laps?|pages?|minutes?|mins?|hours?|steps?|reps?)"
HABIT_NOUNS = {"run": "run", "runs": "run", "swim": "swim", "ride": "cycle", "walk": "walk"}
DIETS = r"(?:vegetarian|vegan|pescatarian|pescetarian|keto|gluten[- ]free|lactose[- ]intolerant)"

_POSITIVE = (
    r"loves?|likes?|enjoys?|adores?|is (?:a )?(?:big |huge )?fan of|"
    r"is (?:really |very |so |totally )?into|is keen on|is (?:obsessed with|crazy about|"
    r"passionate about)|has (?:grown|come|learned|learnt) to (?:love|like|enjoy)|"
    r"(?:has )?started (?:to (?:love|like|enjoy)|loving|liking|enjoying)"
)
_NEGATIVE = r"hates?|dislikes?|detests?|can't stand|cannot stand"


# The Memory columns' lengths (0022), less room in value for " over <other>" x MAX_OTHERS.
LIMITS = {"subject": 100, "attribute": 120, "value": 150, "polarity": 16, "mood": 16}
OTHER_LIMIT, MAX_OTHERS = 45, 2


@dataclass(frozen=True)
class Claim:
    """One thing a memory says: ``subject``'s ``attribute`` is ``value`` (or is not)."""

    subject: str  # "user", or "user's sister"
    attribute: str  # "location", "employer", "opinion:jazz", "habit:run", "count:cat"...
    value: str  # normalised: lower case, fillers and trailing punctuation removed
    polarity: str = AFFIRMED
    # prefers: the other things it was preferred over ("coffee over tea": {"tea"})
    others: frozenset[str] = field(default_factory=frozenset)
    mood: str = ASSERTED  # see MOODS

    @property
    def holder(self) -> str:
        """Whose claim it is: "user", "user's wife", "rita" (the subject column)."""
        return self.subject

    @property
    def predicate(self) -> str:
        """What is claimed of the holder: "live_in", "like:jazz" (the attribute column)."""
        return self.attribute

    def __post_init__(self) -> None:
        # Within the columns (PostgreSQL enforces their lengths; "opinion:<a 1,000-character
        # thing>" was a 500): cut here, so a claim compares as it is stored.
        for name, limit in LIMITS.items():
            object.__setattr__(self, name, getattr(self, name)[:limit])
        others = frozenset(other[:OTHER_LIMIT] for other in sorted(self.others)[:MAX_OTHERS])
        object.__setattr__(self, "others", others)

    @property
    def key(self) -> tuple[str, str]:
        return self.subject, self.attribute

    def as_dict(self) -> dict[str, str]:
        """As the memory's columns hold it (JSON: the extraction record, the API)."""
        return {
            "subject": self.subject,
            "attribute": self.attribute,
            "value": stored_value(self),
            "polarity": self.polarity,
            "mood": self.mood,
        }


def claim_of(kind: str, content: str, given: Claim | None = None) -> Claim | None:
    """A memory's claim: the one given (the model's), else the rules'. Facts, and episodes
    that end a state (said so, not supposed) or are a past state ("used to live in Cork":
    it ends "lives in Cork"); not other events ("moved to Munich" does not replace "moved to
    Berlin": both happened)."""
    if kind == "fact":
        return given or derive(content)
    if kind == "episode":
        # An event that ends a state ("stopped being vegetarian", "left Google") says the
        # state no longer holds; an event that starts one is stored beside the fact.
        claim = given or derive(content)
        ends = claim is not None and claim.polarity == NEGATED and claim.mood == ASSERTED
        was = claim is not None and claim.polarity == PAST and claim.mood == PAST_STATE
        return claim if ends or was else None
    return None


# One meaning, one predicate, whoever read the claim (the parse, the model, the rules): the
# attributes the readers of canonical sentences use (``derive``) for what has one value at a
# time, and ``about:<thing>`` with the verb as value for what the holder does or has.
FOLDED = {
    "live_in": "location", "lives_in": "location", "reside_in": "location",
    "base_in": "location", "be_based_in": "location", "be_in": "be_in", "move_to": "location",
    "work_at": "employer", "work_for": "employer", "be_employed_by": "employer",
    "works_at": "employer", "works_for": "employer", "work_as": "role", "works_as": "role",
}  # fmt: skip
LIKING = {
    "like": "positive", "love": "positive", "enjoy": "positive", "adore": "positive",
    "dislike": "negative", "hate": "negative", "detest": "negative", "loathe": "negative",
}  # fmt: skip
SAME_VERB = {"own": "have", "get": "have", "has": "have", "owns": "have"}
# Done or had with many things at once ("plays the piano", "plays tennis"): each its own claim.
# (One car is driven at a time: "drive" keeps one value.)
MANY = frozenset({
    "have", "play", "speak", "drink", "eat", "allergic_to", "be_allergic_to", "read", "watch",
    "collect", "grow", "keep", "use", "study",
})  # fmt: skip
# Predicates with a thing after the colon that are their own vocabulary already.
_OWN_VOCABULARY = ("opinion", "count", "habit", "prefers", "about", "favourite", "eats", "stay")


def folded(claim: Claim) -> Claim:
    """The claim in the shared vocabulary: "live_in" -> "location", "like:jazz" ->
    "opinion:jazz" (positive), "play" of "piano" -> "about:piano" (play)."""
    head, colon, thing = claim.attribute.partition(":")
    head = SAME_VERB.get(head, head)
    if head in LIKING:
        return replace(claim, attribute=f"opinion:{thing or claim.value}", value=LIKING[head])
    if head in FOLDED and not colon:
        return replace(claim, attribute=FOLDED[head])
    if head in MANY or (
        colon
        and head
        not in ("opinion", "count", "habit", "prefers", "about", "favourite", "eats", "stay")
    ):
        what = thing or claim.value
        if what:
            return replace(claim, attribute=f"{ABOUT}{what}", value=head)
    return replace(claim, attribute=head + (colon + thing if colon else ""))


def stored_value(claim: Claim) -> str:
    """The value column: the value, then " over <other>" for each thing it was preferred over."""
    return claim.value + "".join(f" over {other}" for other in sorted(claim.others))


def from_columns(subject: str, attribute: str, value: str, polarity: str) -> Claim | None:
    """The claim a memory row holds (its four claim columns), or None for none."""
    if not attribute:
        return None
    first, *others = value.split(" over ")
    return Claim(subject, attribute, first, polarity or AFFIRMED, frozenset(others))


# Sentences that name the thing first: "Jazz is the user's favourite thing to do",
# "Chess is no longer the user's thing", "Tea is the user's drink of choice"; and the user's
# favourite or go-to one of a kind ("The user's go-to drink is coffee").
_THING_FIRST = re.compile(
    r"^(?P<v>[\w' -]{1,40}?) (?:is|are) (?P<neg>no longer |not )?the user's "
    r"(?P<what>(?:absolute |all-time )?(?:favou?rite|go-to|drink of choice|thing)\b.*?)$",
    re.IGNORECASE,
)
_FAVOURITE_OF = re.compile(
    r"^the user's (?:favou?rite|go-to) (?P<kind>[a-z]+) is (?P<v>.+)$", re.IGNORECASE
)
_PERSON_OF = re.compile(r"^the user is more of an? (?P<v>[\w -]+?) person$", re.IGNORECASE)


def _thing_first(text: str) -> Claim | None:
    if (found := _FAVOURITE_OF.match(text)) is not None:
        return _liked_most(_clean(found.group("v")), found.group("kind").lower(), AFFIRMED)
    if (found := _PERSON_OF.match(text)) is not None:
        return _liked_most(_clean(found.group("v")), "", AFFIRMED)
    found = _THING_FIRST.match(text)
    if found is None or found.group("v").lower().startswith("the user"):
        return None
    if found.group("v").lower() in ("it", "that", "this", "they", "these", "those", "which"):
        return None
    polarity = NEGATED if found.group("neg") or _NEGATION.search(found.group("what")) else AFFIRMED
    what = found.group("what").lower()
    kind = "drink" if "drink" in what else ""
    if what.startswith("thing") or "favourite thing" in what or "favorite thing" in what:
        return Claim(USER, f"opinion:{_clean(found.group('v'))}", "positive", polarity)
    return _liked_most(_clean(found.group("v")), kind, polarity)


def _liked_most(value: str, kind: str, polarity: str) -> Claim:
    """The user's favourite (or go-to) one of a kind: one at a time. A drink is the drink
    preference; another kind is ``favourite:<kind>``; no kind, a plain preference."""
    if kind == "drink" or value in PREFERENCE_KINDS["drink"]:
        return Claim(USER, "prefers:drink", value, polarity)
    if kind:
        return Claim(USER, f"favourite:{kind}", value, polarity)
    return Claim(USER, f"opinion:{value}", "positive", polarity)


_PLURAL_VERBS = {"have": "has", "are": "is", "were": "was", "own": "owns", "live": "lives"}


def _singular(rest: str) -> str:
    """ "have two cats" -> "has two cats": read a household's plural as the user's."""
    first, _, tail = rest.partition(" ")
    return f"{_PLURAL_VERBS.get(first.lower(), first)} {tail}".strip()


def _couple(name: str, rest: str) -> Claim | None:
    found = _COUPLE.match(rest)
    if found is None:
        return None
    if found.group("end"):
        return Claim(USER, "partner", name.lower(), NEGATED)
    stage = STAGES[(found.group("state") or found.group("dating")).lower()]
    return Claim(USER, "partner", f"{name.lower()} ({stage})", AFFIRMED)


# When it happened, as the rules write it ("in November 2026", "on 2 June 2025", "around
# 25 November 2026", "(this year)"): not part of the value.
_WHEN = re.compile(
    r"\s+(?:\([^)]*\)|(?:in|on|around|since|during|by)\s+(?:(?:early|late|mid)[- ])?"
    r"(?:\d{1,2}\s+)?(?:(?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december)\s*)?\d{4}|last (?:week|month|year)|yesterday)\s*$",
    re.IGNORECASE,
)


def _clean(text: str) -> str:
    text = _WHEN.sub("", _TRAIL.sub("", text))
    text = _FILLER.sub(" ", text)
    return _SPACE.sub(" ", _TRAIL.sub("", text)).strip().lower()


def _number(word: str) -> str:
    return NUMBER_WORDS.get(word.lower(), word.lower())


def _thing(word: str) -> str:
    word = word.lower()
    if word in SAME_THING:
        return SAME_THING[word]
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _polarity(text: str) -> str:
    if _PAST.search(text):
        return PAST
    return NEGATED if _NEGATION.search(text) else AFFIRMED


# Each rule: a pattern on the rest of the sentence after the subject, and how to read it.
_LOCATION = re.compile(
    r"^(?:(?:no longer |does not |doesn't |used to )?(?:lives?|live) in|is (?:not )?based in|"
    r"'s home is in|home is in|resides in|has (?:moved|relocated) to|moved to|relocated to|"
    # how a move is told ("is loving life in Munich", "settled into a new flat in Porto")
    r"is (?:now )?living in|has lived in|(?:is )?(?:loving|enjoying) (?:life|living) in|"
    r"is (?:settling|settled) (?:in|into)|(?:has )?settled (?:in|into)(?: (?:their|a|the) "
    r"(?:new )?(?:flat|home|house|apartment|place) in)?|'s (?:new )?(?:flat|house|apartment) "
    r"is in)"
    r"\s+(?P<v>.+)$",
    re.IGNORECASE,
)
_EMPLOYER = re.compile(
    r"^(?:(?:no longer |does not |doesn't |used to )?works?(?: \w+ly)? (?:at|for)|"
    r"is employed by|(?:has )?(?:got|landed|accepted) (?:a |an )?(?:new )?(?:job|offer|"
    r"position|role) (?:at|with|from)|has been hired by|was hired by|"
    r"'s employer is|employer is|is an? [\w -]+? at|(?:left [\w .&-]+? and )?joined|"
    r"(?:has )?started (?:a new job|working) (?:at|for))\s+(?P<v>.+)$",
    re.IGNORECASE,
)
_ROLE = re.compile(r"^(?:(?:no longer )?works? as|is working as) an?\s+(?P<v>.+)$", re.IGNORECASE)
_NAME = re.compile(r"^(?:'s name is|is called|goes by)\s+(?P<v>.+)$", re.IGNORECASE)
_AGE = re.compile(r"^is (?P<v>\d{1,3})(?: years old| years of age)?$", re.IGNORECASE)
_BIRTHDAY = re.compile(r"^(?:'s birthday is|was born on)\s+(?P<v>.+)$", re.IGNORECASE)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_PHONE = re.compile(r"^'s phone(?: number)? is\s+(?P<v>.+)$", re.IGNORECASE)
_DIET = re.compile(
    rf"^(?:is|has been|became|(?:is )?no longer|is not|stopped being|used to be)\s+"
    rf"(?:(?:a|an)\s+)?(?P<v>{DIETS})\b",
    re.IGNORECASE,
)
_PREFERS = re.compile(
    r"^(?:prefers|would rather have|'d rather have|likes)\s+(?P<v>.+?)"
    r"(?:\s+(?:over|to|than|better than|more than|instead of)\s+(?P<o>.+))?$",
    re.IGNORECASE,
)
_OPINION = re.compile(
    rf"^(?P<neg>(?:is no longer|no longer|does not|doesn't|has stopped|stopped|never|is not|"
    rf"isn't|used to)\s+)?"
    rf"(?:really\s+)?(?P<verb>{_POSITIVE}|{_NEGATIVE}|like|love|enjoy|liking|loving|"
    rf"enjoying|into|keen on|(?:a\s+)?(?:big\s+|huge\s+)?fan of)\s+(?P<v>.+)$",
    re.IGNORECASE,
)
_HABIT = re.compile(
    rf"^(?P<verb>[a-z]+?)s?\s+(?P<q>{_NUMBER}\s*{UNITS})\b(?P<rest>.*)$", re.IGNORECASE
)
_HABIT_CHANGED = re.compile(
    rf"^has (?:increased|decreased|raised|cut|upped|reduced|changed) (?:their|his|her) "
    rf"(?:\w+ )?(?P<noun>run|swim|ride|walk)s? to (?P<q>{_NUMBER}\s*{UNITS})\b",
    re.IGNORECASE,
)
_COUNT = re.compile(
    rf"^(?:(?:has|have) got|has|owns|is the proud owner of|is a parent of|(?:is|are) up to|"
    rf"now has)\s+(?P<n>{_NUMBER})\s+(?P<thing>[a-z]+)",
    re.IGNORECASE,
)
_PARTNER = re.compile(
    r"^(?:is (?P<state>engaged|married) to|'s (?P<role>boyfriend|girlfriend|partner|husband|"
    r"wife|fiance|fiancee) is|(?P<dating>is dating))\s+(?P<v>[A-Z][\w-]*)",
)
# What the user and someone are, or became ("The user and Sam got married in June").
_COUPLE = re.compile(
    r"^(?:(?:are|got|have got|have gotten|just got|recently got|finally got)\s+"
    r"(?P<state>married|engaged)|(?:are|started|have been|began) (?P<dating>dating|together|"
    r"a couple)|(?P<end>broke up|split up|separated|divorced|got divorced|are no longer "
    r"together|are not together))\b",
    re.IGNORECASE,
)
# The stage of a relationship: a new stage with the same person replaces the old one.
STAGES = {
    "engaged": "engaged", "fiance": "engaged", "fiancee": "engaged", "married": "married",
    "husband": "married", "wife": "married", "boyfriend": "dating", "girlfriend": "dating",
    "partner": "dating", "dating": "dating", "together": "dating", "a couple": "dating",
}  # fmt: skip
_SINGLE = re.compile(r"^is single\b", re.IGNORECASE)
# Gone off something: an opinion withdrawn.
_OFF = re.compile(
    r"^(?:has gone off|went off|is over|is done with|has lost interest in|"
    r"has fallen out of love with)\s+(?P<v>.+)$",
    re.IGNORECASE,
)
_EATS = re.compile(
    r"^(?P<neg>(?:does not|doesn't|no longer|never)\s+)?eats?\s+"
    r"(?P<v>meat|fish|pork|beef|chicken|dairy|eggs|gluten|sugar)\b",
    re.IGNORECASE,
)
# Preferences between things of one kind are one preference ("tea" then "coffee").
PREFERENCE_KINDS = {
    "drink": {
        "tea", "coffee", "beer", "wine", "juice", "smoothies", "smoothie", "cola", "water",
        "sparkling water", "milk", "lemonade", "espresso", "green tea", "black tea",
    },
    "seat": {"window seats", "aisle seats", "window seat", "aisle seat", "window", "aisle"},
}  # fmt: skip
_DRINKS = re.compile(
    r"^(?:always |usually |mostly |only |normally |typically )?(?:drinks|has|takes)\s+"
    r"(?P<v>(?:sparkling |green |black )?[a-z]+?)(?:\s+(?:in the morning|every morning|"
    r"with breakfast|at breakfast|every day|daily|each morning|now|these days|nowadays|"
    r"again|instead))*$",
    re.IGNORECASE,
)
_AMOUNT = re.compile(rf"(?P<n>{_NUMBER})\s*(?P<u>[a-z]+)", re.IGNORECASE)
# First words a habit's verb cannot be ("is 5 km from the station").
_NOT_HABITS = frozenset({"is", "has", "was", "lives", "works", "moved", "had"})


def derive(content: str) -> Claim | None:
    """The claim of a canonical sentence, or None when the rules do not recognise it."""
    text = _LEAD.sub("", content.strip())  # "Every day the user runs 5 km."
    home = _HOME.match(_TRAIL.sub("", text))
    if home is not None and (home.group("c") or home.group("v")):
        value = home.group("c") or re.sub(r"^in\s+", "", home.group("v"), flags=re.IGNORECASE)
        return Claim(USER, "location", _clean(value), _polarity(value))
    first = _thing_first(_TRAIL.sub("", text))
    if first is not None:
        return first
    together = _WITH.match(text)
    if together is not None:
        rest = _TRAIL.sub("", text[together.end() :])
        name = together.group("name")
        couple = _couple(name, rest) if name else None
        ended = _COUPLE.match(rest)
        if not name and ended is not None and ended.group("end"):
            return Claim(USER, "partner", "", NEGATED)  # "The user and their partner broke up"
        return couple or _read(USER, _singular(rest))
    match = _SUBJECT.match(text)
    if match is None:
        return None
    who = match.group("who")
    named = re.match(r"^is ([A-Z][\w-]*)\W*$", text[match.end() :])
    if who and who.lower() in STAGES and named:  # "The user's boyfriend is Sam."
        return Claim(USER, "partner", f"{named.group(1).lower()} ({STAGES[who.lower()]})")
    subject = f"user's {who.lower()}" if who else USER
    # The rest starts with the verb ("lives in Rome") or with "'s" ("'s home is in Berlin",
    # "'s birthday is May 3"): the patterns below take both.
    rest = _TRAIL.sub("", text[match.end() :])
    return _read(subject, rest)


_ADVERBS_FIRST = re.compile(
    r"^(?:(?:just|recently|finally|officially|actually|really|truly|absolutely|totally|"
    r"genuinely|honestly|now|still|also|even|definitely|secretly)\s+)+",
    re.IGNORECASE,
)


# A correction names the old value after the new one ("is 36, not 35"): not a denial.
_CORRECTED = re.compile(r",\s*(?:and\s+)?not\s+[^,]+$", re.IGNORECASE)
_COPULA_ADVERB = re.compile(
    r"^(?P<verb>is|are|has|have|works|lives)\s+(?:actually|really|now|in fact|still)\s+",
    re.IGNORECASE,
)


def _read(subject: str, rest: str) -> Claim | None:
    rest = _ADVERBS_FIRST.sub("", _CORRECTED.sub("", rest))
    rest = _COPULA_ADVERB.sub(lambda m: f"{m['verb']} ", rest)
    polarity = _polarity(rest)
    email = _EMAIL.search(rest)
    if email is not None and re.search(r"\bemail|e-mail|reach", rest, re.IGNORECASE):
        return Claim(subject, "email", email.group(0).lower(), polarity)
    for attribute, pattern in (
        ("name", _NAME),
        ("birthday", _BIRTHDAY),
        ("phone", _PHONE),
        ("age", _AGE),
        ("location", _LOCATION),
        ("role", _ROLE),
        ("employer", _EMPLOYER),
    ):
        found = pattern.match(rest)
        if found is not None:
            return Claim(subject, attribute, _clean(found.group("v")), polarity)
    return _read_more(subject, rest, polarity)


# Leaving an employer: "quit their job at Google", "was laid off from Siemens".
_LEFT_JOB = re.compile(
    r"^(?:has )?(?:quit|left|resigned from|was laid off from|got laid off from|was fired from|"
    r"retired from)\s+(?:(?:their|his|her|a|the) )?(?:(?:old |former )?(?:job|position|role) "
    r"(?:at|with) )?(?P<v>[A-Z][\w .&'-]*)$",
)


def _read_more(subject: str, rest: str, polarity: str) -> Claim | None:
    if (found := _LEFT_JOB.match(rest)) is not None:
        return Claim(subject, "employer", _clean(found.group("v")), NEGATED)
    if (found := _DIET.match(rest)) is not None:
        return Claim(subject, "diet", found.group("v").lower().replace(" ", "-"), polarity)
    if (found := _PARTNER.match(rest)) is not None:
        stage = STAGES[(found.group("state") or found.group("role") or "dating").lower()]
        return Claim(subject, "partner", f"{found.group('v').lower()} ({stage})", AFFIRMED)
    if _SINGLE.match(rest):
        return Claim(subject, "partner", "", NEGATED)
    if (found := _HABIT_CHANGED.match(rest)) is not None:
        habit = HABIT_NOUNS.get(found.group("noun").lower(), found.group("noun").lower())
        return Claim(subject, f"habit:{habit}", _quantity(found.group("q")), AFFIRMED)
    found = _HABIT.match(rest)
    if found is not None and rest.split()[0].lower() not in _NOT_HABITS:
        return Claim(subject, f"habit:{_verb(found.group('verb'))}", _quantity(found.group("q")))
    if (found := _COUNT.match(rest)) is not None:
        thing = _thing(found.group("thing"))
        return Claim(subject, f"count:{thing}", _number(found.group("n")), AFFIRMED)
    if (found := _PREFERS.match(rest)) is not None and (
        found.group("o") or rest.lower().startswith(("prefers", "would", "'d"))
    ):
        other = _clean(found.group("o") or "")
        others = frozenset({other}) if other and other != "anything else" else frozenset()
        value = _clean(found.group("v"))
        return Claim(subject, _preference(value, others), value, polarity, others)
    if (found := _DRINKS.match(rest)) is not None and _clean(found.group("v")) in (
        PREFERENCE_KINDS["drink"]
    ):
        # "always drinks tea in the morning": the drink the user takes, one at a time.
        return Claim(subject, "prefers:drink", _clean(found.group("v")), polarity)
    if (found := _OFF.match(rest)) is not None:
        return Claim(subject, f"opinion:{_clean(found.group('v'))}", "positive", NEGATED)
    if (found := _EATS.match(rest)) is not None:
        eats = NEGATED if found.group("neg") else AFFIRMED
        return Claim(subject, f"eats:{found.group('v').lower()}", "yes", eats)
    if (found := _OPINION.match(rest)) is not None and not re.match(
        r"(?:it|that|this|them|those|these)\b", found.group("v"), re.IGNORECASE
    ):  # "loves it here": what "it" is was said elsewhere
        verb = found.group("verb").lower()
        feeling = "negative" if re.match(_NEGATIVE, verb) else "positive"
        thing = _clean(found.group("v"))
        polarity = NEGATED if found.group("neg") else AFFIRMED
        if found.group("neg") and "used to" in found.group("neg").lower():
            polarity = PAST
        return Claim(subject, f"opinion:{thing}", feeling, polarity)
    return None


def _preference(value: str, others: frozenset[str]) -> str:
    """ "prefers:drink" when what is preferred is a drink (so "tea" then "coffee" is one
    preference); plain "prefers" otherwise (then only the things compared tie two)."""
    for kind, things in PREFERENCE_KINDS.items():
        if value in things or others & things:
            return f"prefers:{kind}"
    return "prefers"


def _quantity(text: str) -> str:
    """ "10 km", "4 mile", "50 page": the number as digits and the unit's short form."""
    found = _AMOUNT.match(text.strip())
    if found is None:
        return _clean(text)
    return f"{_number(found.group('n'))} {_unit(found.group('u'))}"


def _unit(unit: str) -> str:
    unit = unit.lower()
    for short, names in (
        ("km", ("kilometer", "kilometre")),
        ("mile", ("mi",)),
        ("min", ("minute",)),
    ):
        if unit.startswith(names) or unit == short:
            return short
    return unit[:-1] if unit.endswith("s") else unit


def _verb(word: str) -> str:
    word = word.lower()
    return {"cycle": "cycle", "bike": "cycle", "jog": "run", "runs": "run"}.get(word, word)
