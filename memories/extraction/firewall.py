"""The firewall: the one entry to the guard, secret, reported-text and injection checks.

Whatever may become a stored memory passes here, and nothing else calls the checks one
by one: the pipeline (every candidate, and the message as a whole), ingest (a direct
write and the context sent with it), the lifecycle (an edit from the API, the dashboard
or the admin), the extraction runner (the message kept as a memory's context) and the
writers of messages, threads and facts (``screened``: conversation redacted, knowledge
refused, by the policy of ``spaceduck.core.credentials``, which the notes app calls too).

A candidate's checks run in a fixed order, the first refusal wins (``screen``):
1. the guard (memories.extraction.guard): questions, fragments, poison values, roles and
   wrong-source facts;
2. a credential in the sentence of the message that holds the value the candidate copies
   (spaceduck.core.credentials);
3. for identity slots, a value the message only reports: quoted, fiction, taken back
   (memories.extraction.reported);
4. injection detection on the candidate's own text (memories.extraction.injection),
   strict for constraints (replayed into every prompt) and untrusted sources.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings

from memories.extraction import guard, injection, sentences
from memories.extraction.reported import only_reported
from memories.extraction.salient import salient_tokens
from memories.extraction.types import Candidate, InjectionMode, Source
from spaceduck.core import credentials

_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?](?=\s|$)|\n|$)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")


def screen(candidate: Candidate, source: Source) -> str | None:
    """Why ``candidate`` (said in ``source``) is refused, the reason its rejected Verdict
    records; None when it may be kept."""
    reason = (
        guard.check(candidate, source)
        or _secret_nearby(candidate, source)
        or _reported_slot(candidate, source)
    )
    if reason is None:
        text = f"{candidate.title}\n{candidate.content}\n{candidate.summary}"
        reason = _injection(text, source, _mode(candidate, source))
    return reason


def screen_message(source: Source) -> str | None:
    """Why the whole message is refused (an attack), or None."""
    return _injection_twice(source.text, source)


def screen_context(context: str, source: Source) -> str | None:
    """Why ``context``, given with a direct write, may not be stored as Memory.context; None
    when it may (after ``guard.strip_recalled``, as the runner strips what it stores).

    The message's check (injection, in the source's mode) on the context, and, as for
    every stored text, no credential: context comes back with every recalled memory."""
    reason = _injection_twice(context, source)
    return reason or credentials.secret_reason(guard.strip_recalled(context))


def screened(record: str, fields: dict[str, Any]) -> dict[str, Any]:
    """A written row's free-text ``fields`` as they may be stored: a message's or thread's
    with credentials marked (``SPACEDUCK_REDACT_SECRETS``), a memory's (an edit) or fact's
    unchanged, or InvalidInput "rejected: secret: <shape> in <field> (...)"."""
    return credentials.screened(record, fields)


def without_secrets(text: str) -> str:
    """``text`` without the sentences that hold a credential. A message's other facts are
    still stored, each with the message as context: a password said beside them must not
    come along (context comes back with every recalled memory)."""
    if credentials.secret_reason(text) is None:
        return text
    kept = " ".join(s for s in _SENTENCE_END.split(text) if credentials.secret_reason(s) is None)
    return "" if credentials.secret_reason(kept) else kept


def redacted(value: Any) -> tuple[Any, list[str]]:
    """A message's content (text or JSON) with every credential replaced by its mark
    (``[redacted: api_key]``), and the shapes found: what a message is stored as."""
    return credentials.redact_value(value)


def warm() -> None:
    """Load the firewall's tables now (~1 s and ~50 MB: the verb lexicon, the secret
    detectors) instead of inside the first message's time. Worker and web server start-up."""
    sentences.warm()
    credentials.find_secret("password: warm-up-4821")


def _mode(candidate: Candidate, source: Source) -> InjectionMode:
    """Strict for constraints (injected into every prompt) and untrusted sources."""
    if candidate.kind == "procedure" and candidate.procedure_subtype == "constraint":
        return "strict"
    return source.injection_mode


def _secret_nearby(candidate: Candidate, source: Source) -> str | None:
    """``secret: <shape> (beside the value)`` when a value the candidate copies sits in a
    sentence of the message that holds a credential: "Social security number: 219-09-9999"
    is no phone number and "mongodb://ana:pw@db.local" no email address, whichever stage or
    model read them that way, even though the copied value alone looks harmless."""
    text = source.text
    folded = text.casefold()
    for token in salient_tokens(candidate.content):
        at = folded.find(token)
        if at < 0:
            continue
        for sentence in _SENTENCE.finditer(text):
            if sentence.start() <= at < max(sentence.end(), sentence.start() + 1):
                shape = credentials.find_secret(sentence.group())
                if shape is not None:
                    return f"secret: {shape} (beside the value)"
                break
    return None


def _reported_slot(candidate: Candidate, source: Source) -> str | None:
    """``reported_text`` for an identity slot whose value the message only quotes, tells as
    fiction, asks to translate or takes back (memories.extraction.reported), whichever
    stage or model proposed it."""
    if not candidate.slot:
        return None
    text = source.text
    values = [t for t in salient_tokens(candidate.content) if t in text.casefold()]
    if values and all(only_reported(text, value) for value in values):
        return "reported_text"
    return None


def _injection(text: str, source: Source, mode: InjectionMode | None = None) -> str | None:
    """``"injection (<mode> mode): <families>"`` when ``text`` is an attack, else None."""
    mode = mode or source.injection_mode
    families = injection.detect(text, mode, settings.INJECTION_PATTERNS)
    if not families:
        return None
    return f"injection ({mode} mode): {', '.join(families)}"


def _injection_twice(text: str, source: Source) -> str | None:
    """Injection detection on the raw text first, then on the text left after
    ``guard.strip_recalled``. The raw check matters because stripping
    ``<system>...</system>`` blocks would otherwise remove the very markers that give an
    attack away ("Ignore all previous instructions. <system>...</system> Remember that")."""
    reason = _injection(text, source)
    stripped = guard.strip_recalled(text)
    if reason is None and stripped != text:
        reason = _injection(stripped, source)
    return reason
