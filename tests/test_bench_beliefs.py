"""`manage.py bench beliefs`: the labelled conversations, their split and the scores."""

from __future__ import annotations

import re
from collections import defaultdict
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from spaceduck.ops.benchmarks.beliefs import Outcome, holds, score
from spaceduck.ops.benchmarks.beliefs_corpus import Conversation, conversations

NUMBER = r"(?:\d+\.\d{3}|-)"


def test_the_set_has_400_conversations_and_a_held_out_part_of_whole_families() -> None:
    every = conversations()
    assert len(every) >= 400
    assert len({c.id for c in every}) == len(every)
    heldout = conversations("heldout")
    assert len(heldout) / len(every) >= 0.30
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
    row = rf"^all\s+12\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+\d+\s+\d+$"  # repeats, asked
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
