"""Client-chosen ids that belong to their namespace (issue 37, item 6).

Messages and notes take ids their clients choose. Such an id belongs to its namespace:
it is stored as given while no other namespace holds it, and otherwise (only then) under
a key qualified by the namespace: MARK, 16 hex digits of the namespace's SHA-256, MARK,
the client's id. MARK is a control character, which a client's id cannot hold, so the
two forms never meet, and a client never learns another namespace uses its id: it gets
its own row under the id it chose. One rule for both apps, hence here in the kernel.
"""

from __future__ import annotations

import hashlib

KEY_MARK = "\x1f"
TAG_LENGTH = 16


def key_length(client_id_length: int) -> int:
    """The longest stored key for client ids of at most ``client_id_length`` characters."""
    return 2 + TAG_LENGTH + client_id_length


def namespaced_key(namespace: str, client_id: str) -> str:
    tag = hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:TAG_LENGTH]
    return f"{KEY_MARK}{tag}{KEY_MARK}{client_id}"


def client_keys(namespace: str, client_id: str) -> list[str]:
    """The keys a row of ``namespace`` with the client's id ``client_id`` may have."""
    return [client_id, namespaced_key(namespace, client_id)]


def client_id_of(key: str) -> str:
    """The id a client gave (or was given) for the row stored under ``key``."""
    if key.startswith(KEY_MARK):
        return key[2 + TAG_LENGTH :]
    return key


def is_qualified(key: str) -> bool:
    """Whether ``key`` is a namespace-qualified key (its client id is used elsewhere too)."""
    return key.startswith(KEY_MARK)
