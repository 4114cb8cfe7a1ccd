"""Every dashboard page with something in it, for the checks that walk them all (the phone
layout, axe-core): the screenshots' data (spaceduck.ops.screenshots.seed) plus a pending
note, a second accepted one and an erased namespace."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from memories.write.services import memory_create
from notes.services import save_note
from spaceduck.models import ApiToken
from spaceduck.ops import screenshots
from spaceduck.ops.demo import DEMO_NAMESPACE, DEMO_THREAD_ID
from spaceduck.ops.erasure import erase_namespace


def seed_every_page() -> dict[str, str]:
    """Seed the data and return the pages, by name, as paths (the query string included)."""
    ids = screenshots.seed()
    save_note(DEMO_NAMESPACE, "Ada's laptop is replaced in June.", status="pending", id="pend-1")
    save_note(DEMO_NAMESPACE, "Deploys wait for Monday.", kind="runbook", id="runbook-2")
    # Something to erase, so that the people page lists an erasure.
    memory_create(namespace="user:erased", kind="fact", content="Eve likes tea.", actor="t")
    erase_namespace("user:erased", by="staff:ada")
    token = ApiToken.objects.filter(revoked_at__isnull=True).order_by("pk").first()
    assert token is not None
    fact = urlencode({"namespace": DEMO_NAMESPACE, "key": "onboarding.step"})
    ns = quote(DEMO_NAMESPACE)
    return {
        "viewer": "/",
        "viewer-search": f"/?namespace={ns}&q=deploy+on+a+Friday",
        "memory": f"/memories/{ids['memory']}/",
        "candidates": "/review/memories/",
        "conflicts": "/review/conflicts/",
        "overview": "/overview/",
        "context": f"/context/?namespace={ns}&thread={DEMO_THREAD_ID}&query=deploy",
        "extractions": "/extractions/",
        "extraction": f"/extractions/{ids['extraction']}/",
        "extraction-failed": f"/extractions/{ids['failed']}/",
        "threads": "/threads/",
        "thread": f"/threads/{DEMO_THREAD_ID}/",
        "facts": "/facts/",
        "notes-review": "/notes/review/",
        "notes": "/notes/",
        "note": "/notes/demo-note-1/",
        "settings": "/settings/memory/",
        "tokens": "/tokens/",
        "people": "/people/",
        "people-search": "/people/?q=Ada",
        "person": f"/people/?namespace={ns}",
        "activity": "/activity/",
        # The confirmations, and what a missing object says.
        "memory-delete": f"/memories/{ids['memory']}/delete/",
        "fact-delete": f"/facts/delete/?{fact}",
        "token-revoke": f"/tokens/{token.pk}/revoke/",
        "not-found": "/memories/999999/",
        "no-note": "/notes/no-such-note/",
    }
