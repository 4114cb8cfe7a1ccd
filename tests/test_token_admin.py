"""API tokens in the admin: view, filter and revoke; never created or edited there."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from spaceduck.core.tokens import token_create
from spaceduck.models import ApiToken, VectorIndexState
from tests.conftest import make_actor

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/spaceduck/apitoken/"


def test_revoking_a_token_in_the_admin_stops_it_authenticating(admin_client: Client) -> None:
    agent = make_actor(["user:alice"], ["read"], name="agent")
    assert agent.get("/api/memories", {"namespace": "user:alice"}).status_code == 200
    token = ApiToken.objects.get(name="agent")

    response = admin_client.post(
        CHANGELIST, {"action": "revoke", "_selected_action": [token.pk]}, follow=True
    )
    assert "Revoked: agent." in [str(m) for m in response.context["messages"]]
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert token.revoked_by == "staff:admin"
    assert agent.get("/api/memories", {"namespace": "user:alice"}).status_code == 401

    revoked_at = token.revoked_at
    again = admin_client.post(
        CHANGELIST, {"action": "revoke", "_selected_action": [token.pk]}, follow=True
    )
    assert "Revoked already: agent." in [str(m) for m in again.context["messages"]]
    token.refresh_from_db()
    assert token.revoked_at == revoked_at


def test_tokens_cannot_be_added_edited_or_deleted_in_the_admin(admin_client: Client) -> None:
    token = token_create(name="agent", namespaces=["user:alice"], permissions=["read"]).token
    url = f"{CHANGELIST}{token.pk}/"
    assert admin_client.get(CHANGELIST + "add/").status_code == 403
    assert admin_client.get(url + "change/").status_code == 200  # view only
    admin_client.post(url + "change/", {"name": "x", "namespaces": '["*"]'})
    assert admin_client.post(url + "delete/", {"post": "yes"}).status_code == 403
    token.refresh_from_db()
    assert (token.name, token.namespaces) == ("agent", ["user:alice"])
    page = admin_client.get(CHANGELIST).content.decode()
    assert 'value="delete_selected"' not in page
    assert 'value="revoke"' in page


def test_the_token_list_filters_by_state_and_permission(admin_client: Client) -> None:
    token_create(name="reader-token", namespaces=["user:alice"], permissions=["read"])
    approver = token_create(
        name="approver-token", namespaces=["user:*"], permissions=["read", "approve"]
    ).token
    approver.revoke()
    token_create(name="old-token", namespaces=["user:bob"], permissions=["read"])
    ApiToken.objects.filter(name="old-token").update(expires_at=timezone.now())

    def names(**params: str) -> set[str]:
        response = admin_client.get(CHANGELIST, params)
        assert response.status_code == 200
        page = response.content.decode()
        return {name for name in ("reader-token", "approver-token", "old-token") if name in page}

    assert names() == {"reader-token", "approver-token", "old-token"}
    assert names(state="active") == {"reader-token"}
    assert names(state="expired") == {"old-token"}
    assert names(state="revoked") == {"approver-token"}
    assert names(permission="approve") == {"approver-token"}
    assert names(permission="read", q="reader") == {"reader-token"}


def test_the_token_page_shows_expiry_and_who_made_and_revoked_it(admin_client: Client) -> None:
    token = token_create(
        name="agent", namespaces=["user:alice"], permissions=["read"], created_by="cli"
    ).token
    token.revoke(by="staff:ada")
    page = admin_client.get(f"{CHANGELIST}{token.pk}/change/").content.decode()
    for label in ("Expires at", "Created by", "Revoked by", "staff:ada", "cli"):
        assert label in page
    listing = admin_client.get(CHANGELIST).content.decode()
    assert "revoked" in listing
    assert "Expires at" in listing


def test_the_vector_index_state_is_read_only(admin_client: Client) -> None:
    state = VectorIndexState.objects.first()
    assert state is not None
    url = f"/admin/spaceduck/vectorindexstate/{state.pk}/"
    assert admin_client.get(url + "change/").status_code == 200
    assert admin_client.post(url + "delete/", {"post": "yes"}).status_code == 403
    assert admin_client.get("/admin/spaceduck/vectorindexstate/add/").status_code == 403
