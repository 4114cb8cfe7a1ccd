"""Understanding, not phrase lists (issue 39), from the outside: a conversation through the
HTTP API, then the active memories (their contents and claims), then the context block an
agent is given for a question about them. One section per class of the issue:

1. a changed or ended state said without a listed attribute ("I sold my motorbike");
2. a correction that points at an earlier turn ("oops, I meant Thursday");
3. a sentence of several facts, one memory each, superseded claim by claim;
4. a time-bound statement ("in Madrid for the week"): it holds until its valid_until,
   beside the home it does not replace, then leaves the context block;
5. a loose value ("drinks oolong as well"), and its ending ("he gave up oolong");
6. the wrong holder: someone else's email or fact is never the user's;
7. a short answer read with the assistant's question ("Porto.");
8. moods: a hypothetical, another person's words or a question is not believed; a past
   state is an episode, not a current belief;
9. a plain direct write of a past fact is stored.

The stale value must not be in the context block; the current one must. The conversations
failed on the main before this work (7a08f4c), but for a few kept as guards that held
there already (the hypotheticals, reported words and questions, a relative's home, a
direct write of a childhood home); a test marked xfail states what the service still gets
wrong.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memories.write.runner import run_extraction
from tests.conftest import Actor
from tests.memories.conftest import Clock
from tests.memories.test_beliefs_api import NS, active, contents

pytestmark = pytest.mark.django_db
# A turn: the user's text, or (role, text) for another role's ("assistant", "...").
Turn = str | tuple[str, str]
# Wednesday 2 January 2030, 09:00 UTC: "until Sunday" is the 6th.
WEDNESDAY = datetime(2030, 1, 2, 9, 0, tzinfo=UTC)


def talk(owner: Actor, *sessions: list[Turn]) -> None:
    """Each session a thread, each turn saved in order and a user's extraction run (the
    queue runs tasks on commit, which the test's transaction never does: so here)."""
    for session in sessions:
        thread = owner.post("/api/threads", {"namespace": NS}).json()["id"]
        for turn in session:
            role, text = ("user", turn) if isinstance(turn, str) else turn
            saved = owner.post(f"/api/threads/{thread}/messages", {"role": role, "content": text})
            assert saved.status_code == 201, saved.content
            extraction = saved.json()["extraction"]
            if role == "user":
                assert extraction is not None
                assert run_extraction(extraction["id"]) is not None


def block(owner: Actor, query: str) -> str:
    """The context block (the system prompt) an agent is given for ``query`` in a new thread."""
    thread = owner.post("/api/threads", {"namespace": NS}).json()["id"]
    response = owner.post("/api/context", {"thread_id": thread, "query": query})
    assert response.status_code == 200, response.content
    return str(response.json()["system"])


def one(owner: Actor, content: str) -> dict[str, Any]:
    """The active memory with this content (exactly one)."""
    found = [m for m in active(owner) if m["content"] == content]
    assert len(found) == 1, (content, contents(owner))
    return found[0]


def memory(owner: Actor, memory_id: int) -> dict[str, Any]:
    response = owner.get(f"/api/memories/{memory_id}")
    assert response.status_code == 200, response.content
    return dict(response.json())


def claim(subject: str, attribute: str, value: str, polarity: str = "affirmed") -> dict[str, str]:
    return {
        "subject": subject,
        "attribute": attribute,
        "value": value,
        "polarity": polarity,
        "mood": "asserted",
    }


def replaced(owner: Actor, old: dict[str, Any]) -> dict[str, Any]:
    """``old`` read again: superseded, by a memory that is active."""
    now = memory(owner, old["id"])
    assert now["status"] == "superseded", now
    assert memory(owner, now["superseded_by_id"])["status"] == "active"
    return now


def listed(owner: Actor, query: str, *, present: list[str], absent: list[str]) -> None:
    """The context block for ``query`` lists every one of ``present`` and none of ``absent``."""
    shown = block(owner, query)
    for line in present:
        assert line in shown, (line, shown)
    for line in absent:
        assert line not in shown, (line, shown)


def holder_of(owner: Actor, attribute: str) -> list[tuple[str, str]]:
    """(holder, value) of every active memory claiming ``attribute``."""
    return sorted(
        (m["claim"]["subject"], m["claim"]["value"])
        for m in active(owner)
        if m["claim"] is not None and m["claim"]["attribute"] == attribute
    )


# --- 1. A changed or ended state, said without a listed attribute ----------------------------


@pytest.mark.parametrize(
    ("before", "after", "ended", "query"),
    [
        (
            "I play the cello.",
            "I stopped playing the cello years ago.",
            claim("user", "about:cello", "play", "negated"),
            "Does the user play the cello?",
        ),
        (
            "I ride my motorbike to work.",
            "I sold my motorbike.",
            claim("user", "about:motorbike", "*", "negated"),
            "How does the user get to work?",
        ),
        (
            "I love sushi.",
            "I've gone off sushi.",
            claim("user", "opinion:sushi", "positive", "negated"),
            "Does the user like sushi?",
        ),
        (
            "I drive a Volvo.",
            "I sold my Volvo last month.",
            claim("user", "about:volvo", "*", "negated"),
            "What car does the user drive?",
        ),
    ],
    ids=["cello", "motorbike", "sushi", "volvo"],
)
def test_an_ended_state_retires_what_it_ends(
    owner: Actor, before: str, after: str, ended: dict[str, str], query: str
) -> None:
    talk(owner, [before])
    [old] = active(owner)
    talk(owner, [after])
    replaced(owner, old)
    [now] = active(owner)
    assert now["claim"] == ended
    listed(owner, query, present=[now["content"]], absent=[old["content"]])


def test_not_doing_something_anymore_retires_the_habit(owner: Actor) -> None:
    talk(owner, ["I swim at the lido every Sunday."], ["I don't swim anymore."])
    assert contents(owner) == ["The user no longer swims."]
    listed(
        owner,
        "Does the user go swimming?",
        present=["The user no longer swims."],
        absent=["The user swims at the lido every Sunday."],
    )


def test_going_off_something_lately_retires_the_liking(owner: Actor) -> None:
    talk(owner, ["I love espresso."], ["I've gone off espresso lately."])
    assert "The user loves espresso." not in contents(owner)
    [memory] = active(owner)
    assert memory["claim"] == claim("user", "opinion:espresso", "positive", "negated")
    listed(
        owner,
        "Does the user like espresso?",
        present=[memory["content"]],
        absent=["The user loves espresso."],
    )


def test_quitting_in_the_past_is_said_in_the_past(owner: Actor) -> None:
    talk(owner, ["I teach piano on weekends."], ["I quit teaching piano in March."])
    assert contents(owner) == ["The user quit teaching piano in March."]


# --- 2. A correction that points at an earlier turn -------------------------------------------


@pytest.mark.parametrize(
    ("session", "old", "new", "query"),
    [
        (
            [
                "Our meeting is on Tuesday.",
                ("assistant", "Noted, Tuesday it is."),
                "Oops, I meant Thursday.",
            ],
            "meeting is on Tuesday",
            "meeting is on Thursday",
            "When is the meeting?",
        ),
        (
            ["My dentist appointment is on Monday.", "Sorry, I meant Wednesday."],
            "dentist appointment is on Monday",
            "dentist appointment is on Wednesday",
            "When is the dentist appointment?",
        ),
        (
            ["My flight is to Vienna.", "Sorry, not Vienna but Venice."],
            "flight is to Vienna",
            "flight is to Venice",
            "Where is the user's flight to?",
        ),
        (
            ["My sister lives in Austria.", "No wait, not Austria but Australia."],
            "sister lives in Austria",
            "sister lives in Australia",
            "Where does the user's sister live?",
        ),
        (
            ["I run 5 km every morning.", "Sorry, make that 8 km."],
            "runs 5 km",
            "runs 8 km",
            "How far does the user run?",
        ),
        (
            ["I have dinner with six friends on Friday.", "Make it eight."],
            "dinner with six friends",
            "dinner with eight friends",
            "Who is the user having dinner with on Friday?",
        ),
        (
            ["My sister's name is Katherine.", "Sorry, it's Kathryn, K-A-T-H-R-Y-N."],
            "name is Katherine",
            "name is Kathryn",
            "What is the user's sister's name?",
        ),
        (
            ["My manager is called Jon.", "Oops, I meant John."],
            "called Jon.",
            "called John.",
            "What is the user's manager called?",
        ),
    ],
    ids=[
        "i-meant-a-day",
        "sorry-i-meant",
        "not-x-but-y",
        "not-x-but-y-holder",
        "make-that",
        "make-it",
        "spelled-out",
        "spelling-meant",
    ],
)
def test_a_correction_rewrites_the_memory_it_points_at(
    owner: Actor, session: list[Turn], old: str, new: str, query: str
) -> None:
    talk(owner, session)
    [now] = active(owner)
    assert new in now["content"], now
    assert old not in now["content"], now
    listed(owner, query, present=[now["content"]], absent=[old])


def test_a_corrected_holder_keeps_its_claim(owner: Actor) -> None:
    talk(owner, ["My sister lives in Austria.", "No wait, not Austria but Australia."])
    [now] = active(owner)
    assert now["claim"] == claim("user's sister", "location", "australia")


def test_actually_make_it_a_new_time(owner: Actor) -> None:
    talk(owner, ["My standup is at 9.", "Actually make it 10."])
    assert contents(owner) == ["The user's standup is at 10."]
    listed(
        owner,
        "When is the user's standup?",
        present=["The user's standup is at 10."],
        absent=["standup is at 9"],
    )


def test_a_spelling_said_by_its_letter(owner: Actor) -> None:
    talk(owner, ["My manager is called Jon.", "Oops, I meant John with an h."])
    assert contents(owner) == ["The user's manager is called John."]


# --- 3. Several facts in one sentence, superseded claim by claim --------------------------------


@pytest.mark.parametrize(
    ("first", "facts", "move", "home", "new_home", "kept"),
    [
        (
            "We live in Bristol with our cat and I work at the library.",
            [
                "The user and their family live in Bristol.",
                "The user has a cat.",
                "The user works at the library.",
            ],
            "We moved to Leeds.",
            "The user and their family live in Bristol.",
            "The user lives in Leeds.",
            ["The user has a cat.", "The user works at the library."],
        ),
        (
            "I live in Glasgow with my partner and I work at the hospital.",
            [
                "The user has a partner.",
                "The user lives in Glasgow.",
                "The user works at the hospital.",
            ],
            "I moved to Edinburgh last month.",
            "The user lives in Glasgow.",
            "The user lives in Edinburgh.",
            ["The user has a partner.", "The user works at the hospital."],
        ),
    ],
    ids=["bristol-cat-library", "glasgow-partner-hospital"],
)
def test_a_move_replaces_the_home_and_keeps_the_rest(
    owner: Actor,
    first: str,
    facts: list[str],
    move: str,
    home: str,
    new_home: str,
    kept: list[str],
) -> None:
    talk(owner, [first])
    assert contents(owner) == facts  # one fact per memory
    before = {m["content"]: m for m in active(owner)}
    talk(owner, [move])
    replaced(owner, before[home])
    now = {m["content"]: m for m in active(owner)}
    assert new_home in now
    assert now[new_home]["claim"]["attribute"] == "location"
    for content in kept:  # the same memory, untouched
        assert now[content]["id"] == before[content]["id"], content
    listed(owner, "Where does the user live?", present=[new_home], absent=[home])
    household = "Who does the user live with, and where do they work?"
    listed(owner, household, present=kept, absent=[home])


# --- 4. A time-bound statement ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("home", "away", "until"),
    [
        (
            "I live in Ghent.",
            "I'm staying in Lisbon until Sunday.",
            datetime(2030, 1, 6, 23, 59, 59, tzinfo=UTC),
        ),
        ("I live in Porto.", "I'm staying in Madrid for a week.", WEDNESDAY + timedelta(days=7)),
        pytest.param(
            "I live in Porto.",
            "I'm in Madrid for the week.",
            WEDNESDAY + timedelta(days=7),
        ),
        pytest.param(
            "I live in Osaka.",
            "I'm in Tokyo until Friday for a conference.",
            datetime(2030, 1, 4, 23, 59, 59, tzinfo=UTC),
        ),
    ],
    ids=["until-sunday", "for-a-week", "for-the-week", "until-friday"],
)
def test_a_stay_holds_until_its_end_beside_the_home(
    owner: Actor, clock: Clock, home: str, away: str, until: datetime
) -> None:
    clock.now = WEDNESDAY
    talk(owner, [home], [away])
    lasting = one(owner, home.replace("I live", "The user lives"))  # not replaced
    assert (lasting["claim"]["attribute"], lasting["valid_until"]) == ("location", None)
    [stay] = [m for m in active(owner) if m["id"] != lasting["id"]]
    ends = datetime.fromisoformat(stay["valid_until"].replace("Z", "+00:00"))
    assert abs(ends - until) <= timedelta(days=1), stay["valid_until"]
    assert stay["claim"]["attribute"] != "location"
    where = "Where is the user?"
    listed(owner, where, present=[lasting["content"], stay["content"]], absent=[])

    clock.now = ends + timedelta(hours=1)  # the stay is over
    listed(owner, where, present=[lasting["content"]], absent=[stay["content"]])


def test_a_stay_written_with_a_past_validity_is_not_in_the_context(owner: Actor) -> None:
    talk(owner, ["I live in Ghent."])
    gone = owner.post(
        "/api/memories",
        {
            "namespace": NS,
            "kind": "fact",
            "content": "The user is staying in Lisbon.",
            "valid_until": "2020-01-05T00:00:00Z",
        },
    )
    assert gone.status_code == 201, gone.content
    listed(
        owner,
        "Where is the user staying?",
        present=["The user lives in Ghent."],
        absent=["The user is staying in Lisbon."],
    )


# --- 5. Loose values, and their ending ---------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "stored", "holds", "ending", "ended", "query"),
    [
        (
            ["I drink oolong every morning.", "My husband drinks oolong as well."],
            "The user's husband drinks oolong.",
            claim("user's husband", "about:oolong", "drink"),
            "He gave up oolong.",
            "The user's husband gave up oolong.",
            "Does the user's husband drink oolong?",
        ),
        (
            ["My wife drinks matcha too."],
            "The user's wife drinks matcha.",
            claim("user's wife", "about:matcha", "drink"),
            "She gave up matcha.",
            "The user's wife gave up matcha.",
            "Does the user's wife drink matcha?",
        ),
        (
            ["My son plays the violin as well."],
            "The user's son plays the violin.",
            claim("user's son", "about:violin", "play"),
            "My son stopped playing the violin.",
            "The user's son stopped playing the violin.",
            "Does the user's son play the violin?",
        ),
    ],
    ids=["husband-oolong", "wife-matcha", "son-violin"],
)
def test_a_loose_value_is_the_thing_and_its_ending_retires_it(
    owner: Actor,
    first: list[str],
    stored: str,
    holds: dict[str, str],
    ending: str,
    ended: str,
    query: str,
) -> None:
    talk(owner, first)
    held = one(owner, stored)  # not "... as well", not "... too"
    assert held["claim"] == holds
    mine = [m for m in active(owner) if m["id"] != held["id"]]
    talk(owner, [ending])
    replaced(owner, held)
    gone = one(owner, ended)
    assert gone["claim"]["subject"] == holds["subject"]
    assert gone["claim"]["polarity"] == "negated"
    for m in mine:  # the user's own habit is not theirs to end
        assert memory(owner, m["id"])["status"] == "active", m
    listed(owner, query, present=[ended], absent=[stored])


def test_a_drink_given_up_by_a_relative_retires_it(owner: Actor) -> None:
    talk(owner, ["My dad drinks espresso too."], ["My dad gave up espresso."])
    assert contents(owner) == ["The user's dad gave up espresso."]
    listed(
        owner,
        "Does the user's dad drink espresso?",
        present=["The user's dad gave up espresso."],
        absent=["dad drinks espresso"],
    )


# --- 6. The wrong holder ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "My colleague Rita (rita@x.example) sent me this.",
        "My friend Tom (tom@y.example) forwarded me the report.",
    ],
    ids=["rita", "tom"],
)
def test_someone_elses_address_in_passing_is_not_the_users(owner: Actor, text: str) -> None:
    talk(owner, ["My email is alice@home.example."], [text])
    mine = [value for holder, value in holder_of(owner, "email") if holder == "user"]
    assert mine == ["alice@home.example"]
    listed(
        owner,
        "What is the user's email address?",
        present=["The user's email is alice@home.example."],
        absent=["The user's email is rita@x.example.", "The user's email is tom@y.example."],
    )


def test_a_relatives_home_is_theirs(owner: Actor) -> None:
    talk(owner, ["I live in Bergen."], ["My sister lives in Oslo."])
    assert holder_of(owner, "location") == [("user", "bergen"), ("user's sister", "oslo")]
    listed(
        owner,
        "Where does the user live?",
        present=["The user lives in Bergen."],
        absent=["The user lives in Oslo."],
    )


@pytest.mark.parametrize(
    ("mine", "theirs", "attribute", "holders"),
    [
        (
            "My email is alice@home.example.",
            "My brother's email is ben@z.example.",
            "email",
            [("user", "alice@home.example"), ("user's brother", "ben@z.example")],
        ),
        pytest.param(
            "My phone number is 555-0199.",
            "My brother's phone number is 555-0100.",
            "phone",
            [("user", "555-0199"), ("user's brother", "555-0100")],
            marks=pytest.mark.xfail(
                strict=True,
                reason="the parser splits '555-0100' (a number, a dash, a number), so the "
                "sentence goes to the regex stage, which reads the user's own phone (slot phone, "
                "holder user) and replaces the user's",
            ),
        ),
    ],
    ids=["brothers-email", "brothers-phone"],
)
def test_a_relatives_contact_is_theirs(
    owner: Actor, mine: str, theirs: str, attribute: str, holders: list[tuple[str, str]]
) -> None:
    talk(owner, [mine], [theirs])
    assert holder_of(owner, attribute) == holders


# --- 7. A short answer to the assistant's question -----------------------------------------------


@pytest.mark.parametrize(
    ("question", "answer", "content", "said", "query"),
    [
        (
            "Which city are you in?",
            "Porto.",
            "The user lives in Porto.",
            claim("user", "location", "porto"),
            "Where does the user live?",
        ),
        (
            "Sure, happy to help. Which city are you based in?",
            "Ghent, Belgium.",
            "The user lives in Ghent.",
            claim("user", "location", "ghent"),
            "Where does the user live?",
        ),
        (
            "Which company do you work for?",
            "Acme.",
            "The user works at Acme.",
            claim("user", "employer", "acme"),
            "Where does the user work?",
        ),
        pytest.param(
            "How many cats do you have?",
            "Two.",
            "The user has two cats.",
            claim("user", "count:cat", "2"),
            "How many cats does the user have?",
        ),
    ],
    ids=["city", "city-based-in", "company", "how-many"],
)
def test_a_short_answer_is_read_with_the_question(
    owner: Actor, question: str, answer: str, content: str, said: dict[str, str], query: str
) -> None:
    talk(owner, [("assistant", question), answer])
    [memory] = active(owner)
    assert (memory["content"], memory["claim"]) == (content, said)
    listed(owner, query, present=[content], absent=[])


def test_a_short_answer_replaces_the_old_value(owner: Actor) -> None:
    talk(owner, ["I live in Lisbon."], [("assistant", "Which city are you in now?"), "Porto."])
    assert contents(owner) == ["The user lives in Porto."]
    listed(
        owner,
        "Where does the user live?",
        present=["The user lives in Porto."],
        absent=["The user lives in Lisbon."],
    )


# --- 8. Moods ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "query", "words"),
    [
        ("If I moved to Rome I'd learn Italian.", "Does the user speak Italian?", ["Italian"]),
        ("I'd move to Canada if I got the job.", "Where does the user live?", ["Canada"]),
        ("My friend says I should learn Spanish.", "Does the user speak Spanish?", ["Spanish"]),
        ("My sister thinks I'm a vegetarian.", "What does the user eat?", ["vegetarian"]),
        ("Should I move to Rome?", "Where does the user live?", ["Rome"]),
        ("Am I allergic to peanuts?", "Is the user allergic to anything?", ["peanuts"]),
        pytest.param(
            "People keep telling me I'm a great cook.",
            "What does the user do for work?",
            ["cook"],
        ),
        pytest.param(
            "My coach insists I'm a natural sprinter.",
            "Is the user a sprinter?",
            ["sprinter"],
        ),
    ],
    ids=[
        "hypothetical",
        "hypothetical-after",
        "reported",
        "reported-belief",
        "question",
        "question-about-self",
        "reported-praise",
        "reported-insists",
    ],
)
def test_what_is_not_asserted_is_not_believed(
    owner: Actor, text: str, query: str, words: list[str]
) -> None:
    talk(owner, [text])
    assert active(owner) == []
    listed(owner, query, present=[], absent=words)


@pytest.mark.parametrize(
    ("now", "then", "episode", "was", "query", "current", "wrong"),
    [
        (
            "I live in Porto.",
            "I used to live in Cork.",
            "The user used to live in Cork.",
            claim("user", "location", "cork", "past") | {"mood": "past"},
            "Where does the user live?",
            "The user lives in Porto.",
            "The user lives in Cork.",
        ),
        (
            "I work at the harbour office.",
            "I used to work at the docks.",
            "The user used to work at the docks.",
            claim("user", "employer", "docks", "past") | {"mood": "past"},
            "Where does the user work?",
            "The user works at the harbour office.",
            "The user works at the docks.",
        ),
    ],
    ids=["lived", "worked"],
)
def test_a_past_state_is_an_episode_beside_the_current_one(
    owner: Actor,
    now: str,
    then: str,
    episode: str,
    was: dict[str, str],
    query: str,
    current: str,
    wrong: str,
) -> None:
    talk(owner, [now], [then])
    past = one(owner, episode)
    assert past["kind"] == "episode"
    assert past["claim"] == was
    believed = [
        m["content"]
        for m in active(owner)
        if m["kind"] == "fact" and m["claim"] and m["claim"]["attribute"] == was["attribute"]
    ]
    assert believed == [current]  # the past state replaced nothing, and is no fact
    listed(owner, query, present=[current], absent=[wrong])


def test_a_childhood_state_is_an_episode(owner: Actor) -> None:
    talk(owner, ["I had a dog called Rex when I was little."])
    assert [m["kind"] for m in active(owner)] == ["episode"]


# --- 9. A plain direct write ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "The user once lived in Hamburg.",
        "The user lived in Cork as a child.",
        "The user often visited Lisbon.",
    ],
    ids=["once-lived", "lived-as-a-child", "often-visited"],
)
def test_a_direct_write_of_a_past_fact_is_stored(owner: Actor, content: str) -> None:
    response = owner.post("/api/memories", {"namespace": NS, "kind": "fact", "content": content})
    assert response.status_code == 201, response.content
    assert response.json()["decision"] == "stored", response.json()
    assert contents(owner) == [content]
    listed(owner, "Where has the user lived?", present=[content], absent=[])
