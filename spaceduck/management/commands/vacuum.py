"""``manage.py vacuum [--full]``: leave no old bytes in the database (spaceduck.core.db.scrub)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from spaceduck.core.db.scrub import vacuum


class Command(BaseCommand):
    help = (
        "Purge deleted memories' terms from the keyword index and rebuild the database "
        "without free pages (SQLite VACUUM; PostgreSQL VACUUM, or VACUUM FULL with --full). "
        "Deletes and erases already leave nothing behind; run it once on a database that "
        "held deleted rows before secure_delete was on. SQLite needs free disk space of "
        "about the database's size and blocks writers while it runs."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--full", action="store_true", help="PostgreSQL: VACUUM FULL (rewrites every table)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        for step in vacuum(full=options["full"]):
            self.stdout.write(step)
        self.stdout.write(self.style.SUCCESS("Vacuumed."))
