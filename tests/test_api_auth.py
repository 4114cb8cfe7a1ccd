"""Bearer-token auth: 401 for missing/unknown/revoked, 404 outside grants, hashed storage."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from memories.write.services import memory_create
from spaceduck.core.tokens import InvalidTokenSpec, token_create, token_revoke
from spaceduck.models import ApiToken
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice_memory():  # type: ignore[no-untyped-def]
    return memory_create(
        namespace="user:alice", kind="fact", content="Alice likes jazz.", actor="t"
    )


def test_a_request_without_a_token_is_401_with_a_json_error(client: Client) -> None:
    response = client.get("/api/memories", {"namespace": "user:alice"})
    assert response.status_code == 401
    assert "Bearer" in response.json()["detail"]


def test_an_unknown_token_is_401(client: Client) -> None:
    response = client.get("/api/tokens/me", headers={"Authorization": "Bearer sd_not-a-real-token"})
    assert response.status_code == 401


def test_a_malformed_authorization_header_is_401(client: Client) -> None:
    response = client.get("/api/tokens/me", headers={"Authorization": "Basic Zm9vOmJhcg=="})
    assert response.status_code == 401


def test_a_revoked_token_is_401(owner: Actor) -> None:
    assert owner.get("/api/tokens/me").status_code == 200
    ApiToken.objects.get(name="owner").revoke()
    assert owner.get("/api/tokens/me").status_code == 401


def test_a_namespace_outside_the_grants_is_404(owner: Actor, stranger: Actor, alice_memory) -> None:  # type: ignore[no-untyped-def]
    assert owner.get("/api/memories", {"namespace": "user:alice"}).status_code == 200
    listing = stranger.get("/api/memories", {"namespace": "user:alice"})
    assert listing.status_code == 404
    one = stranger.get(f"/api/memories/{alice_memory.pk}")
    missing = stranger.get("/api/memories/999999")
    # Same answer for "exists elsewhere" and "does not exist": no existence leak.
    assert one.status_code == missing.status_code == 404
    assert stranger.delete(f"/api/memories/{alice_memory.pk}").status_code == 404


def test_a_kind_wildcard_grant_covers_every_namespace_of_that_kind(alice_memory) -> None:  # type: ignore[no-untyped-def]
    users = make_actor(["user:*"], ["read"])
    assert users.get(f"/api/memories/{alice_memory.pk}").status_code == 200
    agents = make_actor(["agent:*"], ["read"])
    assert agents.get(f"/api/memories/{alice_memory.pk}").status_code == 404


def test_a_read_only_token_cannot_delete(alice_memory) -> None:  # type: ignore[no-untyped-def]
    reader = make_actor(["user:alice"], ["read"])
    response = reader.delete(f"/api/memories/{alice_memory.pk}")
    assert response.status_code == 403
    assert "write" in response.json()["detail"]


def test_an_invalid_namespace_is_422_not_500(owner: Actor) -> None:
    response = owner.get("/api/memories", {"namespace": "user:a:b"})
    assert response.status_code == 422
    assert "namespace" in response.json()["detail"]


def test_the_secret_is_stored_only_as_a_hash() -> None:
    created = token_create(name="bot", namespaces=["user:alice"], permissions=["read"])
    token = ApiToken.objects.get(pk=created.token.pk)
    assert token.key_hash == hashlib.sha256(created.secret.encode()).hexdigest()
    with connection.cursor() as cursor:
        dump = "\n".join(str(row) for row in cursor.execute("SELECT * FROM spaceduck_apitoken"))
    assert created.secret not in dump
    assert created.secret[:10] in dump  # the short prefix only, to recognise it


def test_use_updates_last_used_at(owner: Actor) -> None:
    assert ApiToken.objects.get(name="owner").last_used_at is None
    owner.get("/api/tokens/me")
    assert ApiToken.objects.get(name="owner").last_used_at is not None


def test_tokens_me_reports_grants_and_permissions(owner: Actor) -> None:
    body = owner.get("/api/tokens/me").json()
    assert body == {"name": "owner", "namespaces": ["user:alice"], "permissions": ["read", "write"]}


@pytest.mark.parametrize(
    ("namespaces", "permissions", "message"),
    [
        ([], ["read"], "namespace"),
        (["user:alice"], [], "permissions"),
        (["user:alice"], ["read", "fly"], "fly"),
        (["robots:*"], ["read"], "kind"),
        (["user:a:b"], ["read"], "namespace grant"),
    ],
)
def test_bad_token_specs_are_refused(
    namespaces: list[str], permissions: list[str], message: str
) -> None:
    with pytest.raises(InvalidTokenSpec, match=message):
        token_create(name="x", namespaces=namespaces, permissions=permissions)


def test_token_cli_creates_lists_and_revokes() -> None:
    out = StringIO()
    call_command(
        "token",
        "create",
        "--name",
        "bot",
        "--namespace",
        "user:alice",
        "--perm",
        "read,write",
        stdout=out,
    )
    secret = out.getvalue().strip().splitlines()[-1]
    assert secret.startswith("sd_")
    token = ApiToken.objects.get(name="bot")
    assert token.permissions == ["read", "write"]
    listing = StringIO()
    call_command("token", "list", stdout=listing)
    assert "bot" in listing.getvalue()
    assert secret not in listing.getvalue()
    call_command("token", "revoke", str(token.pk), stdout=StringIO())
    assert not ApiToken.objects.get(pk=token.pk).is_active
    with pytest.raises(CommandError, match="no token"):
        call_command("token", "revoke", "424242")


# --- Expiry ----------------------------------------------------------------------------


def _expire(name: str) -> None:
    ApiToken.objects.filter(name=name).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_an_expired_token_is_401_with_the_unknown_tokens_message(
    owner: Actor, client: Client
) -> None:
    assert owner.get("/api/tokens/me").status_code == 200
    _expire("owner")
    expired = owner.get("/api/memories", {"namespace": "user:alice"})
    unknown = client.get("/api/tokens/me", headers={"Authorization": "Bearer sd_not-a-real-token"})
    assert expired.status_code == unknown.status_code == 401
    # The holder learns nothing about the token (expired, revoked, unknown: one answer).
    assert expired.json() == unknown.json()
    assert "not revoked, not expired" in expired.json()["detail"]
    assert ApiToken.objects.get(name="owner").state == "expired"


def test_a_token_with_a_future_expiry_works_until_then() -> None:
    created = token_create(
        name="soon",
        namespaces=["user:alice"],
        permissions=["read"],
        expires_at=timezone.now() + timedelta(hours=1),
        created_by="staff:ada",
    )
    agent = Actor(secret=created.secret, client=Client())
    assert agent.get("/api/tokens/me").status_code == 200
    token = ApiToken.objects.get(pk=created.token.pk)
    assert (token.state, token.created_by, token.is_active) == ("active", "staff:ada", True)


def test_an_expiry_in_the_past_or_an_over_long_name_is_refused() -> None:
    with pytest.raises(InvalidTokenSpec, match="in the past"):
        token_create(
            name="late",
            namespaces=["user:alice"],
            permissions=["read"],
            expires_at=timezone.now() - timedelta(minutes=1),
        )
    with pytest.raises(InvalidTokenSpec, match="at most 100 characters"):
        token_create(name="n" * 101, namespaces=["user:alice"], permissions=["read"])
    assert not ApiToken.objects.exists()


def test_revoked_wins_over_expired_and_is_recorded_once() -> None:
    token = token_create(name="t", namespaces=["user:alice"], permissions=["read"]).token
    assert token_revoke(token_id=token.pk, revoked_by="staff:ada").revoked_by == "staff:ada"
    again = token_revoke(token_id=token.pk, revoked_by="cli")
    assert again.revoked_by == "staff:ada"  # the first revoke is kept
    _expire("t")
    assert ApiToken.objects.get(pk=token.pk).state == "revoked"


def _cli(*args: str) -> str:
    out = StringIO()
    call_command("token", *args, stdout=out)
    return out.getvalue()


def test_token_cli_expiry_in_days_or_on_a_date_and_who_did_it() -> None:
    out = _cli("create", "--name", "week", "--namespace", "user:alice", "--expires-in", "7")
    week = ApiToken.objects.get(name="week")
    assert week.created_by == "cli"
    assert week.expires_at is not None
    assert timedelta(days=6, hours=23) < week.expires_at - timezone.now() <= timedelta(days=7)
    assert f"expires {week.expires_at:%Y-%m-%d %H:%M} UTC" in out

    _cli("create", "--name", "dated", "--namespace", "user:alice", "--expires", "2999-01-31")
    dated = ApiToken.objects.get(name="dated")
    assert dated.expires_at == datetime(2999, 1, 31, tzinfo=UTC)  # the start of that day
    _cli(
        "create",
        "--name",
        "timed",
        "--namespace",
        "user:alice",
        "--expires",
        "2999-01-31T18:00+01:00",
    )
    assert ApiToken.objects.get(name="timed").expires_at == datetime(2999, 1, 31, 17, tzinfo=UTC)

    _expire("dated")
    listing = _cli("list")
    assert "expires 2999-01-31 17:00 UTC" in listing
    assert "\texpired\texpired " in listing  # the state and when
    assert "no expiry" not in listing

    _cli("revoke", str(week.pk))
    assert ApiToken.objects.get(pk=week.pk).revoked_by == "cli"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--expires-in", "0"], "1 to 3650 days"),
        (["--expires-in", "99999"], "1 to 3650 days"),
        (["--expires", "2001-01-01"], "in the past"),
        (["--expires", "next tuesday"], "ISO date"),
    ],
)
def test_token_cli_refuses_a_bad_expiry(args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        _cli("create", "--name", "x", "--namespace", "user:alice", *args)
    assert not ApiToken.objects.exists()
