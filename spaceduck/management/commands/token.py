"""`manage.py token create|list|revoke`: API tokens (the secret is printed once)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from spaceduck.core.tokens import (
    InvalidTokenSpec,
    expiry_after,
    expiry_on,
    token_create,
    token_revoke,
)
from spaceduck.models import ApiToken

ACTOR = "cli"  # who a token made or revoked here is recorded as


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
        expiry = create.add_mutually_exclusive_group()
        expiry.add_argument(
            "--expires-in", type=int, metavar="DAYS", help="The token stops working in DAYS days."
        )
        expiry.add_argument(
            "--expires",
            metavar="ISO-DATE",
            help="The token stops working at this time (2027-01-31 means its start, UTC; "
            "or 2027-01-31T18:00+01:00).",
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
                expires_at=_expiry(options),
                created_by=ACTOR,
            )
        except InvalidTokenSpec as exc:
            raise CommandError(str(exc)) from None
        token = created.token
        self.stdout.write(
            f"Created token {token.pk} {token.name!r} for {', '.join(token.namespaces)} "
            f"with {', '.join(token.permissions)}, {_expiry_text(token)}."
        )
        self.stdout.write("Secret (shown once, store it now):")
        self.stdout.write(created.secret)

    def _list(self, options: dict[str, Any]) -> None:
        tokens = ApiToken.objects.all()
        if not tokens:
            self.stdout.write("No tokens.")
        for token in tokens:
            state = token.state
            if token.revoked_at:
                state = f"revoked {token.revoked_at:%Y-%m-%d}"
            used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
            self.stdout.write(
                f"{token.pk}\t{token.name}\t{token.prefix}...\t{','.join(token.namespaces)}\t"
                f"{','.join(token.permissions)}\t{state}\t{_expiry_text(token)}\t"
                f"last used {used}"
            )

    def _revoke(self, options: dict[str, Any]) -> None:
        try:
            token = token_revoke(token_id=options["id"], revoked_by=ACTOR)
        except ApiToken.DoesNotExist:
            raise CommandError(f"no token with id {options['id']}") from None
        by = f" by {token.revoked_by}" if token.revoked_by else ""
        self.stdout.write(
            f"Revoked token {token.pk} {token.name!r} ({token.revoked_at:%Y-%m-%d %H:%M}{by})."
        )


def _expiry(options: dict[str, Any]) -> datetime | None:
    if options["expires_in"] is not None:
        return expiry_after(options["expires_in"])
    if options["expires"]:
        return expiry_on(_parse_moment(options["expires"]))
    return None


def _parse_moment(text: str) -> date | datetime:
    for parse in (date.fromisoformat, datetime.fromisoformat):
        try:
            return parse(text)
        except ValueError:
            continue
    raise InvalidTokenSpec(f"--expires wants an ISO date or time, e.g. 2027-01-31; got {text!r}")


def _expiry_text(token: ApiToken) -> str:
    if token.expires_at is None:
        return "no expiry"
    verb = "expired" if token.is_expired else "expires"
    return f"{verb} {token.expires_at:%Y-%m-%d %H:%M} UTC"
