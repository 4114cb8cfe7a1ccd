"""The dashboard: staff only, full page or htmx fragment, stored text escaped."""

from __future__ import annotations

import pytest
from django.test import Client

from memories.services import memory_create

pytestmark = pytest.mark.django_db


def test_anonymous_visitors_are_sent_to_the_login(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_non_staff_users_are_sent_to_the_login(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    user = django_user_model.objects.create_user("agent-owner", password="pw-12345678")
    client.force_login(user)
    assert client.get("/").status_code == 302


def test_staff_see_memories_with_stored_text_escaped(staff_client: Client) -> None:
    memory_create(
        namespace="user:alice",
        kind="fact",
        content="<script>alert(1)</script> likes tea",
        actor="t",
    )
    page = staff_client.get("/").content.decode()
    assert "<html" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; likes tea" in page
    assert "<script>alert(1)</script>" not in page


def test_htmx_requests_get_only_the_list_fragment(staff_client: Client) -> None:
    memory_create(namespace="user:alice", kind="fact", content="Alice likes tea.", actor="t")
    memory_create(namespace="user:bob", kind="fact", content="Bob likes coffee.", actor="t")
    response = staff_client.get("/", {"namespace": "user:bob"}, headers={"HX-Request": "true"})
    fragment = response.content.decode()
    assert "<html" not in fragment
    assert fragment.strip().startswith('<section id="memory-list">')
    assert "Bob likes coffee." in fragment
    assert "Alice likes tea." not in fragment
