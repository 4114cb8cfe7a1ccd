"""`memory compact` with the summariser and the token limiter both on keeps the summary.

Seen with SPACEDUCK_THREAD_MAX_TOKENS=200: the Summarizer dates its summary like the
oldest message it replaces, so the TokenLimiter (oldest first) deleted it at once and
the thread lost everything it had just summarised. The summary counts toward the
budget, but it is what is left of the older conversation, so it is kept.
"""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from memories.models import Message
from memories.store import selectors
from memories.store.token_estimate import estimate_message_tokens
from memories.upkeep.compaction import TokenLimiter, is_summary, run_compaction
from memories.write import services

pytestmark = pytest.mark.django_db
T0 = timezone.now() - timedelta(days=1)
BUDGET = 200


def thread_with(texts: list[str]) -> str:
    thread = services.create_thread("user:alice", title="t")
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        services.save_message(
            thread.id, role, text, id=f"{thread.id}-m{i}", created_at=T0 + timedelta(minutes=i)
        )
    return thread.id


def long_turn(i: int) -> str:
    return f"Turn {i}: I moved to Lisbon in spring and I work at CERN on detectors. " * 4


def total_tokens(messages: list[Message]) -> int:
    return sum(estimate_message_tokens(m.content) for m in messages)


@pytest.fixture
def both_on(settings):  # type: ignore[no-untyped-def]
    settings.SUMMARIZER_ENABLED = True
    settings.THREAD_MAX_TOKENS = BUDGET
    settings.CONVERSATION_COMPACTION = False
    return settings


def test_memory_compact_keeps_the_summary_it_has_just_written(both_on) -> None:  # type: ignore[no-untyped-def]
    thread_id = thread_with([long_turn(i) for i in range(8)])
    call_command("memory", "compact", stdout=StringIO())
    messages = selectors.list_messages(thread_id)
    summaries = [m for m in messages if is_summary(m)]
    assert len(summaries) == 1
    assert "Lisbon" in summaries[0].content
    # It counts toward the budget: what the limiter left, summary included, fits.
    assert total_tokens(messages) <= BUDGET
    assert estimate_message_tokens(summaries[0].content) < BUDGET


def test_the_summary_counts_toward_the_budget(both_on) -> None:  # type: ignore[no-untyped-def]
    thread_id = thread_with([long_turn(i) for i in range(6)])
    result = run_compaction()
    messages = selectors.list_messages(thread_id)
    summary = next(m for m in messages if is_summary(m))
    newest = [m for m in messages if not is_summary(m)]
    # Without the summary the two newest turns would fit; with it one of them has to go.
    turn = estimate_message_tokens(long_turn(0))
    assert 2 * turn <= BUDGET < estimate_message_tokens(summary.content) + 2 * turn
    assert [m.content for m in newest] == [long_turn(5)]
    assert result["token_limiter"] == {"deleted": {thread_id: 1}}
    assert total_tokens(messages) <= BUDGET


def test_a_summary_over_the_budget_alone_is_still_kept(both_on) -> None:  # type: ignore[no-untyped-def]
    thread_id = thread_with([long_turn(i) for i in range(4)])
    run_compaction(max_tokens=10)
    messages = selectors.list_messages(thread_id)
    assert len(messages) == 1
    assert is_summary(messages[0])


def test_the_limiter_keeps_the_latest_summary_and_deletes_older_ones_first() -> None:
    thread_id = thread_with(["a" * 40, "b" * 40, "c" * 40, "d" * 40])
    ids = [m.id for m in selectors.list_messages(thread_id)]
    older = services.save_message(
        thread_id,
        "system",
        "o" * 40,
        created_at=T0 + timedelta(minutes=1, seconds=1),
        provenance={"compaction": {"conversation": True, "covers": ids[:2]}},
    )
    latest = services.save_message(
        thread_id,
        "system",
        "s" * 40,
        created_at=T0 + timedelta(minutes=2, seconds=1),
        provenance={"compaction": {"conversation": True, "covers": ids[:3], "previous": older.id}},
    )
    # 14 tokens each: the latest summary and the newest message fit 30.
    assert TokenLimiter(30).run() == {thread_id: 4}
    assert [m.id for m in selectors.list_messages(thread_id)] == [latest.id, ids[3]]


def test_with_conversation_compaction_on_too_a_summary_survives(both_on) -> None:  # type: ignore[no-untyped-def]
    both_on.CONVERSATION_COMPACTION = True
    both_on.CONTEXT_HISTORY_BUDGET = 300
    thread_id = thread_with([long_turn(i) for i in range(10)])
    call_command("memory", "compact", stdout=StringIO())
    messages = selectors.list_messages(thread_id)
    assert any(is_summary(m) for m in messages)
    assert total_tokens(messages) <= BUDGET
