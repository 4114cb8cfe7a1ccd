"""Re-embed every memory with the configured embedder.

Safe to interrupt and re-run: progress (the last memory id done) is committed
with each batch, and the stored fingerprint changes only when every memory has
its new vector. While a reindex is unfinished the start-up check refuses to run
the service, so no search ever mixes vectors from two embedders.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from tqdm import tqdm

from memories import vector_index
from memories.models import Memory
from memories.services import embedding_text
from spaceduck.models import VectorIndexState
from spaceduck.providers import ProviderError, get_embedder
from spaceduck.providers.embeddings.base import Fingerprint


class Command(BaseCommand):
    help = "Re-embed every memory with the configured embedding provider (resumable)."
    requires_system_checks: list[str] = []  # it is the cure for the fingerprint check

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=64)
        parser.add_argument("--force", action="store_true", help="Re-embed even when up to date.")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        target = get_embedder().fingerprint
        state = self._begin(target, force=options["force"])
        if state is None:
            self.stdout.write(f"Vector index is up to date ({target}); nothing to do.")
            return
        try:
            done = self._embed_remaining(state, options["batch_size"], not options["no_progress"])
        except ProviderError as exc:
            raise CommandError(
                f"Embedding failed, progress is kept; run reindex again: {exc}"
            ) from exc
        self._finish(state, target)
        self.stdout.write(self.style.SUCCESS(f"Reindexed {done} memories with {target}."))

    def _begin(self, target: Fingerprint, *, force: bool) -> VectorIndexState | None:
        with transaction.atomic():
            state = VectorIndexState.objects.filter(name=vector_index.INDEX_NAME).first()
            if state is None:
                state = VectorIndexState(name=vector_index.INDEX_NAME, dimensions=0)
            stored = Fingerprint(state.provider, state.model, state.dimensions)
            pending = state.target_dimensions is not None
            if not pending and stored == target and not force:
                return None
            if _target_of(state) != target:
                state.target_provider, state.target_model = target.provider, target.model
                state.target_dimensions = target.dimensions
                state.resume_after_id = 0
            if vector_index.table_dimensions() != target.dimensions:
                with connection.cursor() as cursor:
                    vector_index.recreate_table(cursor, target.dimensions)
                state.resume_after_id = 0
            state.save()
        return state

    def _embed_remaining(self, state: VectorIndexState, batch_size: int, progress: bool) -> int:
        embedder = get_embedder()
        remaining = Memory.objects.filter(pk__gt=state.resume_after_id).order_by("pk")
        done = 0
        with tqdm(total=remaining.count(), unit="memory", disable=not progress) as bar:
            while batch := list(remaining.filter(pk__gt=state.resume_after_id)[:batch_size]):
                vectors = embedder.embed([embedding_text(memory) for memory in batch])
                with transaction.atomic():
                    vector_index.upsert(
                        (m.pk, m.namespace, v) for m, v in zip(batch, vectors, strict=True)
                    )
                    state.resume_after_id = batch[-1].pk
                    state.save(update_fields=["resume_after_id", "updated_at"])
                done += len(batch)
                bar.update(len(batch))
        return done

    def _finish(self, state: VectorIndexState, target: Fingerprint) -> None:
        state.provider, state.model, state.dimensions = (
            target.provider,
            target.model,
            target.dimensions,
        )
        state.target_provider = state.target_model = ""
        state.target_dimensions = None
        state.resume_after_id = 0
        state.save()


def _target_of(state: VectorIndexState) -> Fingerprint | None:
    if state.target_dimensions is None:
        return None
    return Fingerprint(state.target_provider, state.target_model, state.target_dimensions)
