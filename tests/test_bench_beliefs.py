"""`manage.py bench beliefs`: the labelled conversations, their split and the scores."""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter, defaultdict
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from spaceduck.ops.benchmarks.beliefs import Outcome, holds, score, show_errors
from spaceduck.ops.benchmarks.beliefs_corpus import (
    TUNED_FILE,
    Conversation,
    conversations,
    read_families,
    split_of,
    tuned_families,
)

NUMBER = r"(?:\d+\.\d{3}|-)"


def test_the_set_has_400_conversations_and_a_held_out_part_of_whole_families() -> None:
    every = conversations()
    assert len(every) >= 400
    assert len({c.id for c in every}) == len(every)
    heldout = conversations("heldout")
    # The tuned part is all on the tune side; the hashed families keep their held-out share.
    hashed = [c for c in every if not c.family.startswith("tuned-")]
    assert len(hashed) >= 400
    assert len(heldout) / len(hashed) >= 0.30
    sides: dict[str, set[str]] = defaultdict(set)
    for c in every:
        sides[c.family].add(c.split)
    assert all(len(split) == 1 for split in sides.values())  # a phrasing is on one side only
    assert {c.id for c in heldout} | {c.id for c in conversations("tune")} == {c.id for c in every}
    assert all(1 <= len(c.sessions) <= 5 for c in every)
    assert all("{" not in term for c in every for b in (*c.active, *c.inactive) for term in b)


@pytest.mark.parametrize(
    ("belief", "content", "held"),
    [
        (("Munich",), "The user lives in Munich.", True),
        (("jazz", "not|no longer"), "The user no longer likes jazz.", True),
        (("jazz", "not|no longer"), "The user loves jazz.", False),
        (("prefer", "tea", "!coffee"), "The user prefers coffee over tea.", False),
        (("prefer", "tea", "!coffee"), "The user prefers tea.", True),
    ],
)
def test_a_belief_is_held_when_every_term_is_in_the_content(
    belief: tuple[str, ...], content: str, held: bool
) -> None:
    assert holds(belief, content) is held


def test_the_scores_count_stale_duplicate_and_invented_beliefs() -> None:
    flip = Conversation(
        "x-0", "x", "change_of_mind", (("I love jazz.",), ("I don't like jazz anymore.",)),
        active=(("jazz", "not|no longer"),), inactive=(("love", "jazz"),),
    )  # fmt: skip
    joke = Conversation(
        "y-0", "y", "sarcasm", (("Oh sure, and I'm the Queen of England.",),),
        inactive=(("queen",),),
    )  # fmt: skip
    both = Outcome(
        flip, ["The user loves jazz.", "The user no longer likes jazz."], ["fact"] * 2, 0
    )
    twice = Outcome(
        flip,
        ["The user does not like jazz anymore.", "The user no longer likes jazz."],
        ["fact"] * 2,
        1,
    )
    fooled = Outcome(joke, ["The user is the Queen of England."], ["fact"], 0)
    assert both.accurate
    assert both.stale == [("love", "jazz")]
    assert not both.invented  # an old value still active is stale, not invented
    numbers = score([both, twice, fooled])
    assert numbers["accuracy"] == 1.0
    assert numbers["stale"] == pytest.approx(2 / 3)  # the old belief once, the joke once
    assert numbers["duplicates"] == pytest.approx(1 / 2)
    assert numbers["invented"] == pytest.approx(1 / 3)
    assert numbers["repeats"] == 1


def test_bench_beliefs_prints_a_row_per_category_and_all() -> None:
    out = StringIO()
    call_command(
        "bench", "beliefs", "--split", "tune", "--embedders", "hash", "--limit", "12", stdout=out
    )
    text = out.getvalue()
    assert "beliefs, split tune: 12 conversations" in text
    assert "chat heuristic" in text
    numbers = r"\s+".join([NUMBER] * 5)  # accuracy, stale, duplicates, invented, wrong_holder
    row = rf"^all\s+12\s+{numbers}\s+\d+\s+\d+$"  # then repeats, asked
    assert re.search(row, text, re.M)
    assert re.search(rf"^change_of_mind\s+\d+\s+{NUMBER}", text, re.M)


def test_the_held_out_part_cannot_be_read_for_errors() -> None:
    with pytest.raises(CommandError, match="never tune on heldout"):
        call_command("bench", "beliefs", "--split", "heldout", "--show-errors")
    with pytest.raises(CommandError, match="local and/or hash"):
        call_command("bench", "beliefs", "--embedders", "openai")


@pytest.mark.django_db(transaction=True)  # extraction runs on commit, as in the bench
def test_a_pair_waiting_in_the_conflict_inbox_is_counted_as_asked() -> None:
    from spaceduck.ops.benchmarks.beliefs import converse

    said_twice = Conversation(
        id="asked-0",
        family="asked",
        category="preference",
        sessions=(
            ("I prefer tea over coffee.",),
            ("I prefer tea over coffee.",),
            ("I prefer coffee over tea.",),
        ),
        active=(("prefer", "coffee over tea"),),
        inactive=(("prefer", "tea over coffee"),),
    )
    outcome = converse(said_twice, "user:asked")
    assert outcome.asked == 1
    assert not outcome.accurate  # the new belief waits for a person: not active yet
    assert score([outcome])["asked"] == 1


def test_the_fresh_part_is_whole_families_apart_from_the_rest() -> None:
    fresh = conversations("fresh")
    assert len(fresh) >= 200
    assert {c.split for c in fresh} == {"fresh"}
    assert all(c.family.startswith("fresh-") for c in fresh)
    assert len({c.id for c in fresh}) == len(fresh)
    assert not {c.id for c in fresh} & {c.id for c in conversations("all")}
    # Every class of issue "Understanding, not phrase lists" has families of its own.
    categories = {c.category for c in fresh}
    assert {"ended_state", "cross_turn_correction", "multi_fact", "time_bound"} <= categories
    assert all("{" not in t for c in fresh for b in (*c.active, *c.inactive) for t in b)
    assert all("{" not in m for c in fresh for s in c.sessions for m in s)
    with pytest.raises(CommandError, match="never tune on heldout or fresh"):
        call_command("bench", "beliefs", "--split", "fresh", "--show-errors")


@pytest.mark.django_db(transaction=True)  # extraction runs on commit, as in the bench
def test_a_fresh_conversation_gives_the_assistant_its_own_turns() -> None:
    from memories.models import Message
    from spaceduck.ops.benchmarks.beliefs import converse

    said = (("I want a table for three.", "assistant: For which day?", "Friday."),)
    conversation = Conversation("t-0", "fresh-t", "short_answer", said, active=(("Friday",),))
    converse(conversation, "user:fresh-roles")
    roles = list(
        Message.objects.filter(thread__namespace="user:fresh-roles")
        .order_by("created_at", "id")
        .values_list("role", "content")
    )
    assert [r for r, _ in roles] == ["user", "assistant", "user"]
    assert roles[1][1] == "For which day?"


TWELVE = {
    "ended_state", "stance_change", "cross_turn_correction", "short_answer", "multi_fact",
    "time_bound", "other_holder", "loose_value", "reported_or_hypothetical", "past_state",
    "counts_and_quantities", "plain_facts",
}  # fmt: skip
FAMILY_KEYS = {
    "id", "category", "sessions", "active", "inactive", "allowed", "wrong_holder", "complete",
    "query", "fillers",
}  # fmt: skip


def test_the_tuned_part_is_whole_families_on_the_tune_side() -> None:
    tuned = conversations("tuned")
    assert len(tuned) >= 390
    assert all(c.family.startswith("tuned-") and c.split == "tune" for c in tuned)
    ids = {c.id for c in tuned}
    assert len(ids) == len(tuned)
    assert ids <= {c.id for c in conversations("tune")}
    assert not ids & {c.id for c in conversations("heldout")}
    assert ids <= {c.id for c in conversations("all")}
    every = {c.id for c in conversations("all")}
    tune_or_heldout = {c.id for c in conversations("tune")} | {
        c.id for c in conversations("heldout")
    }
    assert every == tune_or_heldout
    assert not every & {c.id for c in conversations("fresh")}  # fresh stays apart from all
    assert split_of("tuned-anything") == "tune"
    assert split_of("fresh-anything") == "fresh"


def test_every_tuned_family_is_valid_and_the_twelve_categories_are_even() -> None:
    raw = json.loads(TUNED_FILE.read_text(encoding="utf-8"))
    assert all(set(f) <= FAMILY_KEYS for f in raw)  # a misspelt key would be dropped silently
    families = tuned_families()
    assert len({f.id for f in families}) == len(families)
    assert all(f.id.startswith("tuned-") for f in families)
    for family in families:
        texts = [
            *(m for s in family.sessions for m in s),
            *(t for b in (*family.active, *family.inactive, *family.allowed) for t in b),
            *(t for b in family.wrong_holder for t in b),
            family.query,
        ]
        names = {n for t in texts for _, n, _, _ in string.Formatter().parse(t) if n}
        assert all(set(fill) == names for fill in family.fillers), family.id  # none unused
        assert family.fillers, family.id
        if family.category == "other_holder":
            assert family.wrong_holder, family.id
    tuned = conversations("tuned")
    for c in tuned:
        assert 1 <= len(c.sessions) <= 5
        said = [m for s in c.sessions for m in s]
        beliefs = (*c.active, *c.inactive, *c.allowed, *c.wrong_holder)
        assert all("{" not in x and "}" not in x for x in (*said, c.query)), c.id
        assert all("{" not in t and "}" not in t for b in beliefs for t in b), c.id
        assert c.active or c.inactive, c.id  # something to score
    counts = Counter(c.category for c in tuned)
    assert set(counts) == TWELVE
    assert max(counts.values()) <= 1.5 * min(counts.values())


def test_a_json_family_reads_its_wrong_holder_beliefs(tmp_path: Path) -> None:
    path = tmp_path / "families.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": "t-given",
                    "category": "plain_facts",
                    "sessions": [["My sister {name} is vegan.", "assistant: Noted."]],
                    "active": [["{name}", "vegan"]],
                    "wrong_holder": [["vegan", "!{name}"]],
                    "fillers": [{"name": "Ada"}],
                },
                {
                    "id": "t-other",
                    "category": "other_holder",
                    "sessions": [["My sister lives in {city}."]],
                    "inactive": [["lives in {city}", "!sister"]],
                    "complete": False,
                    "fillers": [{"city": "Oslo"}, {"city": "Bergen"}],
                },
                {
                    "id": "t-plain",
                    "category": "ended_state",
                    "sessions": [["I sold my {thing}."]],
                    "inactive": [["{thing}", "!sold"]],
                    "fillers": [{"thing": "kayak"}],
                },
            ]
        ),
        encoding="utf-8",
    )
    given, other, plain = read_families(path)
    (ada,) = given.conversations()
    assert ada.wrong_holder == (("vegan", "!Ada"),)
    assert ada.sessions == (("My sister Ada is vegan.", "assistant: Noted."),)
    oslo, bergen = other.conversations()
    # None given in an other-holder category: the must-not beliefs are the wrong-holder ones.
    assert oslo.wrong_holder == oslo.inactive == (("lives in Oslo", "!sister"),)
    assert bergen.wrong_holder == (("lives in Bergen", "!sister"),)
    assert not oslo.complete
    (kayak,) = plain.conversations()
    assert kayak.wrong_holder == ()  # an old value of the user's own is not someone else's


def test_the_wrong_holder_score_counts_conversations_giving_the_user_someone_elses_fact() -> None:
    email = Conversation(
        "e-0", "e", "other_holder",
        (("My email is me@a.example.", "Rita's email is rita@b.example."),),
        active=(("me@a.example",),), inactive=(("rita@b.example", "!rita's"),),
        wrong_holder=(("rita@b.example", "!rita's"),),
    )  # fmt: skip
    diet = Conversation(
        "d-0", "d", "other_person", (("My brother is vegan.",),),
        inactive=(("vegan", "!brother"),),
    )  # fmt: skip
    move = Conversation(
        "m-0", "m", "move", (("I live in Oslo.",), ("I moved to Bergen.",)),
        active=(("Bergen",),), inactive=(("Oslo", "!Bergen"),),
    )  # fmt: skip
    assert diet.wrong_holder == (("vegan", "!brother"),)  # other_person: from inactive
    assert move.wrong_holder == ()
    given = Outcome(email, ["The user's email is rita@b.example."], ["fact"], 0)
    kept_apart = Outcome(
        email,
        ["The user's email is me@a.example.", "Rita's email is rita@b.example."],
        ["fact"] * 2,
        0,
    )
    right = Outcome(diet, ["The user's brother is vegan."], ["fact"], 0)
    wrong = Outcome(diet, ["The user is vegan."], ["fact"], 0)
    stale = Outcome(move, ["The user lives in Oslo."], ["fact"], 0)  # stale, not wrong-holder
    assert given.wrong == [("rita@b.example", "!rita's")]
    assert not kept_apart.wrong
    assert not right.wrong
    assert not stale.wrong
    assert wrong.wrong == [("vegan", "!brother")]
    assert wrong.invented == ["The user is vegan."]  # never meant: also invented
    numbers = score([given, kept_apart, right, wrong, stale])
    assert numbers["wrong_holder"] == pytest.approx(2 / 4)  # the move has none: not counted
    assert math.isnan(score([stale])["wrong_holder"])  # none to score
    out = StringIO()
    show_errors([given, kept_apart], stdout=out)
    assert "wrong holder: ('rita@b.example', \"!rita's\")" in out.getvalue()
    assert "e-0" in out.getvalue()
