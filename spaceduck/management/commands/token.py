"""`manage.py token create|list|revoke`: API tokens (the secret is printed once)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from spaceduck.models import ApiToken
from spaceduck.tokens import InvalidTokenSpec, token_create, token_revoke


def _split(values: list[str]) -> list[str]:
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


class Command(BaseCommand):
    help = "Create, list and revoke API tokens."
    requires_system_checks: list[str] = []  # tokens work whatever the embedder state

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Create a token and print its secret once.")
        create.add_argument("--name", required=True)
        create.add_argument(
            "--namespace",
            action="append",
            required=True,
            help='Grant, repeatable or comma-separated: "user:alice" or "user:*".',
        )
        create.add_argument(
            "--perm", default="read", help="Comma-separated: read,write,approve,admin"
        )
        sub.add_parser("list", help="List tokens (never their secrets).")
        revoke = sub.add_parser("revoke", help="Revoke a token by id.")
        revoke.add_argument("id", type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"_{options['action']}")(options)

    def _create(self, options: dict[str, Any]) -> None:
        try:
            created = token_create(
                name=options["name"],
                namespaces=_split(options["namespace"]),
                permissions=_split([options["perm"]]),
            )
        except InvalidTokenSpec as exc:
            raise CommandError(str(exc)) from None
        token = created.token
        self.stdout.write(
            f"Created token {token.pk} {token.name!r} for {', '.join(token.namespaces)} "
            f"with {', '.join(token.permissions)}."
        )
        self.stdout.write("Secret (shown once, store it now):")
        self.stdout.write(created.secret)

    def _list(self, options: dict[str, Any]) -> None:
        tokens = ApiToken.objects.all()
        if not tokens:
            self.stdout.write("No tokens.")
        for token in tokens:
            state = f"revoked {token.revoked_at:%Y-%m-%d}" if token.revoked_at else "active"
            used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
            self.stdout.write(
                f"{token.pk}\t{token.name}\t{token.prefix}...\t{','.join(token.namespaces)}\t"
                f"{','.join(token.permissions)}\t{state}\tlast used {used}"
            )

    def _revoke(self, options: dict[str, Any]) -> None:
        try:
            token = token_revoke(token_id=options["id"])
        except ApiToken.DoesNotExist:
            raise CommandError(f"no token with id {options['id']}") from None
        self.stdout.write(f"Revoked token {token.pk} {token.name!r}.")
