"""``bench longmemeval --answer``'s model side: the official prompts, the configuration
checks, and ``Answers`` against the local fake OpenAI server (tests/fakes/openai_server.py),
with its files read back the way LongMemEval's evaluate_qa.py reads them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError

from spaceduck.core.providers.chat.openai import OpenAIChat
from spaceduck.ops.benchmarks.longmemeval_answers import (
    ANSWER_PROMPT,
    QUESTION_TYPES,
    Answers,
    chat_env,
    history_chats,
    judge_prompt,
    require_model,
    safe_file_name,
)
from tests.fakes.openai_server import FakeOpenAI

CONTEXT = "\n### Session 1:\nSession Date: 2023/05/20 (Sat) 02:21\nSession Content:\n\n[]\n"
DATE = "2023/05/30 (Tue) 23:40"


def openai_conf(fake: FakeOpenAI) -> dict[str, Any]:
    return {
        "provider": "openai",
        "model": "answer-model",
        "base_url": fake.base_url,
        "api_key": "sk-test",
        "timeout": 5.0,
    }


def is_judge_prompt(request: dict[str, Any]) -> bool:
    return "Answer yes or no only." in request["messages"][-1]["content"]


def scripted(request: dict[str, Any]) -> str:
    """Answers "Friday"; the judge says yes unless the question mentions "wrong"."""
    prompt = request["messages"][-1]["content"]
    if is_judge_prompt(request):
        return "No." if "wrong" in prompt else "Yes"
    return "Friday"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """As evaluate_qa.py reads a hypothesis file."""
    with open(path) as handle:
        return [json.loads(line) for line in handle.readlines()]


# --- the official prompts --------------------------------------------------------------------
def test_answer_prompt_is_the_official_template_without_chain_of_thought() -> None:
    assert ANSWER_PROMPT == (
        "I will give you several history chats between you and a user. Please answer the "
        "question based on the relevant chat history.\n\n\nHistory Chats:\n\n{}\n\n"
        "Current Date: {}\nQuestion: {}\nAnswer:"
    )
    assert "step by step" not in ANSWER_PROMPT


@pytest.mark.parametrize(
    ("question_type", "phrase"),
    [
        ("single-session-user", "If the response only contains a subset of the information"),
        ("single-session-assistant", "contains all the intermediate steps"),
        ("multi-session", "answer no. \n\nQuestion: Q\n\nCorrect Answer: A\n\nModel Response: R"),
        ("temporal-reasoning", "do not penalize off-by-one errors for the number of days"),
        ("temporal-reasoning", "(e.g., predicting 19 days when the answer is 18)"),
        ("knowledge-update", "some previous information along with an updated answer"),
        ("single-session-preference", "a rubric for desired personalized response"),
        ("single-session-preference", "\n\nQuestion: Q\n\nRubric: A\n\nModel Response: R"),
    ],
)
def test_judge_prompt_is_the_official_template_of_each_type(
    question_type: str, phrase: str
) -> None:
    prompt = judge_prompt(question_type, "Q", "A", "R", False)

    assert prompt.startswith("I will give you a question, a")
    assert phrase in prompt
    assert prompt.endswith("\n\nIs the model response correct? Answer yes or no only.")


def test_the_three_factual_types_share_one_template() -> None:
    prompts = {
        judge_prompt(t, "Q", "A", "R", False)
        for t in ("single-session-user", "single-session-assistant", "multi-session")
    }

    assert len(prompts) == 1
    assert "off-by-one" not in prompts.pop()


@pytest.mark.parametrize("question_type", QUESTION_TYPES)
def test_an_abstention_question_gets_the_abstention_template_whatever_its_type(
    question_type: str,
) -> None:
    prompt = judge_prompt(question_type, "Q", "Not mentioned.", "R", True)

    assert prompt == (
        "I will give you an unanswerable question, an explanation, and a response from a model. "
        "Please answer yes if the model correctly identifies the question as unanswerable. "
        "The model could say that the information is incomplete, or some other information is "
        "given but the asked information is not.\n\nQuestion: Q\n\nExplanation: Not mentioned."
        "\n\nModel Response: R\n\nDoes the model correctly identify the question as "
        "unanswerable? Answer yes or no only."
    )


def test_judge_prompt_refuses_an_unknown_type() -> None:
    with pytest.raises(ValueError, match="unknown LongMemEval question type 'trivia'"):
        judge_prompt("trivia", "Q", "A", "R", False)


def test_history_chats_is_the_official_json_history_sorted_by_date() -> None:
    later = [{"role": "user", "content": "I moved to Lisbon."}]
    earlier = [{"role": "user", "content": "I live in Porto."}]

    block = history_chats([("2023/06/01 (Thu) 10:00", later), ("2023/05/20 (Sat) 02:21", earlier)])

    assert block == (
        "\n### Session 1:\nSession Date: 2023/05/20 (Sat) 02:21\nSession Content:\n\n"
        '[{"role": "user", "content": "I live in Porto."}]\n'
        "\n### Session 2:\nSession Date: 2023/06/01 (Thu) 10:00\nSession Content:\n\n"
        '[{"role": "user", "content": "I moved to Lisbon."}]\n'
    )


# --- configuration ---------------------------------------------------------------------------
def test_require_model_refuses_the_heuristic_provider() -> None:
    conf = {"provider": "heuristic", "model": None, "base_url": None, "api_key": None}

    with pytest.raises(CommandError) as caught:
        require_model(conf, "--answer")

    message = str(caught.value)
    assert message.startswith("--answer needs a chat model: set SPACEDUCK_CHAT_PROVIDER=openai")
    assert (
        "SPACEDUCK_CHAT_BASE_URL (any OpenAI-compatible server) or SPACEDUCK_CHAT_API_KEY"
        in message
    )
    assert "the offline heuristic provider cannot answer questions" in message


def test_require_model_refuses_openai_without_a_server_or_key() -> None:
    conf = {"provider": "openai", "model": "m", "base_url": None, "api_key": None}

    with pytest.raises(CommandError, match="SPACEDUCK_CHAT_BASE_URL"):
        require_model(conf, "--judge")


def test_require_model_accepts_an_openai_compatible_server(fake_openai: FakeOpenAI) -> None:
    require_model(openai_conf(fake_openai), "--answer")  # no error
    require_model(openai_conf(fake_openai) | {"api_key": None}, "--answer")


def test_the_test_settings_use_the_heuristic_provider() -> None:
    with pytest.raises(CommandError, match="heuristic"):
        require_model(settings.SPACEDUCK_CHAT, "--answer")


def test_chat_env_leaves_out_what_is_unset() -> None:
    conf = {"provider": "openai", "model": None, "base_url": "", "api_key": "k", "timeout": 60.0}

    assert chat_env(conf) == {
        "SPACEDUCK_CHAT_PROVIDER": "openai",
        "SPACEDUCK_CHAT_API_KEY": "k",
        "SPACEDUCK_CHAT_TIMEOUT": "60.0",
    }


@pytest.mark.slow
def test_chat_env_round_trips_through_the_settings_of_a_child(tmp_path: Path) -> None:
    conf = {
        "provider": "openai",
        "model": "qwen2.5:7b-instruct",
        "base_url": "http://127.0.0.1:11434/v1",
        "api_key": "sk-secret",
        "timeout": 12.5,
    }
    # As scratch.run_child builds a child's environment: none of the caller's SPACEDUCK_*.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPACEDUCK_")}
    env |= {
        "DJANGO_SETTINGS_MODULE": "spaceduck.settings",
        "SPACEDUCK_DATA_DIR": str(tmp_path),
        **chat_env(conf),
    }
    script = (
        "import json, django; django.setup(); from django.conf import settings; "
        "print(json.dumps(settings.SPACEDUCK_CHAT))"
    )

    child = subprocess.run(
        [sys.executable, "-c", script],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )

    assert json.loads(child.stdout.strip().splitlines()[-1]) == conf


def test_safe_file_name_keeps_a_model_name_inside_its_directory() -> None:
    assert safe_file_name("gpt-4o-2024-08-06") == "gpt-4o-2024-08-06"
    assert safe_file_name("meta-llama/Meta-Llama-3.1-70B-Instruct") == (
        "meta-llama_Meta-Llama-3.1-70B-Instruct"
    )
    assert safe_file_name("qwen2.5:7b") == "qwen2.5_7b"
    assert safe_file_name("../x") == "_x"
    assert safe_file_name("..") == "_"


# --- Answers against the fake server ---------------------------------------------------------
def make_answers(fake: FakeOpenAI, directory: Path, **options: Any) -> Answers:
    fake.set_chat_handler(scripted)
    chat = OpenAIChat.from_settings(openai_conf(fake))
    return Answers(
        directory, "hybrid", chat, options.pop("judge_model", "judge/model-1"), **options
    )


def ask(answers: Answers, question_id: str, question_type: str, question: str) -> str | None:
    return answers.answer(question_id, question_type, question, DATE, "Friday", CONTEXT)


def test_answers_writes_the_official_hypothesis_file(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    answers = make_answers(fake_openai, tmp_path, judge=False)

    assert ask(answers, "q1", "single-session-user", "What day is yoga?") == "Friday"
    assert ask(answers, "q2", "multi-session", "When do I swim?") == "Friday"

    hypotheses = read_jsonl(tmp_path / "hybrid.jsonl")
    assert hypotheses == [
        {"question_id": "q1", "hypothesis": "Friday"},
        {"question_id": "q2", "hypothesis": "Friday"},
    ]
    assert [(e["question_id"], e["hypothesis"]) for e in hypotheses] == [
        ("q1", "Friday"),
        ("q2", "Friday"),
    ]
    assert not list(tmp_path.glob("*.eval-results-*"))  # not judged: no result file


def test_answers_sends_the_official_prompt_as_one_user_message(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    answers = make_answers(fake_openai, tmp_path, judge=False)

    ask(answers, "q1", "temporal-reasoning", "What day is yoga?")

    (request,) = fake_openai.requests_to("chat")
    body = request.json
    assert body["model"] == "answer-model"
    assert body["messages"] == [
        {"role": "user", "content": ANSWER_PROMPT.format(CONTEXT, DATE, "What day is yoga?")}
    ]
    prompt = body["messages"][0]["content"]
    assert CONTEXT in prompt
    assert f"Current Date: {DATE}\nQuestion: What day is yoga?\nAnswer:" in prompt
    assert (body["temperature"], body["n"], body["max_tokens"]) == (0, 1, 500)


def test_answers_judges_with_the_judge_model_and_writes_the_official_result_file(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    answers = make_answers(fake_openai, tmp_path)

    ask(answers, "q1", "knowledge-update", "What day is yoga now?")
    ask(answers, "q2", "knowledge-update", "A wrong question?")

    judge_calls = [r.json for r in fake_openai.requests_to("chat") if is_judge_prompt(r.json)]
    assert len(judge_calls) == 2
    first = judge_calls[0]
    assert (first["model"], first["max_tokens"], first["temperature"]) == ("judge/model-1", 10, 0)
    assert first["messages"] == [
        {
            "role": "user",
            "content": judge_prompt(
                "knowledge-update", "What day is yoga now?", "Friday", "Friday", False
            ),
        }
    ]
    results = read_jsonl(tmp_path / "hybrid.jsonl.eval-results-judge_model-1")
    assert results == [
        {
            "question_id": "q1",
            "hypothesis": "Friday",
            "autoeval_label": {"model": "judge/model-1", "label": True},
        },
        {
            "question_id": "q2",
            "hypothesis": "Friday",
            "autoeval_label": {"model": "judge/model-1", "label": False},
        },
    ]


def test_the_judge_defaults_to_the_answering_model(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    answers = make_answers(fake_openai, tmp_path, judge_model=None)

    ask(answers, "q1", "single-session-user", "What day is yoga?")

    assert answers.judge_model == "answer-model"
    assert (tmp_path / "hybrid.jsonl.eval-results-answer-model").exists()
    assert {r.json["model"] for r in fake_openai.requests_to("chat")} == {"answer-model"}


def test_an_abstention_question_is_judged_with_the_abstention_template(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    answers = make_answers(fake_openai, tmp_path)

    ask(answers, "q7_abs", "multi-session", "What day is my tennis?")

    judge_call = next(r.json for r in fake_openai.requests_to("chat") if is_judge_prompt(r.json))
    assert judge_call["messages"][0]["content"].startswith(
        "I will give you an unanswerable question, an explanation"
    )


def test_a_failed_question_is_left_out_counted_and_warned_about(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    said: list[str] = []
    answers = make_answers(fake_openai, tmp_path, judge=False, say=said.append)

    ask(answers, "q1", "single-session-user", "First?")
    fake_openai.enqueue("chat", status=500, body={"error": {"message": "boom\nagain"}})
    assert ask(answers, "q2", "single-session-user", "Second?") is None
    ask(answers, "q3", "single-session-user", "Third?")

    assert [e["question_id"] for e in read_jsonl(tmp_path / "hybrid.jsonl")] == ["q1", "q3"]
    assert (answers.answered, answers.failed) == (2, 1)
    (warning,) = said
    assert warning.startswith("warning: q2: no answer: ")
    assert "HTTP 500: boom again" in warning
    assert "\n" not in warning


def test_a_judge_failure_keeps_the_hypothesis_and_counts_apart(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    said: list[str] = []
    answers = make_answers(fake_openai, tmp_path, say=said.append)
    fake_openai.enqueue("chat", content="Friday")  # the answer
    fake_openai.enqueue("chat", refusal="I cannot judge.")  # the judge

    ask(answers, "q1", "single-session-user", "First?")

    assert read_jsonl(tmp_path / "hybrid.jsonl") == [{"question_id": "q1", "hypothesis": "Friday"}]
    assert read_jsonl(tmp_path / "hybrid.jsonl.eval-results-judge_model-1") == []
    assert (answers.answered, answers.failed, answers.judge_failed) == (1, 0, 1)
    assert said[0].startswith("warning: q1: not judged: ")
    assert "the judge failed on 1 answer(s): not counted" in "\n".join(answers.summary())


def test_an_unknown_question_type_is_refused_before_asking(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    answers = make_answers(fake_openai, tmp_path)

    with pytest.raises(ValueError, match="unknown LongMemEval question type"):
        ask(answers, "q1", "trivia", "What?")

    assert fake_openai.requests == []


def test_opening_a_mode_again_starts_its_files_afresh(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    ask(make_answers(fake_openai, tmp_path), "q1", "single-session-user", "First?")

    make_answers(fake_openai, tmp_path)

    assert (tmp_path / "hybrid.jsonl").read_text() == ""
    assert (tmp_path / "hybrid.jsonl.eval-results-judge_model-1").read_text() == ""


# --- the summary ---------------------------------------------------------------------------------
def test_summary_gives_accuracy_per_type_and_abstention_apart(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    answers = make_answers(fake_openai, tmp_path, say=lambda line: None)
    ask(answers, "q1", "single-session-user", "Yoga?")
    ask(answers, "q2", "single-session-user", "A wrong one?")
    ask(answers, "q3_abs", "temporal-reasoning", "Tennis?")
    fake_openai.enqueue("chat", status=500, body={"error": {"message": "boom"}})
    ask(answers, "q4", "temporal-reasoning", "Golf?")

    text = "\n".join(answers.summary())

    assert "answers (hybrid): 3 of 4 questions answered by answer-model, 1 failed" in text
    assert "judged by the model judge/model-1" in text
    assert "not retrieval recall" in text
    assert "accuracy: 0.6667 overall (3 judged), 0.7500 averaged over 2 question type(s)" in text
    assert "single-session-user         0.5000 (2)" in text
    assert "temporal-reasoning          1.0000 (1)" in text
    assert "abstention (_abs ids)       1.0000 (1); also counted in their types above" in text
    assert "knowledge-update" not in text  # no question of that type


def test_summary_without_a_judge_gives_no_accuracy(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    answers = make_answers(fake_openai, tmp_path, judge=False)
    ask(answers, "q1", "single-session-user", "Yoga?")

    text = "\n".join(answers.summary())

    assert "1 of 1 questions answered by answer-model, 0 failed" in text
    assert "not judged, so no accuracy" in text
    assert "accuracy:" not in text
