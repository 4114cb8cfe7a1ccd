"""The labelled conversations of ``manage.py bench beliefs`` (spaceduck/ops/benchmarks/beliefs.py).

Each conversation is one to five sessions of user messages, and what the service must
believe at the end: the beliefs that must be active (``active``), those that must not
(``inactive``: the old value after a change of mind, the joke taken literally), and whether
anything else active counts as invented (``complete``).

They are generated from *families*: one way of saying one kind of thing (a template),
filled with several values. The split is by family (``split_of(family)``, a hash of its
id, as the extraction corpus does), so the held-out part holds phrasings the rules were
never tuned on, not just other cities in a familiar sentence. Never tune on the held-out
part: do not read its misses.

A belief is a list of terms that must all appear in one active memory's content,
case-insensitive; a term may list alternatives with "|" ("not|no longer").

The ``fresh`` split (``beliefs_fresh.json``, families ``fresh-*``) was written for issue
"Understanding, not phrase lists" by someone who had seen neither the extraction rules nor
these families, from a description of the format and of the classes of failure alone. It
is scored before the rules change and at the end, never in between; it is not part of
"all". A message starting with "assistant: " is the assistant's turn (in any JSON family).

The ``tuned`` split (``beliefs_tuned.json``, families ``tuned-*``) was written the same way,
blind to the rules and to ``fresh``, over the same twelve classes of failure, to be tuned
on: every ``tuned-*`` family is on the ``tune`` side (``split_of``), so ``tune`` is the
hashed tune part of the families below plus all of ``tuned``, and "all" (tune + heldout)
holds it too.

``wrong_holder`` beliefs give the user what belongs to someone else (a partner's email, a
friend's city); a family of an other-holder category that lists none has its ``inactive``
beliefs as its wrong-holder beliefs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cache
from itertools import islice
from pathlib import Path
from typing import Any

Belief = tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    id: str
    family: str
    category: str
    sessions: tuple[tuple[str, ...], ...]
    active: tuple[Belief, ...] = ()
    inactive: tuple[Belief, ...] = ()
    complete: bool = True  # anything else active about the user is invented
    query: str = ""  # what the agent asks at the end (context is built for it)
    allowed: tuple[Belief, ...] = ()  # true, but not required ("no longer lives in Berlin")
    wrong_holder: tuple[Belief, ...] = ()  # someone else's fact given to the user

    def __post_init__(self) -> None:
        # The must-not beliefs of an other-holder conversation are someone else's facts.
        if not self.wrong_holder and self.category in OTHER_HOLDER:
            object.__setattr__(self, "wrong_holder", self.inactive)

    @property
    def split(self) -> str:
        return split_of(self.family)


# Categories whose must-not beliefs are another person's facts given to the user.
OTHER_HOLDER = frozenset({"other_holder", "other_person"})


def split_of(family: str) -> str:
    """ "fresh" for the blind-written held-out families, "tune" for the ones written to be
    tuned on; else "heldout" when sha256(family)[0] < 90 (~35%), else "tune"; by id alone,
    so a family never changes side when others are added."""
    if family.startswith(FRESH_PREFIX):
        return "fresh"
    if family.startswith(TUNED_PREFIX):
        return "tune"
    return "heldout" if hashlib.sha256(family.encode("utf-8")).digest()[0] < 90 else "tune"


@dataclass(frozen=True)
class Family:
    """One phrasing of one kind of conversation, filled with each of ``fillers``."""

    id: str
    category: str
    sessions: tuple[tuple[str, ...], ...]
    active: tuple[Belief, ...] = ()
    inactive: tuple[Belief, ...] = ()
    complete: bool = True
    query: str = ""
    fillers: tuple[dict[str, str], ...] = field(default=())
    allowed: tuple[Belief, ...] = ()
    wrong_holder: tuple[Belief, ...] = ()

    def conversations(self) -> list[Conversation]:
        out = []
        for number, values in enumerate(self.fillers):

            def fill(text: str, values: dict[str, str] = values) -> str:
                return text.format(**values)

            def beliefs(given: tuple[Belief, ...]) -> tuple[Belief, ...]:
                return tuple(tuple(fill(t) for t in b) for b in given)

            out.append(
                Conversation(
                    id=f"{self.id}-{number}",
                    family=self.id,
                    category=self.category,
                    sessions=tuple(tuple(fill(m) for m in s) for s in self.sessions),
                    active=beliefs(self.active),
                    inactive=beliefs(self.inactive),
                    complete=self.complete,
                    query=fill(self.query),
                    allowed=beliefs(self.allowed),
                    wrong_holder=beliefs(self.wrong_holder),
                )
            )
        return out


# --- Fillers ------------------------------------------------------------------------------

CITY_PAIRS = [
    ("Berlin", "Munich"), ("Lisbon", "Porto"), ("Oslo", "Bergen"), ("Madrid", "Seville"),
    ("Toronto", "Vancouver"), ("Austin", "Denver"), ("Kyoto", "Osaka"), ("Leeds", "Bristol"),
    ("Dublin", "Galway"), ("Milan", "Turin"),
]  # fmt: skip
LIKES = [
    "jazz", "hiking", "sushi", "horror movies", "running", "chess", "opera", "camping",
    "spicy food", "video games",
]  # fmt: skip
DRINKS = [("tea", "coffee"), ("coffee", "tea"), ("beer", "wine"), ("wine", "beer"),
          ("juice", "smoothies"), ("cola", "sparkling water")]  # fmt: skip
HABITS = [("run", "5 km", "10 km", "every morning"),
          ("swim", "20 laps", "40 laps", "on Sundays"),
          ("cycle", "15 km", "30 km", "every weekend"),
          ("walk", "2 miles", "4 miles", "after dinner"),
          ("read", "20 pages", "50 pages", "every night")]  # fmt: skip
EMPLOYER_PAIRS = [("Google", "Stripe"), ("Siemens", "Bosch"), ("Shopify", "Atlassian"),
                  ("Deloitte", "Accenture"), ("Spotify", "Zalando"), ("Oracle", "SAP")]  # fmt: skip
EMAIL_PAIRS = [("ann@old.example", "ann@new.example"), ("raj@home.example", "raj@work.example"),
               ("li.wei@mail.example", "wei.li@post.example"),
               ("sam@first.example", "sam@second.example")]  # fmt: skip
PETS = [("cats", "two", "three"), ("dogs", "two", "three"), ("kids", "two", "three"),
        ("bikes", "three", "four")]  # fmt: skip
DIETS = ["vegetarian", "vegan", "pescatarian"]
RELATIVES = [("sister", "brother"), ("mother", "father"), ("aunt", "uncle"), ("son", "daughter")]
DATES = [("May 3", "June 9"), ("March 12", "October 2"), ("January 20", "August 14"),
         ("April 1", "December 24")]  # fmt: skip
NAMES = ["Anna", "Marco", "Priya", "Tomasz", "Keiko", "Liam", "Fatima", "Jonas"]
PARTNERS = ["Sam", "Alex", "Robin", "Kim", "Jordan", "Maya"]
ROLES = [("nurse", "teacher"), ("software engineer", "product manager"), ("accountant", "lawyer"),
         ("chef", "baker"), ("architect", "designer")]  # fmt: skip
STATES = ["tired", "hungry", "bored", "stressed", "sleepy", "cold"]


def _cities() -> tuple[dict[str, str], ...]:
    return tuple({"old": a, "new": b} for a, b in CITY_PAIRS)


def _likes() -> tuple[dict[str, str], ...]:
    return tuple({"thing": t} for t in LIKES)


def _drinks() -> tuple[dict[str, str], ...]:
    return tuple({"old": a, "new": b} for a, b in DRINKS)


def _habits() -> tuple[dict[str, str], ...]:
    return tuple({"verb": v, "old": o, "new": n, "when": w} for v, o, n, w in HABITS)


def _employers() -> tuple[dict[str, str], ...]:
    return tuple({"old": a, "new": b} for a, b in EMPLOYER_PAIRS)


def _emails() -> tuple[dict[str, str], ...]:
    return tuple({"old": a, "new": b} for a, b in EMAIL_PAIRS)


def _counts() -> tuple[dict[str, str], ...]:
    return tuple({"thing": t, "old": o, "new": n} for t, o, n in PETS)


def _diets() -> tuple[dict[str, str], ...]:
    return tuple({"diet": d} for d in DIETS)


def _relatives() -> tuple[dict[str, str], ...]:
    return tuple(
        {"a": a, "b": b, "da": da, "db": db}
        for (a, b), (da, db) in zip(RELATIVES, DATES, strict=True)
    )


def _names() -> tuple[dict[str, str], ...]:
    return tuple(
        {"name": n, "wrong": n[:-1] + ("e" if not n.endswith("e") else "a")} for n in NAMES
    )


def _partners() -> tuple[dict[str, str], ...]:
    return tuple({"partner": p} for p in PARTNERS)


def _roles() -> tuple[dict[str, str], ...]:
    return tuple({"old": a, "new": b} for a, b in ROLES)


def _states() -> tuple[dict[str, str], ...]:
    return tuple({"state": s} for s in STATES)


def _cities_single() -> tuple[dict[str, str], ...]:
    return tuple({"city": a} for a, _ in CITY_PAIRS)


# --- Families ------------------------------------------------------------------------------

FAMILIES: list[Family] = [
    # Changes of mind about a like: the old one must go.
    Family(
        "like-flip-a",
        "change_of_mind",
        (("I love {thing}.",), ("I don't like {thing} anymore.",)),
        active=(("{thing}", "not|no longer|n't|dislike"),),
        inactive=(("love", "{thing}"),),
        query="Does the user like {thing}?",
        fillers=_likes(),
    ),
    Family(
        "like-flip-b",
        "change_of_mind",
        (("I really enjoy {thing}.",), ("Honestly I've gone off {thing}, not my thing any more.",)),
        active=(("{thing}", "not|no longer|n't|dislike|gone off"),),
        inactive=(("enjoy", "{thing}"),),
        query="What does the user think of {thing}?",
        fillers=_likes(),
    ),
    Family(
        "like-flip-c",
        "change_of_mind",
        (
            ("{thing} is my favourite thing to do on weekends.",),
            ("I'm over {thing} now, I stopped liking it.",),
        ),
        active=(("{thing}", "not|no longer|n't|stopped|over"),),
        inactive=(("favourite", "{thing}"),),
        query="What does the user do on weekends?",
        fillers=_likes(),
    ),
    Family(
        "dislike-to-like",
        "change_of_mind",
        (("I hate {thing}.",), ("Funny, I actually love {thing} now.",)),
        active=(("love", "{thing}"),),
        inactive=(("hate", "{thing}"),),
        query="Does the user like {thing}?",
        fillers=_likes(),
    ),
    # Preference flips.
    Family(
        "prefer-flip-a",
        "preference",
        (("I prefer {old}.",), ("Actually, I prefer {new} over {old} now.",)),
        active=(("prefer", "{new}"),),
        inactive=(("prefer", "{old}", "!{new}"),),
        query="What does the user prefer to drink?",
        fillers=_drinks(),
    ),
    Family(
        "prefer-flip-b",
        "preference",
        (("My go-to drink is {old}.",), ("These days I'd rather have {new} than {old}.",)),
        active=(("{new}",),),
        inactive=(("{old}", "!{new}"),),
        query="What should I offer the user to drink?",
        fillers=_drinks(),
    ),
    Family(
        "prefer-flip-c",
        "preference",
        (
            ("I always drink {old} in the morning.", "I prefer {old} to anything else."),
            ("Switched to {new} this year, I prefer {new} now.",),
        ),
        active=(("prefer", "{new}"),),
        inactive=(("prefer", "{old}", "!{new}"),),
        query="What does the user drink in the morning?",
        fillers=_drinks(),
    ),
    # Quantities of a habit.
    Family(
        "habit-count-a",
        "quantity",
        (
            ("I {verb} {old} {when}.",),
            ("I've increased it to {new} now.", "I {verb} {new} {when} now."),
        ),
        active=(("{new}",),),
        inactive=(("{old}",),),
        query="How far does the user {verb}?",
        fillers=_habits(),
    ),
    Family(
        "habit-count-b",
        "quantity",
        (("Every day I {verb} {old}.",), ("Update: I {verb} {new} a day these days.",)),
        active=(("{new}",),),
        inactive=(("{old}",),),
        query="How much does the user {verb}?",
        fillers=_habits(),
    ),
    # Diet: negation of a state.
    Family(
        "diet-negated-a",
        "negation",
        (("I am {diet}.",), ("I'm not {diet} anymore, I eat everything now.",)),
        active=(("{diet}", "not|no longer"),),
        inactive=(("is {diet}",),),
        query="Can the user eat meat?",
        fillers=_diets(),
    ),
    Family(
        "diet-negated-b",
        "negation",
        (("I've been {diet} for years.",), ("I stopped being {diet} last month.",)),
        active=(("{diet}", "not|no longer|stopped"),),
        inactive=(("is {diet}",),),
        query="What does the user eat?",
        fillers=_diets(),
    ),
    Family(
        "diet-start",
        "negation",
        (("I eat meat most days.",), ("I became {diet} in January.",)),
        active=(("{diet}",),),
        complete=False,
        query="What does the user eat?",
        fillers=_diets(),
    ),
    # Moves: every memory of the old home goes, paraphrases included.
    Family(
        "move-a",
        "move",
        (("I live in {old}.", "My home is in {old}."), ("I moved to {new} last week.",)),
        active=(("{new}",),),
        inactive=(("{old}",),),
        query="Where does the user live?",
        fillers=_cities(),
    ),
    Family(
        "move-b",
        "move",
        (("I'm based in {old}.",), ("Big news: I relocated to {new}.",)),
        active=(("{new}",),),
        inactive=(("{old}",),),
        query="Which city is the user in?",
        fillers=_cities(),
    ),
    Family(
        "move-c",
        "move",
        (("I live in {old}.",), ("I don't live in {old} anymore, I live in {new} now.",)),
        active=(("{new}",),),
        inactive=(("lives in {old}", "!no longer", "!not"),),
        allowed=(("{old}", "no longer|not"),),
        query="Where is the user's home?",
        fillers=_cities(),
    ),
    Family(
        "move-d",
        "move",
        (
            ("Home for me is {old}.",),
            ("We just moved to {new}.",),
            ("Loving life in {new} so far.",),
        ),
        active=(("{new}",),),
        inactive=(("{old}",),),
        complete=False,
        query="Where does the user live?",
        fillers=_cities(),
    ),
    # Paraphrases: one memory for one fact.
    Family(
        "paraphrase-home",
        "paraphrase",
        (("I live in {city}.",), ("My home is in {city}.",)),
        active=(("{city}",),),
        query="Where does the user live?",
        fillers=_cities_single(),
    ),
    Family(
        "paraphrase-kids",
        "paraphrase",
        (("I have {old} {thing}.",), ("I am the proud owner of {old} {thing}.",)),
        active=(("{old}", "{thing}"),),
        query="How many {thing} does the user have?",
        fillers=_counts(),
    ),
    Family(
        "paraphrase-like",
        "paraphrase",
        (("I love {thing}.",), ("I really love {thing}.",)),
        active=(("love", "{thing}"),),
        query="What does the user love?",
        fillers=_likes(),
    ),
    # Contact details.
    Family(
        "email-update-a",
        "contact",
        (("My email is {old}.",), ("New email: {new}, please use that from now on.",)),
        active=(("{new}",),),
        inactive=(("{old}",),),
        query="What is the user's email?",
        fillers=_emails(),
    ),
    Family(
        "email-update-b",
        "contact",
        (("You can reach me at {old}.",), ("My email changed to {new}.",)),
        active=(("{new}",),),
        inactive=(("{old}",),),
        query="How do I email the user?",
        fillers=_emails(),
    ),
    # Job changes.
    Family(
        "job-a",
        "job",
        (("I work at {old}.",), ("I just started a new job at {new}.",)),
        active=(("{new}",),),
        inactive=(("{old}",),),
        query="Where does the user work?",
        fillers=_employers(),
    ),
    Family(
        "job-b",
        "job",
        (("I'm an engineer at {old}.",), ("I left {old} and joined {new}.",)),
        active=(("{new}",), ("engineer",)),
        inactive=(("works at {old}|engineer at {old}",),),
        query="Who is the user's employer?",
        fillers=_employers(),
    ),
    Family(
        "role-a",
        "job",
        (("I work as a {old}.",), ("I retrained and now work as a {new}.",)),
        active=(("{new}",),),
        inactive=(("{old}",),),
        query="What is the user's job?",
        fillers=_roles(),
    ),
    # Counts.
    Family(
        "count-a",
        "count",
        (("I have {old} {thing}.",), ("We got another one, so I have {new} {thing} now.",)),
        active=(("{new}", "{thing}"),),
        inactive=(("{old} {thing}",),),
        query="How many {thing} does the user have?",
        fillers=_counts(),
    ),
    # Relationships.
    Family(
        "partner-a",
        "relationship",
        (("I'm engaged to {partner}.",), ("{partner} and I got married in June!",)),
        active=(("married", "{partner}"),),
        inactive=(("engaged", "{partner}"),),
        complete=False,
        query="Is the user married?",
        fillers=_partners(),
    ),
    Family(
        "partner-b",
        "relationship",
        (("My boyfriend is {partner}.",), ("{partner} and I broke up last month.",)),
        active=(("{partner}", "broke up|split|ex"),),
        inactive=(("boyfriend is {partner}",),),
        complete=False,
        query="Who is the user's partner?",
        fillers=_partners(),
    ),
    # Corrections.
    Family(
        "name-correction",
        "correction",
        (("My name is {wrong}.",), ("Sorry, typo: my name is {name}, not {wrong}.",)),
        active=(("{name}",),),
        inactive=(("name is {wrong}",),),
        query="What is the user's name?",
        fillers=_names(),
    ),
    Family(
        "city-correction",
        "correction",
        (("I live in {old}.",), ("Correction: I live in {new}, not {old}.",)),
        active=(("{new}",),),
        inactive=(("lives in {old}", "!no longer", "!not"),),
        query="Where does the user live?",
        allowed=(("{old}", "no longer|not"),),
        fillers=_cities(),
    ),
    # Distinct but similar: both stay.
    Family(
        "relatives-birthdays",
        "distinct",
        (("My {a}'s birthday is {da}.",), ("My {b}'s birthday is {db}.",)),
        active=(("{a}", "{da}"), ("{b}", "{db}")),
        complete=False,
        query="When are the family birthdays?",
        fillers=_relatives(),
    ),
    Family(
        "relatives-cities",
        "distinct",
        (("My {a} lives in Rome.", "My {b} lives in Paris."),),
        active=(("{a}", "Rome"), ("{b}", "Paris")),
        inactive=(("user lives in",),),
        complete=False,
        query="Where does the family live?",
        fillers=_relatives(),
    ),
    # Sarcasm and jokes: nothing stored.
    Family(
        "sarcasm-a",
        "sarcasm",
        (("Oh sure, and I'm the Queen of England.",),),
        inactive=(("queen",),),
        fillers=({},) * 3,
    ),
    Family(
        "sarcasm-b",
        "sarcasm",
        (("Yeah right, I'm a billionaire astronaut, obviously.",),),
        inactive=(("billionaire|astronaut",),),
        fillers=({},) * 3,
    ),
    Family(
        "sarcasm-c",
        "sarcasm",
        (("Great, another Monday. I just LOVE Mondays. Not.",),),
        inactive=(("love", "monday"),),
        fillers=({},) * 3,
    ),
    Family(
        "joke-jk",
        "sarcasm",
        (("I live on the moon lol jk",),),
        inactive=(("moon",),),
        fillers=({},) * 3,
    ),
    # Hypotheticals and wishes.
    Family(
        "hypothetical-a",
        "hypothetical",
        (("If I lived in {city}, I would cycle everywhere.",),),
        inactive=(("lives in {city}",),),
        fillers=_cities_single(),
    ),
    Family(
        "wish-a",
        "hypothetical",
        (("I wish I were a {old}.",),),
        inactive=(("is a {old}|works as a {old}",),),
        fillers=_roles(),
    ),
    Family(
        "hypothetical-b",
        "hypothetical",
        (("Maybe one day I'll move to {city}.",),),
        inactive=(("lives in {city}|moved to {city}",),),
        fillers=_cities_single(),
    ),
    # Quoted speech and other people's sayings.
    Family(
        "quoted-a",
        "quoted",
        (('My boss always says "I love {thing}".',),),
        inactive=(("user", "love", "{thing}"),),
        complete=False,
        fillers=_likes(),
    ),
    Family(
        "quoted-b",
        "quoted",
        (("My friend told me she lives in {city}.",),),
        inactive=(("user lives in {city}",),),
        complete=False,
        fillers=_cities_single(),
    ),
    # Other people's facts are not the user's.
    Family(
        "other-person",
        "other_person",
        (("My {a} is a vegetarian.",),),
        inactive=(("user is a vegetarian|user is vegetarian",),),
        complete=False,
        fillers=_relatives(),
    ),
    # Passing states.
    Family(
        "passing-a",
        "passing_state",
        (("I'm so {state} today.",),),
        inactive=(("{state}",),),
        fillers=_states(),
    ),
    Family(
        "passing-b",
        "passing_state",
        (("Ugh, feeling {state} right now.",),),
        inactive=(("{state}",),),
        fillers=_states(),
    ),
    # Code and log pastes.
    Family(
        "code-a",
        "code",
        (("```python\nuser.city = '{city}'\nprint('I live in {city}')\n```",),),
        inactive=(("{city}",),),
        fillers=_cities_single(),
    ),
    Family(
        "log-a",
        "code",
        (
            (
                "2024-05-01 12:00:03 ERROR user_location={city} lookup failed: "
                "I live in {city} not found",
            ),
        ),
        inactive=(("{city}",),),
        fillers=_cities_single(),
    ),
    # Fragments.
    Family(
        "fragment-a",
        "fragment",
        (("I live in {old}.",), ("I don't live in {old} anymore, never did really.",)),
        inactive=(("never did",),),
        complete=False,
        fillers=_cities(),
    ),
    Family(
        "fragment-b",
        "fragment",
        (("Not really. Maybe later.",),),
        inactive=(("not really|maybe later",),),
        fillers=({},) * 3,
    ),
    Family(
        "fragment-c",
        "fragment",
        (("I work at {old}.",), ("Not anymore though, and then some.",)),
        inactive=(("and then some",),),
        complete=False,
        fillers=_employers(),
    ),
    # More phrasings of the same kinds of change.
    Family(
        "like-flip-d",
        "change_of_mind",
        (("Big fan of {thing} here.",), ("Not a fan of {thing} any longer.",)),
        active=(("{thing}", "not|no longer|n't"),),
        inactive=(("fan of {thing}", "!not", "!no longer"),),
        query="Is the user a fan of {thing}?",
        fillers=_likes(),
    ),
    Family(
        "prefer-flip-d",
        "preference",
        (
            ("I like {old} better than {new}.",),
            ("Changed my mind: I like {new} better than {old} now.",),
        ),
        active=(("{new}", "better|prefer"),),
        inactive=(("{old} better than {new}|prefers {old} over {new}",),),
        query="Which does the user like better?",
        fillers=_drinks(),
    ),
    Family(
        "habit-count-c",
        "quantity",
        (("My routine: I {verb} {old} {when}.",), ("Now I {verb} {new} instead of {old}.",)),
        active=(("{new}",),),
        inactive=(("{old}", "!{new}"),),
        query="What is the user's routine?",
        fillers=_habits(),
    ),
    Family(
        "diet-negated-c",
        "negation",
        (("I don't eat meat, I'm {diet}.",), ("I eat meat again, so I'm no longer {diet}.",)),
        active=(("{diet}", "not|no longer"),),
        inactive=(("is {diet}",),),
        query="Can I cook meat for the user?",
        fillers=_diets(),
    ),
    Family(
        "move-e",
        "move",
        (("I've lived in {old} my whole life.",), ("Just settled into my new flat in {new}.",)),
        active=(("{new}",),),
        inactive=(("lives in {old}|lived in {old}",),),
        complete=False,
        query="Where does the user live now?",
        fillers=_cities(),
    ),
    Family(
        "email-update-c",
        "contact",
        (("Email me at {old}.",), ("Please update my email to {new}.",)),
        active=(("{new}",),),
        inactive=(("{old}",),),
        query="What email should I use for the user?",
        fillers=_emails(),
    ),
    Family(
        "job-c",
        "job",
        (("I'm employed by {old}.",), ("Starting Monday I work for {new}.",)),
        active=(("{new}",),),
        inactive=(("{old}",),),
        complete=False,
        query="Who does the user work for?",
        fillers=_employers(),
    ),
    Family(
        "count-b",
        "count",
        (("We have {old} {thing}.",), ("Now there are {new} {thing} in our house.",)),
        active=(("{new}", "{thing}"),),
        inactive=(("{old} {thing}",),),
        complete=False,
        query="How many {thing} are in the user's house?",
        fillers=_counts(),
    ),
    Family(
        "paraphrase-job",
        "paraphrase",
        (("I work at {old}.",), ("My employer is {old}.",)),
        active=(("{old}",),),
        query="Where does the user work?",
        fillers=_employers(),
    ),
    Family(
        "paraphrase-email",
        "paraphrase",
        (("My email is {old}.",), ("You can email me at {old}.",)),
        active=(("{old}",),),
        query="What is the user's email?",
        fillers=_emails(),
    ),
    Family(
        "relationship-c",
        "relationship",
        (("I'm single at the moment.",), ("I'm dating {partner} now.",)),
        active=(("dating|partner|{partner}",),),
        inactive=(("single",),),
        complete=False,
        query="Is the user seeing anyone?",
        fillers=_partners(),
    ),
    Family(
        "age-correction",
        "correction",
        (("I'm 35.",), ("Oops, I'm actually 36, not 35.",)),
        active=(("36",),),
        inactive=(("35", "!36"),),
        query="How old is the user?",
        fillers=({},) * 4,
    ),
    Family(
        "relatives-jobs",
        "distinct",
        (("My {a} works at Google.",), ("My {b} works at Apple.",)),
        active=(("{a}", "Google"), ("{b}", "Apple")),
        inactive=(("user works at",),),
        complete=False,
        query="Where does the family work?",
        fillers=_relatives(),
    ),
    Family(
        "sarcasm-d",
        "sarcasm",
        (("Sure, I totally speak twelve languages fluently.",),),
        inactive=(("twelve languages",),),
        fillers=({},) * 3,
    ),
    Family(
        "sarcasm-e",
        "sarcasm",
        (("Oh yes, I run a marathon every single day, said no one ever.",),),
        inactive=(("marathon",),),
        fillers=({},) * 3,
    ),
    Family(
        "hypothetical-c",
        "hypothetical",
        (("Suppose I worked at {old}, would that help?",),),
        inactive=(("works at {old}",),),
        fillers=_employers(),
    ),
    Family(
        "quoted-c",
        "quoted",
        (('She said: "I work at {old}."',),),
        inactive=(("user", "works at {old}"),),
        complete=False,
        fillers=_employers(),
    ),
    Family(
        "other-person-b",
        "other_person",
        (("My {a} works at Google.",),),
        inactive=(("user works at google",),),
        complete=False,
        fillers=_relatives(),
    ),
    Family(
        "passing-c",
        "passing_state",
        (("Kinda {state} this afternoon tbh.",),),
        inactive=(("{state}",),),
        fillers=_states(),
    ),
    Family(
        "code-b",
        "code",
        (('{{"name": "Ada", "city": "{city}", "likes": ["jazz"]}}',),),
        inactive=(("{city}",), ("jazz",)),
        fillers=_cities_single(),
    ),
    # --- Added for issue 28 item 4 ("Nothing invented"): more phrasings of counts, distinct
    # facts, hypotheticals, wishes, quotes, sarcasm, passing states, pastes and updates,
    # written before the rules for them (each family's side is its hash, as above).
    Family(
        "count-c",
        "count",
        (("I have {old} {thing}.",), ("We're up to {new} {thing} now.",)),
        active=(("{new}", "{thing}"),),
        inactive=(("{old} {thing}",),),
        complete=False,
        query="How many {thing} does the user have?",
        fillers=_counts(),
    ),
    Family(
        "count-d",
        "count",
        (("I own {old} {thing}.",), ("I own {new} {thing} these days.",)),
        active=(("{new}", "{thing}"),),
        inactive=(("{old} {thing}",),),
        query="How many {thing} does the user own?",
        fillers=_counts(),
    ),
    Family(
        "count-e",
        "count",
        (("We've got {old} {thing} at home.",), ("One more joined us, so {new} {thing} now.",)),
        active=(("{new}", "{thing}"),),
        inactive=(("{old} {thing}",),),
        complete=False,
        query="How many {thing} are at the user's home?",
        fillers=_counts(),
    ),
    Family(
        "distinct-pet-names",
        "distinct",
        (("My dog is called Rex.", "My cat is called {name}."),),
        active=(("dog", "Rex"), ("cat", "{name}")),
        complete=False,
        query="What are the user's pets called?",
        fillers=tuple({"name": n} for n in NAMES[:4]),
    ),
    Family(
        "distinct-relatives-jobs-b",
        "distinct",
        (("My {a} is a {old}.",), ("My {b} is a {new}.",)),
        active=(("{a}", "{old}"), ("{b}", "{new}")),
        inactive=(("user is a {old}|user works as a {old}",),),
        complete=False,
        query="What do the user's relatives do?",
        fillers=tuple(
            {"a": a, "b": b, "old": o, "new": n}
            for (a, b), (o, n) in zip(RELATIVES, ROLES, strict=False)
        ),
    ),
    Family(
        "hypothetical-d",
        "hypothetical",
        (("If I had more money, I would buy a flat in {city}.",),),
        inactive=(("flat in {city}|lives in {city}",),),
        fillers=_cities_single(),
    ),
    Family(
        "wish-b",
        "hypothetical",
        (("If only I worked at {new}.",),),
        inactive=(("works at {new}",),),
        fillers=_employers(),
    ),
    Family(
        "wish-c",
        "hypothetical",
        (("I'd love to live in {city} someday.",),),
        inactive=(("lives in {city}",),),
        fillers=_cities_single(),
    ),
    Family(
        "hypothetical-e",
        "hypothetical",
        (("Imagine I moved to {city} next year, what would change?",),),
        inactive=(("lives in {city}|moved to {city}",),),
        fillers=_cities_single(),
    ),
    Family(
        "quoted-d",
        "quoted",
        (('My dad keeps telling me "you should move to {city}".',),),
        inactive=(("lives in {city}|moved to {city}|move to {city}",),),
        complete=False,
        fillers=_cities_single(),
    ),
    Family(
        "quoted-e",
        "quoted",
        (("Her text said: I just moved to {city}!",),),
        inactive=(("user", "moved to {city}"),),
        complete=False,
        fillers=_cities_single(),
    ),
    Family(
        "quoted-f",
        "quoted",
        (("My colleague says he loves {thing}.",),),
        inactive=(("user", "love", "{thing}"),),
        complete=False,
        fillers=_likes(),
    ),
    Family(
        "sarcasm-f",
        "sarcasm",
        (("Yeah, because I totally love {thing}. /s",),),
        inactive=(("love", "{thing}"),),
        fillers=_likes(),
    ),
    Family(
        "sarcasm-g",
        "sarcasm",
        (("Right, and I'm secretly a famous pop star.",),),
        inactive=(("pop star",),),
        fillers=({},) * 3,
    ),
    Family(
        "passing-d",
        "passing_state",
        (("Feeling a bit {state} at the moment.",),),
        inactive=(("{state}",),),
        fillers=_states(),
    ),
    Family(
        "log-b",
        "code",
        (
            (
                "Traceback (most recent call last):\n"
                '  File "app.py", line 3, in <module>\n'
                "ValueError: I live in {city} is not a valid city",
            ),
        ),
        inactive=(("{city}",),),
        fillers=_cities_single(),
    ),
    Family(
        "email-update-d",
        "contact",
        (("My email is {old}.",), ("I've switched to a new address: {new}.",)),
        active=(("{new}",),),
        inactive=(("{old}",),),
        query="What is the user's email?",
        fillers=_emails(),
    ),
    Family(
        "job-d",
        "job",
        (("I work for {old}.",), ("I quit {old} last month and now I'm at {new}.",)),
        active=(("{new}",),),
        inactive=(("works for {old}|works at {old}",),),
        complete=False,
        query="Where does the user work?",
        fillers=_employers(),
    ),
    Family(
        "move-f",
        "move",
        (("I'm living in {old} at the moment.",), ("We relocated to {new} in the spring.",)),
        active=(("{new}",),),
        inactive=(("lives in {old}",),),
        complete=False,
        query="Where does the user live?",
        fillers=_cities(),
    ),
    Family(
        "relationship-d",
        "relationship",
        (("My girlfriend is {partner}.",), ("{partner} and I are engaged now!",)),
        active=(("engaged", "{partner}"),),
        inactive=(("girlfriend is {partner}",),),
        complete=False,
        query="Is the user engaged?",
        fillers=_partners(),
    ),
    Family(
        "other-person-c",
        "other_person",
        (("My {a} just moved to Berlin.",),),
        inactive=(("user moved to|user lives in|user just moved",),),
        complete=False,
        fillers=_relatives(),
    ),
    Family(
        "count-f",
        "count",
        (
            ("I'm the proud owner of {old} {thing}.",),
            ("Correction, it's {new} {thing}, not {old}.",),
        ),
        active=(("{new}", "{thing}"),),
        inactive=(("{old} {thing}",),),
        complete=False,
        query="How many {thing} does the user have?",
        fillers=_counts(),
    ),
    Family(
        "count-g",
        "count",
        (("There are {old} {thing} in my life.",), ("I now have {new} {thing}.",)),
        active=(("{new}", "{thing}"),),
        inactive=(("{old} {thing}",),),
        complete=False,
        query="How many {thing} does the user have?",
        fillers=_counts(),
    ),
    Family(
        "quoted-g",
        "quoted",
        (("My neighbour told me that she works at {old}.",),),
        inactive=(("user works at {old}",),),
        complete=False,
        fillers=_employers(),
    ),
    Family(
        "quoted-h",
        "quoted",
        (("The song goes 'I live in {city} and I love the rain'.",),),
        inactive=(("lives in {city}",), ("love", "rain")),
        fillers=_cities_single(),
    ),
    Family(
        "count-h",
        "count",
        (("Just so you know, I have {old} {thing}.",), ("Now I have {new} {thing} instead.",)),
        active=(("{new}", "{thing}"),),
        inactive=(("{old} {thing}",),),
        query="How many {thing} does the user have?",
        fillers=_counts(),
    ),
]


FRESH_FILE = Path(__file__).with_name("beliefs_fresh.json")
FRESH_PREFIX = "fresh-"
TUNED_FILE = Path(__file__).with_name("beliefs_tuned.json")
TUNED_PREFIX = "tuned-"


def _beliefs(value: Any) -> tuple[Belief, ...]:
    return tuple(tuple(str(term) for term in belief) for belief in value or ())


def read_families(path: Path) -> tuple[Family, ...]:
    """The families of a JSON file: a list of objects with the fields of ``Family``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return tuple(
        Family(
            id=str(f["id"]),
            category=str(f["category"]),
            sessions=tuple(tuple(str(m) for m in session) for session in f["sessions"]),
            active=_beliefs(f.get("active")),
            inactive=_beliefs(f.get("inactive")),
            complete=bool(f.get("complete", True)),
            query=str(f.get("query", "")),
            fillers=tuple({str(k): str(v) for k, v in fill.items()} for fill in f["fillers"]),
            allowed=_beliefs(f.get("allowed")),
            wrong_holder=_beliefs(f.get("wrong_holder")),
        )
        for f in data
    )


@cache
def fresh_families() -> tuple[Family, ...]:
    """The blind-written held-out families of ``beliefs_fresh.json`` (the module's docstring)."""
    return read_families(FRESH_FILE)


@cache
def tuned_families() -> tuple[Family, ...]:
    """The families of ``beliefs_tuned.json``, written to be tuned on (the module's docstring)."""
    return read_families(TUNED_FILE)


def conversations(split: str = "all") -> list[Conversation]:
    """Every conversation of the split, in family order: "tune" (the hashed tune part and
    every ``tuned-*`` family), "heldout", "all" (those two), "tuned" (the ``tuned-*``
    families alone) or "fresh"."""
    if split == "fresh":
        return [c for family in fresh_families() for c in family.conversations()]
    if split == "tuned":
        return [c for family in tuned_families() for c in family.conversations()]
    every = [c for family in (*FAMILIES, *tuned_families()) for c in family.conversations()]
    return every if split == "all" else [c for c in every if c.split == split]


def sample(count: int) -> list[Conversation]:
    """The first ``count`` conversations (tests)."""
    return list(islice(conversations(), count))
