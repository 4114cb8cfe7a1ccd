"""The offline extractor's second pass: statements the rules did not recognise, read by structure.

``rules.py`` recognises the shapes someone wrote rules for ("I prefer ...", "My sister lives
in ..."). Everything else a user says about themselves used to be lost: "I knit, mostly socks",
"My blood type is O negative", "ran my first 10k this morning", "Since I'm vegan, what can I
cook?". This pass cuts the message into clauses (sentences, list items, the statement before a
question, "since/given/as/being ..." openers) and, for each clause no earlier candidate came
from, asks structural questions instead of matching words:

- who is the subject? the user ("I", "my X and I", or a dropped subject as chat writes it), the
  user's own things and people ("my laptop", "our cat"), the user's team ("we", "in my company
  we"); anyone else is not the user's fact;
- what is the verb form? (lemminflect's lexicon, through ``sentences.lexical``): a past tense
  or a present perfect of an action is an episode; a present state or habit is a fact; a modal
  of possibility ("might", "may", "thinking of") is a fact below 0.7;
- is it a standing instruction to the assistant? an imperative (after "please", "can you",
  "I want you to") with something that makes it last (always, never, every time, again, from
  now on, when you ..., stop, no need to) or about the reply itself (its language, format,
  length, tone) is a procedure: behavioral when it is about how to talk, constraint otherwise.

What is dropped: questions, requests ("I need help with", "I'm looking for"), talk about the
conversation ("I see", "I'll try that tonight"), passing states ("I'm so tired"), and anything
about other people. The words that decide those cases are in ``clauses_words``.

Known limits: no coreference ("I take it every morning" keeps "it"), English only, one memory
per clause, and the offline reading is only as good as the clause cut.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime

from memories.extraction import clauses_words as W
from memories.extraction.classify import find_time_hint
from memories.extraction.clause_candidates import (
    Clause,
    clause_episode,
    clause_fact,
    clause_rule,
    lower_first,
)
from memories.extraction.clause_lists import list_item, listed, plain_markup
from memories.extraction.introductions import LIST_MARK as _LIST_MARK
from memories.extraction.introductions import introduction_rest
from memories.extraction.reported import strip_reported
from memories.extraction.rules.build import make_candidate as _candidate
from memories.extraction.rules.facts import make_fact as _rules_fact
from memories.extraction.rules.person import sentence_case as _sentence_case
from memories.extraction.rules.person import third_person as _third_person
from memories.extraction.rules.reading import normalise as _normalise
from memories.extraction.sentences import lexical
from memories.extraction.spelling import read_chat
from memories.extraction.types import CONFIDENCE, Candidate

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_CLAUSE_CUT = re.compile(r"\s*(?:;|\s[\u2014\u2013]\s|\s-\s|\u2014)\s*")
_WORD = re.compile(r"[\w'/+#.-]+")


# --- cutting ----------------------------------------------------------------------------------
def clauses(text: str) -> Iterator[Clause]:
    """Every statement-like clause in ``text``, in order; questions are left out."""
    for sentence in _SENTENCES.split(text):
        sentence = _LIST_MARK.sub("", sentence.strip())
        if not sentence or W.REPORTED_OPENER.match(sentence):
            continue
        question = sentence.rstrip().endswith("?")
        standing = bool(W.CONDITION.match(sentence))
        for part in _CLAUSE_CUT.split(sentence):
            label, colon, rest = part.partition(": ")  # not "9:30", not "https://"
            if colon and rest.strip():
                # "About me: ...", "When you draft emails for me: never promise ...": the label
                # is read on its own when it is a clause, the rest as what it introduces.
                said_by_user = re.search(r"\b(?:I|we|my|our)\b", label, re.IGNORECASE)
                if len(label.split()) > 3 and said_by_user and not W.CONDITION_START.match(label):
                    yield from _parts(label, question=False, standing=standing)
                part = rest
            yield from _parts(part, question, standing=standing)


def _parts(part: str, question: bool, *, standing: bool = False) -> Iterator[Clause]:
    pieces = [p.strip(" ,.!?") for p in re.split(r",\s+(?:but\s+|and\s+|so\s+)?", part)]
    pieces = [p for p in pieces if p]
    hedged = request = False
    if question and pieces and part.rstrip().endswith("?"):
        if W.UNSURE_STATEMENT.match(pieces[-1]):
            hedged = True  # "i might get a cat soon??": a statement said unsure, not a question
        elif W.REQUEST_QUESTION.match(pieces[-1]):
            request = True  # "Could you stop ending every answer with a question?"
        else:
            pieces = pieces[:-1]  # "Since I'm vegan, what can I cook?": what comes before it
    joined = _joined(pieces)
    subject = re.match(r"^(?:I|we)\b", joined[0], re.IGNORECASE) if joined else None
    for index, piece in enumerate(joined):
        if index and subject and _verb_led(piece):
            piece = f"{subject.group()} {piece}"  # "I like Python, tolerate Go" -> "I tolerate Go"
        subs = re.split(r"\s+(?:but|and|so)\s+(?=(?:now\s+)?(?:i|we|my|our|please)\b)", piece)
        for sub_index, sub in enumerate(subs):
            opens = index == 0 and sub_index == 0
            clause = _reading(sub, opens=opens, hedged=hedged)
            if clause is not None:
                yield replace(
                    clause,
                    standing=standing and not opens,
                    request=request and index == len(pieces) - 1,
                )


def _verb_led(piece: str) -> bool:
    first = piece.split()[0].lower()
    info = lexical(first)
    return info.base and not info.noun and not info.adj and first not in W.NOT_IMPERATIVE


def _joined(pieces: list[str]) -> list[str]:
    """Commas inside one statement ("I'm 29, earning 45k") are cut; a piece without a verb of
    its own ("mostly socks", "badly") stays attached to the one before it."""
    out: list[str] = []
    for piece in pieces:
        first = piece.split()[0].lower()
        if out and (first in W.CONTINUATIONS or not _has_subject_or_verb(piece)):
            out[-1] = f"{out[-1]}, {piece}"
        else:
            out.append(piece)
    return out


def _has_subject_or_verb(piece: str) -> bool:
    words = [w.lower() for w in _WORD.findall(piece)]
    return any(
        w in W.SUBJECTS or w in W.FINITE_BE_HAVE or w in W.MODALS or lexical(w).verb
        for w in words[:3]
    )


def _reading(raw: str, *, opens: bool, hedged: bool) -> Clause | None:
    text = " ".join(_normalise(raw).split()).strip(" ,.!?")
    for _ in range(3):  # openers stack: "ok so honestly I think ..."
        lowered = text.lower()
        opener = next((o for o in W.OPENERS if lowered.startswith(o + " ")), None)
        if opener is None:
            break
        text = text[len(opener) :].strip(" ,")
        hedged = hedged or opener in W.HEDGE_OPENERS
    lowered = text.lower()
    for prefix, replacement in W.SUBORDINATE_OPENERS:
        if lowered.startswith(prefix + " "):
            text = replacement + text[len(prefix) :]
            break
    if len(text.split()) < 2:
        return None
    hedged = hedged or bool(W.HEDGE_WORDS.search(text))
    return Clause(text=text, hedged=hedged, opens_sentence=opens)


# --- reading one clause -----------------------------------------------------------------------
def _subject(words: list[str]) -> tuple[str, int]:
    """("user" | "team" | "own" | "dropped" | "other", index of the first word after it)."""
    lower = [w.lower() for w in words]
    if lower[0] == "i":
        return "user", 1
    if lower[:2] in (["me", "and"],) or (lower[0] in {"my", "our"} and "and" in lower[:4]):
        end = lower.index("i") + 1 if "i" in lower[:5] else 0
        if end:
            return "user", end
    if lower[0] == "we":
        return "team", 1
    if lower[0] == "the" and len(lower) > 2 and lower[1] in W.GROUPS:
        return "team", 2  # "The team decided to drop Jenkins"
    if lower[0] in {"my", "our"}:
        # From the third word: "My preferred music is ..." has its noun after "preferred".
        for at in range(2, min(len(lower), 6)):
            if lower[at] in W.FINITE_BE_HAVE or _finite(lower[at]):
                return "own", at
        return "other", 0
    if lower[0] in W.NOT_SUBJECTS or (words[0][0].isupper() and not lexical(lower[0]).known):
        return "other", 0
    return "dropped", 0


def _finite(word: str) -> bool:
    info = lexical(word)
    return info.vbz or info.vbd


def _verb_at(lower: list[str], start: int) -> int:
    at = start
    while at < len(lower) and lower[at] in W.ADVERBS:
        at += 1
    return at


def propose(text: str, covered: Sequence[Candidate], now: datetime) -> list[Candidate]:
    """Candidates for the clauses of a user's message that ``covered`` says nothing about."""
    taken = {t for c in covered for t in _content_words(c.content)}
    # A slot does not cover the event it came with: "I just moved to Berlin" is both.
    taken_plain = {t for c in covered if not c.slot for t in _content_words(c.content)}
    said = {c.content.lower() for c in covered}
    found: list[Candidate] = []
    items, text = listed(plain_markup(read_chat(strip_reported(text))))
    named = any(c.slot == "name" for c in covered)
    items += [("About me", piece) for piece in introduction_rest(text, named=named)]
    for heading, item in items:
        words = _content_words(item)
        if words and not words & taken:
            listed_item = list_item(heading, item)
            if listed_item is not None:
                found.append(listed_item)
                said.add(listed_item.content.lower())
    for clause in clauses(text):
        words = _content_words(clause.text)
        if not words or _mostly(words, taken_plain):
            continue
        candidate = read(clause, now)
        if candidate is None or (candidate.kind != "episode" and words & taken):
            continue  # an identity statement the slots already hold
        if candidate.content.lower() not in said:
            found.append(candidate)
            said.add(candidate.content.lower())
            taken |= words
    return found


def _mostly(words: set[str], taken: set[str]) -> bool:
    """Whether earlier candidates already said at least half of what a clause is about."""
    return len(words & taken) * 2 >= len(words)


def _content_words(text: str) -> set[str]:
    """The words that say what a clause is about: numbers and names, and longer words."""
    return {
        w
        for w in (x.lower().strip(".") for x in _WORD.findall(text))
        if (len(w) > 3 or any(c.isdigit() for c in w) or (len(w) == 3 and w.isalpha()))
        and w not in W.GENERIC
    }


def read(clause: Clause, now: datetime) -> Candidate | None:
    """One clause as a memory, or None when it is nothing to keep."""
    words = _WORD.findall(clause.text)
    lower = [w.lower() for w in words]
    procedure = _instruction(clause)
    if procedure is not None or clause.request:
        return procedure
    if lower[0] in W.QUESTION_STARTS or set(lower) & W.CONVERSATION_WORDS:
        return None
    if W.IMPERSONAL_RULE.match(clause.text):
        return clause_rule(clause.text)  # "Every incident gets a postmortem", "No Friday releases"
    if len(lower) > 2 and lexical(lower[1]).vbz and "me" in lower[2:]:
        return _about_me(clause, lower, now)  # "Cooking relaxes me"
    lead = W.TIME_LEAD.match(clause.text)
    if lead and lead.end() < len(clause.text):
        # "last month I did my first marathon": the time is said first, the subject follows
        words = _WORD.findall(clause.text[lead.end() :])
        lower = [w.lower() for w in words]
    subject, at = _subject(words)
    if subject == "other":
        return _about_me(clause, lower, now)
    if "it" in lower or (lower[at : at + 2] and set(lower[at + 1 : at + 2]) & W.REFERRING):
        return None  # "I take it every morning": what "it" is lies elsewhere
    if subject == "own" and set(lower[1:at]) & W.FICTION_NOUNS:
        return None  # "My D&D character is Thistle": a story, not the user
    if subject == "own" and lower[1] in W.GROUPS and W.RULE_WORDS.search(clause.text):
        return clause_rule(clause.text)  # "My team never deploys on Fridays"
    verb_at = _verb_at(lower, at)
    if verb_at >= len(lower):
        return None
    verb, rest = lower[verb_at], lower[verb_at + 1 :]
    if subject == "dropped" and verb not in {"is", "are"}:
        mine = _about_me(clause, lower, now)  # "Spicy food is my weakness"
        if mine is not None:
            return mine
    if verb in {"do", "does"} and rest[:1] == ["not"] and len(rest) > 1:
        verb, rest = rest[1], rest[2:]  # "I don't need sugarcoating" reads as "need"
    if subject == "dropped":
        return _dropped_subject(clause, verb, rest, now)
    return _statement(clause, subject, verb, rest, now)


def _statement(
    clause: Clause, subject: str, verb: str, rest: list[str], now: datetime
) -> Candidate | None:
    text = clause.text
    if verb in W.REQUEST_VERBS or verb in W.DISCOURSE_VERBS:
        return None
    if verb in W.MODALS:
        return _modal(clause, verb, rest)
    if verb in {"am", "is", "are"}:
        complement = [w for w in rest if w not in W.ADVERBS]
        if not complement or _passing(complement):
            return None
        if lexical(complement[0]).gerund:
            return _progressive(clause, subject, complement, now)
        return clause_fact(text, clause)
    if verb in {"was", "were"}:
        return clause_episode(text, now) if find_time_hint(text) else None
    if verb in {"have", "has"} and rest:
        nxt = rest[_verb_at(rest, 0)] if _verb_at(rest, 0) < len(rest) else ""
        if nxt in {"been", "got"} or "never" in rest[:2] or "since" in rest:
            return clause_fact(text, clause)
        if lexical(nxt).vbd or nxt.endswith("ed"):
            return clause_episode(text, now)
        if any(" ".join(rest[:3]).startswith(chore) for chore in W.HAVE_CHORES):
            return None  # "I have a question", "I have to go"
        return clause_fact(text, clause)
    info = lexical(verb)
    dated = bool(find_time_hint(text))
    if info.vbd and (verb not in W.STATIVE_PAST or dated) and (not info.base or dated):
        return clause_episode(text, now)  # "knit", "read", "quit" are past only with a time
    if subject == "team" and W.RULE_WORDS.search(text):
        return clause_rule(text)  # "We never deploy on Fridays", "We support only Postgres 15+"
    if verb in W.EVENT_PRESENT and W.DATED.search(text):
        return clause_episode(
            text, now
        )  # "In October I start my new job", "we expect a baby in June"
    if info.vbz or info.base or info.verb:
        if subject == "team" and not (info.base or info.vbz):
            return None
        if not any(_is_thing(w) for w in rest):
            return None  # "I don't mind", "I live nearby": nothing named to remember
        return clause_fact(text, clause)
    return None


def _is_thing(word: str) -> bool:
    info = lexical(word)
    return word not in W.ADVERBS and (info.noun or not info.known or any(c.isdigit() for c in word))


def _progressive(
    clause: Clause, subject: str, complement: list[str], now: datetime
) -> Candidate | None:
    """ "I'm moving to Canada in June" (a plan), "I'm flying to Tokyo on March 12" (an event),
    "I'm recovering from long Covid" (a state); "I'm practicing", "I'm looking for" say nothing."""
    if complement[:2] == ["going", "to"] and len(complement) > 2:
        return clause_fact(clause.text, clause, confidence=CONFIDENCE["likely"])  # a plan
    if complement[0] in W.REQUEST_PROGRESSIVES or len(complement) < 2:
        return None
    if complement[0] in W.LIFE_CHANGES:
        return clause_fact(clause.text, clause, confidence=CONFIDENCE["likely"])
    if find_time_hint(clause.text):
        return clause_episode(clause.text, now)
    return clause_fact(clause.text, clause)


def _modal(clause: Clause, modal: str, rest: list[str]) -> Candidate | None:
    if modal in {"might", "may", "could"} and rest[:1] == ["be"] and len(rest) > 1:
        return clause_fact(clause.text, clause, confidence=CONFIDENCE["speculative"])  # "might be"
    if modal in {"might", "may", "could"} and rest and rest[0] not in {"be"} | W.REQUEST_VERBS:
        return clause_fact(clause.text, clause, confidence=CONFIDENCE["speculative"])
    if modal == "will" and clause.hedged and rest:
        return clause_fact(
            clause.text, clause, confidence=CONFIDENCE["speculative"]
        )  # "Possibly we will"
    if modal == "will" and rest[:1] and rest[0] in {"likely", "probably", "maybe"}:
        return clause_fact(
            clause.text, clause, confidence=CONFIDENCE["likely"]
        )  # "will likely move"
    if modal == "would" and rest and rest[0] in W.CHOICE_VERBS:
        return clause_fact(clause.text, clause)  # "I'd pick the mountains over the beach"
    if modal == "cannot" and rest and rest[0] in W.CANNOT_HABITS:
        return clause_fact(clause.text, clause)  # "can't do spicy food", "can't stand olives"
    return None


def _dropped_subject(clause: Clause, verb: str, rest: list[str], now: datetime) -> Candidate | None:
    """Chat drops the "I": "ran my first 10k this morning", "big fan of board games"."""
    if verb in W.MODALS:
        return _modal(clause, verb, rest)
    info = lexical(verb)
    meaningful = [w for w in rest if w not in W.ADVERBS and len(w) > 2 and w != "well"]
    diary = clause.opens_sentence and not (info.base or info.adj) and verb not in W.STATIVE_PAST
    if info.vbd and diary and meaningful:
        return clause_episode(f"I {lower_first(clause.text)}", now)
    # "Loving the bikes here": the moment; "hiring, roadmap": an agenda, not a statement
    here = "here" in rest or set(rest) & W.REFERRING or "," in clause.text
    if info.gerund and verb not in W.REQUEST_PROGRESSIVES and rest and not info.noun and not here:
        text = f"I am {lower_first(clause.text)}"  # "freelancing now", "goin to lisbon next month"
        return clause_episode(text, now) if W.DATED.search(text) else clause_fact(text, clause)
    if verb in W.LIFE_CHANGES and rest:
        # "maybe moving to Lisbon next year"
        return clause_fact(
            f"I am {lower_first(clause.text)}", clause, confidence=CONFIDENCE["likely"]
        )
    bullet = clause.opens_sentence and clause.text[:1].islower()  # "- prefers email over Slack"
    if info.vbz and bullet and len(rest) >= 2 and any(_is_thing(w) for w in rest):
        # "- prefers email over Slack": a list about the user, in the third person
        return _rules_fact(
            f"The user {lower_first(clause.text)}",
            "personal",
            CONFIDENCE["stated"],
            importance=None,
        )
    if verb == "not" and rest[:1] and rest[0] in {"a", "an", "into", "on", "really", "big"}:
        return clause_fact(f"I am {lower_first(clause.text)}", clause)  # "Not a morning person"
    if verb == "into" and len(rest) >= 2:
        return clause_fact(
            f"I am {lower_first(clause.text)}", clause
        )  # "Into bouldering and synths"
    if verb in W.DROPPED_I_AM:
        return clause_fact(f"I am {lower_first(clause.text)}", clause)
    if verb in {"fav", "favourite", "favorite"}:
        return clause_fact(f"my {lower_first(clause.text)}", clause)
    return None


def _about_me(clause: Clause, lower: list[str], now: datetime) -> Candidate | None:
    """ "Cooking relaxes me", "rainy days + a good book = perfect day for me"."""
    if len(lower) > 2 and lower[1] in W.PERCEPTION_VERBS and lower[0] not in W.NOT_SUBJECTS:
        # "cilantro tastes like soap": the user's own sense of a thing
        return _rules_fact(
            f"I think {clause.text}", "preference", CONFIDENCE["stated"], importance=None
        )
    about_me = "me" in lower[1:] and not lower[0].endswith("ly")
    if about_me and (any(lexical(w).vbz for w in lower[1:4]) or "=" in clause.text):
        return clause_fact(clause.text, clause)
    # "Spicy food is my weakness", "Horror movies aren't really my thing"
    copula = next((i for i, w in enumerate(lower[:5]) if w in {"is", "are"}), None)
    if copula and "my" in lower[copula + 1 : copula + 4] and lower[0] not in W.NOT_SUBJECTS:
        return clause_fact(clause.text, clause)
    return None


def _passing(complement: list[str]) -> bool:
    """ "I'm so tired", "I'm not 100% sure": a state of the moment."""
    head = [w for w in complement[:3] if w not in W.INTENSIFIERS]
    if W.PASSING_PHRASES.match(" ".join(complement)):
        return True
    return bool(head) and (head[0] in W.PASSING_STATES or "sure" in head)


def _instruction(clause: Clause) -> Candidate | None:
    body = clause.text
    for opener in W.INSTRUCTION_OPENERS:
        if body.lower().startswith(opener + " "):
            body = body[len(opener) :].strip(" ,")
    body_lower = [w.lower() for w in _WORD.findall(body)]
    if len(body_lower) < 3:
        return None  # "remind me", "be sarcastic": too little to be an order that lasts
    first = body_lower[0]
    if body_lower[:2] == ["do", "not"] and (
        (body_lower[2:3] and body_lower[2] in W.STATEMENT_ADVERBS) or body_lower[-1] == "anymore"
    ):
        return None  # "dont really drink anymore": the user's habit, not an order
    lasting = (
        clause.standing
        or bool(W.LASTING.search(body))
        or first in W.LASTING_STARTS
        or body_lower[:2] == ["do", "not"]  # "Don't explain basic Python to me"
    )
    # "Be gentle with me", "be sarcastic": how to talk, whatever the adjective.
    manner = first == "be" and len(body_lower) > 1 and lexical(body_lower[1]).adj
    about_reply = manner or bool(W.ABOUT_REPLY.search(body))
    if clause.request and not lasting:
        return None  # "Can you explain X?" asks once
    opening = lexical(first)
    # "Long one, sorry": a word that is also an adjective opens no order
    verb_first = (
        opening.base and not opening.vbd and not opening.adj and first not in W.NOT_IMPERATIVE
    )
    # "Tea, never coffee": a noun before a comma opens no order.
    imperative = first in W.LASTING_STARTS or (verb_first and not body.split()[0].endswith(","))
    if not imperative or W.ONE_OFF.search(body) or not (lasting or about_reply):
        return None
    if not lasting and W.TASK_OBJECT.match(body):
        return None  # "Write me a diary entry", "Draft an outline for a talk": one task
    subtype = "behavioral" if about_reply else "constraint"
    content = _sentence_case(_third_person(body, plural_we=True))
    return _candidate(
        "procedure",
        content,
        importance="significant",
        confidence=CONFIDENCE["stated"],
        tags=[subtype],
        subtype=subtype,
    )
