"""The offline classification stage: memories from one message by rules, no model
(reading.classify_message; modules by what they read: procedures, episodes, facts,
person for the third-person sentences, build for the candidates).

``memories.extraction.pipeline.classify`` calls ``classify_message`` when the chat provider
has no model; it produces the same ``Candidate`` structure as the model does (stage="rules").
A message is read sentence by sentence; a sentence that holds ordered steps is
one workflow, otherwise each clause ("I love cycling | and I have two cats")
goes through these rules, first match wins:

1. skipped: questions, claims about the assistant ("you are now ..."),
   credential values ("the wifi password is ..."), and what other people said
   or think ("My boss thinks ...", "John told me ...");
2. behavioral: how the assistant should talk to the user ("Please answer
   briefly", "Reply in French", "Call me by my first name", "I'd like you to
   use British spelling") -> procedure/behavioral;
3. constraint: a hard rule ("Never deploy on Fridays", "We only use Python
   3.11", "Code reviews are mandatory", "Responses must include a request id")
   -> procedure/constraint;
4. episode: the user, their team or family did something ("I decided to switch
   to Postgres", "We launched v2 yesterday", "Our daughter was born in May",
   any dated past action) -> episode, with ``time_hint`` and, for simple
   relative hints, ``occurred_at``;
5. fact: preferences, diet and health, family and pets, tools, languages,
   habits, experience and plans ("I prefer tea", "My dog is called Rex",
   "I never eat fast food", "I might move to Berlin", "tabs > spaces").

Conventions (the benchmark and the pipeline rely on them):

- Greetings, thanks, acknowledgements, questions and one-off requests give no
  candidate at all (``[]``): nothing memory-shaped was said.
- A first-person statement about a passing state ("I'm so tired today") gives
  a candidate with ``retention="reject"``, ``reject_reason="ephemeral_noise"``,
  so the extraction record shows why it was not kept.
- Hedged statements ("I might", "maybe", "I think", "probably") are kept with
  confidence ``speculative`` or ``likely`` (below 0.7), so they end up as
  pending candidates rather than trusted memories.
- Identity statements (name, age, location, employer, role, email ...) are
  left to the regex stage: these rules skip them and never set ``slot``.
- Only user messages are read. Assistant and tool text never establishes
  facts about the user, so it gives ``[]``.
- Content is one canonical third-person sentence ("The user prefers tea over
  coffee."; "we" is the user's team, or family when the sentence is about home
  life). Relative dates in episodes are replaced by absolute ones, so the memory
  does not go stale ("yesterday" -> "on 2 June 2025").

Known limits: no coreference ("My son does too", "it is my favourite" are
skipped), no paraphrase, English only, one memory per clause (so "I use
Obsidian for notes and Todoist for tasks" is a single fact), clefts and
self-answered questions ("it's Linear we use now", "Favourite season? Autumn")
are missed, and every rule is a list of words someone chose. The word lists live in
``rules_words.py``; this module holds the patterns built from them and the logic. Measure
changes with ``manage.py bench extraction``.
"""
