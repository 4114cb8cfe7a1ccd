"""``manage.py redact_secrets [--dry-run]``: replace the credentials in messages (content and
provenance) and thread titles stored before redaction (or while ``SPACEDUCK_REDACT_SECRETS``
was false) with ``[redacted: <shape>]``, and in the candidates of extraction records. Run once
after upgrading; safe to run again."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from tqdm import tqdm

from memories.models import Extraction, Message, Thread
from memories.write.services import redact_stored


class Command(BaseCommand):
    help = "Redact credentials in stored messages, thread titles and extraction records."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--dry-run", action="store_true", help="count, change nothing")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        total = sum(m.objects.count() for m in (Message, Extraction, Thread))
        with tqdm(total=total, unit="row", disable=options["no_progress"]) as bar:
            messages, records, threads = redact_stored(
                dry_run=options["dry_run"], on_batch=bar.update
            )
        verb = "Would redact" if options["dry_run"] else "Redacted"
        self.stdout.write(
            f"{verb} credentials in {messages} messages and {records} extraction records, "
            f"and in {threads} thread titles."
        )
