from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

pytestmark = pytest.mark.django_db


def test_health_needs_no_auth_and_reports_sqlite_vec_from_inside_the_request(
    client: Client,
) -> None:
    response = client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    # Queried on the request's own connection: the database and its vector extension.
    if connection.vendor == "sqlite":
        assert body["sqlite_vec"] == "v0.1.9"
        assert body["sqlite"].startswith("3.")
    else:
        assert body["postgresql"].split(".")[0].isdigit()
        assert body["pgvector"].startswith("0.")
    assert body["embedding"] == {
        "provider": "hash",
        "model": "blake2b-words-trigrams-v1",
        "dimensions": 384,
        "problem": None,
    }
    assert body["queue"]["pending"] == 0


def test_the_openapi_docs_are_served(client: Client) -> None:
    assert client.get("/api/docs").status_code == 200
    schema = client.get("/api/openapi.json").json()
    assert "/api/health" in schema["paths"]
