"""Bearer-token auth: 401 for missing/unknown/revoked, 404 outside grants, hashed storage."""

from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client

from memories.services import memory_create
from spaceduck.models import ApiToken
from spaceduck.tokens import InvalidTokenSpec, token_create
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
