"""Word tables for ``clauses.py``: closed classes and conversation phrases, no logic.

These are the closed sets English uses for the decisions the structural reader makes (modals,
pronoun subjects, discourse verbs, openers), not lists of topics: a new topic ("I knit", "My
blood type is O negative") needs no new word here.
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Discourse openers dropped from a clause's start ("ok so", "honestly", "lol").
OPENERS = (
    "ok so",
    "okay so",
    "so yeah",
    "oh and",
    "and also",
    "also",
    "and",
    "but",
    "so",
    "oh",
    "ok",
    "okay",
    "yes",
    "yeah",
    "yep",
    "well",
    "lol",
    "haha",
    "omg",
    "btw",
    "fyi",
    "honestly",
    "actually",
    "tbh",
    "anyway",
    "hey",
    "hi",
    "hello",
    "heya",
    "sorry",
    "wait no",
    "wait",
    "scratch that",
    "correction",
    "update",
    "i think",
    "i guess",
    "i believe",
    "probably",
    "maybe",
    "possibly",
    "perhaps",
    "kindly note that",
    "please note that",
    "note that",
    "just so you know",
    "for the record",
    "i am not sure but",
    "not sure but",
    "not 100% sure but",
    "oops",
    "meant",
    "i meant",
)
HEDGE_OPENERS = frozenset(
    {"i think", "i guess", "i believe", "probably", "maybe", "possibly", "perhaps"}
    | {"i am not sure but", "not sure but", "not 100% sure but"}
)
HEDGE_WORDS = re.compile(
    r"\b(?:might|maybe|perhaps|possibly|not sure|not 100%|we'll see|we will see|i think"
    r"|leaning towards|kinda|sort of|considering|still discussing|undecided"
    # wishes (as in rules_words.SPECULATIVE): not (yet) so
    r"|would love to|'d love to|dreams? of|dreaming of|someday|some day|if only|ideally"
    r"|hopefully|i hope to|in an ideal world)\b",
    re.IGNORECASE,
)
# A subordinate opener that states a fact about the user, and the main clause it stands for.
SUBORDINATE_OPENERS: tuple[tuple[str, str], ...] = (
    ("since", ""),
    ("given that", ""),
    ("given", ""),
    ("now that", ""),
    ("because", ""),
    ("as someone who", "I"),
    ("as someone with", "I have"),
    ("with my", "I have my"),
    ("as a", "I am a"),
    ("as an", "I am an"),
    ("as the", "I am the"),
    ("being", "I am"),
    ("having just", "I just"),
    ("having", "I have"),
)
# A sentence that reports what someone else said ("According to my manager, ...").
REPORTED_OPENER = re.compile(r"^(?:according to|apparently|rumou?r (?:is|has it))\b", re.I)
# A sentence ending in "?" that is a statement said unsure ("i might get a cat soon??").
UNSURE_STATEMENT = re.compile(
    r"^(?:i|im|i'm|we|my|our)\s+(?:am\s+|'m\s+)?(?:might|may|could|think|probably|maybe|guess"
    r"|should|will)\b",
    re.I,
)
# A piece that starts with one of these continues the statement before it.
CONTINUATIONS = _words("mostly mainly especially esp usually often sometimes which who")
SUBJECTS = _words("i we my our me you he she they it this that there")
# Never the user as a subject.
NOT_SUBJECTS = _words(
    """you he she they it this that there here these those his her their your someone somebody
    everyone everybody people what which who why how when where the a an"""
)
QUESTION_STARTS = _words(
    """what which who whom whose why how when where can could would should do does did is are
    will shall any anyone"""
)
# Talk about the conversation itself: never a memory.
CONVERSATION_WORDS = _words(
    """thanks thank question questions help explain wondering curious confused asking ask asked
    tell answer recipe example write"""
)
ADVERBS = _words(
    """also always never often still just only already now usually sometimes rarely really
    actually currently mostly generally typically finally recently soon even not no longer
    basically literally kinda pretty totally absolutely definitely seriously officially lowkey
    highkey presently"""
)
MODALS = _words("might may could will would should can cannot must shall")
FINITE_BE_HAVE = _words("is are was were has have had am")
# "I need help", "I want to know": a request now, not a fact.
REQUEST_VERBS = _words("need want wonder wish hope try let")
REQUEST_PROGRESSIVES = _words(
    """looking trying wondering asking writing reading thinking working planning going searching
    hoping waiting preparing getting"""
)
DISCOURSE_VERBS = _words(
    """think guess mean see agree understand know suppose believe feel remember forgot forget
    said say asked ask meant apologise apologize"""
)
# "I've got to", "I have to": chores, not possessions.
HAVE_CHORES = (
    "to ",
    "got to",
    "a question",
    "a quick question",
    "an idea",
    "no idea",
    "a look",
    "a problem",
    "an issue",
    "a meeting",
    "a call",
)
# Past forms that describe a state, not an event ("I was", "I knew").
STATIVE_PAST = _words("was were had knew thought meant felt seemed wanted needed liked loved")
CANNOT_HABITS = _words("do stand eat drink handle have tolerate bear live")
# What follows a dropped "I am" ("big fan of", "allergic to").
DROPPED_I_AM = _words("big huge fan allergic intolerant vegan vegetarian obsessed addicted hooked")
PASSING_STATES = _words(
    """tired exhausted hungry thirsty sleepy bored sick ill busy stressed excited happy sad glad
    sorry annoyed confused cold hot late stuck lost frustrated grumpy nervous worried ready done
    back here fine ok okay good great home off out away free sure kidding joking curious going about
    trying looking wondering just"""
)
# A passing situation said as "I'm <phrase>" ("I'm on holiday until Monday").
PASSING_PHRASES = re.compile(
    r"^(?:on (?:holiday|vacation|leave|my way|the phone|a call|(?:a )?break|my phone)"
    r"|out of (?:office|town|the office)|away (?:this|next|until)|in a (?:meeting|hurry|rush))\b",
    re.IGNORECASE,
)
# "dont really drink anymore": an adverb after "don't" makes it a statement, not an order.
STATEMENT_ADVERBS = _words("really even actually usually normally generally")
# Object pronouns whose meaning is in another sentence.
REFERRING = _words("it that this them there these those")
# Progressives that announce a change in the user's life: a plan, not yet a fact.
LIFE_CHANGES = _words("moving switching changing leaving quitting joining starting retiring")
# What makes a team's habit a rule.
RULE_WORDS = re.compile(r"\b(?:never|only|always|must|not allowed|no longer allow)\b", re.I)
INTENSIFIERS = _words("so really very super quite bit kinda pretty totally")
# Words that make a clause about the user's things generic, not a memory by themselves.
GENERIC = _words(
    """user user's the and that this with have has from they them their there then than what
    when just really also very some been being into about over will would could should
    last next week weeks month months year years yesterday today tomorrow tonight ago"""
)  # time words too: the rules write "last month" as a date, so they never match it

# --- instructions to the assistant -----------------------------------------------------------
INSTRUCTION_OPENERS = (
    "please",
    "just",
    "feel free to",
    "kindly",
    "can you",
    "could you",
    "would you",
    "I want you to",
    "I would like you to",
    "I would like it if you",
    "I prefer that you",
    "I prefer you",
    "also",
    "and",
    "so",
)
# An instruction that lasts beyond this reply.
LASTING = re.compile(
    r"\b(?:always|never|every time|each time|from now on|again|any ?more|whenever|when you"
    r"|in general|unless|all (?:my|our|the) (?!way\b|time\b)|by default|stop|no need to"
    r"|(?:everything|anything|any \w+|all \w+) you (?:write|send|draft|make|give))\b",
    re.IGNORECASE,
)
LASTING_STARTS = _words("always never stop keep avoid don't")
# About the reply itself: how to talk to the user.
ABOUT_REPLY = re.compile(
    r"\b(?:reply|replies|respond|responses?|answers?|explain|explanations?|talk|speak|write me"
    r"|call me|address me|emojis?|bullet(?: points)?|tone|formal|informal|casual|concise|brief"
    r"|short|slowly|step by step|step after step|tl;?dr|details|swear\w*|sorry|apologi\w+"
    r"|gentle|remind me|grams|metric|imperial|spelling|english|spanish|french|german|italian"
    r"|portuguese|dutch|polish|markdown|jargon|examples?|dates|times|units|exclamation marks?"
    r"|punctuation|capital letters|caps|headings?"
    r"|(?:everything|anything|any \w+) you (?:write|send|draft|give)|saying|phrases?)\b",
    re.IGNORECASE,
)
# A one-off task, not a standing instruction.
ONE_OFF = re.compile(
    r"\b(?:a (?:short )?(?:story|poem|limerick|haiku|essay|email|letter|song)"
    r"|this(?!\s+(?:month|week|year|quarter|summer|winter|spring|autumn|weekend))|these|it"
    r"|there|translate|like i am 5|like I'm 5)\b",
    re.IGNORECASE,
)
# Base forms that do not open an imperative here.
NOT_IMPERATIVE = _words(
    "I we my our no not that this there it what excuse pretend imagine suppose picture let people"
)
# An imperative whose object is one new thing: a task for now ("Write me a diary entry").
TASK_OBJECT = re.compile(r"^\w+\s+(?:me\s+|us\s+)?(?:an?|one|some)\s", re.I)
# A rule without a person: "Every incident gets a postmortem", "No Friday releases for the
# apps", "All data at rest must be encrypted", "Production access requires hardware keys".
IMPERSONAL_RULE = re.compile(
    r"^(?:(?:every|each|all|any)\s+(?!(?:day|morning|evening|night|week|weekend|month|year|time"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)[\w-]+(?:\s+[\w-]+){0,3}\s+"
    r"(?:gets|get|must|needs|need|requires|require|has to|have to|should)\b"
    r"|no\s+(?!one\b|idea\b|need\b|problem\b|worries\b|thanks\b)[\w-]+(?:\s+[\w-]+)*\s+"
    r"(?:before|after|on|in|for|during|without|at|over|under)\s+\S"
    r"|(?:the\s+)?(?:budget|limit|cap)\b[^.]{0,40}?\b(?:max(?:imum)?|at most|under|below"
    r"|no more than|up to)\s+\d"
    r"|[\w-]+(?:\s+[\w-]+){0,3}\s+(?:must|must not|requires|is required|are required"
    r"|is not allowed|are not allowed|is forbidden|are forbidden)\s+\S)",
    re.IGNORECASE,
)
# A sentence that sets a condition for what follows ("When I ask for code, just give me ...").
CONDITION = re.compile(r"^(?:when|whenever|if|every time)\s+(?:i|you|we)\b", re.IGNORECASE)
# A question that is really an order ("Could you stop ...?"); kept only when it lasts.
REQUEST_QUESTION = re.compile(r"^(?:can|could|would|will)\s+(?:you|u)\b(?:\s+please)?", re.I)
# "I'd pick", "I'd rather", "I'd choose": a preference.
CHOICE_VERBS = _words("pick choose take rather prefer go")
# A fact that is a preference about the assistant's replies.
REPLY_PREFERENCE = re.compile(
    r"^The user (?:really |much |generally |usually )?(?:prefers|likes|loves|hates|wants|needs"
    r"|appreciates|would prefer|would like)\b.*\b(?:you|answers?|replies|responses?|examples?"
    r"|explanations?|bullet points?|summar(?:y|ies)|format|tone)\b",
    re.IGNORECASE,
)
# A time said before the subject ("last month I did ...", "on Tuesday we shipped ...").
TIME_LEAD = re.compile(
    r"^(?:(?:last|this|next)\s+(?:week|month|year|weekend|night|summer|winter|spring|autumn|fall"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|yesterday|today|tonight"
    r"|this morning|earlier today|recently|on\s+\w+day|on\s+(?:the\s+)?weekends?|in\s+\d{4}"
    r"|in\s+[A-Z][a-z]+"
    r"|\w+\s+(?:days|weeks|months|years)\s+ago|for\s+[\w-]+(?:\s+[\w-]+)?"
    r"|every\s+(?:day|morning|evening|night|week|weekend|month|year|\w+day)"
    r"|in\s+(?:my|our|the)\s+[\w-]+)\s*,?\s+"
    r"(?=(?:i|we|my|our)\b)",
    re.IGNORECASE,
)
# "cilantro tastes like soap": how a thing strikes the user.
PERCEPTION_VERBS = _words("tastes smells sounds feels looks")
# A team's habit said as a rule ("The user's team does not use ORMs, raw SQL only").
TEAM_RULE_FACT = re.compile(
    r"^The user's team (?:\w+ )?(?:never|only|always|must|cannot)\b"
    r"|^The user's team .*\bonly\b",
    re.IGNORECASE,
)
# "email: x@y", "pronouns: he/they" inside a list: a slot for the regex stage.
SLOT_LABEL = re.compile(
    r"^(?:e-?mail|phone|mobile|pronouns|name|age|location|city|birthday|dob|based in|lives in"
    r"|living in|job|work|role|occupation)\s*:",
    re.I,
)
# Two objects in one frame under one verb: "uses Obsidian for notes and Todoist for tasks",
# "has a cat named Pixel and a rabbit named Bun".
PARALLEL = re.compile(
    r"^(?P<head>The user(?:'s team)? \w+) (?P<a>(?:an? |the |their )?[\w.+#-]+(?: [\w.+#-]+)?"
    r" (?P<frame>for|named|called) [^,;]+?) and (?P<b>(?:an? |the |their )?[\w.+#-]+(?: [\w.+#-]+)?"
    r" (?P=frame) [^,;]+?)\.?$"
)
# Markdown that carries no words: emphasis, headings, quote marks at a line start.
MARKUP = re.compile(r"\*\*|__|^#{1,6}\s*|^>\s*", re.MULTILINE)
# A label that is a condition, not a statement ("When you help me write one: ...").
CONDITION_START = re.compile(r"^\s*(?:when|whenever|if|before|after|while|once)\b", re.I)
# Words that follow a verb, not a noun: "live just outside Bristol", "work from home".
AFTER_VERB = _words("in at on near outside just from with for by to mostly mainly alone")
# "The user will try the soup tonight": the next step in a chat, not a plan.
NEXT_STEP = re.compile(r"^The user(?:'s team)? will (?!be\b|have\b|move\b|start\b)", re.I)
LIKELIHOOD = re.compile(r"\b(?:probably|likely|maybe|possibly|perhaps)\b", re.I)
FAR_DATE = re.compile(
    r"\b(?:next (?:year|month|summer|spring|autumn|fall|winter)|in (?:january|february|march"
    r"|april|may|june|july|august|september|october|november|december|\d{4}|the spring"
    r"|the summer|the autumn|the fall|the winter)|this (?:year|summer|spring|autumn|winter))\b",
    re.I,
)
# A list heading about how the assistant should answer ("How I like my answers:").
REPLY_HEADING = re.compile(
    r"\b(?:answers?|replies|responses?|how (?:to|you) (?:talk|write|reply|answer)|writing style"
    r"|you write|you said|tone|formatting)\b",
    re.I,
)
# "Name: Amara Okafor", "Portuguese — native": a line that labels a value.
LABELLED_LINE = re.compile(r"^\s*[\w' ]{1,25}(?::\s+|\s+[\u2014\u2013-]\s+)\S")
# Errands for now, not facts: "Shopping list:", "To do:".
ERRANDS = re.compile(
    r"\b(?:to ?-?dos?|todo list|shopping list|groceries|grocery list|errands|reminders|agenda"
    r"|the plan|summary|recap)\b",
    re.I,
)
# A heading that is a time, not a category: "Next week:", "Monday:", "Today:".
TIME_HEADING = re.compile(
    r"^(?:next|this|last)\s+\w+$|^(?:today|tomorrow|tonight|monday|tuesday|wednesday|thursday"
    r"|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun|agenda|notes?|todo|to do)\b",
    re.I,
)
# Nouns that make "my X" a story, not the user ("My D&D character is Thistle").
FICTION_NOUNS = _words("character characters avatar oc persona protagonist hero villain")
# Present-tense verbs that name an event when a date comes with them.
EVENT_PRESENT = _words(
    "start starts begin begins join joins move moves leave leaves fly flies expect expects"
    " arrive arrives graduate graduates retire retires marry"
)
DATED = re.compile(
    r"\b(?:in|on|next|this)\s+(?:january|february|march|april|may|june|july|august|september"
    r"|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|week"
    r"|month|year|spring|summer|autumn|fall|winter)\b|\bon the \d{1,2}(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)
# A one-off creative task, never a standing order ("Write a short story where I'm a dragon").
CREATIVE_TASK = re.compile(
    r"^(?:write|draw|compose|make up|create|generate|draft)\s+(?:me\s+)?(?:a|an|some)\s+"
    r"(?:[\w-]+\s+){0,2}(?:story|poem|limerick|haiku|song|essay|post|letter|email|tweet|joke)\b",
    re.IGNORECASE,
)
# A list heading that introduces rules ("Rules for my calendar:", "Security requirements:").
RULE_HEADING = re.compile(
    r"\b(?:rules?|requirements?|constraints?|polic(?:y|ies)|guidelines?|don'?ts|never"
    r"|style guide|conventions?|standards?)\b",
    re.I,
)
# A list heading about the user's own things ("I speak:", "Tools I use daily:", "My stack:").
MINE = _words("i my me we our mine about")
# A heading about the user as a person ("About me:", "Things to know about me:", "Me:").
ABOUT_ME_HEADING = re.compile(
    r"\b(?:about me|me|myself)\s*$|^(?:me|bio|profile|intro|quick intro|quick facts|facts)\b"
    r"|you should know"
    r"|to know about me",
    re.IGNORECASE,
)
# A heading that introduces news or context, not a list of the user's things ("Here's my week:").
NEWS_HEADING = re.compile(r"^(?:here'?s|here is|update|news|heads-up|quick context)\b", re.I)
# Groups whose habits are rules ("My team never deploys on Fridays").
GROUPS = _words("team company org organisation organization department office squad")
