"""``manage.py erase NAMESPACE``: delete everything a namespace holds (spaceduck.ops.erasure)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from spaceduck.core.errors import ServiceError
from spaceduck.ops.erasure import describe, dry_run, erase_namespace, stored_counts


class Command(BaseCommand):
    help = (
        "Erase one namespace: memories (with their vectors and keyword rows), their "
        "history, conflicts, extractions, facts, threads and messages, notes. A tombstone "
        "(who, when, counts; no content) is kept. Backups made before keep their copy."
    )
    requires_system_checks: list[str] = []  # erasing must work whatever the embedder state

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("namespace", help="The namespace to erase, e.g. user:alice.")
        parser.add_argument(
            "--yes", action="store_true", help="Do not ask: erase without typing the name."
        )
        parser.add_argument("--by", default="cli", help="Who asked (kept on the tombstone).")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="List what an erase would remove, by kind and count; erase nothing.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        namespace = options["namespace"]
        if options["dry_run"]:
            try:
                self.stdout.write(dry_run(namespace))
            except ServiceError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write("Dry run: nothing was erased.")
            return
        try:
            counts = stored_counts(namespace)
            if not options["yes"]:
                self._confirm(namespace, counts)
            erasure = erase_namespace(namespace, by=options["by"])
        except ServiceError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Erased {erasure.namespace}: {describe(erasure.counts)} "
                f"(tombstone {erasure.pk}, by {erasure.erased_by})."
            )
        )

    def _confirm(self, namespace: str, counts: dict[str, int]) -> None:
        self.stdout.write(f"{namespace} holds {describe(counts)}.")
        typed = input("Type the namespace to erase it for good: ")
        if typed.strip() != namespace:
            raise CommandError("the name typed does not match: nothing was erased")
