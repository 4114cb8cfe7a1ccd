"""``manage.py memory``: list/get/set/rm/gc output and one-line errors."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from memories.store.selectors import get_fact
from memories.write.services import set_fact
from tests.memories.conftest import Clock
from tests.processes import manage, service_env

pytestmark = pytest.mark.django_db
NS = "user:alice"


def run(*args: str) -> list[str]:
    out = StringIO()
    call_command("memory", *args, stdout=out)
    return out.getvalue().splitlines()


def test_list_prints_key_value_and_age_by_key(clock: Clock) -> None:
    set_fact(NS, "year", 1984)
    clock.advance(days=2, hours=5)
    set_fact(NS, "city", "Lisbon")
    clock.advance(hours=3, minutes=20)
    # Keys in the order PostgreSQL's jsonb keeps them (shorter first, then bytewise);
    # SQLite keeps any order as written.
    set_fact(NS, "prefs", {"sizes": [1, 2], "theme": "dark"})
    clock.advance(minutes=5, seconds=30)
    set_fact(NS, "flag", True)
    clock.advance(seconds=12)
    assert run("list", NS) == [
        "city = Lisbon (3h)",  # strings are shown raw, without JSON quotes
        "flag = true (12s)",
        'prefs = {"sizes":[1,2],"theme":"dark"} (5m)',
        "year = 1984 (2d)",
    ]


def test_list_keeps_each_fact_on_one_line() -> None:
    set_fact(NS, "note", "line one\nline two\ttabbed")
    assert run("list", NS) == ["note = line one\\nline two\\ttabbed (0s)"]


def test_list_cuts_values_to_100_characters_with_an_ellipsis() -> None:
    set_fact(NS, "exact", "x" * 100)
    set_fact(NS, "long", "y" * 101)
    set_fact(NS, "json", list(range(100)))
    lines = dict(line.split(" = ", 1) for line in run("list", NS))
    assert lines["exact"] == "x" * 100 + " (0s)"
    assert lines["long"] == "y" * 97 + "... (0s)"
    shown = lines["json"].removesuffix(" (0s)")
    assert len(shown) == 100
    compact = ",".join(str(i) for i in range(100))
    assert shown == f"[{compact}"[:97] + "..."


def test_list_of_an_empty_namespace_says_so() -> None:
    set_fact("user:bob", "k", 1)
    assert run("list", NS) == ['No facts found in namespace "user:alice".']


def test_list_without_a_namespace_groups_every_namespace(clock: Clock) -> None:
    set_fact("user:bob", "b", 2)
    set_fact(NS, "a", "x")
    set_fact("agent:planner", "step", 3)
    set_fact(NS, "gone", 0, ttl_ms=0)
    assert run("list") == [
        "[agent:planner]",
        "step = 3 (0s)",
        "[user:alice]",
        "a = x (0s)",
        "[user:bob]",
        "b = 2 (0s)",
    ]


def test_list_without_facts_anywhere_says_so() -> None:
    assert run("list") == ["No facts found."]


def test_get_prints_the_value_as_json() -> None:
    set_fact(NS, "city", "Lisbon")
    set_fact(NS, "prefs", {"theme": "dark"})
    set_fact(NS, "nothing", None)
    assert run("get", NS, "city") == ['"Lisbon"']
    assert run("get", NS, "prefs") == ['{"theme": "dark"}']
    assert run("get", NS, "nothing") == ["null"]


def test_get_of_a_missing_or_expired_key_is_an_error() -> None:
    set_fact(NS, "gone", 1, ttl_ms=0)
    for key in ["missing", "gone"]:
        with pytest.raises(CommandError, match=f'No fact "{key}" in namespace "user:alice"'):
            run("get", NS, key)


def test_set_stores_json_with_an_optional_ttl() -> None:
    assert run("set", NS, "prefs", '{"theme": "dark"}') == [
        'Set "prefs" in namespace "user:alice".'
    ]
    run("set", NS, "temp", "42", "--ttl", "60000")
    prefs, temp = get_fact(NS, "prefs"), get_fact(NS, "temp")
    assert prefs is not None
    assert temp is not None
    assert prefs.value == {"theme": "dark"}
    assert prefs.ttl_ms is None
    assert (temp.value, temp.ttl_ms) == (42, 60000)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["set", NS, "k", "hello"], "VALUE is not valid JSON"),
        (["set", NS, "k", "NaN"], "not JSON-serialisable"),
        (["set", NS, "k", "1", "--ttl", "-5"], "ttl_ms must be a non-negative integer"),
        (["set", NS, "k", "1", "--ttl", "soon"], "invalid int value"),
        (["set", "user:a:b", "k", "1"], "invalid namespace"),
        (["list", "nonsense"], "invalid namespace"),
        (["get", NS, ""], "fact key must be a non-empty string"),
        (["rm", "planet:x", "k"], "invalid namespace"),
    ],
)
def test_bad_input_is_a_one_line_command_error(args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message) as caught:
        run(*args)
    assert "\n" not in str(caught.value)
    assert get_fact(NS, "k") is None


def test_rm_deletes_and_a_missing_key_is_fine() -> None:
    set_fact(NS, "k", 1)
    assert run("rm", NS, "k") == ['Removed "k" in namespace "user:alice".']
    assert get_fact(NS, "k") is None
    assert run("rm", NS, "k") == ['No fact "k" in namespace "user:alice"; nothing to do.']


def test_gc_deletes_expired_facts_and_prints_the_count(clock: Clock) -> None:
    set_fact(NS, "a", 1, ttl_ms=0)
    set_fact(NS, "b", 2, ttl_ms=1000)
    set_fact(NS, "c", 3)
    clock.advance(seconds=2)
    assert run("gc") == ["Deleted 2 expired facts."]
    assert run("gc") == ["Deleted 0 expired facts."]


@pytest.mark.slow
def test_a_missing_key_exits_non_zero_with_one_line_on_stderr(tmp_path: Path) -> None:
    env = service_env(tmp_path)
    assert manage(env, "migrate").returncode == 0
    result = manage(env, "memory", "get", NS, "missing")
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        'CommandError: No fact "missing" in namespace "user:alice".'
    ]
    result = manage(env, "memory", "set", NS, "k", "1", "--ttl", "soon")
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1
    assert "--ttl" in result.stderr


def test_claims_reads_the_claims_of_memories_stored_before_claims(capsys: Any) -> None:
    from django.core.management import call_command

    from memories.models import Memory
    from memories.write.services import memory_create

    old = memory_create(namespace=NS, kind="fact", content="The user lives in Oslo.", actor="t")
    bees = memory_create(namespace=NS, kind="fact", content="Alice keeps bees.", actor="t")
    Memory.objects.filter(pk=old.pk).update(claim_attribute="", claim_subject="")
    call_command("memory", "claims")
    assert "Read a claim for 1 of 2 memories without one." in capsys.readouterr().out
    old.refresh_from_db()
    assert (old.claim_subject, old.claim_attribute, old.claim_value) == ("user", "location", "oslo")
    assert Memory.objects.get(pk=bees.pk).claim_attribute == ""


def test_claims_sends_live_memories_that_now_contradict_to_the_conflict_inbox(
    capsys: Any,
) -> None:
    from django.core.management import call_command

    from memories.models import Conflict
    from memories.write.services import memory_create

    oslo = memory_create(namespace=NS, kind="fact", content="The user lives in Oslo.", actor="t")
    rome = memory_create(namespace=NS, kind="fact", content="The user lives in Rome.", actor="t")
    call_command("memory", "claims")
    out = capsys.readouterr().out
    assert "Read a claim for 2 of 2 memories without one." in out
    assert "1 pairs of live memories claim different values" in out
    [conflict] = Conflict.objects.all()
    assert (conflict.old_id, conflict.new_id, conflict.status) == (oslo.pk, rome.pk, "open")
    call_command("memory", "claims")  # nothing left to read, nothing asked twice
    assert Conflict.objects.count() == 1
