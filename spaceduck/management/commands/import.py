"""``manage.py import PATH``: read a ``manage.py export`` file into this database.

The module is called ``import`` (a keyword) so that the command is ``manage.py
import``; Django loads commands with importlib, which accepts the name.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from spaceduck.ops.transfer.formats import BATCH_SIZE, TransferError, describe_counts
from spaceduck.ops.transfer.importer import import_file


class Command(BaseCommand):
    help = (
        "Import a manage.py export file into an empty or existing database, keeping every "
        "id. Records already present with the same values are skipped, so importing twice "
        "changes nothing; records whose id is taken by other values are conflicts (the import "
        "stops before writing, unless --on-conflict skip). Rebuilds the keyword and vector "
        "indexes (vectors from the file when the embedder matches, embedded otherwise)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="An export file (gzip or plain).")
        parser.add_argument(
            "--on-conflict",
            choices=["fail", "skip"],
            default="fail",
            help="fail (default): import nothing when a record conflicts with a row; "
            "skip: keep the database's rows and import the rest.",
        )
        parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        try:
            result = import_file(
                options["path"],
                on_conflict=options["on_conflict"],
                batch_size=max(1, options["batch_size"]),
                progress=not options["no_progress"],
            )
        except TransferError as exc:
            raise CommandError(str(exc)) from exc
        seconds = time.monotonic() - started
        self.stdout.write(f"Created: {describe_counts(result.created)}.")
        if result.unchanged:
            self.stdout.write(f"Already there, unchanged: {describe_counts(result.unchanged)}.")
        if result.search_kinds_enabled:
            kinds = ", ".join(result.search_kinds_enabled)
            self.stdout.write(f"Note search enabled for: {kinds}.")
        vectors = f"Vectors: {result.vectors_from_file} from the file, {result.embedded} embedded"
        if result.vectors_note and result.embedded:
            vectors += f" ({result.vectors_note})"
        self.stdout.write(vectors + ".")
        if result.keyword_indexed:
            self.stdout.write(f"Keyword index: {result.keyword_indexed} memories indexed again.")
        for reference, count in sorted(result.cleared.items()):
            self.stdout.write(
                self.style.WARNING(f"{count} {reference} cleared: the row they named is gone.")
            )
        if result.conflicts:
            self.stdout.write(
                self.style.WARNING(
                    f"Skipped {len(result.conflicts)} conflicting records, kept as they are in "
                    f"the database, and what depends on them ({describe_counts(result.skipped)}):"
                )
            )
            for conflict in result.conflicts[:20]:
                self.stdout.write(f"  {conflict}")
        problem = result.index_report.get("problem")
        if problem:
            self.stdout.write(self.style.WARNING(problem))
        self.stdout.write(self.style.SUCCESS(f"Imported {options['path']} in {seconds:.1f} s."))
