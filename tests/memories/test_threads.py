"""Threads and messages: ordering, replacement, limits, cursors, bulk deletion."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection

from memories.models import Message, Thread
from memories.store.selectors import count_messages, get_thread, list_messages, list_threads
from memories.write.services import (
    create_thread,
    delete_messages,
    delete_thread,
    save_message,
)
from spaceduck.core.errors import Conflict, InvalidInput, NotFound
from tests.memories.conftest import Clock

pytestmark = pytest.mark.django_db
NS = "user:alice"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


@pytest.fixture
def thread() -> Thread:
    return create_thread(NS, title="Planning")


@pytest.fixture
def ten(thread: Thread) -> list[str]:
    """Ten messages m0..m9, one minute apart."""
    for i in range(10):
        save_message(
            thread.id, "user", f"text {i}", id=f"m{i}", created_at=T0 + timedelta(minutes=i)
        )
    return [f"m{i}" for i in range(10)]


# --- Threads -----------------------------------------------------------------------


def test_create_thread_returns_the_thread(clock: Clock) -> None:
    thread = create_thread(NS, title="  Trip to Lisbon  ")
    assert thread.namespace == NS
    assert thread.title == "Trip to Lisbon"
    assert thread.created_at == clock.now
    assert len(thread.id) == 32
    assert get_thread(thread.id) == thread
    assert create_thread(NS).title == ""


def test_list_threads_is_oldest_first_and_filters_by_namespace(clock: Clock) -> None:
    first = create_thread(NS, "first")
    clock.advance(seconds=1)
    other = create_thread("user:bob", "bob's")
    clock.advance(seconds=1)
    second = create_thread(NS, "second")
    assert list_threads(NS) == [first, second]
    assert list_threads() == [first, other, second]
    assert list_threads("user:nobody") == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: create_thread("user:a:b"), "invalid namespace"),
        (lambda: create_thread(NS, title=5), "title must be a string"),  # type: ignore[arg-type]
        (lambda: create_thread(NS, title="x" * 501), "should have at most 500 characters"),
        (lambda: create_thread(NS, title="two\nlines"), "one line"),
        (lambda: list_threads("nonsense"), "invalid namespace"),
    ],
)
def test_invalid_thread_input_is_a_clear_error(call: Callable[[], object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        call()
    assert not Thread.objects.exists()


def test_a_missing_thread_is_not_found() -> None:
    with pytest.raises(NotFound, match="thread 'nope' not found"):
        get_thread("nope")
    with pytest.raises(NotFound):
        delete_thread("nope")
    with pytest.raises(NotFound):
        list_messages("nope")
    with pytest.raises(NotFound):
        count_messages("nope")
    with pytest.raises(NotFound):
        delete_messages("nope", ["m1"])


def test_delete_thread_removes_the_thread_and_its_messages_only(
    thread: Thread, ten: list[str]
) -> None:
    other = create_thread(NS)
    save_message(other.id, "user", "keep me")
    delete_thread(thread.id)
    assert not Thread.objects.filter(pk=thread.id).exists()
    assert not Message.objects.filter(thread_id=thread.id).exists()
    assert count_messages(other.id) == 1


# --- Saving messages ------------------------------------------------------------


@pytest.mark.parametrize("role", ["user", "assistant", "system", "tool"])
@pytest.mark.parametrize(
    "content", ["plain text", "", {"tool": "search", "args": [1]}, [1, 2], 3, False]
)
def test_a_message_holds_text_or_json_for_every_role(
    thread: Thread, role: str, content: Any
) -> None:
    saved = save_message(thread.id, role, content)
    [message] = list_messages(thread.id)
    assert message.id == saved.id
    assert (message.role, message.content) == (role, content)


def test_an_unknown_role_is_an_error_naming_the_allowed_roles(thread: Thread) -> None:
    with pytest.raises(InvalidInput, match="role must be one of user, assistant, system, tool"):
        save_message(thread.id, "robot", "hi")
    assert count_messages(thread.id) == 0


@pytest.mark.parametrize("content", [None, float("nan"), object(), {"a": {1, 2}}])
def test_content_that_is_null_or_not_json_is_rejected_and_writes_nothing(
    thread: Thread, content: Any
) -> None:
    with pytest.raises(InvalidInput, match="content"):
        save_message(thread.id, "user", content)
    assert count_messages(thread.id) == 0


def test_a_message_for_a_missing_thread_is_a_clear_error() -> None:
    with pytest.raises(NotFound, match="thread 'gone' not found"):
        save_message("gone", "user", "hello")
    assert not Message.objects.exists()


def test_saving_an_existing_id_replaces_content_but_keeps_created_at(thread: Thread) -> None:
    save_message(thread.id, "user", "draft", id="m1", created_at=T0, provenance={"run_id": "a"})
    save_message(thread.id, "user", "after", id="m2", created_at=T0 + timedelta(minutes=1))
    replaced = save_message(
        thread.id, "assistant", {"final": True}, id="m1", created_at=T0 + timedelta(hours=5)
    )
    assert replaced.created_at == T0
    assert Message.objects.filter(pk="m1").count() == 1
    first, second = list_messages(thread.id)
    assert (first.id, first.role, first.content, first.created_at) == (
        "m1",
        "assistant",
        {"final": True},
        T0,
    )
    assert first.provenance is None  # replaced, like the content
    assert second.id == "m2"


def test_an_id_of_another_thread_is_a_conflict_and_changes_nothing(thread: Thread) -> None:
    other = create_thread(NS)
    save_message(other.id, "user", "theirs", id="shared")
    with pytest.raises(Conflict, match="another thread"):
        save_message(thread.id, "user", "mine", id="shared")
    assert Message.objects.get(pk="shared").content == "theirs"
    assert count_messages(thread.id) == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"created_at": datetime(2024, 5, 1, 12, 0)}, "timezone-aware"),
        ({"created_at": "2024-05-01T12:00:00Z"}, "created_at must be a datetime"),
        ({"id": ""}, "message id must be a non-empty string"),
        ({"id": 7}, "message id"),
        ({"id": "x" * 65}, "should have at most 64 characters"),
        ({"provenance": "run-1"}, "provenance must be a JSON object"),
        ({"provenance": {"x": float("inf")}}, "provenance is not JSON"),
    ],
)
def test_invalid_message_fields_are_clear_errors(
    thread: Thread, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        save_message(thread.id, "user", "hi", **kwargs)
    assert count_messages(thread.id) == 0


def test_saving_a_message_refreshes_the_thread_updated_at(thread: Thread, clock: Clock) -> None:
    clock.advance(minutes=5)
    save_message(thread.id, "user", "hi", created_at=T0)
    assert get_thread(thread.id).updated_at == clock.now


def test_appends_keep_their_order_even_when_the_clock_does_not_move(
    thread: Thread, clock: Clock
) -> None:
    saved = [save_message(thread.id, "user", f"msg {i}").id for i in range(20)]
    assert ids(list_messages(thread.id)) == saved
    clock.advance(seconds=-30)  # a clock stepping back must not reorder appends either
    saved.append(save_message(thread.id, "user", "late").id)
    assert ids(list_messages(thread.id)) == saved


def test_an_append_behind_the_newest_message_comes_a_microsecond_after_it(
    thread: Thread, clock: Clock
) -> None:
    first = save_message(thread.id, "user", "first")
    assert first.created_at == clock.now
    clock.advance(seconds=-30)
    late = save_message(thread.id, "user", "late")
    assert late.created_at == first.created_at + timedelta(microseconds=1)
    assert Message.objects.get(pk=late.id).created_at == late.created_at  # as returned
    clock.advance(seconds=60)
    assert save_message(thread.id, "user", "on time").created_at == clock.now


# --- Listing ---------------------------------------------------------------------


def test_messages_are_listed_by_created_at_then_id(thread: Thread) -> None:
    save_message(thread.id, "user", "c", id="c", created_at=T0 + timedelta(seconds=1))
    save_message(thread.id, "user", "b", id="b", created_at=T0)
    save_message(thread.id, "user", "a", id="a", created_at=T0)
    assert ids(list_messages(thread.id)) == ["a", "b", "c"]
    assert count_messages(thread.id) == 3


def test_a_limit_returns_the_newest_n_in_chronological_order(
    thread: Thread, ten: list[str]
) -> None:
    assert ids(list_messages(thread.id, limit=3)) == ["m7", "m8", "m9"]
    assert ids(list_messages(thread.id, limit=1)) == ["m9"]
    assert ids(list_messages(thread.id, limit=100)) == ten
    assert list_messages(thread.id, limit=0) == []


@pytest.mark.parametrize("limit", [-1, 1.5, "3", True, False, [3]])
def test_a_limit_that_is_not_a_non_negative_integer_is_an_error(
    thread: Thread, ten: list[str], limit: Any
) -> None:
    with pytest.raises(InvalidInput, match="limit must be a non-negative integer"):
        list_messages(thread.id, limit=limit)


def test_paging_backward_with_before(thread: Thread, ten: list[str]) -> None:
    page = list_messages(thread.id, limit=4)
    assert ids(page) == ["m6", "m7", "m8", "m9"]
    page = list_messages(thread.id, limit=4, before=page[0].id)
    assert ids(page) == ["m2", "m3", "m4", "m5"]
    page = list_messages(thread.id, limit=4, before=page[0].id)
    assert ids(page) == ["m0", "m1"]
    assert list_messages(thread.id, limit=4, before="m0") == []
    assert ids(list_messages(thread.id, before="m3")) == ["m0", "m1", "m2"]


def test_paging_forward_with_after(thread: Thread, ten: list[str]) -> None:
    page = list_messages(thread.id, limit=4, after="m0")
    assert ids(page) == ["m1", "m2", "m3", "m4"]
    page = list_messages(thread.id, limit=4, after=page[-1].id)
    assert ids(page) == ["m5", "m6", "m7", "m8"]
    page = list_messages(thread.id, limit=4, after=page[-1].id)
    assert ids(page) == ["m9"]
    assert ids(list_messages(thread.id, after="m7")) == ["m8", "m9"]


def test_before_and_after_together_give_the_messages_between(
    thread: Thread, ten: list[str]
) -> None:
    assert ids(list_messages(thread.id, after="m2", before="m6")) == ["m3", "m4", "m5"]
    assert ids(list_messages(thread.id, after="m2", before="m6", limit=2)) == ["m3", "m4"]


def test_cursors_order_ties_by_id(thread: Thread) -> None:
    for message_id in ["b", "d", "a", "c"]:
        save_message(thread.id, "user", message_id, id=message_id, created_at=T0)
    assert ids(list_messages(thread.id, after="b")) == ["c", "d"]
    assert ids(list_messages(thread.id, before="c", limit=1)) == ["b"]


def test_an_unknown_cursor_is_an_error(thread: Thread, ten: list[str]) -> None:
    other = create_thread(NS)
    save_message(other.id, "user", "elsewhere", id="foreign")
    for cursor in ["missing", "foreign"]:
        with pytest.raises(InvalidInput, match="not a message of this thread"):
            list_messages(thread.id, before=cursor)
        with pytest.raises(InvalidInput, match="not a message of this thread"):
            list_messages(thread.id, after=cursor)


# --- Deleting messages ----------------------------------------------------------


def test_delete_messages_counts_only_this_threads_messages(thread: Thread, ten: list[str]) -> None:
    other = create_thread(NS)
    save_message(other.id, "user", "theirs", id="theirs")
    deleted = delete_messages(thread.id, ["m1", "m3", "m3", "theirs", "missing"])
    assert deleted == 2
    assert ids(list_messages(thread.id)) == ["m0", "m2", *ten[4:]]
    assert count_messages(other.id) == 1
    assert delete_messages(thread.id, []) == 0


@pytest.mark.parametrize("bad", ["m1", None, [1, 2], ["m1", None]])
def test_delete_messages_needs_a_list_of_string_ids(
    thread: Thread, ten: list[str], bad: Any
) -> None:
    with pytest.raises(InvalidInput, match=r"ids|message id"):
        delete_messages(thread.id, bad)
    assert count_messages(thread.id) == 10


def test_delete_messages_handles_fifty_thousand_ids_in_one_call(thread: Thread) -> None:
    other = create_thread(NS)
    mine = [f"mine-{i}" for i in range(3000)]
    theirs = [f"theirs-{i}" for i in range(1000)]
    Message.objects.bulk_create(
        [Message(id=i, thread=thread, role="user", content=i, created_at=T0) for i in mine]
        + [Message(id=i, thread=other, role="user", content=i, created_at=T0) for i in theirs]
    )
    kept = mine[:500]
    missing = [f"missing-{i}" for i in range(50_000 - 2500 - 1000)]
    # Interleaved, so every chunk mixes real, foreign and missing ids.
    requested = [*mine[500:], *theirs, *missing]
    requested = requested[::2] + requested[1::2]
    assert len(requested) == 50_000
    bound: list[int] = []

    def record(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        bound.append(len(params or ()))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        assert delete_messages(thread.id, requested) == 2500
    # Old SQLite builds refuse statements with more than 999 bound parameters.
    assert max(bound) <= 999
    assert sorted(ids(list_messages(thread.id))) == sorted(kept)
    assert count_messages(other.id) == 1000


def test_message_write_refuses_to_run_outside_a_transaction() -> None:
    from unittest.mock import patch

    from django.db import transaction

    from memories.write.services import message_draft, message_write

    draft = message_draft("no-such-thread", "user", "hi")
    outside = patch.object(transaction.get_connection(), "in_atomic_block", False)
    with outside, pytest.raises(RuntimeError, match="open transaction"):
        message_write(draft)
