"""The word sets and patterns the parse reader tells clauses apart by, and its limits."""

from __future__ import annotations

import re

from memories.extraction.claims import RELATIVES

# Verbs that end what their object or complement names ("gave up the trumpet", "stopped
# playing the piano", "sold my scooter").
ENDING = frozenset(
    {
        "stop", "quit", "give_up", "sell", "leave", "drop", "ditch", "cancel", "abandon",
        "pack_in", "trade", "swap", "get_rid_of", "retire_from", "lose",
        "kick", "go_off", "rid", "delete", "uninstall", "unsubscribe", "step_down", "resign",
        "move_out", "part_with", "give_away", "throw_away", "throw_out", "bin", "replace",
    }
)  # fmt: skip
# What one holds of a thing rather than the thing ("my membership at the gym").
HOLDING = frozenset(
    {"membership", "subscription", "account", "contract", "plan", "pass", "ticket", "lease",
     "policy", "card", "licence", "license", "place", "spot", "seat"}
)  # fmt: skip
# Verbs that hand one thing in for another ("swapped my scooter for a bicycle").
EXCHANGE = frozenset({"trade", "swap", "exchange", "replace"})
# A verb whose clause only entertains its complement ("thinking about moving").
ENTERTAIN = frozenset(
    {"plan", "consider", "think", "hope", "dream", "wonder", "debate", "contemplate"}
)
# Saying or thinking, by someone other than the user: their words, not the user's.
REPORTING = frozenset(
    {"say", "think", "tell", "reckon", "believe", "claim", "suggest", "insist", "feel", "want"}
)
# Wanting or looking for something: a request, not a fact.
WANTING = frozenset({"need", "want", "look", "try", "wish", "seek", "search"})
# Words that make a whole sentence uncertain: the rules hold it loosely (a lower confidence).
GREETINGS = frozenset(
    {"hi", "hello", "hey", "hiya", "heya", "howdy", "morning", "evening", "yo", "sup", "greetings"}
)
INTENSIFIERS = frozenset({"right", "totally", "completely", "absolutely", "so", "really"})
# "done with X", "over X", "finished with X": ended; "sick of X", "tired of X": gone off it.
DONE_WITH = frozenset({"done", "finished", "over", "through"})
SICK_OF = frozenset({"sick", "tired", "bored", "fed"})
HEDGE_WORDS = frozenset(
    {"sure", "guess", "suppose", "kind", "sort", "probably", "maybe", "perhaps", "possibly",
     "think", "believe", "reckon", "apparently", "lol", "haha", "jk", "kidding"}
)  # fmt: skip
# Words that put a time in the past ("in March", "last week", "two years ago").
PAST_WORDS = frozenset(
    {"ago", "yesterday", "last", "january", "february", "march", "april", "may", "june", "july",
     "august", "september", "october", "november", "december", "earlier", "previously"}
)  # fmt: skip
# Said in the progressive, these last ("I'm learning Italian", "I'm living in Porto").
LASTING = frozenset(
    {"live", "learn", "study", "work", "teach", "stay", "train", "play", "date", "raise", "run"}
)
# Verbs that say nothing without their object ("go", "get", "make", "do").
LIGHT = frozenset({"go", "come", "get", "make", "do", "take", "put", "be", "have", "become"})
HABITUAL = frozenset({"always", "never", "only", "whenever"})
MOMENT = frozenset({"today", "tonight", "tomorrow", "yesterday", "right", "moment"})
# Objects that name nothing ("I take it every morning", "I eat everything now").
# Verbs of liking and disliking, whose object a pronoun often names ("I love them now").
STANCE = frozenset({"like", "love", "enjoy", "adore", "hate", "dislike", "stand", "miss", "mind"})
# Nouns that name nothing by themselves ("update on the bouldering thing").
GENERIC = frozenset({"thing", "things", "update", "bit", "lot", "stuff", "way", "time", "day"})
REFERRING = frozenset({"it", "that", "this", "them", "one", "these", "those"})
VAGUE = frozenset(
    {"everything", "something", "anything", "nothing", "stuff", "things", "lot", "much", "lots",
     "enough"}
)  # fmt: skip
# Verbs of the conversation itself: without an object they say nothing about the user
# ("I know, I know", "I see", "I guess", "I agree").
DISCOURSE = frozenset(
    {"know", "see", "guess", "mean", "agree", "understand", "suppose", "bet", "promise",
     "swear", "wonder", "hope", "admit", "remember", "forget", "care", "get"}
)  # fmt: skip
HEDGES = frozenset({"maybe", "perhaps", "possibly", "probably"})
UNSURE_MODALS = frozenset({"might", "may", "could", "would", "'d", "should"})
# Words that say nothing about what is claimed ("drinks oolong as well").
FILLERS = frozenset(
    {"too", "also", "anyway", "honestly", "really", "just", "basically", "literally", "mostly",
     "lately", "recently"}
)  # fmt: skip
# Nouns a subject may be the user's by ("my name is ...": the regex stage reads those).
INTRODUCTION_NOUNS = frozenset(
    {"name", "email", "e-mail", "number", "phone", "birthday", "pronoun", "address", "age",
     "password", "passphrase", "pin", "passcode", "key", "token", "secret", "login"}
)  # fmt: skip
# A place or affiliation said with one of these prepositions has one value at a time.
FUNCTIONAL_PREPS = frozenset({"in", "at", "for"})
# Prepositions whose object says when, with whom or why, never what the verb is about.
NOT_WHAT = frozenset({"until", "till", "since", "with", "because"})
# Where one lives, works or studies: one place at a time ("teaches at the primary school").
# Other verbs with a place ("swims at the lido") are about the activity: "about:swim".
LOCATIVE = frozenset({"at", "in", "on", "near", "by", "around", "inside", "outside"})
AFFILIATION = frozenset({"live", "work", "teach", "study", "stay", "reside", "volunteer"})
# Living or being somewhere with someone or something ("live in Leeds with our dog").
COMPANION_VERBS = frozenset({"live", "be", "stay", "move", "settle", "share"})
STATIVE = frozenset(
    {
        "live",
        "work",
        "teach",
        "study",
        "stay",
        "be",
        "have",
        "own",
        "play",
        "like",
        "love",
        "get",
        "know",
        "keep",
        "speak",
        "use",
        "drink",
        "eat",
    }
)
_SPACE = re.compile(r"\s+")
_AGE = re.compile(r"\b\d+\s*(?:years?|yrs?|yo)\b")
# Longer than this, a message is not parsed (the rules read it, said in the extraction
# record), nor a sentence longer than MAX_PARSED_TOKENS: a parse costs ~4 ms a sentence, and
# reading one clause walks its subtree, so a run-on of thousands of words would take minutes.
MAX_PARSED_CHARS = 20_000
MAX_PARSED_TOKENS = 120
# The people a user's noun can name ("my sister", "my colleague"): they hold their own claims.
# Whom "he" and "she" can name: a relation's sex when the word says it (a name says none).
MALE = frozenset(
    {"brother", "father", "dad", "husband", "boyfriend", "son", "uncle", "grandfather",
     "grandpa", "nephew", "fiance", "stepdad", "stepson", "grandson", "he"}
)  # fmt: skip
FEMALE = frozenset(
    {"sister", "mother", "mom", "mum", "wife", "girlfriend", "daughter", "aunt", "grandmother",
     "grandma", "niece", "fiancee", "stepmum", "stepdaughter", "granddaughter", "she"}
)  # fmt: skip
RELATION = re.compile(rf"(?:{RELATIVES}|wife|kid|child|baby|parent|partner|mate|pal|flatmate)")
_EMPTY_BRACKETS = re.compile(r"\s*\(\s*\)|\s*\((?=\s*\w+\s*$)|\s+\)(?=\s)")
