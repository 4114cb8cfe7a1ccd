"""Conversation compaction: past 85% of the budget the older part becomes one summary."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import MaintenanceRun, Message
from memories.store import selectors
from memories.store.token_estimate import estimate_message_tokens
from memories.upkeep.compaction import (
    ConversationCompactor,
    Summarizer,
    compact_conversation,
    conversation_tail,
    is_summary,
    run_compaction,
)
from memories.write import services
from spaceduck.core.errors import InvalidInput
from spaceduck.core.providers import ProviderError
from spaceduck.core.providers.chat.heuristic import HeuristicChat
from spaceduck.core.providers.chat.openai import OpenAIChat
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.django_db
T0 = timezone.now() - timedelta(days=1)
BUDGET = 100  # threshold: 85 tokens


class RecordingChat(HeuristicChat):
    """The offline summariser, remembering what it was asked to summarise."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    def summarize(self, *, texts: Sequence[str], max_words: int = 120) -> str:
        self.calls.append(list(texts))
        return super().summarize(texts=texts, max_words=max_words)


class FailingChat(HeuristicChat):
    def summarize(self, *, texts: Sequence[str], max_words: int = 120) -> str:
        raise ProviderError("the model is overloaded")


def thread_with(texts: list[str], start: int = 0, thread_id: str | None = None) -> str:
    if thread_id is None:
        thread_id = services.create_thread("user:alice", title="t").id
    for i, text in enumerate(texts, start=start):
        services.save_message(
            thread_id,
            "user" if i % 2 == 0 else "assistant",
            text,
            id=f"{thread_id}-m{i}",
            created_at=T0 + timedelta(minutes=i),
        )
    return thread_id


def sentences(count: int) -> list[str]:
    """``count`` messages of 14 estimated tokens each (40 characters)."""
    return [f"Message number {i:02d} talks about topic.".ljust(40, ".") for i in range(count)]


def originals(thread_id: str) -> list[Message]:
    return [m for m in selectors.list_messages(thread_id) if not is_summary(m)]


def test_the_fixture_messages_cost_fourteen_tokens_each() -> None:
    assert {estimate_message_tokens(text) for text in sentences(6)} == {14}


def test_a_thread_at_exactly_the_threshold_is_left_alone() -> None:
    thread_id = thread_with([*sentences(5), "x" * 41])  # 5 x 14 + 15 = 85
    assert compact_conversation(thread_id, budget=BUDGET) is None
    assert not any(is_summary(m) for m in selectors.list_messages(thread_id))


def test_a_thread_just_past_the_threshold_gets_one_summary_and_keeps_every_message() -> None:
    thread_id = thread_with([*sentences(5), "x" * 45])  # 5 x 14 + 16 = 86
    before = [m.id for m in selectors.list_messages(thread_id)]
    summary = compact_conversation(thread_id, budget=BUDGET)
    assert summary is not None
    assert [m.id for m in originals(thread_id)] == before
    assert [m.id for m in selectors.list_messages(thread_id) if is_summary(m)] == [summary.id]
    assert summary.role == "system"
    assert summary.content.strip()


def test_the_summary_covers_the_older_part_and_sits_right_before_the_kept_messages() -> None:
    thread_id = thread_with([*sentences(5), "x" * 45])
    summary = compact_conversation(thread_id, budget=BUDGET)
    assert summary is not None
    marker = summary.provenance["compaction"]
    assert marker["conversation"] is True
    assert "replaces" not in marker
    assert marker["covers"] == [f"{thread_id}-m0", f"{thread_id}-m2"]
    ids = [m.id for m in selectors.list_messages(thread_id)]
    assert ids.index(summary.id) == ids.index(f"{thread_id}-m2") + 1
    previous, tail = conversation_tail(selectors.list_messages(thread_id))
    assert previous == summary
    assert [m.id for m in tail] == [f"{thread_id}-m3", f"{thread_id}-m4", f"{thread_id}-m5"]
    assert sum(estimate_message_tokens(m.content) for m in tail) <= BUDGET // 2


def test_the_newest_message_is_never_summarised_even_when_it_alone_is_over_budget() -> None:
    thread_id = thread_with(["x" * 1000])
    assert compact_conversation(thread_id, budget=BUDGET) is None
    thread_with(["short one."], start=1, thread_id=thread_id)
    summary = compact_conversation(thread_id, budget=BUDGET)
    assert summary is not None
    assert summary.provenance["compaction"]["covers"][-1] == f"{thread_id}-m0"


def test_a_later_compaction_starts_from_the_previous_summary() -> None:
    llm = RecordingChat()
    thread_id = thread_with([*sentences(5), "x" * 45])
    first = compact_conversation(thread_id, budget=BUDGET, llm=llm)
    assert first is not None
    assert compact_conversation(thread_id, budget=BUDGET, llm=llm) is None  # back under
    thread_with(sentences(4), start=6, thread_id=thread_id)
    second = compact_conversation(thread_id, budget=BUDGET, llm=llm)
    assert second is not None
    assert llm.calls[-1][0].startswith("summary of the earlier conversation: ")
    assert first.content in llm.calls[-1][0]
    marker = second.provenance["compaction"]
    assert marker["previous"] == first.id
    assert marker["covers"][0] == f"{thread_id}-m0"
    assert len(originals(thread_id)) == 10
    assert conversation_tail(selectors.list_messages(thread_id))[0] == second


def test_an_llm_failure_writes_nothing_and_raises() -> None:
    thread_id = thread_with([*sentences(5), "x" * 45])
    before = [m.id for m in selectors.list_messages(thread_id)]
    with pytest.raises(ProviderError):
        compact_conversation(thread_id, budget=BUDGET, llm=FailingChat())
    assert [m.id for m in selectors.list_messages(thread_id)] == before


def test_an_http_llm_failure_is_reported_per_thread_by_the_compactor(
    fake_openai: FakeOpenAI,
) -> None:
    thread_id = thread_with([*sentences(5), "x" * 45])
    fake_openai.enqueue("chat", status=500, body={"error": {"message": "overloaded"}})
    llm = OpenAIChat.from_settings(
        {
            "provider": "openai",
            "model": "m",
            "base_url": fake_openai.base_url,
            "api_key": "k",
            "timeout": 5.0,
        }
    )
    outcome = ConversationCompactor(BUDGET, llm=llm).run()
    assert thread_id in outcome.errors
    assert outcome.compacted == {}
    assert not any(is_summary(m) for m in selectors.list_messages(thread_id))


def test_the_summarizer_never_treats_a_conversation_summary_as_an_interrupted_run() -> None:
    thread_id = thread_with([*sentences(5), "x" * 45])
    assert compact_conversation(thread_id, budget=BUDGET) is not None
    outcome = Summarizer().run([thread_id])
    assert outcome.finished_interrupted == {}
    assert outcome.summarized[thread_id]  # it summarises as usual, deleting nothing extra
    summaries = [m for m in selectors.list_messages(thread_id) if is_summary(m)]
    assert len(summaries) == 1


@pytest.mark.parametrize("budget", [0, -5, 1.5, True, "100"])
def test_a_bad_budget_is_refused(budget: object) -> None:
    thread_id = thread_with(sentences(2))
    with pytest.raises(InvalidInput, match="budget"):
        compact_conversation(thread_id, budget=budget)  # type: ignore[arg-type]


def test_periodic_compaction_compacts_threads_past_the_history_budget(settings) -> None:  # type: ignore[no-untyped-def]
    settings.CONTEXT_HISTORY_BUDGET = BUDGET
    long_thread = thread_with([*sentences(5), "x" * 45])
    short_thread = thread_with(sentences(2))
    result = run_compaction(summarize=False, max_tokens=None)
    compacted = result["conversation_compactor"]["compacted"]
    assert set(compacted) == {long_thread}
    assert not any(is_summary(m) for m in selectors.list_messages(short_thread))
    assert MaintenanceRun.objects.filter(processor="conversation_compactor", ok=True).exists()
    settings.CONVERSATION_COMPACTION = False
    assert "conversation_compactor" not in run_compaction(summarize=False, max_tokens=None)
