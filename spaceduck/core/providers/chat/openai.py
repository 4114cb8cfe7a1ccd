"""The chat LLM through the OpenAI API or any OpenAI-compatible server.

Every job is a ``json_schema`` structured-output call (``complete_json``), and
the answer is checked again here: compatible servers often ignore the schema,
so a missing key or an off-list verdict must fail loudly as ProviderError
rather than flow into the data. The client never retries; the task queue does.

``complete_text`` is the one plain-text call: benchmarks that have a model answer
questions and a judge model grade the answers (``bench longmemeval --answer``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import openai
from django.core.exceptions import ImproperlyConfigured
from openai.types.chat import ChatCompletionMessageParam

from spaceduck.core.providers.chat.base import Arbitration
from spaceduck.core.providers.embeddings.openai import describe_openai_error
from spaceduck.core.providers.errors import ProviderError

DEFAULT_MODEL = "gpt-4o-mini"

SUMMARY_SYSTEM_PROMPT = (
    "You condense notes for a long-term memory store. Write one plain-prose summary "
    "of the numbered texts, following their order. Keep names, numbers, dates and "
    "decisions; add nothing the texts do not say. Use at most {max_words} words."
)
SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"summary": {"type": "string"}},
    "required": ["summary"],
    "additionalProperties": False,
}

ARBITRATION_SYSTEM_PROMPT = (
    "You check a user's long-term memory for contradictions. Given an existing statement "
    "and a candidate statement, answer 'contradiction' only when both are about the same "
    "subject and cannot both be true (for example two different home cities, or a "
    "preference and its negation). Added detail, different topics and compatible facts "
    "are 'consistent'. When you cannot tell (the candidate may be a joke, a hypothetical or "
    "a quotation, or may be about something else), answer 'unsure': a person will decide. "
    "Give a one-sentence reason."
)
ARBITRATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["contradiction", "consistent", "unsure"]},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


class OpenAIChat:
    name = "openai"
    has_model = True

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.model = model
        self.timeout = timeout
        # Local servers ignore the key, but the client insists on having one.
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=0
        )

    @classmethod
    def from_settings(cls, conf: Mapping[str, Any]) -> OpenAIChat:
        if not (conf.get("base_url") or conf.get("api_key")):
            raise ImproperlyConfigured(
                "SPACEDUCK_CHAT_PROVIDER=openai needs SPACEDUCK_CHAT_BASE_URL "
                "or SPACEDUCK_CHAT_API_KEY."
            )
        return cls(
            model=conf.get("model") or DEFAULT_MODEL,
            base_url=conf.get("base_url"),
            api_key=conf.get("api_key"),
            timeout=conf.get("timeout") or 60.0,
        )

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    # --- jobs ------------------------------------------------------------------
    def summarize(self, *, texts: Sequence[str], max_words: int = 120) -> str:
        kept = [text.strip() for text in texts if text.strip()]
        if not kept:
            return ""  # nothing to summarise; no reason to ask a model
        answer = self.complete_json(
            system=SUMMARY_SYSTEM_PROMPT.format(max_words=max_words),
            user="\n".join(f"{n}. {text}" for n, text in enumerate(kept, start=1)),
            schema_name="summary",
            schema=SUMMARY_SCHEMA,
        )
        summary = answer["summary"].strip()
        if not summary:
            raise self._error("the summary is empty")
        return summary

    def arbitrate(self, *, existing: str, candidate: str) -> Arbitration:
        answer = self.complete_json(
            system=ARBITRATION_SYSTEM_PROMPT,
            user=f"Existing statement:\n{existing}\n\nCandidate statement:\n{candidate}",
            schema_name="arbitration",
            schema=ARBITRATION_SCHEMA,
        )
        return Arbitration(verdict=answer["verdict"], reason=answer["reason"].strip())

    # --- structured output -------------------------------------------------------
    def complete_json(
        self, *, system: str, user: str, schema_name: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask for a JSON object matching ``schema``; raise ProviderError unless it does."""
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "schema": schema, "strict": True},
                },
                temperature=0,
            )
        except (openai.OpenAIError, json.JSONDecodeError) as exc:
            raise self._error(describe_openai_error(exc, self.timeout)) from exc
        answer = self._parse_object(self._content(response))
        problem = _schema_problem(answer, schema)
        if problem:
            raise self._error(f"{schema_name} answer {problem}")
        return answer

    # --- plain text --------------------------------------------------------------------
    def complete_text(
        self,
        *,
        user: str,
        system: str | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> str:
        """The model's plain-text reply to ``user``, stripped; ProviderError on failure.

        ``model`` replaces ``self.model`` for this call only (a judge model grading
        another model's answers). With ``max_tokens`` set, a reply cut at that limit
        (finish_reason ``length``) is still returned: the caller asked for at most that
        many tokens, and cut text, unlike cut JSON, is still usable. LongMemEval's judge
        depends on it: it allows 10 tokens and only looks for "yes" in the reply. Without
        ``max_tokens`` a cut reply was cut by a limit nobody chose, and raises as in
        ``complete_json``.
        """
        used = model or self.model
        messages: list[ChatCompletionMessageParam] = []
        if system is not None:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": user})
        # Left out when unset (None would be sent as null): the server's own limit applies.
        limit: dict[str, Any] = {} if max_tokens is None else {"max_tokens": max_tokens}
        try:
            response = self._client.chat.completions.create(
                model=used, messages=messages, temperature=0, n=1, **limit
            )
        except (openai.OpenAIError, json.JSONDecodeError) as exc:
            raise self._error(describe_openai_error(exc, self.timeout), model=used) from exc
        content = self._content(response, allow_length=max_tokens is not None, model=used)
        return content.strip()

    # --- reading replies -----------------------------------------------------------------
    def _content(
        self, response: Any, *, allow_length: bool = False, model: str | None = None
    ) -> str:
        """The reply's text, checked; ``allow_length`` accepts text cut at max_tokens."""
        try:
            choice = response.choices[0]
            message = choice.message
        except (AttributeError, IndexError, TypeError) as exc:
            raise self._error(f"malformed response, no choices ({exc})", model=model) from exc
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise self._error(f"the model refused: {refusal}", model=model)
        if choice.finish_reason == "length" and not allow_length:
            raise self._error("the answer was cut off (finish_reason=length)", model=model)
        if choice.finish_reason == "content_filter":
            raise self._error("the answer was withheld by a content filter", model=model)
        content = message.content
        if not isinstance(content, str) or not content.strip():
            cut = " (cut off at max_tokens)" if choice.finish_reason == "length" else ""
            raise self._error(f"the answer is empty{cut}", model=model)
        return content

    def _parse_object(self, content: str) -> dict[str, Any]:
        try:
            value = json.loads(content)
        except ValueError as exc:
            raise self._error(f"the answer is not valid JSON: {content[:200]!r}") from exc
        if not isinstance(value, dict):
            raise self._error(f"the answer is not a JSON object: {content[:200]!r}")
        return value

    def _error(self, cause: str, *, model: str | None = None) -> ProviderError:
        used = model or self.model
        return ProviderError(f"openai chat failed (model {used} at {self.base_url}): {cause}")


def _schema_problem(answer: Mapping[str, Any], schema: Mapping[str, Any]) -> str | None:
    """Check the top level only: required keys, simple types and enums. None when fine."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in answer:
            return f"is missing the required key {key!r}"
    for key, spec in properties.items():
        if key not in answer:
            continue
        value = answer[key]
        expected = _JSON_TYPES.get(spec.get("type", ""))
        # bool is an int in Python, but not a JSON number.
        wrong_type = expected and (
            not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected)
        )
        if wrong_type:
            return f"has {key!r} of type {type(value).__name__}, expected {spec['type']}"
        if "enum" in spec and value not in spec["enum"]:
            return f"has {key!r} = {value!r}, expected one of {spec['enum']}"
    return None
