"""Comparing claims: whether two are about one thing, whether one replaces or restates the
other. What memories.write.dedup decides a candidate's fate on, before similarity;
memories.extraction.claims only reads claims."""

from __future__ import annotations

import re

from memories.extraction.claims import AFFIRMED, Claim

# --- Comparing two claims --------------------------------------------------------------------


def same_thing(a: Claim, b: Claim) -> bool:
    """Whether the two claims are about one thing (so one value at a time)."""
    if a.key != b.key:
        return False
    if a.attribute != "prefers":
        return True  # "prefers:drink": one preference among drinks
    # "prefers tea" and "prefers coffee over tea" are about tea against coffee; "prefers
    # window seats" is about something else.
    return bool(({a.value} | a.others) & ({b.value} | b.others))


def conflicts(new: Claim, old: Claim) -> bool:
    """Whether both cannot hold at once, so the newer replaces the older: another value
    of the same thing, both affirmed ("lives in Munich" / "lives in Berlin"), or the same
    value said the other way ("no longer likes jazz" / "loves jazz"). A denial of one
    value leaves another standing ("no longer lives in Berlin" / "lives in Munich")."""
    if not same_thing(new, old) or restates(new, old):
        return False
    if new.polarity == old.polarity:
        return new.polarity == AFFIRMED
    # "is single" (no partner at all) against "is dating Sam"; else the same value.
    return not new.value or not old.value or same_value(_unstaged(new.value), _unstaged(old.value))


def restates(new: Claim, old: Claim) -> bool:
    """The same thing with the same value and polarity ("Berlin" and "Berlin, Germany")."""
    return (
        same_thing(new, old) and new.polarity == old.polarity and same_value(new.value, old.value)
    )


def same_value(a: str, b: str) -> bool:
    """Equal, or one names the other more precisely at a comma ("berlin" / "berlin, germany")."""
    if a == b:
        return True
    first_a, first_b = a.split(",")[0].strip(), b.split(",")[0].strip()
    return bool(first_a) and first_a == first_b


_STAGE = re.compile(r"\s*\([^)]*\)$")


def _unstaged(value: str) -> str:
    """The value without its stage ("sam (engaged)" -> "sam"): breaking up with Sam ends
    whatever stage it had reached."""
    return _STAGE.sub("", value)
