"""The facts pages: live facts by namespace, and deleting one after confirming (test client,
with and without htmx)."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import urlencode

import pytest
from django.test import Client

from memories.models import Fact
from memories.web import fact_pages
from memories.write import services
from memories.write.services import set_fact
from tests.memories.conftest import Clock

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
LIST = "/facts/"
DELETE = "/facts/delete/"


def keys(html: str) -> list[str]:
    found = re.findall(r'<td class="fact-key" data-label="Key"><code>([^<]*)</code></td>', html)
    return [unescape(key) for key in found]


def delete_url(namespace: str, key: str) -> str:
    return DELETE + "?" + urlencode({"namespace": namespace, "key": key})


def exists(namespace: str, key: str) -> bool:
    return Fact.objects.filter(namespace=namespace, key=key).exists()


# --- Who may look ----------------------------------------------------------------------


@pytest.mark.parametrize("url", [LIST, delete_url("user:alice", "theme")])
def test_anonymous_visitors_are_sent_to_the_login(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_non_staff_cannot_list_or_delete(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    set_fact("user:alice", "theme", "dark")
    user = django_user_model.objects.create_user("agent-owner", password="pw-12345678")
    client.force_login(user)
    assert client.get(LIST).status_code == 302
    response = client.post(DELETE, {"namespace": "user:alice", "key": "theme"})
    assert response.status_code == 302
    assert exists("user:alice", "theme")


# --- The list --------------------------------------------------------------------------


def test_each_fact_shows_its_key_json_value_ttl_and_provenance(staff_client: Client) -> None:
    set_fact(
        "user:alice",
        "prefs/theme",
        {"mode": "dark", "sizes": [1, 2]},
        ttl_ms=2 * 3600 * 1000,
        provenance={"run_id": "run-7", "node_id": "n1", "iteration": 3, "source": "settings"},
    )
    set_fact("user:alice", "age", 42)
    html = staff_client.get(LIST, {"namespace": "user:alice"}).content.decode()
    assert keys(html) == ["age", "prefs/theme"]
    # Pretty-printed JSON (quotes escaped by the template).
    assert (
        "{\n  &quot;mode&quot;: &quot;dark&quot;,\n  &quot;sizes&quot;: [\n    1,\n    2\n  ]\n}"
    ) in html
    assert '<pre class="fact-value">42</pre>' in html
    assert re.search(">in (1|2)\xa0hours?", html)  # the TTL left
    assert "TTL 7,200,000 ms" in html
    assert "<dt>run_id</dt><dd>run-7</dd>" in html
    assert "<dt>iteration</dt><dd>3</dd>" in html
    assert "<dt>source</dt><dd>settings</dd>" in html
    assert '<span class="sub">never</span>' in html  # the fact without a TTL
    assert "set <span" in html  # when it was last written


def test_stored_text_is_escaped(staff_client: Client) -> None:
    set_fact(
        "user:alice",
        "<b>key</b>",
        "<script>alert(1)</script>",
        provenance={"actor": "<img src=x onerror=alert(2)>"},
    )
    html = staff_client.get(LIST).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;" in html
    assert "<code>&lt;b&gt;key&lt;/b&gt;</code>" in html
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html


def test_the_namespace_filter_narrows_and_no_filter_shows_every_namespace(
    staff_client: Client,
) -> None:
    set_fact("user:alice", "theme", "dark")
    set_fact("user:bob", "theme", "light")
    set_fact("user:bob", "lang", "fr")
    everything = staff_client.get(LIST).content.decode()
    assert keys(everything) == ["theme", "lang", "theme"]  # by namespace, then key
    assert '<option value="user:alice"><option value="user:bob">' in everything
    bob = staff_client.get(LIST, {"namespace": "user:bob"}).content.decode()
    assert keys(bob) == ["lang", "theme"]
    assert "user:alice" not in bob.split('id="fact-list"')[1]
    empty = staff_client.get(LIST, {"namespace": "user:carol"}).content.decode()
    assert "No live fact in <code>user:carol</code>" in empty


def test_an_expired_fact_is_not_listed(staff_client: Client, clock: Clock) -> None:
    set_fact("user:alice", "session", "abc", ttl_ms=1000)
    set_fact("user:alice", "theme", "dark")
    clock.advance(seconds=2)
    assert keys(staff_client.get(LIST).content.decode()) == ["theme"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"namespace": "no-kind"}, "namespace: invalid namespace"),
        ({"namespace": "<b>x</b>"}, "namespace: invalid namespace"),
        ({"after": "!!not-a-cursor"}, "after: page cursor"),
        ({"after": "WzEsMl0"}, "after: page cursor"),  # base64 of [1,2]
    ],
)
def test_a_bad_filter_gets_a_message_and_a_400_not_a_500(
    staff_client: Client, query: dict[str, str], message: str
) -> None:
    response = staff_client.get(LIST, query)
    html = response.content.decode()
    assert response.status_code == 400
    assert 'role="alert"' in html
    assert message in html
    assert "<b>x</b>" not in html
    fragment = staff_client.get(LIST, query, headers=HTMX)
    assert fragment.status_code == 400
    assert fragment.content.decode().strip().startswith('<section id="fact-list">')


def test_htmx_gets_only_the_list(staff_client: Client) -> None:
    set_fact("user:alice", "theme", "dark")
    fragment = staff_client.get(LIST, {"namespace": "user:alice"}, headers=HTMX).content.decode()
    assert "<html" not in fragment
    assert fragment.strip().startswith('<section id="fact-list">')
    assert keys(fragment) == ["theme"]


def test_facts_come_a_page_at_a_time_without_gaps_or_repeats(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = [("user:alice", f"k/{i}") for i in range(4)] + [
        ("user:bob", "a?b&c#d"),
        ("user:bob", "z"),
    ]
    for namespace, key in written:
        set_fact(namespace, key, 1)
    monkeypatch.setattr(fact_pages, "FACTS_PER_PAGE", 4)
    seen: list[str] = []
    url = LIST
    pages = 0
    while url:
        html = staff_client.get(url).content.decode()
        seen += keys(html)
        pages += 1
        found = re.search(r'<a class="older" rel="next" href="([^"]+)"', html)
        url = LIST + found.group(1).replace("&amp;", "&") if found else ""
    assert pages == 2
    assert seen == [key for _, key in written]
    first = staff_client.get(
        LIST + "?" + urlencode({"after": fact_pages.FactCursor("user:alice", "k/3").encode()})
    )
    assert keys(first.content.decode()) == ["a?b&c#d", "z"]
    assert "← First page" in first.content.decode()


def test_pages_within_one_namespace_stay_in_it(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("a", "b/c", "d", "e"):
        set_fact("user:bob", key, 1)
    set_fact("user:alice", "x", 1)
    set_fact("user:carol", "a", 1)
    monkeypatch.setattr(fact_pages, "FACTS_PER_PAGE", 3)
    first = staff_client.get(LIST, {"namespace": "user:bob"}).content.decode()
    assert keys(first) == ["a", "b/c", "d"]
    found = re.search(r'<a class="older" rel="next" href="([^"]+)"', first)
    assert found
    assert "namespace=user%3Abob" in found.group(1)  # the filter stays on the next page
    second = staff_client.get(LIST + found.group(1).replace("&amp;", "&")).content.decode()
    assert keys(second) == ["e"]
    assert 'class="older"' not in second


# --- Delete, after confirming -------------------------------------------------------------


def test_get_asks_for_confirmation_and_deletes_nothing(staff_client: Client) -> None:
    set_fact("user:alice", "prefs/theme", {"mode": "dark"})
    response = staff_client.get(delete_url("user:alice", "prefs/theme"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" in html
    assert "Delete fact <code>prefs/theme</code> from <code>user:alice</code>?" in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert '<input type="hidden" name="key" value="prefs/theme">' in html
    assert "hx-post" not in html  # a plain form on its own page: it redirects
    assert exists("user:alice", "prefs/theme")


def test_htmx_gets_the_confirmation_inline_aimed_at_the_row(staff_client: Client) -> None:
    set_fact("user:alice", "prefs/theme", "dark")
    listed = staff_client.get(LIST).content.decode()
    row_id = re.search(r'<tr id="(fact-[0-9a-f]+)" class="fact-row">', listed).group(1)  # type: ignore[union-attr]
    url = delete_url("user:alice", "prefs/theme")
    back = urlencode({"next": LIST})  # the confirmation comes back to this list page
    assert f'href="{url.replace("&", "&amp;")}&amp;{back}"' in listed  # works without htmx
    fragment = staff_client.get(url, headers=HTMX).content.decode()
    assert "<html" not in fragment
    assert fragment.strip().startswith("<form")
    assert f'hx-target="#{row_id}" hx-swap="outerHTML"' in fragment
    assert exists("user:alice", "prefs/theme")


def test_post_deletes_through_the_service_and_goes_back_with_a_message(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_fact("user:alice", "prefs/theme", "dark")
    set_fact("user:alice", "lang", "en")
    calls: list[tuple[str, str]] = []
    real = services.delete_fact

    def spy(ns: str, key: str, **who: str) -> bool:
        calls.append((ns, key))
        return real(ns, key, **who)

    monkeypatch.setattr(services, "delete_fact", spy)
    response = staff_client.post(DELETE, {"namespace": "user:alice", "key": "prefs/theme"})
    assert response.status_code == 302
    assert response["Location"] == "/facts/?namespace=user%3Aalice"
    assert calls == [("user:alice", "prefs/theme")]
    assert not exists("user:alice", "prefs/theme")
    assert exists("user:alice", "lang")
    html = staff_client.get(response["Location"]).content.decode()
    assert "Fact &#x27;prefs/theme&#x27; deleted from user:alice." in html
    assert keys(html) == ["lang"]


def test_htmx_post_removes_the_row_and_flashes_the_message(staff_client: Client) -> None:
    set_fact("user:alice", "prefs/theme", "dark")
    response = staff_client.post(
        DELETE, {"namespace": "user:alice", "key": "prefs/theme"}, headers=HTMX
    )
    body = response.content.decode()
    assert response.status_code == 200
    # Nothing but the out-of-band flash: swapped into the row, the row is gone.
    flash = '<div id="flash" role="status" aria-live="polite" hx-swap-oob="innerHTML">'
    assert body.strip().startswith(flash)
    assert "deleted from user:alice." in body
    assert "<tr" not in body
    assert not exists("user:alice", "prefs/theme")


def test_deleting_a_missing_fact_is_a_404_with_a_clear_message(staff_client: Client) -> None:
    response = staff_client.post(DELETE, {"namespace": "user:alice", "key": "<i>gone</i>"})
    html = response.content.decode()
    assert response.status_code == 404
    assert "No fact <code>&lt;i&gt;gone&lt;/i&gt;</code> in <code>user:alice</code>" in html
    assert "<i>gone</i>" not in html
    confirm = staff_client.get(delete_url("user:alice", "gone"))
    assert confirm.status_code == 404
    assert "it was deleted already, or it expired" in confirm.content.decode()
    inline = staff_client.get(delete_url("user:alice", "gone"), headers=HTMX)
    assert inline.status_code == 404
    assert inline.content.decode().strip().startswith('<div class="form-errors" role="alert">')


def test_htmx_deleting_a_fact_already_gone_drops_the_row_and_says_so(
    staff_client: Client,
) -> None:
    response = staff_client.post(DELETE, {"namespace": "user:alice", "key": "gone"}, headers=HTMX)
    body = response.content.decode()
    assert response.status_code == 404
    assert "was already gone" in body
    assert 'hx-swap-oob="innerHTML"' in body


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"key": "theme"}, "namespace is required"),
        ({"namespace": "user:alice"}, "key is required"),
        ({"namespace": "not a namespace", "key": "theme"}, "invalid namespace"),
        ({"namespace": "user:alice", "key": "bad\x07key"}, "control characters"),
        ({"namespace": "user:alice", "key": "k" * 256}, "should have at most 255 characters"),
    ],
)
def test_bad_input_is_a_400_with_a_message(
    staff_client: Client, fields: dict[str, str], message: str
) -> None:
    set_fact("user:alice", "theme", "dark")
    for response in (
        staff_client.get(DELETE, fields),
        staff_client.post(DELETE, fields),
    ):
        assert response.status_code == 400
        assert message in response.content.decode()
    assert exists("user:alice", "theme")


def test_a_post_without_the_csrf_token_is_refused(django_user_model) -> None:  # type: ignore[no-untyped-def]
    set_fact("user:alice", "theme", "dark")
    user = django_user_model.objects.create_user("staff", password="pw-staff-123", is_staff=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(DELETE, {"namespace": "user:alice", "key": "theme"})
    assert response.status_code == 403
    assert exists("user:alice", "theme")


def test_after_deleting_it_never_goes_to_another_site(staff_client: Client) -> None:
    set_fact("user:alice", "a", 1)
    set_fact("user:alice", "b", 1)
    fields = {"namespace": "user:alice", "key": "a", "next": "https://evil.example/"}
    assert staff_client.post(DELETE, fields)["Location"] == "/facts/?namespace=user%3Aalice"
    fields = {"namespace": "user:alice", "key": "b", "next": "/facts/?namespace=user%3Aalice&x=1"}
    assert staff_client.post(DELETE, fields)["Location"] == "/facts/?namespace=user%3Aalice&x=1"


def test_the_api_no_longer_finds_a_fact_deleted_in_the_dashboard(
    staff_client: Client, owner
) -> None:  # type: ignore[no-untyped-def]
    set_fact("user:alice", "prefs/theme", "dark")
    assert owner.get("/api/facts/user:alice/prefs/theme").status_code == 200
    staff_client.post(DELETE, {"namespace": "user:alice", "key": "prefs/theme"})
    assert owner.get("/api/facts/user:alice/prefs/theme").status_code == 404
