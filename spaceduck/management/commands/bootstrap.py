"""`manage.py bootstrap`: first-run set-up for `make run` (idempotent).

Creates an admin user when there is none (password from SPACEDUCK_ADMIN_PASSWORD,
else generated and printed once), a demo API token (printed once) and the demo data.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from spaceduck.core.env import env_optional_str
from spaceduck.core.tokens import token_create
from spaceduck.models import ApiToken
from spaceduck.ops.demo import DEMO_NAMESPACE, load_demo


class Command(BaseCommand):
    help = "Create the admin user, a demo token and the demo data if they are missing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-demo", action="store_true", help="Skip the demo data.")

    def handle(self, *args: Any, **options: Any) -> None:
        self._admin()
        self._demo_token()
        if not options["no_demo"]:
            created = load_demo()
            summary = ", ".join(f"{count} {name}" for name, count in created.items())
            self.stdout.write(f"Demo data in {DEMO_NAMESPACE}: created {summary}.")

    def _admin(self) -> None:
        users = get_user_model()
        if users.objects.filter(is_superuser=True).exists():
            self.stdout.write("Admin user exists; keeping it.")
            return
        password = env_optional_str("SPACEDUCK_ADMIN_PASSWORD")
        generated = password is None
        password = password or secrets.token_urlsafe(12)
        users.objects.create_superuser("admin", "admin@localhost", password)
        self.stdout.write(self.style.SUCCESS("Created admin user 'admin'."))
        if generated:
            self.stdout.write(f"Admin password (shown once): {password}")

    def _demo_token(self) -> None:
        if ApiToken.objects.filter(name="demo").exists():
            self.stdout.write("Demo API token exists; its secret was shown when it was created.")
            return
        created = token_create(
            name="demo",
            namespaces=[DEMO_NAMESPACE],
            permissions=["read", "write"],
            created_by="cli",  # as `manage.py token create`: a command, no person
        )
        self.stdout.write(self.style.SUCCESS(f"Created demo API token for {DEMO_NAMESPACE}."))
        self.stdout.write(f"Demo token (shown once): {created.secret}")
