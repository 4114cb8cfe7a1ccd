"""Lists in a message, for the clause reader: a heading and its items ("Allergies: nuts,
shellfish", "My rules: 1. ... 2. ..."), each item read as its own candidate."""

from __future__ import annotations

import re

from memories.extraction import clauses_words as W
from memories.extraction.clause_candidates import as_behavioral, clause_rule, lower_first
from memories.extraction.introductions import LIST_MARK as _LIST_MARK
from memories.extraction.rules.facts import make_fact as _rules_fact
from memories.extraction.sentences import lexical
from memories.extraction.types import CONFIDENCE, Candidate


def plain_markup(text: str) -> str:
    """Markdown emphasis and headings removed ("**Please**:", "### Don'ts"); table rows dropped."""
    lines = [line for line in text.splitlines() if line.count("|") < 2]
    return W.MARKUP.sub("", "\n".join(lines))


def listed(text: str) -> tuple[list[tuple[str, str]], str]:
    """(heading, item) for each item listed under a heading that says whose or what they are
    ("I speak:", "Tools I use daily:", "Rules for my calendar:", "Family:"), and the text
    without them. Lines ("- item", or plain lines under a heading that ends in a colon) and
    inline lists ("Tools I use daily: Raycast, Arc, Linear") both count."""
    pairs: list[tuple[str, str]] = []
    rest: list[str] = []
    heading = ""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        item = _LIST_MARK.match(line)
        # Under a heading: bullets, or plain "label: value" / "X — Y" lines ("Name: Amara").
        labelled_line = bool(W.LABELLED_LINE.match(line)) and not line.rstrip().endswith("?")
        if heading and (item or labelled_line):
            pairs.append((heading, line[item.end() :].strip() if item else line.strip()))
            continue
        heading = ""
        label, colon, tail = line.partition(":")
        if not colon and _heads_a_list(line, lines[index + 1 : index + 2]):
            heading = line.strip()  # "## My coding preferences" above "- TypeScript ..."
            continue
        if colon and _list_heading(label):
            if not tail.strip():
                heading = label.strip()
                continue
            parts = [part for part in tail.split(",") if part.strip()]
            # A one-word part is a thing named ("drums"), whatever else it could be.
            verbs = [p for p in parts if len(p.split()) > 1 and _opens_with_verb(p)]
            if len(parts) >= 3 and not verbs:
                pairs += [(label.strip(), _ITEM_AND.sub("", p).strip(" .")) for p in parts]
                continue
        rest.append(line)
    return [(h, i) for h, i in pairs if i], "\n".join(rest)


def _heads_a_list(line: str, following: list[str]) -> bool:
    """A short line without a colon right above a bulleted line: a heading ("Profile")."""
    words = line.split()
    return (
        not _LIST_MARK.match(line)
        and 0 < len(words) <= 5
        and bool(following)
        and bool(_LIST_MARK.match(following[0]) or ":" in following[0])
        and _list_heading(line.strip())
    )


def _opens_with_verb(item: str) -> bool:
    """ "hate mornings", "live in Bristol", "got the promotion": a verb opens the item."""
    words = item.lower().split()
    info = lexical(words[0])
    if info.adj and not (info.base and len(words) > 1 and words[1] in W.AFTER_VERB):
        return False  # "long walks", "old jazz records"; but "live just outside Bristol"
    if info.vbz or info.vbd or info.gerund:
        return True
    return info.base and (not info.noun or (len(words) > 1 and words[1] not in {"of", "and"}))


_ITEM_AND = re.compile(r"^\s*(?:and|or)\s+", re.IGNORECASE)


def _list_heading(label: str) -> bool:
    words = label.lower().split()
    heading = label.strip()
    if W.NEWS_HEADING.match(heading) or W.TIME_HEADING.match(heading) or W.ERRANDS.search(heading):
        return False
    if 0 < len(words) <= 3 and not any(lexical(w).vbz or lexical(w).vbd for w in words):
        return True  # "Family:", "Quick facts:", "Languages:": a category of the user's life
    wanted = (
        W.RULE_HEADING.search(label)
        or W.REPLY_HEADING.search(label)
        or W.ABOUT_ME_HEADING.search(label)
        or set(words) & W.MINE
    )
    return 0 < len(words) <= 6 and bool(wanted)


def list_item(heading: str, item: str) -> Candidate | None:
    if W.SLOT_LABEL.match(item):
        return None  # "email: sasha@example.ca": a slot, read by the regex stage
    if W.RULE_HEADING.search(heading):
        return clause_rule(f"{heading}: {item}")
    if W.REPLY_HEADING.search(heading):
        return as_behavioral(clause_rule(f"{heading}: {item}"))  # "How I like my answers: - short"
    if re.search(r"\b(?:I|we)\s+\w+", heading, re.IGNORECASE):
        text = f"{heading}: {item}"  # "Tools I use daily: Raycast" holds its own verb
    elif not W.ABOUT_ME_HEADING.search(heading):
        # "My allergies: peanuts" -> "My allergies include peanuts"; "Stack at work: - Backend:
        # Django" -> "Stack at work includes Django (Backend)"
        label, colon, value = item.partition(": ")
        thing = f"{value} ({label})" if colon else item
        last = heading.split()[-1].lower()
        verb = "include" if lexical(last).plural_noun else "includes"
        text = f"{heading} {verb} {thing}"
    elif re.match(r"^(?:\d+|a|an|one|two|three|four|five|six)\s", item, re.IGNORECASE):
        text = f"I have {lower_first(item)}"  # "two teenage daughters"
    elif _opens_with_verb(item):
        text = f"I {lower_first(item)}"  # "About me: - live in Bristol"
    else:
        text = f"I am {lower_first(item)}"  # "About me: - vegan"
    return _rules_fact(text, "personal", CONFIDENCE["stated"], importance=None)
