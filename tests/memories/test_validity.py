"""When what a memory says holds (valid_from, valid_until) and how its claim was said (mood).

Past its valid_until a memory leaves recall and the context block at once, as past
expires_at; the staleness job then marks it stale, and being found again does not make it
active while it is past. Written through the API, the extraction's write path and the
admin; shown on the memory's page and in the viewer's list.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from memories.extraction.claims import Claim
from memories.extraction.types import Candidate, Verdict
from memories.models import MaintenanceRun, Memory, MemoryEvent, MemoryStatus
from memories.upkeep.staleness import mark_stale, reactivate
from memories.write.ingest import memory_write
from memories.write.runner import verdict_json
from memories.write.services import create_thread, memory_create
from tests.conftest import Actor
from tests.memories.conftest import Clock

pytestmark = pytest.mark.django_db
NS = "user:alice"
HTMX = {"HX-Request": "true"}
START = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
HOTEL = "The user is staying at the Lutetia hotel."
DASH = "\u2013"  # between the dates in the viewer's list


def write(actor: Actor, content: str, **fields: object):  # type: ignore[no-untyped-def]
    return actor.post(
        "/api/memories", {"namespace": NS, "kind": "fact", "content": content, **fields}
    )


def stored(actor: Actor, content: str, **fields: object) -> dict[str, Any]:
    response = write(actor, content, **fields)
    assert response.status_code == 201, response.content
    assert response.json()["decision"] == "stored", response.json()
    return response.json()["memory"]


def searched(actor: Actor, q: str) -> list[int]:
    response = actor.get("/api/memories/search", {"namespace": NS, "q": q})
    assert response.status_code == 200, response.content
    return [hit["memory"]["id"] for hit in response.json()["memories"]]


def in_context(actor: Actor, query: str) -> list[int]:
    thread_id = create_thread(NS, title="t").id
    response = actor.post("/api/context", {"thread_id": thread_id, "query": query})
    assert response.status_code == 200, response.content
    return [memory["id"] for memory in response.json()["memories"]]


def iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


# --- recall and the context block ------------------------------------------------------


def test_a_memory_past_its_valid_until_is_neither_recalled_nor_in_the_context(
    owner: Actor,
) -> None:
    past = stored(owner, HOTEL, valid_until="2020-05-01T00:00:00Z")
    assert past["valid_until"] == "2020-05-01T00:00:00Z"
    assert past["status"] == "active"  # kept as what once held, not served
    assert searched(owner, "Lutetia hotel") == []
    assert past["id"] not in in_context(owner, "Lutetia hotel")


def test_a_memory_valid_until_a_future_date_is_recalled_and_in_the_context(owner: Actor) -> None:
    future = stored(
        owner, HOTEL, valid_from="2020-05-01T00:00:00Z", valid_until="2999-01-01T00:00:00+02:00"
    )
    assert (future["valid_from"], future["valid_until"]) == (
        "2020-05-01T00:00:00Z",
        "2998-12-31T22:00:00Z",  # stored in UTC
    )
    assert searched(owner, "Lutetia hotel") == [future["id"]]
    assert future["id"] in in_context(owner, "Lutetia hotel")


def test_a_constraint_past_its_valid_until_leaves_the_context(owner: Actor) -> None:
    rule = {"kind": "procedure", "procedure_subtype": "constraint"}
    gone = stored(
        owner, "Always answer the user in French.", valid_until="2020-01-01T00:00:00Z", **rule
    )
    kept = stored(
        owner, "Never mention the user's employer.", valid_until="2999-01-01T00:00:00Z", **rule
    )
    chosen = in_context(owner, "quantum chromodynamics")
    assert kept["id"] in chosen
    assert gone["id"] not in chosen


# --- the staleness job ---------------------------------------------------------------------


def test_the_staleness_job_marks_a_memory_stale_when_its_validity_passes(
    owner: Actor, clock: Clock
) -> None:
    clock.now = START
    memory = stored(owner, HOTEL, valid_until="2030-01-03T00:00:00Z")
    assert searched(owner, "Lutetia hotel") == [memory["id"]]
    clock.now = datetime(2030, 1, 3, tzinfo=UTC)  # at valid_until: no longer holds
    assert searched(owner, "Lutetia hotel") == []  # at once, before the job runs

    assert mark_stale() == 1
    row = Memory.objects.get(pk=memory["id"])
    assert row.status == MemoryStatus.STALE
    event = MemoryEvent.objects.filter(memory_id=row.pk).latest("id")
    assert (event.event, event.actor, event.reason) == (
        "stale",
        "maintenance:staleness",
        "valid until 2030-01-03 00:00 UTC passed",
    )
    run = MaintenanceRun.objects.get(processor="staleness")
    assert (run.changes["expired"], run.changes["marked_stale"]) == (1, 1)
    assert mark_stale() == 0  # marked once

    # Found again while past its validity: it stays stale (recall's fallback to stale
    # memories does not bring it back either).
    assert reactivate(row, actor="test") is False
    assert searched(owner, "Lutetia hotel") == []
    assert Memory.objects.get(pk=row.pk).status == MemoryStatus.STALE

    # Its validity extended: recalled again, and made active by being recalled.
    extended = owner.patch(f"/api/memories/{row.pk}", {"valid_until": "2030-02-01T00:00:00Z"})
    assert extended.status_code == 200, extended.content
    assert searched(owner, "Lutetia hotel") == [row.pk]
    assert Memory.objects.get(pk=row.pk).status == MemoryStatus.ACTIVE


def test_the_job_leaves_memories_without_a_validity_or_still_valid_alone(clock: Clock) -> None:
    clock.now = START
    open_ended = memory_create(namespace=NS, kind="fact", content="Alice keeps bees.", actor="t")
    valid = memory_create(namespace=NS, kind="fact", content="Alice is in Rome.", actor="t")
    Memory.objects.filter(pk=valid.pk).update(valid_until=START + timedelta(seconds=1))
    assert mark_stale() == 0
    statuses = set(
        Memory.objects.filter(pk__in=[open_ended.pk, valid.pk]).values_list("status", flat=True)
    )
    assert statuses == {"active"}


# --- bad validity ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"valid_from": "2030-01-02T00:00:00Z", "valid_until": "2030-01-01T00:00:00Z"},
        {"valid_from": "2030-01-01T00:00:00Z", "valid_until": "2030-01-01T00:00:00Z"},
        # The same instant written in two zones.
        {"valid_from": "2030-01-01T02:00:00+02:00", "valid_until": "2030-01-01T00:00:00Z"},
    ],
)
def test_a_validity_that_does_not_end_after_it_starts_is_refused(
    owner: Actor, fields: dict[str, str]
) -> None:
    response = write(owner, HOTEL, **fields)
    assert response.status_code == 422
    assert (
        "valid_until (2030-01-01 00:00 UTC) must be after valid_from" in response.json()["detail"]
    )
    assert not Memory.objects.exists()


@pytest.mark.parametrize("value", ["tomorrow", "2030-01-01", "2030-01-01T00:00:00", 5])
def test_a_validity_that_is_not_a_datetime_is_refused(owner: Actor, value: object) -> None:
    response = write(owner, HOTEL, valid_until=value)
    assert response.status_code == 422
    assert response.json()["detail"]


def test_an_edit_is_checked_against_the_stored_validity(owner: Actor) -> None:
    memory = stored(owner, HOTEL, valid_from="2030-01-10T00:00:00Z")
    url = f"/api/memories/{memory['id']}"
    refused = owner.patch(url, {"valid_until": "2030-01-05T00:00:00Z"})
    assert refused.status_code == 422
    assert (
        "valid_until: valid_until (2030-01-05 00:00 UTC) must be after valid_from"
        in (refused.json()["detail"])
    )
    assert Memory.objects.get(pk=memory["id"]).valid_until is None
    edited = owner.patch(url, {"valid_until": "2030-01-20T00:00:00Z"})
    assert edited.status_code == 200
    assert edited.json()["valid_until"] == "2030-01-20T00:00:00Z"
    assert owner.patch(url, {"valid_from": "2030-02-01T00:00:00Z"}).status_code == 422
    cleared = owner.patch(url, {"valid_from": None, "valid_until": None})
    assert (cleared.json()["valid_from"], cleared.json()["valid_until"]) == (None, None)
    history = owner.get(f"{url}/history").json()["events"]
    assert history[-2]["data"]["before"] == {"valid_until": None}


# --- the extraction's write path --------------------------------------------------------------


def test_a_candidate_s_claim_mood_and_validity_are_stored() -> None:
    since, until = datetime(2030, 3, 1, tzinfo=UTC), datetime(2999, 9, 1, tzinfo=UTC)
    claim = Claim("user's sister", "location", "rome", mood="reported")
    verdict = memory_write(
        Candidate(
            kind="fact",
            content="The user's sister lives in Rome.",
            stage="rules",
            claim=claim,
            valid_from=since,
            valid_until=until,
        ),
        namespace=NS,
        actor="test",
    )
    assert verdict.decision == "stored", verdict
    assert verdict.memory_id is not None
    memory = Memory.objects.get(pk=verdict.memory_id)
    assert (memory.claim_subject, memory.claim_attribute, memory.claim_value) == (
        "user's sister",
        "location",
        "rome",
    )
    assert memory.claim_mood == "reported"
    assert memory.claim == {
        "subject": "user's sister",
        "attribute": "location",
        "value": "rome",
        "polarity": "affirmed",
        "mood": "reported",
    }
    assert (memory.valid_from, memory.valid_until) == (since, until)


def test_the_extraction_record_holds_the_claim_s_mood_and_the_validity_as_text() -> None:
    candidate = Candidate(
        kind="fact",
        content="The user is in Lisbon.",
        claim=Claim("user", "location", "lisbon", mood="asserted"),
        valid_until=datetime(2030, 1, 3, tzinfo=UTC),
    )
    record = json.loads(json.dumps(verdict_json(Verdict(candidate, "stored"))))
    assert record["candidate"]["valid_until"] == "2030-01-03T00:00:00+00:00"
    assert record["candidate"]["valid_from"] is None
    assert record["candidate"]["claim"]["mood"] == "asserted"


def test_an_edit_reads_the_claim_again_with_its_mood(owner: Actor) -> None:
    memory = stored(owner, "The user lives in Lisbon.")
    assert memory["claim"]["mood"] == "asserted"
    Memory.objects.filter(pk=memory["id"]).update(claim_mood="reported")
    edited = owner.patch(f"/api/memories/{memory['id']}", {"content": "The user lives in Porto."})
    assert edited.json()["claim"] == {
        "subject": "user",
        "attribute": "location",
        "value": "porto",
        "polarity": "affirmed",
        "mood": "asserted",
    }


# --- the dashboard and the admin ---------------------------------------------------------------


def claimed(**fields: object) -> Memory:
    memory = memory_create(
        namespace=NS, kind="fact", content="The user's sister lives in Rome.", actor="t"
    )
    columns = {
        "claim_subject": "user's sister",
        "claim_attribute": "location",
        "claim_value": "rome",
        "claim_polarity": "affirmed",
        "claim_mood": "reported",
        **fields,
    }
    Memory.objects.filter(pk=memory.pk).update(**columns)
    memory.refresh_from_db()
    return memory


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_the_memory_page_shows_the_claim_its_mood_and_the_validity(
    staff_client: Client, headers: dict[str, str]
) -> None:
    memory = claimed(
        valid_from=datetime(2030, 3, 1, 8, 30, tzinfo=UTC),
        valid_until=datetime(2999, 9, 1, tzinfo=UTC),
    )
    html = staff_client.get(f"/memories/{memory.pk}/", headers=headers).content.decode()
    assert "<dt>Holder</dt><dd><code>user&#x27;s sister</code></dd>" in html
    assert "<dt>Predicate</dt><dd><code>location</code></dd>" in html
    assert "<dt>Value</dt><dd><q>rome</q></dd>" in html
    assert '<dt>Polarity</dt><dd><span class="badge">affirmed</span></dd>' in html
    assert '<dt>Mood</dt><dd><span class="badge mood-reported">reported</span></dd>' in html
    assert "2030-03-01 08:30</span>" in html
    assert "2999-09-01 00:00</span>" in html
    assert "expired" not in html


def test_the_memory_page_says_expired_once_the_validity_passed(staff_client: Client) -> None:
    memory = claimed(valid_until=datetime(2020, 1, 1, tzinfo=UTC))
    html = staff_client.get(f"/memories/{memory.pk}/").content.decode()
    assert 'from <span title="">always</span>' in html
    assert "2020-01-01 00:00</span>" in html
    assert '<span class="badge expired">expired</span>' in html
    plain = memory_create(namespace=NS, kind="fact", content="Alice keeps bees.", actor="t")
    html = staff_client.get(f"/memories/{plain.pk}/").content.decode()
    assert "holds until something replaces it" in html
    assert "expired" not in html


def test_the_viewer_list_shows_the_dates_compactly(staff_client: Client) -> None:
    claimed(
        valid_from=datetime(2030, 3, 1, tzinfo=UTC), valid_until=datetime(2030, 9, 1, tzinfo=UTC)
    )
    gone = memory_create(namespace=NS, kind="fact", content="Alice is in Oslo.", actor="t")
    Memory.objects.filter(pk=gone.pk).update(valid_until=datetime(2020, 1, 1, tzinfo=UTC))
    memory_create(namespace=NS, kind="fact", content="Alice keeps bees.", actor="t")
    html = staff_client.get("/", {"namespace": NS}).content.decode()
    assert f">2030-03-01{DASH}2030-09-01</span>" in html
    assert f">{DASH}2020-01-01 expired</span>" in html
    assert html.count('class="badge validity') == 2


def _admin_change(memory: Memory, **fields: str) -> dict[str, object]:
    return {
        "status": memory.status,
        "kind": memory.kind,
        "content": memory.content,
        "title": memory.title,
        "summary": memory.summary,
        "tags": ", ".join(memory.tags),
        "importance": memory.importance,
        "confidence": memory.confidence,
        "procedure_subtype": memory.procedure_subtype,
        "scope": memory.scope,
        "scope_id": memory.scope_id,
        **{
            f"{name}_{part}": ""
            for name in ("occurred_at", "expires_at", "valid_from", "valid_until")
            for part in (0, 1)
        },
        **fields,
    }


def test_the_admin_shows_the_claim_and_edits_the_validity(admin_client: Client) -> None:
    memory = claimed()
    url = f"/admin/memories/memory/{memory.pk}/change/"
    page = admin_client.get(url).content.decode()
    assert "mood reported" in page
    assert 'name="valid_until_0"' in page
    refused = admin_client.post(
        url,
        _admin_change(
            memory,
            valid_from_0="2030-01-10",
            valid_from_1="00:00:00",
            valid_until_0="2030-01-05",
            valid_until_1="00:00:00",
        ),
    )
    assert refused.status_code == 200  # the form again, with the error beside the field
    assert "must be after valid_from" in refused.content.decode()
    assert Memory.objects.get(pk=memory.pk).valid_from is None
    saved = admin_client.post(
        url, _admin_change(memory, valid_until_0="2030-01-05", valid_until_1="00:00:00")
    )
    assert saved.status_code == 302
    assert Memory.objects.get(pk=memory.pk).valid_until == datetime(2030, 1, 5, tzinfo=UTC)


def test_a_fact_said_again_after_its_validity_passed_holds_again(owner: Actor) -> None:
    # The same words a second time (an exact duplicate): the old memory is seen again and
    # takes the new statement's validity, instead of staying expired and out of recall.
    past = stored(owner, HOTEL, valid_until="2020-05-01T00:00:00Z")
    again = write(owner, HOTEL, valid_until="2999-01-01T00:00:00Z")
    assert again.status_code in (200, 201), again.content
    memory = owner.get(f"/api/memories/{past['id']}").json()
    assert memory["valid_until"] == "2999-01-01T00:00:00Z"
    assert searched(owner, "Lutetia hotel") == [past["id"]]
    assert past["id"] in in_context(owner, "Lutetia hotel")


def test_a_fact_said_again_without_a_bound_after_it_expired_no_longer_expires(
    owner: Actor,
) -> None:
    past = stored(owner, HOTEL, valid_until="2020-05-01T00:00:00Z")
    write(owner, HOTEL)
    memory = owner.get(f"/api/memories/{past['id']}").json()
    assert memory["valid_until"] is None
    assert searched(owner, "Lutetia hotel") == [past["id"]]
