"""Facts: JSON values, upsert, TTL from updated_at, provenance, ordering, concurrency."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connection

from memories.models import Fact
from memories.store.selectors import get_fact, list_all_facts, list_facts
from memories.write.services import delete_expired_facts, delete_fact, set_fact
from spaceduck.core.errors import InvalidInput
from tests.memories.conftest import Clock

pytestmark = pytest.mark.django_db
NS = "user:alice"


@pytest.mark.parametrize(
    "value",
    ["hello", "", 42, -1.5, True, False, None, [1, "two", None], {"a": {"b": [1, 2]}}, {}],
)
def test_it_stores_and_returns_any_json_value(value: Any) -> None:
    returned = set_fact(NS, "k", value)
    assert returned.value == value
    fact = get_fact(NS, "k")
    assert fact is not None
    assert fact.value == value
    assert type(fact.value) is type(value)


def test_the_returned_value_is_what_later_reads_return() -> None:
    # Tuples and non-string keys have no JSON form of their own.
    fact = set_fact(NS, "k", {"pair": (1, 2), 3: "x"})
    assert fact.value == {"pair": [1, 2], "3": "x"}
    stored = get_fact(NS, "k")
    assert stored is not None
    assert stored.value == fact.value


def test_an_upsert_keeps_one_row_created_at_and_refreshes_updated_at(clock: Clock) -> None:
    first = set_fact(NS, "k", "one")
    created = clock.now
    clock.advance(seconds=30)
    second = set_fact(NS, "k", "two")
    assert Fact.objects.filter(namespace=NS, key="k").count() == 1
    assert second.pk == first.pk
    fact = get_fact(NS, "k")
    assert fact is not None
    assert fact.value == "two"
    assert fact.created_at == created
    assert fact.updated_at == clock.now


def test_the_ttl_counts_from_the_last_write(clock: Clock) -> None:
    set_fact(NS, "k", 1, ttl_ms=1000)
    clock.advance(milliseconds=600)
    set_fact(NS, "k", 2, ttl_ms=1000)  # restarts the TTL
    clock.advance(milliseconds=600)
    fact = get_fact(NS, "k")
    assert fact is not None
    assert fact.value == 2
    assert fact.expires_at == clock.now + timedelta(milliseconds=400)
    clock.advance(milliseconds=399)
    assert get_fact(NS, "k") is not None
    clock.advance(milliseconds=1)  # expires_at itself is already expired
    assert get_fact(NS, "k") is None


def test_a_ttl_of_zero_is_valid_and_expires_at_once(clock: Clock) -> None:
    fact = set_fact(NS, "k", "brief", ttl_ms=0)
    assert fact.ttl_ms == 0
    assert fact.expires_at == clock.now
    assert get_fact(NS, "k") is None


def test_an_upsert_without_a_ttl_clears_it(clock: Clock) -> None:
    set_fact(NS, "k", 1, ttl_ms=1000)
    set_fact(NS, "k", 2)
    clock.advance(days=365)
    fact = get_fact(NS, "k")
    assert fact is not None
    assert fact.ttl_ms is None
    assert fact.expires_at is None


def test_provenance_is_replaced_on_upsert_not_merged() -> None:
    set_fact(NS, "k", 1, provenance={"run_id": "r1", "node_id": "n1", "iteration": 3})
    set_fact(NS, "k", 2, provenance={"run_id": "r2"})
    fact = get_fact(NS, "k")
    assert fact is not None
    assert fact.provenance == {"run_id": "r2"}
    set_fact(NS, "k", 3)
    fact = get_fact(NS, "k")
    assert fact is not None
    assert fact.provenance is None


@pytest.mark.parametrize(
    "value",
    [
        object(),
        {1, 2},
        float("nan"),
        float("inf"),
        b"bytes",
        datetime(2024, 1, 1),
        {"a": [object()]},
    ],
)
def test_a_value_that_is_not_json_is_a_clear_error_and_writes_nothing(value: Any) -> None:
    set_fact(NS, "existing", "kept")
    with pytest.raises(InvalidInput, match="fact value is not JSON-serialisable"):
        set_fact(NS, "new", value)
    with pytest.raises(InvalidInput, match="JSON"):
        set_fact(NS, "existing", value)
    assert [(f.key, f.value) for f in list_facts(NS)] == [("existing", "kept")]


def test_a_circular_value_is_rejected() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(InvalidInput, match="JSON"):
        set_fact(NS, "k", loop)
    assert not Fact.objects.exists()


def test_expired_facts_are_hidden_from_every_read_before_garbage_collection(
    clock: Clock,
) -> None:
    set_fact(NS, "short", 1, ttl_ms=1000)
    set_fact(NS, "long", 2, ttl_ms=60_000)
    set_fact("user:bob", "short", 3, ttl_ms=1000)
    set_fact(NS, "forever", 4)
    clock.advance(seconds=2)
    assert get_fact(NS, "short") is None
    assert [f.key for f in list_facts(NS)] == ["forever", "long"]
    assert [(f.namespace, f.key) for f in list_all_facts()] == [
        (NS, "forever"),
        (NS, "long"),
    ]
    assert Fact.objects.count() == 4  # hidden, not yet deleted
    assert delete_expired_facts() == 2
    assert Fact.objects.count() == 2
    assert delete_expired_facts() == 0


def test_list_facts_orders_by_key_and_list_all_by_namespace_then_key() -> None:
    for ns, key in [("user:bob", "b"), (NS, "c"), (NS, "a"), ("agent:x", "z"), ("user:bob", "a")]:
        set_fact(ns, key, key)
    assert [f.key for f in list_facts(NS)] == ["a", "c"]
    assert [(f.namespace, f.key) for f in list_all_facts()] == [
        ("agent:x", "z"),
        (NS, "a"),
        (NS, "c"),
        ("user:bob", "a"),
        ("user:bob", "b"),
    ]
    assert list_facts("user:nobody") == []


def test_delete_fact_removes_the_key_and_a_missing_key_is_a_no_op() -> None:
    set_fact(NS, "k", 1)
    set_fact(NS, "other", 2)
    assert delete_fact(NS, "k") is True
    assert get_fact(NS, "k") is None
    assert delete_fact(NS, "k") is False
    assert delete_fact(NS, "never-there") is False
    assert [f.key for f in list_facts(NS)] == ["other"]


def test_namespaces_are_separate_and_canonical() -> None:
    set_fact(NS, "k", "alice")
    set_fact("user:bob", "k", "bob")
    alice, bob = get_fact(NS, "k"), get_fact("user:bob", "k")
    assert alice is not None
    assert bob is not None
    assert (alice.value, bob.value) == ("alice", "bob")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: set_fact("user:a:b", "k", 1), "invalid namespace"),
        (lambda: set_fact("nonsense", "k", 1), "invalid namespace"),
        (lambda: set_fact(42, "k", 1), "namespace must be a string"),  # type: ignore[arg-type]
        (lambda: set_fact(NS, "", 1), "fact key must be a non-empty string"),
        (lambda: set_fact(NS, None, 1), "fact key"),  # type: ignore[arg-type]
        (lambda: set_fact(NS, "k" * 256, 1), "should have at most 255 characters"),
        (lambda: set_fact(NS, "a\nb", 1), "control characters"),
        (lambda: set_fact(NS, "k", 1, ttl_ms=-1), "ttl_ms must be a non-negative integer"),
        (lambda: set_fact(NS, "k", 1, ttl_ms=1.5), "ttl_ms"),  # type: ignore[arg-type]
        (lambda: set_fact(NS, "k", 1, ttl_ms="5"), "ttl_ms"),  # type: ignore[arg-type]
        (lambda: set_fact(NS, "k", 1, ttl_ms=True), "ttl_ms"),
        (lambda: set_fact(NS, "k", 1, ttl_ms=10**20), "too large"),
        (lambda: set_fact(NS, "k", 1, provenance=["r1"]), "provenance must be a JSON object"),  # type: ignore[arg-type]
        (lambda: set_fact(NS, "k", 1, provenance={"iteration": -1}), "iteration"),
        (lambda: set_fact(NS, "k", 1, provenance={"iteration": "2"}), "iteration"),
        (lambda: set_fact(NS, "k", 1, provenance={"run_id": 7}), "run_id must be a string"),
        (lambda: get_fact("user:a:b", "k"), "invalid namespace"),
        (lambda: list_facts(""), "invalid namespace"),
        (lambda: delete_fact(NS, ""), "fact key"),
    ],
)
def test_invalid_input_is_a_clear_error_and_writes_nothing(
    call: Callable[[], object], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        call()
    assert not Fact.objects.exists()


def test_a_key_of_255_characters_and_extra_provenance_keys_are_accepted() -> None:
    set_fact(NS, "k" * 255, 1, provenance={"run_id": "r", "iteration": 0, "tool": "x"})
    fact = get_fact(NS, "k" * 255)
    assert fact is not None
    assert fact.provenance == {"run_id": "r", "iteration": 0, "tool": "x"}


# --- Concurrency: real threads, each with its own SQLite connection -------------


def _run_concurrently(count: int, work: Callable[[int], object]) -> list[BaseException]:
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            barrier.wait()
            work(index)
        except BaseException as exc:  # collected and asserted by the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_writers_to_one_key_leave_one_row_with_a_written_value() -> None:
    errors = _run_concurrently(20, lambda i: set_fact(NS, "shared", {"writer": i}))
    assert errors == []
    rows = list(Fact.objects.filter(namespace=NS, key="shared"))
    assert len(rows) == 1
    assert rows[0].value in [{"writer": i} for i in range(20)]


@pytest.mark.django_db(transaction=True)
def test_thirty_keys_written_concurrently_are_all_there() -> None:
    errors = _run_concurrently(30, lambda i: set_fact(NS, f"key-{i:02d}", i))
    assert errors == []
    facts = list_facts(NS)
    assert [f.key for f in facts] == [f"key-{i:02d}" for i in range(30)]
    assert [f.value for f in facts] == list(range(30))
