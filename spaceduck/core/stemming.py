"""English stems of index words: what the memories keyword index stores and queries.

``stem`` is the one place a word becomes its index term, used both when a memory is
indexed (``spaceduck.core.fts.index_terms``, called by the index's triggers through
``spaceduck_terms``) and when a recall query is turned into terms
(``memories.store.keyword_index.keyword_terms``), so "dogs" finds "dog", "hiking" finds "hiked"
and "painting" finds "paints".

The stemmer is Snowball's English (Porter 2) algorithm through PyStemmer (C). Before
it, a few irregular forms that no suffix rule can reach are replaced by their base
(``IRREGULAR``: "met" -> "meet", "children" -> "child"), so "met" finds "meeting".

Words come from ``spaceduck.core.fts.index_words`` (case and diacritics folded, letters
and digits only). Snowball leaves numbers and short words alone, and its stem of
such a word is again a single index word: a prefix of it, possibly ending in an
ASCII letter ("happy" -> "happi"). ``keyword_index.phrase`` relies on that.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import Stemmer

# Irregular forms mapped to the base form the stemmer then reduces like any other
# word. Only forms with one common reading ("saw" counts: the tool is rare next to
# the verb). Left to the stemmer: "left" (leave / the side), "found" (find / to
# found), "lay", "lie", "fell", "bore", "rose", "wound", "spoke", "broke", "sat",
# "led" (LED) and "lives" (live / life). Auxiliaries (was, had, did...) are stopwords.
IRREGULAR: dict[str, str] = {
    # verbs: past tense and participle -> base
    "ate": "eat",
    "eaten": "eat",
    "began": "begin",
    "begun": "begin",
    "bought": "buy",
    "brought": "bring",
    "built": "build",
    "caught": "catch",
    "chose": "choose",
    "chosen": "choose",
    "drank": "drink",
    "drove": "drive",
    "driven": "drive",
    "felt": "feel",
    "flew": "fly",
    "flown": "fly",
    "forgot": "forget",
    "forgotten": "forget",
    "gave": "give",
    "given": "give",
    "gone": "go",
    "goes": "go",  # Snowball: "goe"
    "went": "go",
    "got": "get",
    "gotten": "get",
    "heard": "hear",
    "held": "hold",
    "kept": "keep",
    "knew": "know",
    "known": "know",
    "lost": "lose",
    "made": "make",
    "meant": "mean",
    "met": "meet",
    "paid": "pay",
    "ran": "run",
    "rode": "ride",
    "ridden": "ride",
    "said": "say",
    "sang": "sing",
    "sung": "sing",
    "saw": "see",
    "seen": "see",
    "sent": "send",
    "slept": "sleep",
    "sold": "sell",
    "spent": "spend",
    "stood": "stand",
    "swam": "swim",
    "swum": "swim",
    "taught": "teach",
    "taken": "take",
    "took": "take",
    "thought": "think",
    "told": "tell",
    "understood": "understand",
    "woke": "wake",
    "woken": "wake",
    "won": "win",
    "wore": "wear",
    "worn": "wear",
    "wrote": "write",
    "written": "write",
    # nouns: irregular plural -> singular
    "children": "child",
    "feet": "foot",
    "geese": "goose",
    "knives": "knife",
    "men": "man",
    "mice": "mouse",
    "teeth": "tooth",
    "wives": "wife",
    "wolves": "wolf",
    "women": "woman",
}

# PyStemmer's stemmer keeps state while it works, so each thread has its own (web
# threads and the huey worker call the SQL function on their own connections). Its
# internal cache is off: ``stem``'s lru_cache caches the whole word -> term mapping.
_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english", 0)
    return stemmer


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The index term of one index word (see ``spaceduck.core.fts.index_words``)."""
    return _stemmer().stemWord(IRREGULAR.get(word, word)) or word
