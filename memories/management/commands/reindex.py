"""Re-embed every memory with the configured embedder; repair missing index rows.

Safe to interrupt and re-run: progress (the last memory id done) is committed
with each batch, and the stored fingerprint changes only when every memory has
its new vector. While a reindex is unfinished the start-up check refuses to run
the service, so no search ever mixes vectors from two embedders.

Then, and also when the fingerprint is current, the indexes are compared with
the memories id by id (memories.upkeep.integrity): memories without a vector (or with
one in another namespace's partition) are embedded, vectors and keyword rows of
deleted memories are removed, and memories missing from the keyword index are
indexed again. ``--check`` only reports, failing when something is wrong.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from tqdm import tqdm

from memories.models import Memory
from memories.store import keyword_index, vector_index
from memories.upkeep import integrity
from memories.write.services import embedding_text
from spaceduck.core.db.locks import lock_for_write
from spaceduck.core.providers import ProviderError, get_embedder
from spaceduck.core.providers.embeddings.base import Fingerprint
from spaceduck.models import VectorIndexState


class Command(BaseCommand):
    help = "Re-embed every memory with the configured embedding provider (resumable)."
    requires_system_checks: list[str] = []  # it is the cure for the fingerprint check

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=64)
        parser.add_argument("--force", action="store_true", help="Re-embed even when up to date.")
        parser.add_argument("--no-progress", action="store_true")
        parser.add_argument(
            "--check",
            action="store_true",
            help="Only compare the indexes with the memories; fail when they differ.",
        )
        parser.add_argument(
            "--rebuild-keyword",
            action="store_true",
            help="Rebuild the whole keyword index from the memories.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["check"]:
            self._check()
            return
        target = get_embedder().fingerprint
        progress = not options["no_progress"]
        state = self._begin(target, force=options["force"])
        if state is None:
            self.stdout.write(f"Vector index is up to date ({target}).")
        else:
            try:
                done = self._embed_remaining(state, options["batch_size"], progress)
            except ProviderError as exc:
                raise CommandError(
                    f"Embedding failed, progress is kept; run reindex again: {exc}"
                ) from exc
            self._finish(state, target)
            self.stdout.write(self.style.SUCCESS(f"Reindexed {done} memories with {target}."))
        if options["rebuild_keyword"]:
            with transaction.atomic():
                rebuilt = keyword_index.rebuild()
            self.stdout.write(self.style.SUCCESS(f"Rebuilt the keyword index: {rebuilt} memories."))
        self._repair(options["batch_size"], progress, quiet_when_clean=state is not None)

    def _check(self) -> None:
        report = integrity.index_report()
        self.stdout.write(_describe(report))
        problems = [
            vector_index.fingerprint_problem(get_embedder().fingerprint),
            report["problem"],
        ]
        if any(problems):
            raise CommandError("; ".join(p for p in problems if p))

    def _repair(self, batch_size: int, progress: bool, *, quiet_when_clean: bool) -> None:
        """Compare the indexes with the memories id by id and fix what differs."""
        problems = integrity.find_problems()
        if not problems:
            if not quiet_when_clean:
                report = integrity.index_report(exact=False)
                self.stdout.write(f"{_describe(report)}: nothing to do.")
            return
        to_embed = len(set(problems.missing_vectors) | set(problems.misplaced_vectors))
        try:
            with tqdm(total=to_embed, unit="memory", disable=not progress or not to_embed) as bar:
                repaired = integrity.repair(problems, batch_size=batch_size, on_embedded=bar.update)
        except ProviderError as exc:
            raise CommandError(f"Embedding failed; run reindex again: {exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Repaired the indexes: {repaired.embedded} vectors embedded, "
                f"{repaired.vectors_deleted} orphan vectors deleted, "
                f"{repaired.keyword_indexed} memories keyword-indexed, "
                f"{repaired.keyword_deleted} orphan keyword rows deleted."
            )
        )
        report = integrity.index_report()
        if report["problem"]:  # the service wrote meanwhile, or a repair failed
            self.stdout.write(self.style.WARNING(report["problem"]))

    def _begin(self, target: Fingerprint, *, force: bool) -> VectorIndexState | None:
        with transaction.atomic():
            lock_for_write("reindex")  # two runs at once on PostgreSQL: one after the other
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


def _describe(report: dict[str, Any]) -> str:
    return (
        f"{report['memories']} memories, {report['vectors']} vectors, "
        f"{report['keyword']} keyword rows"
    )
