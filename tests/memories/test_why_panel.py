"""The viewer's why panel lists every factor of a hit's score, the second stage included, and
they multiply to the score shown: the same numbers as the API's `explain`."""

from __future__ import annotations

import math
import re

import pytest
from django.test import Client

from memories.write.services import memory_create
from tests.conftest import Actor

pytestmark = pytest.mark.django_db
NS = "user:alice"
FACTORS = ("importance", "confidence", "recency", "scope", "superseded", "second_stage")
CELL = re.compile(r'data-factor="(?P<name>\w+)">(?P<value>-?[\d.]+(?:e[-+]\d+)?)')


def panels(html: str) -> list[dict[str, float]]:
    """Each why table's numbers, by factor."""
    tables = html.split('<table class="why-table">')[1:]
    return [
        {m["name"]: float(m["value"]) for m in CELL.finditer(table.split("</table>")[0])}
        for table in tables
    ]


def test_the_factors_multiply_to_the_score_shown_and_match_the_api(
    staff_client: Client, owner: Actor
) -> None:
    for content in (
        "Alice plays the oboe in a quartet on Tuesdays.",
        "Alice's quartet rehearses in the old church.",
        "Alice likes green tea.",
    ):
        memory_create(namespace=NS, kind="fact", content=content, actor="t")
    query = {"namespace": NS, "q": "oboe quartet"}
    html = staff_client.get("/", query, headers={"HX-Request": "true"}).content.decode()
    shown = panels(html)
    assert len(shown) >= 2
    api = owner.get("/api/memories/search", {**query, "explain": "true"}).json()["memories"]
    for numbers, hit in zip(shown, api, strict=False):
        assert set(numbers) == {"rrf", "neighbour", "final", *FACTORS}  # every factor listed
        product = (numbers["rrf"] + numbers["neighbour"]) * math.prod(numbers[f] for f in FACTORS)
        assert product == pytest.approx(numbers["final"], rel=2e-3)  # rounding of the shown digits
        assert numbers["second_stage"] == pytest.approx(
            hit["explanation"]["second_stage"], abs=6e-5
        )
        assert numbers["final"] == pytest.approx(hit["score"], abs=6e-7)
    assert any(numbers["second_stage"] != 1.0 for numbers in shown)  # the second stage ran
