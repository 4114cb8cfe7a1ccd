"""Settings > Memory > Embeddings: a new embedder is refused when it does not fit, else every
memory is re-embedded beside the index in use, which serves until one switch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.test import Client

from memories.models import Memory, ReembedJob
from memories.recall.hybrid import RecallQuery, recall
from memories.store import vector_index
from memories.upkeep import reembed
from memories.write.services import embedding_text, memory_create
from spaceduck.core import runtime
from spaceduck.core.errors import Conflict, InvalidInput
from spaceduck.core.providers import ProviderError, embedder_for, get_embedder
from spaceduck.models import SettingChange, VectorIndexState

pytestmark = pytest.mark.django_db

PAGE = "/settings/memory/"


@pytest.fixture(autouse=True)
def _no_wait(settings: Any) -> None:
    settings.SETTINGS_REFRESH_SECONDS = 0  # the post-switch repair waits 2x this + 0.5 s


def _memories(n: int = 5) -> list[Memory]:
    return [
        memory_create(
            namespace="user:alice",
            kind="fact",
            content=f"The user owns bike number {i}.",
            actor="t",
        )
        for i in range(n)
    ]


def _stored_vector(memory_id: int) -> np.ndarray:
    blob = vector_index.stored_blobs([memory_id])[memory_id]
    return np.frombuffer(blob, dtype=np.float32)


def _switch(staff_client: Client, django_capture_on_commit_callbacks: Any, **form: Any) -> Any:
    with django_capture_on_commit_callbacks(execute=True):  # huey is immediate in tests
        return staff_client.post(PAGE, {"form": "embedder", **form})


@pytest.mark.parametrize(
    ("form", "message"),
    [
        (
            {"provider": "local", "dimensions": "512"},
            "makes 384-dimensional vectors; 512 does not fit it",
        ),
        ({"provider": "hash", "model": "minilm", "dimensions": "64"}, "has no model to choose"),
        ({"provider": "hash", "dimensions": "4"}, "needs dimensions from 8 to 4096"),
        (
            {"provider": "openai", "model": "text-embedding-3-small", "dimensions": "1536"},
            "SPACEDUCK_EMBEDDING_BASE_URL",
        ),
        ({"provider": "hash", "dimensions": "384"}, "the index already uses"),
        ({"provider": "nope", "dimensions": "64"}, "Select a valid choice"),
        ({"provider": "hash", "dimensions": "many"}, "Enter a whole number"),
    ],
)
def test_an_embedder_that_does_not_fit_is_refused_with_a_message(
    staff_client: Client,
    django_capture_on_commit_callbacks: Any,
    form: dict[str, str],
    message: str,
) -> None:
    response = _switch(staff_client, django_capture_on_commit_callbacks, **form)
    assert response.status_code in (400, 409, 422)
    assert message in response.content.decode()
    assert not ReembedJob.objects.exists()
    assert get_embedder().fingerprint.dimensions == 384


def test_openai_dimensions_beyond_the_model_are_refused(settings: Any) -> None:
    settings.SPACEDUCK_EMBEDDINGS = {
        **settings.SPACEDUCK_EMBEDDINGS,
        "base_url": "http://127.0.0.1:9/v1",
    }
    with pytest.raises(InvalidInput, match="returns at most 1536 dimensions; 2000 does not fit"):
        reembed.target_embedder(provider="openai", model="text-embedding-3-small", dimensions=2000)


def test_a_switch_re_embeds_every_memory_and_is_recorded(
    staff_client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    memories = _memories()
    response = _switch(
        staff_client, django_capture_on_commit_callbacks, provider="hash", dimensions="64"
    )
    assert response.status_code == 302
    job = ReembedJob.objects.get()
    assert (job.status, job.done, job.total, job.error) == ("done", 5, 5, "")
    assert vector_index.table_dimensions() == 64
    state = VectorIndexState.objects.get(name=vector_index.INDEX_NAME)
    assert (state.provider, state.dimensions, state.target_dimensions) == ("hash", 64, None)
    assert get_embedder().fingerprint.dimensions == 64
    new = embedder_for(reembed._conf("hash", "", 64))
    for memory in memories:
        expected = new.embed([embedding_text(memory)])[0]
        assert np.allclose(_stored_vector(memory.pk), expected, atol=1e-6)
    change = SettingChange.objects.get(key="embedding_dimensions")
    # old: unset in the environment, so the provider's own default (384 for hash)
    assert (change.old, change.new, change.changed_by) == (None, 64, "staff:staff")
    hits = recall(RecallQuery(namespace="user:alice", text="bike number 3", lists=("vector",)))
    assert hits
    assert hits[0].memory.pk == memories[3].pk
    page = staff_client.get(PAGE).content.decode()
    assert "hash/blake2b-words-trigrams-v1/64d" in page
    assert 'class="status status-done"' in page


def test_the_old_index_serves_until_the_switch_and_writes_meanwhile_are_not_lost() -> None:
    before = _memories(3)
    job = ReembedJob.objects.create(provider="hash", model="", dimensions=64, started_by="t")
    new = embedder_for(reembed._conf("hash", "", 64))
    versions = reembed._build(job, new)
    # Built beside it: the index in use is untouched and still answers with 384-d vectors.
    assert vector_index.table_dimensions() == 384
    assert get_embedder().fingerprint.dimensions == 384
    assert recall(RecallQuery(namespace="user:alice", text="bike number 1", lists=("vector",)))
    # Written and edited while the job ran, with the embedder then in use.
    added = memory_create(
        namespace="user:alice", kind="fact", content="The user rides to work.", actor="t"
    )
    Memory.objects.filter(pk=before[0].pk).delete()
    reembed._switch(job, new, versions)
    assert vector_index.table_dimensions() == 64
    assert set(vector_index.stored_blobs([m.pk for m in [*before, added]])) == {
        before[1].pk,
        before[2].pk,
        added.pk,
    }
    assert np.allclose(_stored_vector(added.pk), new.embed([embedding_text(added)])[0], atol=1e-6)


def test_a_query_embedded_before_this_process_saw_the_switch_is_embedded_again(
    staff_client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    _memories(3)
    _switch(staff_client, django_capture_on_commit_callbacks, provider="hash", dimensions="64")
    old = embedder_for(reembed._conf("hash", "", 384))
    with pytest.raises(vector_index.DimensionMismatch):
        vector_index.search("user:alice", old.embed(["bike"])[0], 3)
    # This process still holds the settings from before the switch for a moment:
    runtime._ROWS._rows = {}
    runtime._ROWS._read_at = float("inf")
    try:
        hits = recall(RecallQuery(namespace="user:alice", text="bike number 2", lists=("vector",)))
    finally:
        runtime.forget_cached()
    assert hits


class _Failing:
    fingerprint: Any = None

    def embed(self, texts: list[str]) -> Any:
        raise ProviderError("embedding service unreachable")


def test_a_failed_job_leaves_the_index_in_use_and_can_be_started_again(
    monkeypatch: pytest.MonkeyPatch,
    staff_client: Client,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _memories(2)
    real = reembed.embedder_for

    def failing_for_64(conf: Any) -> Any:
        embedder = real(conf)
        if embedder.fingerprint.dimensions != 64:
            return embedder
        failing = _Failing()
        failing.fingerprint = embedder.fingerprint
        return failing

    monkeypatch.setattr(reembed, "embedder_for", failing_for_64)
    _switch(staff_client, django_capture_on_commit_callbacks, provider="hash", dimensions="64")
    job = ReembedJob.objects.get()
    assert job.status == "failed"
    assert "embedding service unreachable" in job.error
    assert vector_index.table_dimensions() == 384
    assert get_embedder().fingerprint.dimensions == 384
    assert "embedding service unreachable" in staff_client.get(PAGE).content.decode()
    monkeypatch.setattr(reembed, "embedder_for", real)
    _switch(staff_client, django_capture_on_commit_callbacks, provider="hash", dimensions="64")
    assert ReembedJob.objects.first().status == "done"  # type: ignore[union-attr]


def test_a_second_job_is_refused_while_one_runs() -> None:
    ReembedJob.objects.create(provider="hash", dimensions=64, started_by="t", status="running")
    with pytest.raises(Conflict, match="already under way"):
        reembed.reembed_start(provider="hash", model="", dimensions=32, actor="t")


def test_the_progress_bar_is_a_fragment_that_polls_while_the_job_runs(staff_client: Client) -> None:
    ReembedJob.objects.create(
        provider="hash", dimensions=64, started_by="t", status="running", done=40, total=100
    )
    fragment = staff_client.get(PAGE, headers={"HX-Request": "true"}).content.decode()
    assert fragment.strip().startswith('<div id="reembed-progress"')
    assert 'hx-trigger="every 2s"' in fragment
    assert "40 of 100 memories (40%)" in fragment
    assert "<html" not in fragment


def test_embedder_settings_cannot_be_changed_alone() -> None:
    with pytest.raises(InvalidInput, match="changes by re-embedding every memory"):
        runtime.settings_update(values={"embedding_dimensions": 64}, actor="t")
