"""schemathesis against the JSON API, in-process: every operation, every check, fixed seed.

Each operation of the OpenAPI schema gets its own subtest: schemathesis' coverage
phase (boundary and invalid values of every parameter and body field, derived
from the schema) and FUZZ_EXAMPLES fuzzed requests (valid and invalid data),
all through the Django WSGI app, as an admin token on every namespace. Every
response must pass every check schemathesis has: no 5xx; the status codes,
content types, headers and bodies the schema declares; invalid data rejected;
valid data accepted (see ACCEPTED_422); authentication enforced; ... About 3,000
requests in 1.5 minutes on 2 cores (hence the `slow` mark; `make test` runs it).

The schema is loaded by a fixture, so the cases are built when the test runs,
not when the suite is collected (that takes tens of seconds). Before every
request user:alice's data is put back where a request deleted it. String path
parameters are fixed to that data (PINNED), so requests reach the services
instead of stopping at "404 not found"; and schemathesis percent-decodes a
generated path parameter before sending it (a value holding "%3A" would arrive
as ":"), so a generated one would not be the value the server gets. Integer
ids are generated, and point at real rows in one valid request out of two.
test_api_errors.py covers bad path parameters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from hypothesis import HealthCheck, settings
from pydantic import TypeAdapter, ValidationError

from memories.models import Fact, Memory, Thread
from memories.write.ingest import message_ingest
from memories.write.services import memory_create, set_fact
from notes.models import Note
from notes.services import save_note
from spaceduck.core.limits import ApiDatetime
from spaceduck.models import ApiToken, hash_token

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SEED = 20240501
FUZZ_EXAMPLES = 20
MIN_REQUESTS = 1000
# The admin's secret: fixed, so the generated requests can carry it.
SECRET = "sd_schemathesis-admin-000000000000000000000000"
AUTH = {"Authorization": f"Bearer {SECRET}"}
PINNED = {
    "namespace": "user:alice",
    "key": "prefs/theme",
    "thread_id": "thread-1",
    "note_id": "note-1",
    "skill_id": "skill-1",
}
# Operations where a request the schema allows may still be refused with 422, for a
# reason that depends on stored data or on the token, not on the request's shape
# (positive_data_acceptance counts that as a failure). Every other operation must
# accept every schema-valid request, or answer 401/403/404/409.
ACCEPTED_422 = {
    "GET /api/memories": "namespace omitted, but the token has several grants ('*')",
    "GET /api/memories/search": "namespace omitted, but the token has several grants ('*')",
    "POST /api/context": "namespace omitted, but the token has several grants ('*')",
    "GET /api/conflicts": "namespace omitted, but the token has several grants ('*')",
    "GET /api/threads/{thread_id}/messages": "before/after is not a message of this thread",
    "GET /api/notes/search": "note search is not enabled for that namespace kind",
    "POST /api/notes": "supersedes names notes that do not exist in the namespace",
    "PATCH /api/memories/{memory_id}": "a status change the memory's status does not allow",
}
POSITIVE_STATUSES = ["2xx", "3xx", "401", "403", "404", "409", "429"]
CONFIG = schemathesis.Config.from_dict(
    {
        "seed": SEED,
        "generation": {"max-examples": FUZZ_EXAMPLES, "deterministic": True, "database": "none"},
        "parameters": {f"path.{name}": value for name, value in PINNED.items()},
        "checks": {
            # 413 (over a size limit) is a refusal too.
            "negative_data_rejection": {
                "expected-statuses": [400, 401, 403, 404, 405, 409, 413, 422, 429]
            },
            "positive_data_acceptance": {"expected-statuses": POSITIVE_STATUSES},
        },
        "operations": [
            {
                "include-name": name,
                "checks": {
                    "positive_data_acceptance": {"expected-statuses": [*POSITIVE_STATUSES, "422"]}
                },
            }
            for name in ACCEPTED_422
        ],
    }
)


class CountingApp:
    """The Django WSGI app, counting the requests it serves."""

    def __init__(self) -> None:
        self.app = WSGIHandler()
        self.requests = 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        self.requests += 1
        return self.app(environ, start_response)


APP = CountingApp()
SEEN: set[str] = set()  # the operations the run sent requests to
# Loaded by a fixture at run time: building the coverage phase's cases takes tens of
# seconds, which collecting the suite should not pay.
schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture
def api_schema(request: pytest.FixtureRequest) -> Any:
    # schemathesis' lazy runner renames the test node through `_nodeid`, which
    # pytest 9 no longer has.
    request.node._nodeid = request.node.nodeid
    return schemathesis.openapi.from_wsgi("/api/openapi.json", APP, config=CONFIG)


@pytest.fixture
def real_ids() -> dict[str, int]:
    """The admin token, and the ids of user:alice's data (created or re-created)."""
    ApiToken.objects.create(
        name="schemathesis",
        prefix=SECRET[:10],
        key_hash=hash_token(SECRET),
        namespaces=["*"],
        permissions=["read", "write", "approve", "admin"],
    )
    ids: dict[str, int] = {}
    _restore(ids)
    return ids


def _restore(ids: dict[str, int]) -> None:
    """user:alice's data at the PINNED ids, re-created where a request deleted it.

    Before every request, so each operation meets the same data whatever the ones
    before it deleted. Messages are extracted at once (huey's immediate mode).
    """
    if not Thread.objects.filter(pk=PINNED["thread_id"]).exists():
        Thread.objects.create(id=PINNED["thread_id"], namespace="user:alice", title="fuzz")
        ingested = message_ingest(PINNED["thread_id"], "user", "I live in Lisbon, at Acme.")
        assert ingested.extraction is not None
        ids["extraction_id"] = ingested.extraction.pk
    if not Memory.objects.filter(pk=ids.get("memory_id")).exists():
        memory = memory_create(
            namespace="user:alice", kind="fact", content="Alice likes jazz.", actor="test"
        )
        ids["memory_id"] = memory.pk
    if not Fact.objects.filter(namespace="user:alice", key=PINNED["key"]).exists():
        set_fact("user:alice", PINNED["key"], "dark")
    if not Note.objects.filter(uid=PINNED["note_id"]).exists():
        save_note("user:alice", "Restart the worker when it hangs.", id=PINNED["note_id"])


def _use_real_ids(case: schemathesis.Case, real_ids: dict[str, int]) -> None:
    """Valid requests: one in two targets real rows (invalid ones stay invalid)."""
    meta = case.meta
    names = [name for name in case.path_parameters or {} if name in real_ids]
    if not names or meta is None or not meta.generation.mode.is_positive:
        return
    digest = hashlib.sha256(repr(sorted(case.path_parameters.items())).encode()).digest()
    if digest[0] % 2 == 0:
        for name in names:
            case.path_parameters[name] = real_ids[name]


_API_DATETIME = TypeAdapter(ApiDatetime)


def _validity_in_order(case: schemathesis.Case) -> None:
    """A memory's validity ends after it starts: a rule between two fields, which JSON
    Schema cannot state. A valid request breaking it is given no valid_until, so the
    operation is still held to accept every other valid request (the rule itself:
    tests/memories/test_validity.py)."""
    body, meta = case.body, case.meta
    if meta is None or not meta.generation.mode.is_positive or not isinstance(body, dict):
        return
    try:
        start = _API_DATETIME.validate_python(body.get("valid_from"))
        end = _API_DATETIME.validate_python(body.get("valid_until"))
    except ValidationError:  # either absent or null: nothing to order
        return
    if end <= start:
        del body["valid_until"]


@pytest.fixture(scope="module", autouse=True)
def _request_count() -> Iterator[None]:
    before = APP.requests
    yield
    print(f"\nschemathesis: {APP.requests - before} requests")  # the report in `make test -s`


@settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@schema.parametrize()
def test_every_operation_conforms_to_the_schema(
    case: schemathesis.Case, real_ids: dict[str, int]
) -> None:
    SEEN.add(case.operation.label)
    _restore(real_ids)
    _use_real_ids(case, real_ids)
    _validity_in_order(case)
    case.call_and_validate(headers=AUTH)


def test_the_run_covers_every_operation_with_enough_requests() -> None:
    """Runs after the test above (file order): every operation, >= MIN_REQUESTS requests."""
    loaded = schemathesis.openapi.from_wsgi("/api/openapi.json", APP, config=CONFIG)
    operations = {result.ok().label for result in loaded.get_all_operations()}
    assert set(ACCEPTED_422) <= operations
    if not SEEN:
        pytest.skip("the schemathesis run was not selected")
    assert operations == SEEN
    assert APP.requests >= MIN_REQUESTS
