"""``manage.py backup PATH``: a consistent copy of the database while the service runs."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from spaceduck.ops.backup import BackupError, backup, source_path, verify


class Command(BaseCommand):
    help = (
        "Copy the SQLite database to PATH with SQLite's online backup API: one consistent "
        "snapshot, without stopping the service or blocking its writes."
    )
    # A backup must work exactly when something is wrong (e.g. before a reindex).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The file to write (refused if it exists, see --force).")
        parser.add_argument("--force", action="store_true", help="Replace an existing file.")
        parser.add_argument(
            "--verify",
            action="store_true",
            help="Then open the copy and run PRAGMA integrity_check and the FTS integrity checks.",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        with tqdm(unit="page", disable=options["no_progress"]) as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            try:
                result = backup(options["path"], force=options["force"], progress=progress)
            except BackupError as exc:
                raise CommandError(str(exc)) from exc
        seconds = time.monotonic() - started
        self.stdout.write(
            self.style.SUCCESS(
                f"Backed up {source_path()} to {result.path} "
                f"({result.bytes / 1e6:.1f} MB, {result.pages} pages) in {seconds:.1f} s."
            )
        )
        if options["verify"]:
            checks = verify(result.path)
            failed = {name: value for name, value in checks.items() if value != "ok"}
            if failed:
                raise CommandError(f"the copy failed its checks: {failed}")
            self.stdout.write(f"Verified: {', '.join(checks)} ok.")
