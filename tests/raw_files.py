"""The bytes of the data directory's files, searched for a string (issue 37: forget means
forgotten, proven on the files, not through the service's own reads)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import connection


def data_files() -> list[Path]:
    """Every file of the test database (with its -wal/-shm) and of the data directory."""
    database = Path(connection.settings_dict["NAME"])
    found = {p for p in database.parent.glob(database.name + "*") if p.is_file()}
    found |= {p for p in Path(settings.DATA_DIR).rglob("*") if p.is_file()}
    return sorted(found)


def files_holding(*needles: str) -> dict[str, int]:
    """file name -> how many times any of ``needles`` occurs in its bytes, case-folded (the
    keyword index keeps words lower-cased), as UTF-8 and as UTF-16 (SQLite may store
    either). Only files holding one are listed."""
    forms = set()
    for needle in needles:
        for text in (needle, needle.lower()):
            forms |= {text.encode("utf-8"), text.encode("utf-16-le")}
    holding: dict[str, int] = {}
    for path in data_files():
        data = path.read_bytes().lower()
        count = sum(data.count(form.lower()) for form in forms)
        if count:
            holding[path.name] = count
    return holding
