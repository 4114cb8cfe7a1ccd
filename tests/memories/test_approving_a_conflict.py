"""Approving a candidate that waits in the conflict inbox (QA issue 40, bug 1): the person
says the new memory is right, so its conflict is decided as replace under their name, from
every place one approves (the candidate queue one by one or in bulk, with or without htmx,
the memory's page, the admin); the queue's Undo undoes that decision too."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from memories.models import Conflict, Memory, MemoryEvent
from tests.conftest import Actor
from tests.memories.test_conflict_inbox import flip
from tests.memories.test_why_waits import nav_count

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def assert_replaced(conflict: dict[str, Any], actor: str = "staff:staff") -> None:
    decided = Conflict.objects.get(pk=conflict["id"])
    assert (decided.status, decided.resolution, decided.resolved_by) == (
        "resolved",
        "replace",
        actor,
    )
    old = Memory.objects.get(pk=conflict["old"]["id"])
    new = Memory.objects.get(pk=conflict["new"]["id"])
    assert (old.status, old.superseded_by_id) == ("superseded", new.pk)
    assert new.status == "active"


def assert_open_again(conflict: dict[str, Any]) -> None:
    reopened = Conflict.objects.get(pk=conflict["id"])
    assert (reopened.status, reopened.resolution) == ("open", "")
    old = Memory.objects.get(pk=conflict["old"]["id"])
    assert (old.status, old.superseded_by_id) == ("active", None)
    assert Memory.objects.get(pk=conflict["new"]["id"]).status == "candidate"


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
@pytest.mark.parametrize("how", ["row", "bulk"])
def test_approving_in_the_queue_replaces_and_its_undo_reopens_the_pair(
    owner: Actor, staff_client: Client, htmx: bool, how: str
) -> None:
    conflict = flip(owner)
    new_id = conflict["new"]["id"]
    headers = HTMX if htmx else {}
    before = staff_client.get("/nav/counts/", headers=HTMX).content.decode()
    assert nav_count(before, "conflicts-nav") == "1"
    data = (
        {"row": f"approve:{new_id}"} if how == "row" else {"decision": "approve", "ids": [new_id]}
    )
    answer = staff_client.post("/review/memories/", data, headers=headers)
    assert answer.status_code == (200 if htmx else 302)
    assert_replaced(conflict)
    # The history says why the old one went: this person's decision on the pair.
    [gone] = MemoryEvent.objects.filter(memory_id=conflict["old"]["id"], event="superseded")
    assert gone.actor == "staff:staff"
    assert gone.reason == f"conflict {conflict['id']}: replaced (the new one approved)"
    shown = answer if htmx else staff_client.get(answer["Location"])
    html = shown.content.decode()
    if htmx:
        assert nav_count(html, "conflicts-nav") == ""  # the count follows the decision
    inbox = staff_client.get("/review/conflicts/").content.decode()
    assert f'id="conflict-{conflict["id"]}"' not in inbox
    # The queue's Undo puts the pair back as it was, waiting in the inbox.
    token = re.search(r'name="undo" value="([^"]+)"', html)
    assert token is not None
    undone = staff_client.post("/review/memories/", {"undo": token.group(1)}, headers=headers)
    assert undone.status_code == (200 if htmx else 302)
    assert_open_again(conflict)
    reasons = MemoryEvent.objects.filter(memory_id=conflict["old"]["id"], event="undone")
    assert [e.reason for e in reasons] == [f"undo of conflict {conflict['id']}: replace"]
    if htmx:
        assert nav_count(undone.content.decode(), "conflicts-nav") == "1"
    inbox = staff_client.get("/review/conflicts/").content.decode()
    assert f'id="conflict-{conflict["id"]}"' in inbox


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_approving_on_the_memorys_page_replaces(
    owner: Actor, staff_client: Client, htmx: bool
) -> None:
    conflict = flip(owner)
    new_id = conflict["new"]["id"]
    answer = staff_client.post(
        f"/memories/{new_id}/status/", {"status": "active"}, headers=HTMX if htmx else {}
    )
    assert answer.status_code == (200 if htmx else 302)
    assert_replaced(conflict)
    page = staff_client.get(f"/memories/{new_id}/").content.decode()
    assert 'id="open-conflict"' not in page
    assert "Undo this decision" in page  # undone there like any replace


def test_approving_in_the_admin_replaces(owner: Actor, admin_client: Client) -> None:
    conflict = flip(owner)
    answer = admin_client.post(
        "/admin/memories/memory/",
        {"action": "approve", "_selected_action": [conflict["new"]["id"]]},
        follow=True,
    )
    assert answer.status_code == 200
    assert_replaced(conflict, actor="staff:admin")


def test_rejecting_in_the_queue_still_closes_the_pair(owner: Actor, staff_client: Client) -> None:
    conflict = flip(owner)
    staff_client.post("/review/memories/", {"row": f"reject:{conflict['new']['id']}"})
    assert Memory.objects.get(pk=conflict["old"]["id"]).status == "active"
    inbox = staff_client.get("/review/conflicts/").content.decode()
    assert f'id="conflict-{conflict["id"]}"' not in inbox
