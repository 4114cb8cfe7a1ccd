"""What a memory claims, read from its canonical sentence (memories.extraction.claims), and
how two claims compare (memories.write.decide)."""

from __future__ import annotations

import pytest

from memories.extraction.claims import AFFIRMED, NEGATED, PAST, Claim, derive
from memories.write.decide import conflicts, restates, same_thing


@pytest.mark.parametrize(
    ("content", "subject", "attribute", "value", "polarity"),
    [
        ("The user lives in Munich.", "user", "location", "munich", AFFIRMED),
        ("The user's home is in Berlin, Germany.", "user", "location", "berlin, germany", AFFIRMED),
        ("The user works at Stripe.", "user", "employer", "stripe", AFFIRMED),
        ("The user works as a nurse.", "user", "role", "nurse", AFFIRMED),
        ("The user's email is ann@new.example.", "user", "email", "ann@new.example", AFFIRMED),
        ("The user's name is Anna.", "user", "name", "anna", AFFIRMED),
        ("The user is 36.", "user", "age", "36", AFFIRMED),
        ("The user loves jazz.", "user", "opinion:jazz", "positive", AFFIRMED),
        ("The user no longer likes jazz.", "user", "opinion:jazz", "positive", NEGATED),
        ("The user stopped liking hiking.", "user", "opinion:hiking", "positive", NEGATED),
        ("The user used to love opera.", "user", "opinion:opera", "positive", PAST),
        ("The user hates opera.", "user", "opinion:opera", "negative", AFFIRMED),
        ("The user is a big fan of chess.", "user", "opinion:chess", "positive", AFFIRMED),
        (
            "The user is not a fan of chess any longer.",
            "user",
            "opinion:chess",
            "positive",
            NEGATED,
        ),
        ("The user runs 5 km every morning.", "user", "habit:run", "5 km", AFFIRMED),
        (
            "The user has increased their morning run to 10 km now.",
            "user",
            "habit:run",
            "10 km",
            AFFIRMED,
        ),
        ("The user swims 40 laps on Sundays.", "user", "habit:swim", "40 lap", AFFIRMED),
        ("The user is vegetarian.", "user", "diet", "vegetarian", AFFIRMED),
        ("The user is no longer vegetarian.", "user", "diet", "vegetarian", NEGATED),
        ("The user has two kids.", "user", "count:child", "2", AFFIRMED),
        ("The user is a parent of two children.", "user", "count:child", "2", AFFIRMED),
        ("The user has three cats now.", "user", "count:cat", "3", AFFIRMED),
        # The stage is part of the value: "married" replaces "engaged" (issue 28).
        ("The user is engaged to Sam.", "user", "partner", "sam (engaged)", AFFIRMED),
        ("The user's boyfriend is Sam.", "user", "partner", "sam (dating)", AFFIRMED),
        ("The user and Sam got married in June.", "user", "partner", "sam (married)", AFFIRMED),
        ("The user and Sam broke up last month.", "user", "partner", "sam", NEGATED),
        ("Home for the user is Lisbon.", "user", "location", "lisbon", AFFIRMED),
        ("The user calls Lisbon home.", "user", "location", "lisbon", AFFIRMED),
        ("The user and their family have two cats.", "user", "count:cat", "2", AFFIRMED),
        ("The user and their family are up to three cats now.", "user", "count:cat", "3", AFFIRMED),
        ("The user's sister's birthday is May 3.", "user's sister", "birthday", "may 3", AFFIRMED),
        ("The user's sister lives in Rome.", "user's sister", "location", "rome", AFFIRMED),
        ("The user prefers coffee over tea now.", "user", "prefers:drink", "coffee", AFFIRMED),
        ("The user prefers window seats.", "user", "prefers:seat", "window seats", AFFIRMED),
        ("The user has gone off jazz.", "user", "opinion:jazz", "positive", NEGATED),
        ("Every day the user runs 5 km.", "user", "habit:run", "5 km", AFFIRMED),
        ("The user left Google and joined Stripe.", "user", "employer", "stripe", AFFIRMED),
        ("The user does not eat meat.", "user", "eats:meat", "yes", NEGATED),
    ],
)
def test_a_canonical_sentence_has_its_claim(
    content: str, subject: str, attribute: str, value: str, polarity: str
) -> None:
    claim = derive(content)
    assert claim is not None
    assert (claim.subject, claim.attribute, claim.value, claim.polarity) == (
        subject,
        attribute,
        value,
        polarity,
    )


@pytest.mark.parametrize(
    "content",
    [
        "The user is the Queen of England.",
        "The user is 5 km from the station.",
        "Never deploy on Fridays.",
        "Alice's flat is in Lisbon.",
    ],
)
def test_a_sentence_the_rules_do_not_know_claims_nothing(content: str) -> None:
    assert derive(content) is None


def claim(content: str) -> Claim:
    found = derive(content)
    assert found is not None
    return found


def test_a_change_of_mind_is_the_same_thing_with_another_polarity() -> None:
    old, new = claim("The user loves jazz."), claim("The user no longer likes jazz.")
    assert same_thing(new, old)
    assert not restates(new, old)


def test_paraphrases_restate_one_claim() -> None:
    assert restates(
        claim("The user's home is in Berlin, Germany."), claim("The user lives in Berlin.")
    )
    assert restates(claim("The user is a parent of two children."), claim("The user has two kids."))
    assert not restates(claim("The user lives in Munich."), claim("The user lives in Berlin."))


def test_a_preference_is_about_the_things_compared() -> None:
    tea = claim("The user prefers tea.")
    coffee = claim("The user prefers coffee over tea now.")
    assert same_thing(coffee, tea)
    assert not restates(coffee, tea)
    assert not same_thing(claim("The user prefers window seats."), tea)
    assert conflicts(claim("The user prefers coffee."), tea)  # both drinks: one preference


def test_different_subjects_are_never_the_same_thing() -> None:
    sister = claim("The user's sister's birthday is May 3.")
    brother = claim("The user's brother's birthday is June 9.")
    assert not same_thing(sister, brother)
    assert not same_thing(
        claim("The user lives in Rome."), claim("The user's sister lives in Rome.")
    )


@pytest.mark.parametrize(
    ("new", "old", "replaces"),
    [
        ("The user lives in Munich.", "The user lives in Berlin.", True),
        ("The user no longer likes jazz.", "The user loves jazz.", True),
        ("The user loves jazz.", "The user hates jazz.", True),
        ("The user is no longer vegetarian.", "The user is vegetarian.", True),
        ("The user has three cats now.", "The user has two cats.", True),
        ("The user prefers coffee over tea now.", "The user prefers tea.", True),
        # A denial of one value leaves another standing.
        ("The user no longer lives in Berlin.", "The user lives in Munich.", False),
        ("The user lives in Munich.", "The user no longer lives in Berlin.", False),
        ("The user's home is in Berlin, Germany.", "The user lives in Berlin.", False),  # restates
        ("The user lives in Rome.", "The user's sister lives in Rome.", False),
        ("The user is dating Sam now.", "The user is single at the moment.", True),
        ("The user is married to Sam.", "The user is engaged to Sam.", True),
        ("The user and Sam broke up last month.", "The user's boyfriend is Sam.", True),
        ("The user and Sam broke up last month.", "The user is dating Alex.", False),
        ("The user lives in Munich.", "Home for the user is Berlin.", True),
    ],
)
def test_which_claims_replace_which(new: str, old: str, replaces: bool) -> None:
    assert conflicts(claim(new), claim(old)) is replaces


def test_an_episode_has_a_claim_only_when_it_ends_a_state() -> None:
    from memories.extraction.claims import claim_of

    ended = claim_of("episode", "The user stopped being vegetarian last month.")
    assert ended is not None
    assert (ended.attribute, ended.polarity) == ("diet", NEGATED)
    assert claim_of("episode", "The user moved to Munich last week.") is None
    assert claim_of("procedure", "The user lives in Munich.") is None


def test_a_claim_fits_its_columns_however_long_the_sentence() -> None:
    long = claim("The user likes " + "x" * 1000 + " better than " + "y" * 1000 + ".")
    assert len(long.attribute) <= 120
    assert len(long.subject) <= 100
    from memories.extraction.claims import stored_value

    assert len(stored_value(long)) <= 255
    assert claim("The user likes " + "x" * 1000 + ".").attribute == ("opinion:" + "x" * 1000)[:120]


@pytest.mark.parametrize(
    ("content", "attribute", "value"),
    [
        ("The user is loving life in Munich so far.", "location", "munich"),
        ("The user has lived in Berlin their whole life.", "location", "berlin"),
        ("The user settled into a new flat in Porto.", "location", "porto"),
        ("The user always drinks tea in the morning.", "prefers:drink", "tea"),
        ("The user and their family have got two kids at home.", "count:child", "2"),
    ],
)
def test_more_phrasings_of_a_home_a_drink_and_a_count(
    content: str, attribute: str, value: str
) -> None:
    found = derive(content)
    assert found is not None
    assert (found.attribute, found.value) == (attribute, value)


@pytest.mark.parametrize(
    ("content", "attribute", "value", "polarity"),
    [
        ("The user actually loves jazz now.", "opinion:jazz", "positive", AFFIRMED),
        ("The user has grown to love opera.", "opinion:opera", "positive", AFFIRMED),
        ("The user is no longer into chess.", "opinion:chess", "positive", NEGATED),
        ("Jazz is the user's favourite thing to do.", "opinion:jazz", "positive", AFFIRMED),
        ("Chess is no longer the user's thing.", "opinion:chess", "positive", NEGATED),
        ("Tea is the user's drink of choice.", "prefers:drink", "tea", AFFIRMED),
        ("The user's go-to drink is coffee.", "prefers:drink", "coffee", AFFIRMED),
        ("The user is more of a tea person.", "prefers:drink", "tea", AFFIRMED),
        ("The user's favourite colour is blue.", "favourite:colour", "blue", AFFIRMED),
    ],
)
def test_more_phrasings_of_a_like_and_a_preference(
    content: str, attribute: str, value: str, polarity: str
) -> None:
    found = derive(content)
    assert found is not None
    assert (found.attribute, found.value, found.polarity) == (attribute, value, polarity)


def test_a_pronoun_is_no_thing_to_have_an_opinion_of() -> None:
    assert derive("It is the user's favourite.") is None


@pytest.mark.parametrize(
    "content", ["The user's home is a small flat.", "Home for the user is where the heart is."]
)
def test_a_home_that_is_no_place_is_no_location(content: str) -> None:
    assert derive(content) is None


def test_the_user_and_someone_living_somewhere_is_where_the_user_lives() -> None:
    found = derive("The user and Sam live in Oslo.")
    assert found is not None
    assert (found.subject, found.attribute, found.value) == ("user", "location", "oslo")


def test_an_opinion_of_a_pronoun_claims_nothing() -> None:
    assert derive("The user loves it here in Lisbon.") is None


@pytest.mark.parametrize(
    ("content", "attribute", "value", "polarity"),
    [
        ("The user quit their job at Google.", "employer", "google", NEGATED),
        ("The user left Google in 2025.", "employer", "google", NEGATED),  # the date is no value
        ("The user got a job at Stripe.", "employer", "stripe", AFFIRMED),
        ("The user works remotely for Stripe now.", "employer", "stripe", AFFIRMED),
        ("The user drinks coffee now, not tea.", "prefers:drink", "coffee", AFFIRMED),
        ("The user used to love jazz.", "opinion:jazz", "positive", PAST),
    ],
)
def test_more_phrasings_of_a_job_and_a_drink(
    content: str, attribute: str, value: str, polarity: str
) -> None:
    found = derive(content)
    assert found is not None
    assert (found.attribute, found.value, found.polarity) == (attribute, value, polarity)
