"""An unknown query parameter is refused with a 422 that names it, never silently ignored."""

from __future__ import annotations

import pytest
from django.test import Client

from spaceduck.core.tokens import token_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> Client:
    secret = token_create(name="t", namespaces=["user:alice"], permissions=["read"]).secret
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


@pytest.mark.parametrize(
    "path",
    [
        "/api/threads?namespace=user:alice&namesapce=user:bob",
        "/api/memories/search?namespace=user:alice&q=tea&topk=5",
        "/api/memories?namespace=user:alice&limt=5",
    ],
)
def test_a_misspelt_query_parameter_is_a_422_naming_it(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 422
    assert response["Content-Type"].startswith("application/json")
    misspelt = path.rsplit("&", 1)[1].split("=")[0]
    assert misspelt in response.json()["detail"]


def test_the_declared_parameters_still_work(client: Client) -> None:
    response = client.get("/api/memories/search?namespace=user:alice&q=tea&topK=5&explain=true")
    assert response.status_code == 200
