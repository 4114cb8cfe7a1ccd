"""Export and import everything needed to rebuild a spaceduck database, as JSON lines.

``manage.py export [--namespace NS] PATH`` and ``manage.py import PATH`` call
``export.export`` and ``importer.import_file`` (a project-level package: it reads and
writes both apps' tables). formats.py holds the format, export.py the export,
import_plan.py the reading and checking of a file, importer.py its writing.

The format (``FORMAT``, ``VERSION``): one JSON object per line, ASCII only
(``ensure_ascii``: a lone surrogate, which the API accepts inside JSON values,
travels as a ``\\ud800`` escape and comes back unchanged). A ``.gz`` path is
gzip-compressed. Line 1 is the header: format, version, the namespace filter,
the fingerprint of the stored vectors, what the file carries and how many
records of each type follow. Then the records, in dependency order
(``TYPES``), each ``{"type": ..., <column>: <value>, ...}`` with every
concrete column of its model under its attribute name (foreign keys as
``<name>_id``), datetimes as ISO 8601 with their UTC offset, JSON columns as
JSON (a fact whose value is JSON ``null`` has ``"value": null``). Memories may
carry ``"embedding"``: their stored vector, base64 float32. The last line is
``{"type": "end", "counts": ...}``; a file without it is incomplete and refused.

Export reads one snapshot (a read transaction: in WAL mode it never blocks the
service's writes), so the file is consistent while the service writes.

Import keeps every id: memory ids (supersession edges, history rows, extraction
verdicts name them), event, extraction, fact, note and edge ids, thread and
message ids. A record whose id (or unique key: a fact's namespace and key, a
note's uid, an edge's two notes, a token's hash) is not in the database is
inserted; one that is there with the same values is left alone (so importing
a file twice changes nothing); one that is there with other values is a
conflict. Conflicts are looked for before anything is written: by default
the import then stops, writing nothing and listing them; ``on_conflict="skip"``
keeps the database's rows (and skips the history of a conflicting memory).
Two independent databases have overlapping ids, so merging one into the other
is refused this way rather than mixing their rows. A nullable reference that
is NULL in the database (its target was deleted) matches any value.

Indexes: inserting memories fires the keyword-index trigger. Vectors come from
the file when its fingerprint is the configured embedder's; otherwise (or
without ``embedding``) they are computed after the rows are in, in batches, with
a progress bar. Note search kinds are enabled before any note is inserted (the
notes_fts triggers index only the notes of enabled kinds), backfilling notes
already in the database. Then every process's vector cache is invalidated.
"""
