"""``spaceduck.core.pages.back_to``: the one check of where a form goes back to (the memory
pages, the queues, facts, notes). A path on this site, never another site."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from spaceduck.core.pages import back_to


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("/review/memories/?namespace=user%3Aalice", "/review/memories/?namespace=user%3Aalice"),
        ("", "/fallback/"),
        ("//evil.example/", "/fallback/"),
        ("/\\evil.example/", "/fallback/"),
        ("https://evil.example/", "/fallback/"),
        ("javascript:alert(1)", "/fallback/"),
        ("review/", "/fallback/"),  # not a path from the root
    ],
)
def test_only_a_path_of_this_site_is_followed(given: str, expected: str) -> None:
    posted = RequestFactory().post("/x/", {"next": given})
    assert back_to(posted, "/fallback/") == expected
    linked = RequestFactory().get("/x/", {"next": given})  # a Cancel link's query
    assert back_to(linked, "/fallback/") == expected
