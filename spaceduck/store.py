"""The durable store's Python API, for code that runs beside the service.

One implementation, three front ends: these functions are the services and
selectors that the JSON API (``/api/facts``, ``/api/threads``, ``/api/notes``) and
the CLI (``manage.py memory ...``) call too. Errors are spaceduck.core.errors
exceptions (InvalidInput, NotFound, Conflict) with messages meant for callers.
"""

from __future__ import annotations

from memories.store.selectors import (
    count_messages,
    get_fact,
    get_thread,
    list_all_facts,
    list_facts,
    list_messages,
    list_threads,
)
from memories.write.services import (
    create_thread,
    delete_expired_facts,
    delete_fact,
    delete_messages,
    delete_thread,
    save_message,
    set_fact,
)
from notes.selectors import get_note, list_notes, search_notes
from notes.services import enable_note_search, save_note, set_note_status

__all__ = [
    "count_messages",
    "create_thread",
    "delete_expired_facts",
    "delete_fact",
    "delete_messages",
    "delete_thread",
    "enable_note_search",
    "get_fact",
    "get_note",
    "get_thread",
    "list_all_facts",
    "list_facts",
    "list_messages",
    "list_notes",
    "list_threads",
    "save_message",
    "save_note",
    "search_notes",
    "set_fact",
    "set_note_status",
]
