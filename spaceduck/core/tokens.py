"""API token services: create (secret shown once), authenticate, revoke."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from spaceduck.core.db.fast import read_plan
from spaceduck.core.namespaces import InvalidNamespace, Namespace, normalize_namespace
from spaceduck.models import PERMISSIONS, ApiToken, hash_token


class InvalidTokenSpec(ValueError):
    pass


NAME_MAX = int(ApiToken._meta.get_field("name").max_length)  # type: ignore[arg-type]
# Ten years: a longer expiry is a token that never expires; say so by giving none.
MAX_EXPIRY_DAYS = 3650


@dataclass(frozen=True)
class CreatedToken:
    token: ApiToken
    secret: str  # only ever available here, at creation


def _normalize_grant(grant: str) -> str:
    kind, sep, rest = grant.partition(":")
    if grant == "*" or (sep and rest == "*"):
        if grant != "*" and kind not in Namespace.KINDS:
            raise InvalidTokenSpec(f"namespace grant {grant!r}: unknown kind {kind!r}")
        return grant
    try:
        return normalize_namespace(grant)
    except InvalidNamespace as exc:
        raise InvalidTokenSpec(f"namespace grant {grant!r}: {exc}") from None


def expiry_after(days: int) -> datetime:
    """When a token made now for ``days`` days stops working."""
    if not 1 <= days <= MAX_EXPIRY_DAYS:
        raise InvalidTokenSpec(
            f"the expiry must be 1 to {MAX_EXPIRY_DAYS} days away (got {days}); "
            "give none for a token that does not expire"
        )
    return timezone.now() + timedelta(days=days)


def expiry_on(day: date | datetime) -> datetime:
    """A date means the start of that day (the service's time zone): the token works the
    whole day before it. A datetime without a zone is read in the service's zone too."""
    moment = day if isinstance(day, datetime) else datetime.combine(day, time.min)
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment)
    return moment.astimezone(UTC)  # as stored and shown


def token_create(
    *,
    name: str,
    namespaces: list[str],
    permissions: list[str],
    expires_at: datetime | None = None,
    created_by: str = "",
) -> CreatedToken:
    if not name.strip():
        raise InvalidTokenSpec("a token needs a name")
    if len(name.strip()) > NAME_MAX:
        raise InvalidTokenSpec(f"a token's name is at most {NAME_MAX} characters")
    if not namespaces:
        raise InvalidTokenSpec("a token needs at least one namespace grant")
    unknown = sorted(set(permissions) - set(PERMISSIONS))
    if unknown or not permissions:
        raise InvalidTokenSpec(
            f"permissions must be a non-empty subset of {', '.join(PERMISSIONS)}"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
        )
    if expires_at is not None and expires_at <= timezone.now():
        raise InvalidTokenSpec(
            f"the expiry {expires_at:%Y-%m-%d %H:%M} UTC is in the past; "
            "give a later one, or none for a token that does not expire"
        )
    secret = ApiToken.generate_secret()
    token = ApiToken.objects.create(
        name=name.strip(),
        prefix=secret[:10],
        key_hash=hash_token(secret),
        namespaces=sorted({_normalize_grant(g) for g in namespaces}),
        permissions=[p for p in PERMISSIONS if p in permissions],
        expires_at=expires_at,
        created_by=created_by,
    )
    return CreatedToken(token=token, secret=secret)


def token_authenticate(*, secret: str) -> ApiToken | None:
    """The active token for ``secret`` (known, not revoked, not expired), or None; refreshes
    ``last_used_at`` sparingly. Every front end answers None alike (401): whether a token
    was revoked, expired or never existed is not told to whoever holds it."""
    token = _active_token(hash_token(secret))
    if token is None:
        return None
    now = timezone.now()
    # Writing on every request would serialise all reads behind SQLite's write lock.
    resolution = timedelta(seconds=settings.TOKEN_LAST_USED_RESOLUTION_SECONDS)
    if token.last_used_at is None or now - token.last_used_at >= resolution:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


_EXPIRES_AT = ApiToken._meta.get_field("expires_at")


def _active_token(key_hash: str) -> ApiToken | None:
    # Every API request runs this: a hand-written SELECT (read_plan) instead of
    # the ORM's compile saves ~1 ms a request, measured with `bench load`.
    plan = read_plan(ApiToken)
    sql = (
        f"SELECT {plan.columns} FROM {ApiToken._meta.db_table} "
        "WHERE key_hash = %s AND revoked_at IS NULL "
        "AND (expires_at IS NULL OR expires_at > %s) LIMIT 1"
    )
    # Prepared as the ORM stores the column (SQLite compares text, PostgreSQL timestamps).
    now = _EXPIRES_AT.get_db_prep_value(timezone.now(), connection)
    with connection.cursor() as cursor:
        row = cursor.execute(sql, [key_hash, now]).fetchone()
    return None if row is None else plan.instance(ApiToken, row)


def token_revoke(*, token_id: int, revoked_by: str = "") -> ApiToken:
    """Revoke a token (ApiToken.DoesNotExist if there is none); revoking it again changes
    nothing, the first time and who are kept (``token.revoked_by``)."""
    token = ApiToken.objects.get(pk=token_id)
    token.revoke(by=revoked_by)
    return token
