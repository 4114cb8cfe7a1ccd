"""The embedding fingerprint check and `reindex` (resumable, never silent)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.core.management.base import SystemCheckError

from memories.store import vector_index
from memories.write.services import memory_create
from spaceduck.core.providers import get_embedder, reset_providers
from spaceduck.models import VectorIndexState
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.django_db

TEXTS = [
    "Alice plays the cello.",
    "Alice's cat is called Miso.",
    "Alice works at CERN.",
    "Alice prefers window seats.",
    "Alice is allergic to peanuts.",
]


@pytest.fixture
def memories() -> list[int]:
    return [
        memory_create(namespace="user:alice", kind="fact", content=t, actor="t").pk for t in TEXTS
    ]


def use_embeddings(settings, **conf: object) -> None:  # type: ignore[no-untyped-def]
    settings.SPACEDUCK_EMBEDDINGS = {**settings.SPACEDUCK_EMBEDDINGS, **conf}
    reset_providers()


def test_the_migration_recorded_the_configured_fingerprint() -> None:
    state = VectorIndexState.objects.get(name="memories")
    assert (state.provider, state.dimensions) == ("hash", 384)
    assert vector_index.table_dimensions() == 384
    call_command("check", stdout=StringIO())


def test_a_new_dimension_fails_checks_until_reindex_then_search_works(settings, memories) -> None:  # type: ignore[no-untyped-def]
    use_embeddings(settings, dimensions=64)
    with pytest.raises(SystemCheckError, match=r"manage\.py reindex"):
        call_command("check")
    out = StringIO()
    call_command("reindex", "--no-progress", stdout=out)
    assert "Reindexed 5 memories" in out.getvalue()
    call_command("check", stdout=StringIO())
    assert vector_index.table_dimensions() == 64
    hits = vector_index.knn("user:alice", get_embedder().embed(["cello"])[0], 1)
    assert hits[0][0] == memories[0]


def test_reindex_is_a_no_op_when_up_to_date(memories) -> None:  # type: ignore[no-untyped-def]
    out = StringIO()
    call_command("reindex", "--no-progress", stdout=out)
    assert "up to date" in out.getvalue()


def test_an_interrupted_reindex_blocks_start_up_and_resumes_where_it_stopped(
    settings,
    memories,
    fake_openai: FakeOpenAI,  # type: ignore[no-untyped-def]
) -> None:
    use_embeddings(
        settings,
        provider="openai",
        base_url=fake_openai.base_url,
        api_key="k",
        model="fake-embed",
        dimensions=16,
        batch_size=2,
    )
    fake_openai.enqueue("embeddings")  # the first batch works
    fake_openai.enqueue("embeddings", status=500, body={"error": {"message": "boom"}})
    with pytest.raises(CommandError, match="run reindex again"):
        call_command("reindex", "--no-progress", "--batch-size", "2")
    state = VectorIndexState.objects.get(name="memories")
    assert state.resume_after_id == memories[1]
    assert (state.provider, state.dimensions) == ("hash", 384)  # not switched yet
    with pytest.raises(SystemCheckError, match="interrupted"):
        call_command("check")

    before = len(fake_openai.requests_to("embeddings"))
    call_command("reindex", "--no-progress", "--batch-size", "2", stdout=StringIO())
    # Memories 3-5 in two batches: the finished batch was not embedded again.
    assert len(fake_openai.requests_to("embeddings")) - before == 2
    state.refresh_from_db()
    assert (state.provider, state.model, state.dimensions) == ("openai", "fake-embed", 16)
    call_command("check", stdout=StringIO())
    hits = vector_index.knn("user:alice", get_embedder().embed([TEXTS[3]])[0], 1)
    assert hits[0][0] == memories[3]
