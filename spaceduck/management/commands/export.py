"""``manage.py export [--namespace NS] PATH``: everything needed to rebuild, as JSON lines."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from spaceduck.ops.transfer.export import export, export_to_path
from spaceduck.ops.transfer.formats import TransferError, describe_counts


class Command(BaseCommand):
    help = (
        "Export memories (with history and supersession), facts (null values and TTLs "
        "included), threads, messages, extractions, notes (statuses, edges), the note "
        "search kinds, erasure tombstones and optionally API tokens to a JSON-lines file "
        "(gzip if PATH ends in .gz, stdout for -). Read back with manage.py import."
    )
    # Exporting must work when something is wrong, e.g. before a reindex.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The file to write, or - for stdout.")
        parser.add_argument("--namespace", help="Only this namespace (e.g. user:alice).")
        parser.add_argument(
            "--tokens",
            action="store_true",
            help="Include API tokens (names, grants, SHA-256 hashes; never secrets). With "
            "--namespace, only tokens granted exactly that namespace.",
        )
        parser.add_argument(
            "--no-vectors",
            action="store_true",
            help="Leave the stored vectors out (a smaller file; import then embeds again).",
        )
        parser.add_argument("--force", action="store_true", help="Replace an existing file.")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        settings = {
            "namespace": options["namespace"],
            "vectors": not options["no_vectors"],
            "tokens": options["tokens"],
            "progress": not options["no_progress"],
        }
        try:
            if options["path"] == "-":
                try:
                    result = export(sys.stdout, **settings)
                    sys.stdout.flush()
                except BrokenPipeError:  # e.g. `| head`: the reader left; not an error here
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                    return
            else:
                result = export_to_path(options["path"], force=options["force"], **settings)
        except TransferError as exc:
            raise CommandError(str(exc)) from exc
        for warning in result.warnings:
            self.stderr.write(self.style.WARNING(warning))
        if options["path"] != "-":
            self.stdout.write(
                self.style.SUCCESS(
                    f"Exported {describe_counts(result.counts)} to {options['path']} "
                    f"in {time.monotonic() - started:.1f} s"
                    + (" (with vectors)." if result.vectors else " (without vectors).")
                )
            )
