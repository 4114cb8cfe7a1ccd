from __future__ import annotations

import pytest

from spaceduck.core.namespaces import InvalidNamespace, Namespace, normalize_namespace


@pytest.mark.parametrize(
    ("namespace", "encoded"),
    [
        (Namespace("user", "alice"), "user:alice"),
        (Namespace("user", "a:b"), "user:a%3Ab"),
        (Namespace("user", "a%3Ab"), "user:a%253Ab"),
        (Namespace("workflow", "100%"), "workflow:100%25"),
        (Namespace("global", "x::y%:"), "global:x%3A%3Ay%25%3A"),
        (Namespace("agent", "café ☕"), "agent:café ☕"),
    ],
)
def test_it_encodes_and_round_trips(namespace: Namespace, encoded: str) -> None:
    assert namespace.encode() == encoded
    assert Namespace.decode(encoded) == namespace


def test_ids_that_differ_only_by_escaping_are_different_namespaces() -> None:
    colon = Namespace("user", "a:b")
    escaped_text = Namespace("user", "a%3Ab")
    assert colon != escaped_text
    assert colon.encode() != escaped_text.encode()
    assert Namespace.decode(colon.encode()).id == "a:b"
    assert Namespace.decode(escaped_text.encode()).id == "a%3Ab"


@pytest.mark.parametrize(
    "bad",
    ["user", "user:", "robot:x", "user:a:b", "user:100%", "user:%3a", ":x", "user: x", "user:a\nb"],
)
def test_it_rejects_malformed_encodings(bad: str) -> None:
    with pytest.raises(InvalidNamespace):
        Namespace.decode(bad)


def test_normalize_returns_the_canonical_encoding() -> None:
    assert normalize_namespace("user:a%3Ab") == "user:a%3Ab"
    with pytest.raises(InvalidNamespace, match="kind"):
        normalize_namespace("people:alice")
