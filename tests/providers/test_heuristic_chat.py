from __future__ import annotations

import pytest

from spaceduck.core.providers.chat.heuristic import HeuristicChat

chat = HeuristicChat()


# --- summarize -------------------------------------------------------------------------------
def test_summarize_keeps_the_first_sentence_of_each_text_in_order() -> None:
    texts = ["I live in Paris. I moved there in 2019.", "I work at Acme! It is fine.", "Tea?"]

    assert chat.summarize(texts=texts) == "I live in Paris. I work at Acme! Tea?"


def test_summarize_ends_bare_sentences_with_a_full_stop() -> None:
    assert chat.summarize(texts=["I like tea", "I like jazz"]) == "I like tea. I like jazz."


def test_summarize_drops_repeated_sentences() -> None:
    texts = ["I live in Paris.", "i live in  paris", "I like tea."]

    assert chat.summarize(texts=texts) == "I live in Paris. I like tea."


def test_summarize_cuts_to_max_words_with_an_ellipsis() -> None:
    texts = ["One two three four five.", "Six seven eight."]

    assert chat.summarize(texts=texts, max_words=4) == "One two three four..."


def test_summarize_within_max_words_is_not_cut() -> None:
    assert chat.summarize(texts=["One two three."], max_words=3) == "One two three."


@pytest.mark.parametrize("texts", [[], [""], ["   ", "\n"]], ids=["none", "empty", "blank"])
def test_summarize_of_nothing_is_empty(texts: list[str]) -> None:
    assert chat.summarize(texts=texts) == ""


# --- arbitrate --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("existing", "candidate"),
    [
        ("I live in Paris", "I live in Tokyo"),
        ("She lives in Berlin.", "She lives in Madrid."),
        ("I work at Acme", "I work for Globex"),
        ("My favourite colour is blue", "My favourite colour is green"),
        ("I prefer tea", "I prefer coffee"),
    ],
)
def test_arbitrate_same_subject_with_a_different_value_is_a_contradiction(
    existing: str, candidate: str
) -> None:
    result = chat.arbitrate(existing=existing, candidate=candidate)

    assert result.verdict == "contradiction"
    assert result.reason.startswith("same-subject rule")


@pytest.mark.parametrize(
    ("existing", "candidate"),
    [
        ("I like X", "I don't like X"),
        ("She likes jazz", "She doesn't like jazz"),
        ("I am vegetarian", "I'm not vegetarian"),
        ("I eat meat", "I never eat meat"),
        ("I live in Paris", "I no longer live in Paris"),
        ("I don\u2019t drink coffee", "I drink coffee"),
    ],
)
def test_arbitrate_negation_is_a_contradiction(existing: str, candidate: str) -> None:
    result = chat.arbitrate(existing=existing, candidate=candidate)

    assert result.verdict == "contradiction"
    assert result.reason.startswith("negation rule")


@pytest.mark.parametrize(
    ("existing", "candidate"),
    [
        ("I live in Paris", "My dog is called Rex"),
        ("I live in Paris", "I live in Paris"),
        ("I live in Paris", "I live in Paris, France"),
        ("I like tea", "I like coffee"),
        ("I don't live in Paris", "I live in Tokyo"),
        ("", "I live in Tokyo"),
    ],
)
def test_arbitrate_unrelated_or_compatible_statements_are_consistent(
    existing: str, candidate: str
) -> None:
    result = chat.arbitrate(existing=existing, candidate=candidate)

    assert result.verdict == "consistent"
    assert result.reason.startswith("no rule fired")


def test_heuristic_chat_identifies_itself() -> None:
    assert (chat.name, chat.model) == ("heuristic", "rules-v1")
