"""LongMemEval's question answering and its model judge, for ``bench longmemeval --answer``.

The retrieval side of the benchmark (``longmemeval.py``) measures whether recall finds
the evidence; this module has a chat model answer each question from a context block
and, when asked, a judge model grade the answer, exactly as the benchmark's own
scripts do, so the numbers can be set beside the published ones:

- ``ANSWER_PROMPT`` is the generation template without chain of thought
  (``src/generation/run_generation.py``, ``prepare_prompt``, ``cot`` false), sent as
  one user message with temperature 0, n 1 and max_tokens 500 (the script's
  ``gen_length`` default without chain of thought);
- ``judge_prompt`` is ``get_anscheck_prompt`` (``src/evaluation/evaluate_qa.py``), asked
  with temperature 0, n 1 and max_tokens 10; the label is whether "yes" is in the reply;
- ``<mode>.jsonl`` has the official hypothesis lines (``question_id``, ``hypothesis``),
  readable by ``evaluate_qa.py``; the judge's labels go to
  ``<mode>.jsonl.eval-results-<judge model>``, its result file name and shape
  (each hypothesis entry plus ``autoeval_label`` = ``{"model", "label"}``);
- ``history_chats`` is the script's history string (``history_format`` json).

A question the model fails to answer (ProviderError: HTTP error, refusal, filtered or
empty reply) is left out of the file, as the official script skips a failed request,
and counted as failed; an empty reply, which the official script would keep as an
empty hypothesis, fails too. An answer cut at max_tokens is kept, as there. A judge
failure is counted apart, never as a "no" (the official script retries, then stops).
The official script truncates an over-long history to the model's context; here the
server's error makes the question fail instead.

The templates are copied verbatim from https://github.com/xiaowu0162/LongMemEval
(Wu et al., 2024, "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive
Memory"), MIT License, Copyright (c) 2024 Di Wu.

This is answer accuracy as judged by a model: never mix it with retrieval recall.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any, Protocol

from django.core.management import CommandError

from spaceduck.core.providers.errors import ProviderError

ANSWER_PROMPT = (
    "I will give you several history chats between you and a user. Please answer the "
    "question based on the relevant chat history.\n\n\nHistory Chats:\n\n{}\n\n"
    "Current Date: {}\nQuestion: {}\nAnswer:"
)
ANSWER_MAX_TOKENS = 500  # run_generation.py: gen_length defaults to 500 without chain of thought
JUDGE_MAX_TOKENS = 10  # evaluate_qa.py

# The data set's question types, in the order print_qa_metrics.py reports them.
QUESTION_TYPES = (
    "single-session-user",
    "single-session-preference",
    "single-session-assistant",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)

# get_anscheck_prompt's templates, verbatim (format: question, answer or rubric or
# explanation, model response).
_FACTUAL = (
    "I will give you a question, a correct answer, and a response from a model. "
    "Please answer yes if the response contains the correct answer. Otherwise, "
    "answer no. If the response is equivalent to the correct answer or contains all "
    "the intermediate steps to get the correct answer, you should also answer yes. "
    "If the response only contains a subset of the information required by the "
    "answer, answer no. \n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\nIs "
    "the model response correct? Answer yes or no only."
)

_TEMPORAL = (
    "I will give you a question, a correct answer, and a response from a model. "
    "Please answer yes if the response contains the correct answer. Otherwise, "
    "answer no. If the response is equivalent to the correct answer or contains all "
    "the intermediate steps to get the correct answer, you should also answer yes. "
    "If the response only contains a subset of the information required by the "
    "answer, answer no. In addition, do not penalize off-by-one errors for the "
    "number of days. If the question asks for the number of days/weeks/months, etc., "
    "and the model makes off-by-one errors (e.g., predicting 19 days when the answer "
    "is 18), the model's response is still correct. \n\nQuestion: {}\n\nCorrect Answer: "
    "{}\n\nModel Response: {}\n\nIs the model response correct? Answer yes or no only."
)

_KNOWLEDGE_UPDATE = (
    "I will give you a question, a correct answer, and a response from a model. "
    "Please answer yes if the response contains the correct answer. Otherwise, "
    "answer no. If the response contains some previous information along with an "
    "updated answer, the response should be considered as correct as long as the "
    "updated answer is the required answer.\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel "
    "Response: {}\n\nIs the model response correct? Answer yes or no only."
)

_PREFERENCE = (
    "I will give you a question, a rubric for desired personalized response, and a "
    "response from a model. Please answer yes if the response satisfies the desired "
    "response. Otherwise, answer no. The model does not need to reflect all the "
    "points in the rubric. The response is correct as long as it recalls and "
    "utilizes the user's personal information correctly.\n\nQuestion: {}\n\nRubric: {}\n\n"
    "Model Response: {}\n\nIs the model response correct? Answer yes or no only."
)

_ABSTENTION = (
    "I will give you an unanswerable question, an explanation, and a response from a "
    "model. Please answer yes if the model correctly identifies the question as "
    "unanswerable. The model could say that the information is incomplete, or some "
    "other information is given but the asked information is not.\n\nQuestion: {}\n\n"
    "Explanation: {}\n\nModel Response: {}\n\nDoes the model correctly identify the "
    "question as unanswerable? Answer yes or no only."
)

_JUDGE_TEMPLATES: dict[str, str] = {
    "single-session-user": _FACTUAL,
    "single-session-assistant": _FACTUAL,
    "multi-session": _FACTUAL,
    "temporal-reasoning": _TEMPORAL,
    "knowledge-update": _KNOWLEDGE_UPDATE,
    "single-session-preference": _PREFERENCE,
}

_CHAT_ENV = {
    "provider": "SPACEDUCK_CHAT_PROVIDER",
    "model": "SPACEDUCK_CHAT_MODEL",
    "base_url": "SPACEDUCK_CHAT_BASE_URL",
    "api_key": "SPACEDUCK_CHAT_API_KEY",
    "timeout": "SPACEDUCK_CHAT_TIMEOUT",
}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def is_abstention(question_id: str) -> bool:
    """LongMemEval marks its unanswerable questions with ``_abs`` in the id."""
    return "_abs" in question_id


def check_question_type(question_type: str) -> None:
    """ValueError unless ``question_type`` is one of LongMemEval's six."""
    if question_type not in _JUDGE_TEMPLATES:
        raise ValueError(
            f"unknown LongMemEval question type {question_type!r}; "
            f"expected one of {', '.join(QUESTION_TYPES)}"
        )


def judge_prompt(
    question_type: str, question: str, answer: str, response: str, abstention: bool
) -> str:
    """The official judge prompt for one answer (``get_anscheck_prompt``).

    An abstention question gets the abstention template whatever its type, as in the
    official script; an unknown type is refused even then (it is a data error).
    """
    check_question_type(question_type)
    template = _ABSTENTION if abstention else _JUDGE_TEMPLATES[question_type]
    return template.format(question, answer, response)


def history_chats(chunks: Iterable[tuple[str, Any]]) -> str:
    """The official history string: (date, JSON-able chunk) pairs sorted by date, each
    ``"\\n### Session <i>:\\nSession Date: <date>\\nSession Content:\\n\\n<json>\\n"``.

    A chunk is a session (a list of ``{"role", "content"}`` turns) or one turn; the
    dates are LongMemEval's ``"2023/05/20 (Sat) 02:21"``, which sort as text.
    """
    ordered = sorted(chunks, key=lambda chunk: chunk[0])
    return "".join(
        f"\n### Session {i}:\nSession Date: {date}\nSession Content:\n\n{json.dumps(chunk)}\n"
        for i, (date, chunk) in enumerate(ordered, start=1)
    )


def require_model(chat_conf: Mapping[str, Any], flag: str) -> None:
    """Refuse ``flag`` unless ``chat_conf`` (``settings.SPACEDUCK_CHAT``) names a model."""
    provider = chat_conf.get("provider")
    if provider != "openai":
        raise CommandError(
            f"{flag} needs a chat model: set SPACEDUCK_CHAT_PROVIDER=openai and "
            "SPACEDUCK_CHAT_BASE_URL (any OpenAI-compatible server) or SPACEDUCK_CHAT_API_KEY; "
            f"the offline {provider} provider cannot answer questions"
        )
    if not (chat_conf.get("base_url") or chat_conf.get("api_key")):
        raise CommandError(
            f"{flag} needs a chat model: SPACEDUCK_CHAT_PROVIDER=openai needs "
            "SPACEDUCK_CHAT_BASE_URL (any OpenAI-compatible server) or SPACEDUCK_CHAT_API_KEY"
        )


def chat_env(chat_conf: Mapping[str, Any]) -> dict[str, str]:
    """The SPACEDUCK_CHAT_* variables that rebuild ``chat_conf`` in a benchmark's child
    (scratch.run_child passes none of the caller's). Holds the API key: never print it."""
    return {
        name: str(chat_conf[key])
        for key, name in _CHAT_ENV.items()
        if chat_conf.get(key) is not None and chat_conf.get(key) != ""
    }


def safe_file_name(name: str) -> str:
    """``name`` with anything but letters, digits, ``.``, ``_`` and ``-`` made ``_``
    (a model such as ``meta-llama/Llama-3.1-8B`` has a slash), never hidden or empty."""
    return _UNSAFE.sub("_", name).lstrip(".") or "_"


class TextModel(Protocol):
    """What ``Answers`` needs of a chat provider (``OpenAIChat``)."""

    model: str

    def complete_text(
        self,
        *,
        user: str,
        system: str | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> str: ...


@dataclass(frozen=True)
class Judged:
    question_id: str
    question_type: str
    label: bool


class Answers:
    """One mode's answers: asks, writes ``<mode>.jsonl`` and, when judging, grades.

    Both files are emptied when opened and get one line per question as it is done
    (opened and closed each time, so a crash keeps what was answered). The judge is
    ``judge_model`` (default: the answering model) through the same server.
    """

    def __init__(
        self,
        directory: Path,
        mode: str,
        chat: TextModel,
        judge_model: str | None = None,
        *,
        judge: bool = True,
        say: Callable[[str], object] = print,
    ) -> None:
        self.mode = mode
        self.chat = chat
        self.judge_model: str | None = (judge_model or chat.model) if judge else None
        self._say = say
        directory.mkdir(parents=True, exist_ok=True)
        self.hypotheses_path = directory / f"{safe_file_name(mode)}.jsonl"
        self.hypotheses_path.write_text("")
        self.results_path: Path | None = None
        if self.judge_model is not None:
            suffix = f".eval-results-{safe_file_name(self.judge_model)}"
            self.results_path = self.hypotheses_path.with_name(self.hypotheses_path.name + suffix)
            self.results_path.write_text("")
        self.answered = 0
        self.failed = 0
        self.judge_failed = 0
        self.judged: list[Judged] = []

    def answer(
        self,
        question_id: str,
        question_type: str,
        question: str,
        question_date: str,
        answer: str,
        context_block: str,
    ) -> str | None:
        """The model's answer (also written, and judged when judging), or None when the
        model failed: then nothing is written and ``failed`` counts it."""
        check_question_type(question_type)  # before paying for an answer that cannot be judged
        prompt = ANSWER_PROMPT.format(context_block, question_date, question)
        try:
            hypothesis = self.chat.complete_text(user=prompt, max_tokens=ANSWER_MAX_TOKENS)
        except ProviderError as exc:
            self.failed += 1
            self._warn(question_id, "no answer", exc)
            return None
        entry = {"question_id": question_id, "hypothesis": hypothesis}
        _append_line(self.hypotheses_path, entry)
        self.answered += 1
        if self.judge_model is not None:
            self._judge(entry, question_type, question, answer, self.judge_model)
        return hypothesis

    def _judge(
        self, entry: dict[str, Any], question_type: str, question: str, answer: str, model: str
    ) -> None:
        question_id = entry["question_id"]
        prompt = judge_prompt(
            question_type, question, answer, entry["hypothesis"], is_abstention(question_id)
        )
        try:
            reply = self.chat.complete_text(user=prompt, max_tokens=JUDGE_MAX_TOKENS, model=model)
        except ProviderError as exc:
            self.judge_failed += 1
            self._warn(question_id, "not judged", exc)
            return
        label = "yes" in reply.lower()  # evaluate_qa.py's rule
        assert self.results_path is not None
        _append_line(
            self.results_path, {**entry, "autoeval_label": {"model": model, "label": label}}
        )
        self.judged.append(Judged(question_id, question_type, label))

    def _warn(self, question_id: str, what: str, exc: ProviderError) -> None:
        cause = " ".join(str(exc).split())  # one line, whatever the server sent
        self._say(f"warning: {question_id}: {what}: {cause[:300]}")

    def summary(self) -> list[str]:
        asked = self.answered + self.failed
        lines = [
            f"answers ({self.mode}): {self.answered} of {asked} questions answered by "
            f"{self.chat.model}, {self.failed} failed (no answer from the model, left out)",
            f"  hypotheses: {self.hypotheses_path}",
        ]
        if self.judge_model is None:
            lines.append(
                "  not judged, so no accuracy (LongMemEval's src/evaluation/evaluate_qa.py "
                "can judge the file)"
            )
            return lines
        lines.append(
            f"  answer accuracy judged by the model {self.judge_model} with LongMemEval's "
            "judge prompts: a model's grading of the answers, not retrieval recall; "
            "never compare or mix it with recall@k"
        )
        if self.judge_failed:
            lines.append(f"  the judge failed on {self.judge_failed} answer(s): not counted")
        lines.append(f"  judge labels: {self.results_path}")
        lines.extend(self._accuracy_lines())
        return lines

    def _accuracy_lines(self) -> list[str]:
        if not self.judged:
            return ["  accuracy: nothing judged"]
        by_type = {
            qtype: [j.label for j in self.judged if j.question_type == qtype]
            for qtype in QUESTION_TYPES
        }
        present = {qtype: labels for qtype, labels in by_type.items() if labels}
        task_averaged = fmean(fmean(labels) for labels in present.values())
        lines = [
            f"  accuracy: {fmean(j.label for j in self.judged):.4f} overall "
            f"({len(self.judged)} judged), {task_averaged:.4f} averaged over "
            f"{len(present)} question type(s)"
        ]
        lines += [
            f"    {qtype:<27} {fmean(labels):.4f} ({len(labels)})"
            for qtype, labels in present.items()
        ]
        abstention = [j.label for j in self.judged if is_abstention(j.question_id)]
        if abstention:
            lines.append(
                f"    {'abstention (_abs ids)':<27} {fmean(abstention):.4f} ({len(abstention)}); "
                "also counted in their types above, as LongMemEval's scripts count them"
            )
        return lines


def _append_line(path: Path, entry: Mapping[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")
