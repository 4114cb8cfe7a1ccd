"""Maintenance processors: TTL GC, TokenLimiter, Summarizer (crash-safe, convergent)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from memories.models import MaintenanceRun
from memories.store import selectors
from memories.store.token_estimate import estimate_message_tokens
from memories.upkeep.compaction import (
    Summarizer,
    TokenLimiter,
    TtlGarbageCollector,
    is_summary,
    run_compaction,
    run_ttl_gc,
)
from memories.write import services
from spaceduck.core.errors import InvalidInput
from spaceduck.core.providers.chat.heuristic import HeuristicChat
from spaceduck.core.providers.chat.openai import OpenAIChat
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.django_db
T0 = timezone.now() - timedelta(days=1)


def thread_with(texts: list[str]) -> str:
    thread = services.create_thread("user:alice", title="t")
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        services.save_message(
            thread.id, role, text, id=f"{thread.id}-m{i}", created_at=T0 + timedelta(minutes=i)
        )
    return thread.id


def contents(thread_id: str) -> list[object]:
    return [m.content for m in selectors.list_messages(thread_id)]


def test_the_gc_deletes_only_expired_facts_and_logs_the_run() -> None:
    services.set_fact("user:alice", "gone", 1, ttl_ms=0)
    services.set_fact("user:alice", "kept", 2, ttl_ms=3_600_000)
    services.set_fact("user:alice", "forever", 3)
    assert TtlGarbageCollector().run() == 1
    assert run_ttl_gc() == 0
    run = MaintenanceRun.objects.filter(processor="ttl_gc").first()
    assert run is not None
    assert run.ok
    assert run.changes == {"deleted": 0}
    assert [f.key for f in selectors.list_facts("user:alice")] == ["forever", "kept"]


@pytest.mark.parametrize("budget", [-1, float("nan"), float("inf"), "100", True, None])
def test_the_token_limiter_refuses_a_bad_budget(budget: object) -> None:
    with pytest.raises(InvalidInput, match="max_tokens"):
        TokenLimiter(budget)  # type: ignore[arg-type]


def test_the_token_limiter_deletes_oldest_messages_until_the_thread_fits() -> None:
    texts = ["x" * 40, "y" * 40, "z" * 40, "w" * 40]  # 10 + 4 tokens each
    thread_id = thread_with(texts)
    other = thread_with(["small"])
    assert estimate_message_tokens("x" * 40) == 14
    deleted = TokenLimiter(30).run()
    assert deleted == {thread_id: 2}
    assert contents(thread_id) == ["z" * 40, "w" * 40]
    assert contents(other) == ["small"]
    assert TokenLimiter(0).run([thread_id]) == {thread_id: 2}


def test_the_summarizer_replaces_all_but_the_two_newest_with_a_dated_system_summary() -> None:
    thread_id = thread_with(
        ["I live in Lisbon.", "Noted.", "I work at CERN.", "Great.", "What's next?", "Lunch."]
    )
    outcome = Summarizer(HeuristicChat()).run()
    assert outcome.summarized == {thread_id: 4}
    messages = selectors.list_messages(thread_id)
    assert [m.role for m in messages] == ["system", "user", "assistant"]
    summary = messages[0]
    assert is_summary(summary)
    assert summary.created_at == T0  # dated like the oldest message it replaces
    assert "Lisbon" in summary.content
    assert "CERN" in summary.content
    assert [m.content for m in messages[1:]] == ["What's next?", "Lunch."]
    # Converged: a second run changes nothing.
    assert Summarizer(HeuristicChat()).run().summarized == {}


def test_threads_with_two_messages_or_fewer_are_left_alone() -> None:
    thread_id = thread_with(["hello", "hi"])
    assert Summarizer(HeuristicChat()).run().summarized == {}
    assert contents(thread_id) == ["hello", "hi"]


def test_a_crash_between_saving_the_summary_and_deleting_loses_nothing_and_rerun_converges(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    thread_id = thread_with(["one.", "two.", "three.", "four.", "five."])
    real_delete = services.delete_messages

    def crash(*args: object, **kwargs: object) -> int:
        raise RuntimeError("power cut")

    monkeypatch.setattr(services, "delete_messages", crash)
    with pytest.raises(RuntimeError, match="power cut"):
        Summarizer(HeuristicChat()).run()
    after_crash = selectors.list_messages(thread_id)
    assert len(after_crash) == 6  # the summary was saved, nothing was deleted
    assert sum(is_summary(m) for m in after_crash) == 1

    monkeypatch.setattr(services, "delete_messages", real_delete)
    outcome = Summarizer(HeuristicChat()).run()
    assert outcome.finished_interrupted == {thread_id: 3}
    assert outcome.summarized == {}
    messages = selectors.list_messages(thread_id)
    assert [m.content for m in messages[1:]] == ["four.", "five."]
    assert is_summary(messages[0])
    assert "one" in messages[0].content


def test_an_llm_failure_changes_nothing_and_is_reported(fake_openai: FakeOpenAI) -> None:
    thread_id = thread_with(["a.", "b.", "c.", "d."])
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
    outcome = Summarizer(llm).run()
    assert thread_id in outcome.errors
    assert contents(thread_id) == ["a.", "b.", "c.", "d."]


def test_run_compaction_logs_each_processor_run(settings) -> None:  # type: ignore[no-untyped-def]
    thread_id = thread_with(["a" * 100, "b.", "c.", "d."])
    result = run_compaction(summarize=True, max_tokens=1000, conversation=False)
    assert result["summarizer"]["summarized"] == {thread_id: 2}
    assert result["token_limiter"] == {"deleted": {}}
    assert set(MaintenanceRun.objects.values_list("processor", flat=True)) == {
        "summarizer",
        "token_limiter",
    }
    settings.SUMMARIZER_ENABLED = False
    settings.THREAD_MAX_TOKENS = None
    settings.CONVERSATION_COMPACTION = False
    assert run_compaction() == {}


def test_the_cli_runs_gc_and_compaction() -> None:
    services.set_fact("user:alice", "gone", 1, ttl_ms=0)
    out = StringIO()
    call_command("memory", "gc", stdout=out)
    assert "1" in out.getvalue()
    thread_with(["a.", "b.", "c."])
    out = StringIO()
    call_command("memory", "compact", stdout=out)
    assert out.getvalue().strip()
