"""A credential said beside a fact never reaches the fact's context (Memory.context is
keyword-searched and comes back with every recalled memory)."""

from __future__ import annotations

import pytest

from memories.models import Memory
from memories.write.ingest import message_ingest
from memories.write.services import create_thread

pytestmark = pytest.mark.django_db
NS = "user:alice"


def test_the_password_sentence_is_left_out_of_the_context_of_the_other_fact(
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    thread = create_thread(NS, "Moving")
    with django_capture_on_commit_callbacks(execute=True):  # the queued extraction runs
        message_ingest(
            thread.pk, "user", "My password is Winter2024! I moved to Lisbon last month."
        )
    stored = list(Memory.objects.filter(namespace=NS))
    assert stored  # the other fact was learnt
    for memory in stored:
        assert "Winter2024" not in memory.content
        assert "Winter2024" not in memory.context
        assert "Lisbon" in memory.content + memory.context


def test_a_password_in_the_turn_before_is_left_out_too(
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    thread = create_thread(NS, "Moving")
    with django_capture_on_commit_callbacks(execute=True):
        message_ingest(thread.pk, "assistant", "Sure. The admin password is hunter2 for staging.")
        message_ingest(thread.pk, "user", "I moved to Porto last month.")
    porto = [m for m in Memory.objects.filter(namespace=NS) if "Porto" in m.content]
    assert porto
    assert all("hunter2" not in m.context for m in porto)
