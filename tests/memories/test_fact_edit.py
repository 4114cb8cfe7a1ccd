"""Facts editable from the dashboard (issue 40 item 10): the value as JSON (validated), the
TTL changed or removed, saved through ``services.set_fact`` as ``PUT /api/facts`` is, and
recorded (a FactEvent: who, when, which parts; never the value). Test client, with and
without htmx; every refusal is the form again with the message and a 4xx."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from urllib.parse import quote, urlencode

import pytest
from django.test import Client

from memories.models import Fact, FactEvent
from memories.write.services import set_fact
from tests.conftest import Actor
from tests.memories.conftest import Clock

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
NS = "user:alice"
EDIT = "/facts/edit/"


def url(key: str = "prefs/theme", namespace: str = NS) -> str:
    return EDIT + "?" + urlencode({"namespace": namespace, "key": key})


def post(client: Client, headers: dict[str, str], **fields: object):  # type: ignore[no-untyped-def]
    data = {"namespace": NS, "key": "prefs/theme", "value": '"dark"', "ttl_ms": ""} | fields
    return client.post(EDIT, data, headers=headers)


def fact() -> Fact:
    return Fact.objects.get(namespace=NS, key="prefs/theme")


def test_the_list_offers_an_edit_for_each_fact(staff_client: Client) -> None:
    set_fact(NS, "prefs/theme", {"mode": "dark"})
    html = staff_client.get("/facts/").content.decode()
    back = urlencode({"next": "/facts/"})
    assert f'href="{url().replace("&", "&amp;")}&amp;{back}"' in html


# --- QA walk of issue 40, item 13: back to the page it came from; where the focus goes ---


@pytest.mark.parametrize("headers", [{}, HTMX])
@pytest.mark.parametrize("listed", ["/facts/", f"/facts/?{urlencode({'namespace': NS})}"])
def test_the_edit_page_goes_back_to_the_list_it_came_from(
    staff_client: Client, headers: dict[str, str], listed: str
) -> None:
    set_fact(NS, "prefs/theme", "light")
    html = staff_client.get(listed, headers=headers).content.decode()
    found = re.search(r'<a class="button" href="([^"]+)"', html)
    assert found is not None
    edit = found.group(1).replace("&amp;", "&")
    assert f"next={quote(listed, safe='')}" in edit
    page = staff_client.get(edit).content.decode()  # the edit page, opened from the list
    assert f'name="next" value="{listed.replace("&", "&amp;")}"' in page
    assert f'href="{listed.replace("&", "&amp;")}"' in page  # its Cancel
    saved = post(staff_client, {}, next=listed)
    assert (saved.status_code, saved["Location"]) == (302, listed)


def test_inline_edit_puts_the_focus_in_the_form_then_on_the_saved_row(
    staff_client: Client,
) -> None:
    set_fact(NS, "prefs/theme", "light")
    form = staff_client.get(url(), headers=HTMX).content.decode()
    assert re.search(r"<textarea [^>]*autofocus", form)  # the first field
    refused = post(staff_client, HTMX, ttl_ms="soon").content.decode()
    assert re.search(
        r'<input [^>]*name="ttl_ms"[^>]*autofocus|<input [^>]*autofocus[^>]*name="ttl_ms"', refused
    )
    assert not re.search(r"<textarea [^>]*autofocus", refused)  # the field that is wrong
    saved = post(staff_client, HTMX, next="/facts/").content.decode()
    edit = re.search(r'<a class="button" href="([^"]+)" autofocus', saved)
    assert edit is not None  # the saved row's Edit link, which htmx focuses
    assert "next=%2Ffacts%2F" in edit.group(1)
    listed = staff_client.get("/facts/").content.decode()
    assert "autofocus" not in listed


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_the_form_shows_the_value_as_json_and_the_ttl(
    staff_client: Client, headers: dict[str, str]
) -> None:
    set_fact(NS, "prefs/theme", {"mode": "dark", "sound": False}, ttl_ms=60_000)
    response = staff_client.get(url(), headers=headers)
    assert response.status_code == 200
    html = response.content.decode()
    assert ("<html" in html) is not bool(headers)  # htmx: the form alone, inline in the row
    assert "{\n  &quot;mode&quot;: &quot;dark&quot;,\n  &quot;sound&quot;: false\n}" in html
    assert 'name="ttl_ms" value="60000"' in html


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_a_save_goes_through_set_fact_and_is_recorded(
    staff_client: Client, headers: dict[str, str], clock: Clock
) -> None:
    set_fact(NS, "prefs/theme", "light", ttl_ms=60_000, actor="token:agent")
    clock.advance(seconds=30)  # within its TTL
    response = post(staff_client, headers, value='{"mode": "dark"}', ttl_ms="3600000")
    saved = fact()
    assert saved.value == {"mode": "dark"}
    assert saved.ttl_ms == 3_600_000
    assert saved.expires_at == clock.now + timedelta(hours=1)  # counted from this save
    if headers:
        assert response.status_code == 200
        # The whole row comes back with its new value, in place of the old one.
        assert response["HX-Retarget"].startswith("#fact-")
        html = response.content.decode()
        assert '<tr id="fact-' in html
        assert "saved" in html  # the flash, out of band
        assert "by <code>staff:staff</code>" in html
    else:
        assert response.status_code == 302
        assert response["Location"] == "/facts/?" + urlencode({"namespace": NS})
    created, edited = FactEvent.objects.filter(fact_id=saved.pk).order_by("id")
    assert (created.event, created.actor) == ("created", "token:agent")
    assert (edited.event, edited.actor, edited.namespace) == ("edited", "staff:staff", NS)
    assert edited.data == {
        "changed": ["value", "ttl_ms"],
        "ttl_ms": {"from": 60_000, "to": 3_600_000},
    }
    assert "dark" not in json.dumps(edited.data)  # no value kept in the record
    listed = staff_client.get("/facts/").content.decode()
    assert "by <code>staff:staff</code>" in listed  # the list says who set it last


def test_an_empty_ttl_removes_it(staff_client: Client) -> None:
    set_fact(NS, "prefs/theme", "dark", ttl_ms=60_000)
    assert post(staff_client, {}, value='"dark"', ttl_ms="").status_code == 302
    assert (fact().ttl_ms, fact().expires_at) == (None, None)
    last = FactEvent.objects.filter(fact_id=fact().pk).order_by("id").last()
    assert last is not None
    assert last.data == {"changed": ["ttl_ms"], "ttl_ms": {"from": 60_000, "to": None}}


@pytest.mark.parametrize("headers", [{}, HTMX])
@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        ({"value": "{'mode': 'dark'}"}, 400, "not valid JSON"),
        ({"value": "dark"}, 400, "text goes in double quotes"),
        ({"value": ""}, 400, "This field is required"),
        ({"ttl_ms": "-5"}, 400, "greater than or equal to 0"),
        ({"ttl_ms": "soon"}, 400, "Enter a whole number"),
        ({"value": json.dumps("my PIN is 4821")}, 422, "rejected: secret: pin in value"),
    ],
)
def test_a_refused_value_is_the_form_again_with_the_message(
    staff_client: Client,
    headers: dict[str, str],
    fields: dict[str, str],
    status: int,
    message: str,
) -> None:
    set_fact(NS, "prefs/theme", "light", ttl_ms=60_000)
    events = FactEvent.objects.count()
    response = post(staff_client, headers, **fields)
    assert response.status_code == status
    html = response.content.decode()
    assert message in html
    assert 'name="value"' in html  # the form, to correct
    assert ("<html" in html) is not bool(headers)
    assert (fact().value, fact().ttl_ms) == ("light", 60_000)
    assert FactEvent.objects.count() == events


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_a_missing_fact_or_field_is_a_4xx_with_the_reason(
    staff_client: Client, headers: dict[str, str]
) -> None:
    missing = staff_client.get(url("nope"), headers=headers)
    assert missing.status_code == 404
    assert "not found" in missing.content.decode()
    gone = post(staff_client, headers, key="nope")
    assert gone.status_code == 404
    assert not Fact.objects.filter(key="nope").exists()  # an edit never creates one
    no_key = staff_client.get(EDIT + "?" + urlencode({"namespace": NS}), headers=headers)
    assert no_key.status_code == 400
    assert "key is required" in no_key.content.decode()
    assert staff_client.put(EDIT).status_code == 405


def test_an_anonymous_visitor_cannot_edit(client: Client) -> None:
    set_fact(NS, "prefs/theme", "light")
    response = client.post(EDIT, {"namespace": NS, "key": "prefs/theme", "value": '"x"'})
    assert response.status_code == 302
    assert fact().value == "light"


def test_put_records_the_same_way(owner: Actor) -> None:
    answer = owner.put(f"/api/facts/{NS}/prefs/theme", {"value": "dark"})
    assert answer.status_code == 200
    again = owner.put(f"/api/facts/{NS}/prefs/theme", {"value": "dark", "ttl_ms": 1000})
    assert again.status_code == 200
    rows = FactEvent.objects.filter(fact_id=fact().pk).order_by("id")
    assert [(e.event, e.actor) for e in rows] == [
        ("created", "token:owner"),
        ("edited", "token:owner"),
    ]
    assert rows[1].data == {"changed": ["ttl_ms"], "ttl_ms": {"from": None, "to": 1000}}
