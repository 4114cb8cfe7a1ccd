from __future__ import annotations

import pytest

from memories.extraction.guard import check, is_question, skip_reason, strip_recalled
from memories.extraction.types import Candidate, Source

USER = Source(role="user", text="hello there")
ASSISTANT = Source(role="assistant", text="hello there")
TOOL = Source(role="tool", text="hello there")


def fact(content: str, **fields: object) -> Candidate:
    return Candidate(kind="fact", content=content, **fields)  # type: ignore[arg-type]


def episode(content: str) -> Candidate:
    return Candidate(kind="episode", content=content)


def procedure(content: str) -> Candidate:
    return Candidate(kind="procedure", content=content, procedure_subtype="behavioral")


# --- skip_reason -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (Source(role="system", text="You are a helpful assistant."), "system_message"),
        (Source(role="user", text="I live in Paris.", from_recall=True), "recalled_memory"),
        (Source(role="user", text=""), "empty"),
        (Source(role="user", text="  \n\t "), "empty"),
        (
            Source(role="user", text="<spaceduck-memories>The user is 34.</spaceduck-memories>"),
            "empty",
        ),
        (Source(role="user", text="I live in Paris."), None),
        (Source(role="assistant", text="Noted."), None),
        (Source(role="tool", text='{"ok": true}'), None),
    ],
)
def test_skip_reason(source: Source, reason: str | None) -> None:
    assert skip_reason(source) == reason


# --- strip_recalled ----------------------------------------------------------------------------


def test_it_strips_a_memory_block_and_keeps_the_rest() -> None:
    text = "Hi!\n<spaceduck-memories>\n- The user lives in Oslo.\n</spaceduck-memories>\nI'm Ada."
    stripped = strip_recalled(text)
    assert "Oslo" not in stripped
    assert stripped.startswith("Hi!")
    assert stripped.endswith("I'm Ada.")


@pytest.mark.parametrize(
    "text",
    [
        "before <SPACEDUCK-MEMORIES>secret</Spaceduck-Memories> after",
        'before <spaceduck-memories count="3">\nsecret\nsecret\n</spaceduck-memories > after',
        "before <system>secret</system> after",
        "before <System>\nsecret\n</SYSTEM> after",
        "before <system>a</system> middle-gone? no: <system>secret</system> after",
    ],
)
def test_it_strips_blocks_case_insensitively_across_lines(text: str) -> None:
    stripped = strip_recalled(text)
    assert "secret" not in stripped
    assert stripped.startswith("before")
    assert stripped.endswith("after")


def test_it_strips_several_blocks_but_not_the_text_between_them() -> None:
    text = "<system>a</system>keep<spaceduck-memories>b</spaceduck-memories>"
    assert strip_recalled(text).strip() == "keep"


def test_an_unclosed_block_drops_the_rest_of_the_text() -> None:
    assert strip_recalled("keep <spaceduck-memories>The user lives in Oslo.").strip() == "keep"


def test_stray_closing_tags_go_too() -> None:
    assert "</system>" not in strip_recalled("text </system> more")


def test_text_without_blocks_is_returned_as_is() -> None:
    text = "I think 3 < 4 and <b>bold</b> is fine."
    assert strip_recalled(text) == text


# --- questions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "Where does the user live?",
        "The user lives in Paris?",
        "Where does the user live",
        "What's the user's name",
        "Is the user vegan",
        "Does the user like tea",
        "Can the user drive",
        "How many cats does the user have",
        "Did you deploy the fix",
        'Is it "done"?',
    ],
)
def test_it_rejects_questions(content: str) -> None:
    assert check(fact(content), USER) == "question"


@pytest.mark.parametrize(
    "content",
    [
        "When deploying, always run the migrations first.",
        "Where possible, use UTC timestamps.",
        "Do not deploy on Fridays.",
        "What the user wants is fast feedback.",
        "How the user deploys: through the Makefile.",
        "Should the build fail, roll back immediately.",
        "If the tests fail, stop the release.",
    ],
)
def test_it_keeps_declaratives_that_open_like_questions(content: str) -> None:
    assert check(procedure(content), USER) is None


@pytest.mark.parametrize(
    "content",
    [
        "Hey Mel! Good to see you! How have you been?",
        "Thanks so much! Any plans for the weekend?",
        "Wow! Did you see that band?",
    ],
)
def test_greetings_around_a_question_are_still_a_question(content: str) -> None:
    assert check(episode(content), USER) == "question"


@pytest.mark.parametrize(
    "content",
    [
        'I\'m reading "Dune" by Frank Herbert. What about you?',
        "I love all dances, but contemporary is my top pick. What's your fave?",
        "Where do I live? I moved to Paris in May.",
    ],
)
def test_a_statement_beside_a_question_is_kept(content: str) -> None:
    assert check(episode(content), USER) is None


def test_is_question_looks_past_closing_quotes() -> None:
    assert is_question('He asked "is it done?"')
    assert not is_question("It is done.")


# --- poison values -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "The user's name is unknown.",
        "The user's email is not provided.",
        "The user's location is N/A.",
        "The user's age is TBD.",
        "The user's employer is [redacted].",
        "The user's birthday is not specified.",
        "The user's name is I don't know.",
        "The user's phone number: no information.",
        "The user lives in Unknown.",
        "The user's name is unknown, but they like cats.",
        "The user's email is null.",
        "The user's pronouns are undefined.",
        "The user's role is none.",
        "The cause of the outage is unknown.",
    ],
)
def test_it_rejects_placeholder_values(content: str) -> None:
    assert check(fact(content), USER) == "poison_value"


def test_weak_placeholders_count_for_slots() -> None:
    assert check(fact("The phone number is null.", slot="phone"), USER) == "poison_value"


@pytest.mark.parametrize(
    "content",
    [
        "The API returns null for missing rows.",
        "The default retry policy is none.",
        "The user knows the unknown unknowns.",
        "The user named their cat Tbd Junior.",
        "The user's surname is Na.",
    ],
)
def test_it_keeps_real_values_that_mention_placeholder_words(content: str) -> None:
    assert check(fact(content), USER) is None


# --- fragments ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "Paris.",
        "Paris, France",
        "The blue notebook",
        "The user's favourite colour",
        "Because the deploy failed.",
        "And the user likes tea.",
        "But only on Fridays.",
        "If the tests fail",
        "Never did really.",  # elliptical: what it is about is in another sentence
        "Not anymore though, and then some.",
        "The user does too.",
    ],
)
def test_it_rejects_fragments(content: str) -> None:
    assert check(fact(content), USER) == "fragment"


@pytest.mark.parametrize(
    "content",
    [
        "Because the deploy failed, the team rolled back.",
        "If the tests fail then stop the release.",
        "The user prefers tabs.",
        "It's raining in Paris.",
        "The deploy key rotates monthly.",
        "Never deploy on Fridays.",
        "The user is not vegan anymore.",
    ],
)
def test_it_keeps_complete_sentences(content: str) -> None:
    assert check(fact(content), USER) is None


@pytest.mark.parametrize(
    "content",
    [
        "Use that from now on.",
        "The user's team got another one.",
        "The user loves it.",
        "That annoys the user.",
    ],
)
def test_it_rejects_a_verb_about_a_pronoun_it_never_resolves(content: str) -> None:
    assert check(fact(content), USER) == "unresolved_reference"


@pytest.mark.parametrize(
    "content",
    ["The user has one kid.", "The user has one sister.", "The user wants that car."],
)
def test_a_numeral_or_a_determiner_before_its_noun_is_no_reference(content: str) -> None:
    assert check(fact(content), USER) is None


@pytest.mark.parametrize(
    "content",
    [
        "The user has increased it to 10 km now.",
        "The user loves it when the build is green.",
        "Use British spelling from now on.",
    ],
)
def test_it_keeps_a_pronoun_beside_what_it_says(content: str) -> None:
    assert check(fact(content), USER) is None


# --- who may state facts about the user --------------------------------------------------------


@pytest.mark.parametrize(
    "candidate",
    [
        fact("The user lives in Paris."),
        fact("User prefers dark mode."),
        fact("You prefer dark mode."),
        fact("The deploy was approved by the user yesterday."),
        fact("Paris is home.", slot="location"),
    ],
)
def test_assistants_may_not_state_facts_about_the_user(candidate: Candidate) -> None:
    assert check(candidate, ASSISTANT) == "assistant_user_fact"
    assert check(candidate, USER) != "assistant_user_fact"


@pytest.mark.parametrize(
    "candidate",
    [
        fact("The deploy key rotates monthly."),
        procedure("Always cite the source of a number."),
        Candidate(kind="episode", content="The user shipped version 2 yesterday."),
    ],
)
def test_assistants_may_state_other_things(candidate: Candidate) -> None:
    assert check(candidate, ASSISTANT) is None


def test_tool_output_may_not_state_facts_about_the_user() -> None:
    assert check(fact("The user lives in Paris."), TOOL) == "tool_user_fact"
    assert check(fact("The user's name is Ada.", slot="name"), TOOL) == "tool_user_fact"
    assert check(fact("The build takes nine minutes."), TOOL) is None


def test_tool_output_through_the_api_stage_may() -> None:
    assert check(fact("The user lives in Paris.", stage="api"), TOOL) is None


def test_a_clean_user_fact_passes() -> None:
    assert check(fact("The user lives in Paris.", slot="location"), USER) is None


@pytest.mark.parametrize(
    "content",
    [
        "The admin password is hunter2 for the staging box.",
        "The user's API key is sk-abcdefghijklmnopqrstuv123.",
        "The user's credit card number is 4111 1111 1111 1111.",
        "The deploy token ghp_abcdefghijklmnopqrstuvwxyz0123 lives in CI.",
        "The user's secret: open sesame.",
    ],
)
def test_credentials_are_never_stored(content: str) -> None:
    candidate = Candidate(kind="fact", content=content)
    assert (check(candidate, Source(role="user", text=content)) or "").startswith("secret: ")


@pytest.mark.parametrize(
    "content",
    [
        "The user keeps passwords in a password manager.",
        "The user rotates API keys every quarter.",
        "The user was born in 1990 and moved in 2015.",
    ],
)
def test_talking_about_secrets_is_not_a_secret(content: str) -> None:
    assert check(Candidate(kind="fact", content=content), Source(role="user", text=content)) is None
