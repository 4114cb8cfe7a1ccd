"""Read queries on notes, used by the JSON API, the dashboard and the CLI.

The read contract: by default a reader sees accepted notes that no accepted
note supersedes. Supersession is one hop and only an accepted superseder
hides anything, so a pending proposal changes nothing until it is approved,
and rejecting a superseder brings its targets back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet

from notes.models import Note, NoteSearchKind, NoteStatus, NoteSupersession
from notes.services import (
    STATUSES,
    check_namespace,
    check_namespace_kind,
    check_text,
    note_by_id,
)
from spaceduck.core.errors import InvalidInput
from spaceduck.core.fts import literal_terms, match_terms
from spaceduck.core.ids import client_id_of

ANY_STATUS = "any"
MAX_SEARCH_LIMIT = 200
# Rows loaded per query when turning FTS rowids into notes: far below SQLite's
# bound-parameter limit whatever the page size.
LOAD_BATCH = 500

# The FTS list runs alone, capped, in BM25 order (rank is bm25 by default);
# rows are filtered afterwards, because MATCH combined with joins and filters
# in one WHERE can be orders of magnitude slower.
FTS_SEARCH_SQL = (
    "SELECT rowid, rank FROM notes_fts WHERE notes_fts MATCH %s ORDER BY rank, rowid LIMIT %s"
)
# PostgreSQL (notes migration 0003): every term a phrase of the 'simple' configuration,
# folded as the index is, all of them required (FTS5's AND). ts_rank_cd with
# normalisation 1 (divided by 1 + log of the note's length, as BM25 favours short
# notes) is higher for better matches, so it is negated to read like FTS5's bm25 rank,
# lower first; score = -rank on both databases.
_PG_SEARCH_SQL = (
    "SELECT note_id, -ts_rank_cd(body, query, 1) AS rank FROM notes_fts, ({query}) AS q(query) "
    "WHERE body @@ query ORDER BY rank, note_id LIMIT %s"
)
_PG_PHRASE = "phraseto_tsquery('simple', spaceduck_fold(%s))"


class NoteSearchNotEnabled(InvalidInput):
    """Search was asked for a namespace kind whose notes are not indexed."""


@dataclass(frozen=True)
class NoteHit:
    note: Note
    score: float  # -bm25: higher is a better match


_Loader = Callable[[list[tuple[int, float]]], list[NoteHit]]


def split_status_param(status: str | None) -> list[str] | None:
    """A status filter as a query string gives it ("pending,rejected", "any"), as the
    list parse_status_filter takes; None (no parameter) stays None, the default."""
    if status is None:
        return None
    return [part.strip() for part in status.split(",")]


def parse_status_filter(status: str | Iterable[str] | None) -> list[str] | None:
    """The statuses to show (None: every status); ``None`` in means the default, accepted."""
    if status is None:
        return [NoteStatus.ACCEPTED]
    if isinstance(status, str):
        status = [status]
    elif isinstance(status, bytes) or not isinstance(status, Iterable):
        raise InvalidInput(f"status must be one of {', '.join(STATUSES)}, a list, or 'any'")
    wanted = list(dict.fromkeys(status))
    if ANY_STATUS in wanted:
        return None
    if not wanted:
        raise InvalidInput("status filter is empty; give a status, a list of them, or 'any'")
    unknown = [value for value in wanted if value not in STATUSES]
    if unknown:
        raise InvalidInput(
            f"status {unknown[0]!r} is not one of {', '.join(STATUSES)} (or 'any' for every status)"
        )
    return wanted


def superseded_by_accepted() -> Exists:
    """True for a note that an accepted note supersedes (one hop: the superseder's own
    supersession does not matter)."""
    return Exists(
        NoteSupersession.objects.filter(target=OuterRef("pk"), note__status=NoteStatus.ACCEPTED)
    )


def _apply_read_contract(
    queryset: QuerySet[Note], *, statuses: list[str] | None, include_superseded: bool
) -> QuerySet[Note]:
    if statuses is not None:
        queryset = queryset.filter(status__in=statuses)
    if not include_superseded:
        queryset = queryset.exclude(superseded_by_accepted())
    return queryset


def get_note(id: str, namespace: str | None = None) -> Note:
    """The note with the client's id ``id`` (in ``namespace``: see services.note_by_id)."""
    return note_by_id(id, namespace)


def list_notes(
    namespace: str | None = None,
    *,
    status: str | Iterable[str] | None = NoteStatus.ACCEPTED,
    include_superseded: bool = False,
    kind: str | None = None,
    namespace_kind: str | None = None,
) -> QuerySet[Note]:
    """Notes of ``namespace`` (every namespace when None; with ``namespace_kind``
    every namespace of that kind) under the read contract, oldest first."""
    queryset = Note.objects.all()
    if namespace is not None:
        queryset = queryset.filter(namespace=check_namespace(namespace))
    if namespace_kind is not None:
        queryset = queryset.filter(namespace_kind=check_namespace_kind(namespace_kind))
    if kind is not None:
        queryset = queryset.filter(kind=check_text(kind, field="kind"))
    queryset = _apply_read_contract(
        queryset,
        statuses=parse_status_filter(status),
        include_superseded=bool(include_superseded),
    )
    return queryset.order_by("created_at", "id")


def note_supersedes(notes: Iterable[Note]) -> dict[int, list[str]]:
    """For each note's pk, the client ids of the notes it supersedes (in edge order)."""
    ids = [note.pk for note in notes]
    result: dict[int, list[str]] = {pk: [] for pk in ids}
    for start in range(0, len(ids), LOAD_BATCH):
        edges = (
            NoteSupersession.objects.filter(note_id__in=ids[start : start + LOAD_BATCH])
            .order_by("id")
            .values_list("note_id", "target__uid")
        )
        for note_id, target_uid in edges:
            result[note_id].append(client_id_of(target_uid))
    return result


@dataclass(frozen=True)
class NoteLinks:
    """A note's supersession edges both ways, oldest edge first."""

    supersedes: list[Note]  # the notes this one replaces (while it is accepted)
    superseded_by: list[Note]  # the notes that replace this one (if accepted)

    @property
    def hidden_by(self) -> list[Note]:
        """The accepted superseders: the ones that hide this note from readers."""
        return [note for note in self.superseded_by if note.status == NoteStatus.ACCEPTED]


def note_links(notes: Iterable[Note]) -> dict[int, NoteLinks]:
    """For each note's pk, the notes it supersedes and the notes superseding it."""
    ids = [note.pk for note in notes]
    result: dict[int, NoteLinks] = {pk: NoteLinks([], []) for pk in ids}
    for start in range(0, len(ids), LOAD_BATCH):
        batch = ids[start : start + LOAD_BATCH]
        edges = (
            NoteSupersession.objects.filter(Q(note_id__in=batch) | Q(target_id__in=batch))
            .select_related("note", "target")
            .order_by("id")
        )
        for edge in edges:
            if edge.note_id in result:
                result[edge.note_id].supersedes.append(edge.target)
            if edge.target_id in result:
                result[edge.target_id].superseded_by.append(edge.note)
    return result


@dataclass(frozen=True)
class ReplacedNote:
    """A note a pending note would replace, and who else supersedes it already."""

    note: Note
    others: list[Note]  # its other superseders, any status

    @property
    def hidden_by(self) -> list[Note]:
        """Accepted superseders: the note is already hidden from readers."""
        return [note for note in self.others if note.status == NoteStatus.ACCEPTED]

    @property
    def proposed_by(self) -> list[Note]:
        """Superseders that do not hide it (pending or rejected)."""
        return [note for note in self.others if note.status != NoteStatus.ACCEPTED]


@dataclass(frozen=True)
class ReviewRow:
    note: Note
    replaces: list[ReplacedNote]


def review_rows(notes: Iterable[Note]) -> list[ReviewRow]:
    """``notes``, each with what accepting it would hide, and whether each of those is
    superseded already (and by what)."""
    notes = list(notes)
    links = note_links(notes)
    targets = [target for note in notes for target in links[note.pk].supersedes]
    target_links = note_links(targets)
    return [
        ReviewRow(
            note=note,
            replaces=[
                ReplacedNote(
                    note=target,
                    others=[
                        other
                        for other in target_links[target.pk].superseded_by
                        if other.pk != note.pk
                    ],
                )
                for target in links[note.pk].supersedes
            ],
        )
        for note in notes
    ]


def review_queue() -> list[ReviewRow]:
    """Pending notes of every namespace (read contract), oldest first, each with the
    notes it supersedes: what accepting it would hide."""
    return review_rows(list_notes(status=NoteStatus.PENDING))


def note_namespaces(limit: int = 500) -> list[str]:
    """Namespaces that hold notes, for the browser's namespace suggestions."""
    return list(
        Note.objects.order_by("namespace").values_list("namespace", flat=True).distinct()[:limit]
    )


def search_kinds() -> list[NoteSearchKind]:
    """The namespace kinds whose notes are full-text indexed."""
    return list(NoteSearchKind.objects.order_by("kind"))


def review_count() -> int:
    """Pending notes waiting for a person, every namespace."""
    return Note.objects.filter(status=NoteStatus.PENDING).count()


# --- search -------------------------------------------------------------------


def search_notes(
    kind: str,
    query: str,
    limit: int = 20,
    namespace: str | None = None,
    status: str | Iterable[str] | None = NoteStatus.ACCEPTED,
    include_superseded: bool = False,
    *,
    namespaces: Iterable[str] | None = None,
    note_kind: str | None = None,
) -> list[Note]:
    """Notes of namespace kind ``kind`` matching ``query`` as literal text, best first."""
    hits = search_note_hits(
        kind,
        query,
        limit,
        namespace,
        status,
        include_superseded,
        namespaces=namespaces,
        note_kind=note_kind,
    )
    return [hit.note for hit in hits]


def search_note_hits(
    kind: str,
    query: str,
    limit: int = 20,
    namespace: str | None = None,
    status: str | Iterable[str] | None = NoteStatus.ACCEPTED,
    include_superseded: bool = False,
    *,
    namespaces: Iterable[str] | None = None,
    note_kind: str | None = None,
) -> list[NoteHit]:
    """Like search_notes, with each note's BM25 score.

    ``namespaces`` (keyword-only) restricts results to those namespaces, e.g. a
    token's grants; the page is still filled from the rest of the matches.
    ``note_kind`` keeps only notes of that kind (the note's own ``kind`` field).
    """
    kind = check_namespace_kind(kind)
    if note_kind is not None:
        note_kind = check_text(note_kind, field="kind")
    limit = _check_limit(limit)
    allowed = _allowed_namespaces(kind, namespace=namespace, namespaces=namespaces)
    statuses = parse_status_filter(status)
    if not NoteSearchKind.objects.filter(kind=kind).exists():
        raise NoteSearchNotEnabled(
            f"note search is not enabled for namespace kind {kind!r}; enable it first "
            f"(enable_note_search({kind!r}) or POST /api/notes/search/{kind}/enable)"
        )
    terms = literal_terms(check_text_query(query))
    if not terms or allowed == []:
        return []

    def load(rows: list[tuple[int, float]]) -> list[NoteHit]:
        return _live_hits(
            rows,
            kind=kind,
            namespaces=allowed,
            statuses=statuses,
            include_superseded=bool(include_superseded),
            note_kind=note_kind,
        )

    return _fill_page(terms, limit=limit, load=load)


def search_enabled_kinds(
    query: str,
    limit: int = 20,
    *,
    status: str | Iterable[str] | None = NoteStatus.ACCEPTED,
    include_superseded: bool = False,
    note_kind: str | None = None,
) -> list[NoteHit]:
    """search_note_hits over every namespace kind whose search is enabled, best first.

    One FTS index spans the enabled kinds, so their BM25 scores compare.
    """
    hits: list[NoteHit] = []
    for enabled in search_kinds():
        hits.extend(
            search_note_hits(
                enabled.kind,
                query,
                limit,
                status=status,
                include_superseded=include_superseded,
                note_kind=note_kind,
            )
        )
    hits.sort(key=lambda hit: (-hit.score, hit.note.pk))
    return hits[:limit]


def check_text_query(query: object) -> str:
    # NUL and lone surrogates are fine here: literal_terms drops them.
    if not isinstance(query, str):
        raise InvalidInput(f"query must be a string, not {type(query).__name__}")
    return query


def _check_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidInput("limit must be an integer")
    if not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_SEARCH_LIMIT}")
    return limit


def _allowed_namespaces(
    kind: str, *, namespace: str | None, namespaces: Iterable[str] | None
) -> list[str] | None:
    """The namespaces results may come from (None: every namespace of the kind)."""
    if namespace is not None:
        canonical = check_namespace(namespace)
        if canonical.partition(":")[0] != kind:
            raise InvalidInput(f"namespace {canonical!r} is not of kind {kind!r}")
        if namespaces is not None and canonical not in set(namespaces):
            return []
        return [canonical]
    if namespaces is None:
        return None
    return [ns for ns in dict.fromkeys(namespaces) if ns.partition(":")[0] == kind]


def _fill_page(terms: list[str], *, limit: int, load: _Loader) -> list[NoteHit]:
    """Walk the FTS list in BM25 order until ``limit`` live notes are found or it ends.

    Superseded, pending or foreign notes may crowd the top of the list, so the
    cap doubles until the page is full rather than returning a short page.
    """
    cap = max(limit * 2, 50)
    done: set[int] = set()
    hits: list[NoteHit] = []
    while True:
        rows = _fts_rows(terms, cap)
        fresh = [row for row in rows if row[0] not in done]
        done.update(rowid for rowid, _ in fresh)
        hits.extend(load(fresh))
        if len(hits) >= limit or len(rows) < cap:
            break
        cap *= 2
    # Re-sort: a note written between two rounds may rank above earlier hits.
    hits.sort(key=lambda hit: (-hit.score, hit.note.pk))
    return hits[:limit]


def _fts_rows(terms: list[str], cap: int) -> list[tuple[int, float]]:
    """(note id, rank) of the notes holding every term, best (lowest rank) first."""
    if connection.vendor == "postgresql":
        sql = _PG_SEARCH_SQL.format(query="SELECT " + " && ".join([_PG_PHRASE] * len(terms)))
        params: list[object] = [*terms, cap]
    else:
        sql, params = FTS_SEARCH_SQL, [match_terms(terms, operator="AND"), cap]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(int(rowid), float(rank)) for rowid, rank in cursor.fetchall()]


def _live_hits(
    rows: list[tuple[int, float]],
    *,
    kind: str,
    namespaces: list[str] | None,
    statuses: list[str] | None,
    include_superseded: bool,
    note_kind: str | None = None,
) -> list[NoteHit]:
    """The rows whose notes pass the filters and the read contract, in row order."""
    hits: list[NoteHit] = []
    for start in range(0, len(rows), LOAD_BATCH):
        batch = rows[start : start + LOAD_BATCH]
        # The index spans every enabled kind, so the kind filter is needed too.
        queryset = Note.objects.filter(pk__in=[rowid for rowid, _ in batch], namespace_kind=kind)
        if namespaces is not None:
            queryset = queryset.filter(namespace__in=namespaces)
        if note_kind is not None:
            queryset = queryset.filter(kind=note_kind)
        queryset = _apply_read_contract(
            queryset, statuses=statuses, include_superseded=include_superseded
        )
        notes = {note.pk: note for note in queryset}
        hits.extend(
            NoteHit(note=notes[rowid], score=-rank) for rowid, rank in batch if rowid in notes
        )
    return hits
