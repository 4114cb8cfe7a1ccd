"""A memory's history as its page shows it: each edit as a per-field diff, data as JSON.

History rows keep what changed (``memories.write.edits.memory_edit``: ``before`` and,
since edits keep it, ``after``); older edits kept ``before`` alone, so their ``after`` is
read back from the next edit of the field, or the memory as it is now. Text is compared
word by word (difflib), so a changed word is marked, not the whole paragraph.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from memories.models import Memory, MemoryEvent, MemoryStatus
from memories.write.edits import EDITABLE, version_before

# Words, runs of spaces and single signs: a diff marks whole words, keeps the spacing.
_TOKENS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)
# Text fields are diffed word by word; the others (numbers, lists, dates) are shown whole.
_TEXT = ("title", "content", "summary", "scope_id", "kind", "procedure_subtype", "scope")


Event = MemoryEvent.Event
# Status changes the history keeps without a {"status": {"from", "to"}} entry: the event
# says where the memory went, and the status it left is kept ("from") or implied.
_STATUS_MOVES: dict[str, tuple[str | None, str]] = {
    Event.ARCHIVED: (None, MemoryStatus.ARCHIVED),
    Event.SUPERSEDED: (None, MemoryStatus.SUPERSEDED),
    Event.RESTORED: (MemoryStatus.ARCHIVED, MemoryStatus.ACTIVE),
    Event.PROMOTED: (MemoryStatus.CANDIDATE, MemoryStatus.ACTIVE),
}
# Keys those entries keep beside it, shown as rows: which memory superseded this one.
_LINKS = {"superseded_by": "superseded by", "was_superseded_by": "was superseded by"}


@dataclass(frozen=True)
class FieldChange:
    """One field of an edit: its value before and after, the changed words marked."""

    name: str
    before: SafeString
    after: SafeString


@dataclass
class Entry:
    """One history row with what the page shows of it."""

    event: MemoryEvent
    changes: list[FieldChange] = field(default_factory=list)
    data: str = ""  # any other data, as indented JSON ("" when none)
    restorable: bool = False  # an edit whose earlier version can be put back


def entries(memory: Memory, events: Sequence[MemoryEvent]) -> list[Entry]:
    """``events`` (oldest first) as the page shows them."""
    now = {name: _jsonable(getattr(memory, name)) for name in EDITABLE}
    now["status"] = memory.status
    afters = _afters(events, now)
    shown = []
    for event in events:
        data = event.data if isinstance(event.data, dict) else {}
        before = data.get("before")
        if isinstance(before, dict):
            after = afters.get(event.pk, {})
            changes = [_change(name, before[name], after.get(name)) for name in before]
            rest = {k: v for k, v in data.items() if k not in ("before", "after")}
            restorable = bool(version_before(event))
        else:
            changes = [_change(name, v["from"], v["to"]) for name, v in _from_to(data)]
            rest = {k: v for k, v in data.items() if k not in dict(_from_to(data))}
            moved, rest = _status_move(event, rest)
            changes += moved
            restorable = False
        shown.append(Entry(event, changes, as_json(rest) if rest else "", restorable))
    return shown


def _status_move(
    event: MemoryEvent, data: dict[str, Any]
) -> tuple[list[FieldChange], dict[str, Any]]:
    """An archive, supersession, restore or approval kept as the event and a bare ``from``
    (or nothing): its status row and the memory it names, and the data left to show."""
    move = _STATUS_MOVES.get(event.event)
    if move is None or "status" in data:
        return [], data
    implied, to = move
    if event.event == Event.RESTORED and data.get("was_superseded_by") is not None:
        implied = MemoryStatus.SUPERSEDED  # a reversed supersession
    left = data.get("from", implied)
    rows = [_change("status", left, to)] if isinstance(left, str) else []
    for key, label in _LINKS.items():
        if data.get(key) is not None:
            rows.append(FieldChange(label, _plain(""), _plain(f"#{data[key]}")))
    rest = {k: v for k, v in data.items() if k != "from" and k not in _LINKS}
    return rows, rest


def _afters(events: Sequence[MemoryEvent], now: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Each edit's values after it: what it kept, or else the value the field had next (the
    next edit's ``before``, or the memory now), walking the history newest first."""
    current = dict(now)
    afters: dict[int, dict[str, Any]] = {}
    for event in reversed(events):
        data = event.data if isinstance(event.data, dict) else {}
        before, kept = data.get("before"), data.get("after")
        if isinstance(before, dict):
            kept = kept if isinstance(kept, dict) else {}
            afters[event.pk] = {name: kept.get(name, current.get(name)) for name in before}
            current.update(before)
        for name, change in _from_to(data):
            current[name] = change["from"]
    return afters


def _from_to(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The ``{"field": {"from": ..., "to": ...}}`` entries of a status change or undo."""
    return [
        (name, value)
        for name, value in data.items()
        if isinstance(value, dict) and set(value) == {"from", "to"}
    ]


def _change(name: str, before: Any, after: Any) -> FieldChange:
    if name in _TEXT and isinstance(before, str | None) and isinstance(after, str | None):
        old, new = word_diff(before or "", after or "")
        return FieldChange(name, old, new)
    old_text, new_text = _shown(before), _shown(after)
    if isinstance(before, list | dict) and isinstance(after, list | dict):
        # Tags and other JSON: the items that changed are marked, not the whole list.
        old, new = word_diff(old_text, new_text)
        return FieldChange(name, old, new)
    if old_text == new_text:
        return FieldChange(name, _plain(old_text), _plain(new_text))
    return FieldChange(name, _marked(old_text, "del"), _marked(new_text, "ins"))


def word_diff(before: str, after: str) -> tuple[SafeString, SafeString]:
    """``before`` and ``after`` as HTML, the words only one of them has in ``<del>`` and
    ``<ins>`` (escaped; empty text shows as an em dash)."""
    old, new = _TOKENS.findall(before), _TOKENS.findall(after)
    left: list[str] = []
    right: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            left.append(escape("".join(old[i1:i2])))
            right.append(escape("".join(new[j1:j2])))
            continue
        if i2 > i1:
            left.append(f"<del>{escape(''.join(old[i1:i2]))}</del>")
        if j2 > j1:
            right.append(f"<ins>{escape(''.join(new[j1:j2]))}</ins>")
    return _or_dash(left), _or_dash(right)


def _or_dash(parts: Iterable[str]) -> SafeString:
    html = "".join(parts)
    return mark_safe(html or '<span class="sub">—</span>')  # escaped above


def _marked(text: str, tag: str) -> SafeString:
    if not text:
        return _plain(text)
    return mark_safe(f"<{tag}>{escape(text)}</{tag}>")  # escaped


def _plain(text: str) -> SafeString:
    return mark_safe(escape(text) if text else '<span class="sub">—</span>')


def _shown(value: Any) -> str:
    if value is None or value == "":
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def as_json(value: Any) -> str:
    """``value`` as indented JSON (what facts and history data are shown as)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _jsonable(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value
