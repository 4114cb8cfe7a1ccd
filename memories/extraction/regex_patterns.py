"""The identity slots' trigger patterns (regex.py reads them): which words a sentence must
hold for a pattern to be tried (its needles), the pattern, and the parser that turns a
match into a slot (by name: slots._PARSERS). Data, no logic; the word lists they are built
from live in regex_words.py."""

from __future__ import annotations

import re

from memories.extraction import regex_words as W

ADV = rf"(?:(?:{W.TRIGGER_ADVERBS})\s+)*"
I_AM = r"\bI(?:'m|m|\s+am)"
AGE_END = rf"(?=\s*(?:$|[,.;:!?)\u2013\u2014-]|(?:{W.AGE_END_WORDS})\b))"
AGE_UNIT = r"(?:\s*(?:years?|yrs?)(?:\s+old|\s+of\s+age)?|\s*y/?o\b|\s*y\.o\.)?"
# Not inside a URL's credentials ("mongodb://ana:hunter2@db.local" holds a password, no email).
EMAIL = r"(?<![\w.:/%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
PHONE = r"\+?\(?\d[\d\s().-]{5,22}\d"
PRONOUN = rf"(?:{W.PRONOUNS})\b"
PRONOUNS = rf"{PRONOUN}(?:\s*/\s*{PRONOUN}){{1,3}}"
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
DATE = (
    rf"(?:{MONTH}\s+(?:the\s+)?{DAY}(?:,?\s+\d{{4}})?|(?:the\s+)?{DAY}\s+(?:of\s+)?{MONTH}"
    rf"(?:,?\s+\d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}[/.]\d{{1,2}}(?:[/.]\d{{2,4}})?)\b"
)

# Any character of a clause that is not a negation ("I'm not based in Berlin").
NOT_NEGATED = r"(?:(?!\bnot\b|\bnever\b|\bno\s+longer\b)[^,.;!?])"
# A known occupation as a regex alternation, longest first: "teacher from Valencia".
ROLE_HEADS = "|".join(sorted((re.escape(w) for w in W.ROLE_HEADS), key=len, reverse=True))

# (needles, pattern, parser name): a pattern only runs on sentences (lower-cased) containing
# one of its needles, which skips most of the regex work on ordinary chat.
SLOT_PATTERNS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    # name
    (
        ("name",),
        r"\bmy\s+(?:(?:full|first|real|given)\s+)?name(?:\s+is|'s)\s+",
        "name_explicit",
    ),
    (
        ("call me",),
        r"\b(?:(?:you\s+(?:can|may|should)|please|just)\s+)?call\s+me\s+",
        "name",
    ),
    (
        ("i'm", "im", "i am"),
        rf"^(?:(?:{W.GREETINGS})(?:\s+(?:{W.GREETING_ADDRESSEES}))?[\s,!.:-]*)*"
        r"I(?:'m|m|\s+am)\s+",
        "name",
    ),
    # age
    (
        ("i'm", "im", "i am"),
        rf"{I_AM}\s+(?:actually\s+|really\s+|now\s+)?(?P<value>\d{{1,3}}){AGE_UNIT}{AGE_END}",
        "age",
    ),
    (
        ("turned",),
        rf"\bI\s+(?:just\s+|recently\s+)?turned\s+(?P<value>\d{{1,3}}){AGE_UNIT}"
        rf"(?=\s*(?:$|[,.;:!?)]|(?:and|but|so|last|this|yesterday|today|on|in)\b))",
        "age",
    ),
    (
        ("age",),
        r"\bmy\s+age\s+is\s+(?P<value>\d{1,3})\b",
        "age",
    ),
    # location
    (("live", "reside"), rf"\bI\s+{ADV}(?:live|reside)\s+in\s+", "location"),
    (
        ("living", "residing", "based", "located", "settled", "staying"),
        rf"{I_AM}\s+{ADV}(?:living|residing|based|located|settled|staying)\s+(?:in|out\s+of)\s+",
        "location",
    ),
    (
        ("moved", "relocated"),
        rf"\bI(?:'ve|\s+have)?\s+{ADV}(?:moved|relocated)\s+(?:back\s+|over\s+)?to\s+",
        "location",
    ),
    # "Just settled into my new flat in Porto", "I moved into a new place in Oslo"
    (
        ("settled", "moved"),
        rf"(?:^|\bI(?:'ve|\s+have)?\s+){ADV}(?:settled|moved)\s+(?:in|into)\s+"
        r"(?:(?:my|our|a|the)\s+(?:new\s+)?(?:flat|home|house|apartment|place)\s+in\s+)?"
        r"(?=[A-Z])",
        "location",
    ),
    # "We just moved to Munich": the user's household moved, so the user lives there; not
    # "we moved to Postgres" (a sentence about tools or work is the team's).
    (
        ("moved", "relocated"),
        rf"(?:^|[,;]\s*|\b(?:and|so)\s+)[Ww]e(?:'ve|\s+have)?\s+{ADV}(?:moved|relocated)\s+"
        r"(?:back\s+|over\s+)?to\s+(?=[A-Z])",
        "household_move",
    ),
    # employer
    (
        ("work",),
        rf"(?:\bI|\bI\s+\w+\s+in\s+\S+\s+and)\s+{ADV}work\s+(?:at|for)\s+",
        "employer",
    ),
    (
        ("working", "employed"),
        rf"{I_AM}\s+{ADV}(?:working|employed)\s+(?:at|for|by)\s+",
        "employer",
    ),
    (
        ("joined", "started"),
        r"\bI(?:'ve|\s+have)?\s+(?:just|recently)\s+(?:joined|started\s+(?:working\s+)?at)\s+",
        "employer",
    ),
    (
        ("started",),
        r"\bI\s+(?:just\s+|recently\s+)?started\s+(?:a\s+(?:new\s+)?job\s+|working\s+)?at\s+",
        "employer",
    ),
    # role
    (
        (" as ",),
        rf"\bI\s+{ADV}work\s+(?:(?:at|for)\s+(?:[^\s,.;:!?]+\s+){{1,5}}?)?as\s+"
        r"(?P<det>an?\s+|the\s+)?",
        "role_loose",
    ),
    (
        (" as ",),
        rf"{I_AM}\s+{ADV}working\s+(?:(?:at|for)\s+(?:[^\s,.;:!?]+\s+){{1,5}}?)?as\s+"
        r"(?P<det>an?\s+|the\s+)?",
        "role_loose",
    ),
    (("i'm", "im", "i am"), rf"{I_AM}\s+{ADV}(?P<det>an?|the)\s+", "role"),
    (
        ("my",),
        r"\bmy\s+(?:job\s+title|job|role|title|position|occupation|profession)\s+is\s+"
        r"(?P<det>an?\s+|the\s+)?",
        "role",
    ),
    # --- the same slots as people type them in chat or in a second language ---------
    # "name's Dmitri", "Me I am called Oksana", "Tomás here, teacher from Valencia"
    (("name",), r"^(?:the\s+)?name(?:'s|\s+is)\s+", "name_explicit"),
    (("called",), rf"(?:^|,\s*|\bme\s+){I_AM}\s+called\s+", "name_explicit"),
    (
        ("here",),
        rf"^(?:(?:{W.GREETINGS}|he+y+a*|hi+)[\s,!.:-]+)*(?P<value>[A-Z][\w\u00c0-\u024f]+)"
        r"(?=\s+here\b\s*(?:[,.!:;\u2014-]|$))",  # "Dev here," but not "Postmortems here are"
        "plain_name",
    ),
    # "23 yo, uni student", "I have 45 years", "I am having 19 years"
    (
        ("years",),
        r"(?:^|\bI\s+(?:have|am\s+having|am\s+with)\s+)(?P<value>\d{1,3})\s+years(?:\s+old)?"
        r"(?!\s+(?:ago|of|in|at|with|experience|later|before))\b",
        "age",
    ),
    # "I stay in Seoul", "I live at Munich", "but live in Madrid", "still in Melbourne",
    # "i'm in Lyon now", "moved to glasgow", "we moved to Edinburgh", "I work from Tbilisi"
    (
        ("stay", "live"),
        rf"(?:(?:\bI|\b(?:but|and)|^)\s+|,\s*|{I_AM}\s+{NOT_NEGATED}{{0,40}}?\s)"
        rf"{ADV}(?:stay|staying|live|living)\s+(?:in|at|near)\s+",
        "location",
    ),
    (
        ("in ",),
        rf"(?:^(?:(?:yep|yeah|yes|no|nah)[\s,]+)?{ADV}|{I_AM}\s+{ADV}"
        r"|,\s*(?:now|currently|still)\s+)in\s+(?=[A-Z])",
        "location",
    ),
    (
        ("moved",),
        rf"(?:^|\bI(?:'ve|\s+have)?\s+){ADV}(?:moved|relocated)\s+from\s+[^,.;!?]{{1,40}}?\s+to\s+"
        rf"|^{ADV}(?:moved|relocated)\s+(?:back\s+)?to\s+",
        "location",
    ),
    (
        ("from",),
        rf"\bI\s+{ADV}work\s+{ADV}from\s+(?!home\b)(?=[A-Z])",  # not "work from home"
        "location",
    ),
    (
        ("location", "city"),
        r"(?:^|\n|\.\s+)\W*(?:location|city|based|home)\s*:\s*",
        "location",
    ),
    # "workin at Zalando", "just started at Monzo", "I joined Atlassian", "I'm at Babylon
    # Health", "I work in the Samsung", "I started a new role at Skyscanner"
    (
        ("working", "workin", "started", "joined"),
        r"^(?:just\s+|recently\s+|now\s+)?(?:working|workin'?|started|joined)\s+(?:at|for)\s+",
        "employer",
    ),
    (
        ("joined",),
        rf"\bI(?:'ve|\s+have)?\s+{ADV}joined\s+(?=[A-Z])",
        "employer",
    ),
    # "I got a job at Stripe", "I've landed a new role with Atlassian"
    (
        ("job", "role", "position"),
        rf"\bI(?:'ve|\s+have)?\s+{ADV}(?:got|landed)\s+(?:a\s+)?(?:new\s+)?"
        r"(?:job|role|position)\s+(?:at|with)\s+(?=[A-Z])",
        "employer",
    ),
    # "I left Google and joined Stripe", "I quit Oracle to join SAP": the new employer.
    (
        ("join",),
        rf"\bI(?:'ve|\s+have)?\s+{ADV}(?:left|quit)\s+[A-Z][^,.;!?]{{0,40}}?\s+"
        r"(?:and|to)\s+(?:then\s+|now\s+)?(?:joined|join)\s+(?=[A-Z])",
        "employer",
    ),
    (
        ("at ",),
        rf"{I_AM}\s+{ADV}at\s+(?=[A-Z])",
        "employer",
    ),
    (
        ("work",),
        rf"\bI\s+{ADV}(?:work|am\s+working)\s+(?:in\s+the|by(?:\s+the)?)\s+(?=[A-Z])",
        "employer",
    ),
    (
        ("started",),
        rf"\bI\s+{ADV}started\s+(?:a\s+)?(?:new\s+)?(?:role|job|position)\s+at\s+",
        "employer",
    ),
    # "I work like engineer", "working by Bosch as software tester", "I make the job of
    # accountant", "got promoted to engineering manager", "joined Atlassian as a ..."
    (
        (" like ", " as ", "job of"),
        rf"(?:\bI(?:'ve|\s+have)?|\band)\s+{ADV}(?:work|working|am\s+working|joined"
        r"|been\s+(?:at|with))\s+"
        r"(?:[^\s,.;:!?]+\s+){0,5}?"
        r"(?:as|like)\s+(?P<det>an?\s+|the\s+)?",
        "role",
    ),
    (
        ("job of",),
        r"\bI\s+(?:make|do|have)\s+the\s+job\s+of\s+(?P<det>an?\s+)?",
        "role",
    ),
    (
        ("promoted",),
        r"(?:\bI(?:'ve|\s+have)?\s+|^)(?:just\s+|finally\s+)?(?:got|was|been)\s+promoted\s+to\s+"
        r"(?P<det>an?\s+|the\s+)?",
        "role",
    ),
    (
        ("work", "job", "role"),
        r"(?:^|\n)\W*(?:work|job|role)\s*:\s*(?P<det>an?\s+|the\s+)?",
        "role",
    ),
    # "Lukas, 34, from Graz": an introduction as a list
    (
        (",",),
        rf"^(?:(?:{W.GREETINGS}|he+y+a*|hi+)[\s,!.:-]+)*(?=[A-Z][\w\u00c0-\u024f]+,\s*\d{{1,2}}\b)",
        "name",
    ),
    (
        (",",),
        rf"^(?:(?:{W.GREETINGS}|he+y+a*|hi+)[\s,!.:-]+)*[A-Z][\w\u00c0-\u024f]+,\s*"
        r"(?P<value>\d{1,2}),",
        "age",
    ),
    (
        ("from",),
        r"^(?:\w+[\s,!.]+)?[A-Z][\w\u00c0-\u024f]+,\s*\d{1,2},\s*from\s+",
        "location",
    ),
    (
        ("turned",),
        r"^(?:just\s+|recently\s+)?turned\s+(?P<value>\d{1,3})\b",
        "age",
    ),
    (
        ("based",),
        rf"{I_AM}\s+{NOT_NEGATED}{{0,40}}?\bbased\s+(?:in|out\s+of)\s+",
        "location",
    ),
    # "Myself Rohit", "doing job in Infosys", "I am accountant" (no article)
    (
        ("myself",),
        rf"^(?:(?:{W.GREETINGS})[\s,!.:-]+)*myself\s+(?P<value>[A-Z][\w\u00c0-\u024f]+)",
        "plain_name",
    ),
    (
        ("job",),
        r"\bdoing\s+(?:a\s+|the\s+)?job\s+(?:in|at|with|for)\s+(?=[A-Z])",
        "employer",
    ),
    (
        ("i am", "i'm", "im"),
        rf"{I_AM}\s+{ADV}(?=(?:[\w-]+\s+)?(?:{ROLE_HEADS})\b)(?!(?:a|an|the)\b)",
        "role",
    ),
    # more of the ways people say who they are
    (
        ("this is",),
        rf"^(?:(?:{W.GREETINGS}|he+y+a*|hi+)[\s,!.:-]+)*this\s+is\s+(?=[A-Z])",
        "name",
    ),
    (
        ("go by", "call me", "calls me"),
        r"\b(?:I\s+go\s+by|(?:everyone|everybody|people|friends|most\s+people|they)\s+"
        r"(?:just\s+)?calls?\s+me)\s+",
        "name",
    ),
    (
        ("year-old", "year old", "aged", "age"),
        r"(?:\b(?:I'm|I\s+am)\s+an?\s+(?P<value>\d{1,3})[-\s]years?[-\s]old\b"
        r"|^(?:aged?\s*:?\s*)(?P<value2>\d{1,3})\b)",
        "age_either",
    ),
    (
        ("-based",),
        rf"{I_AM}\s+{ADV}(?:an?\s+)?(?=[A-Z][\w\u00c0-\u024f]+-based\b)",
        "location",
    ),
    (
        ("here in",),
        r"\bhere\s+in\s+(?=[A-Z])",
        "location",
    ),
    (
        ("with", "been at"),
        rf"(?:{I_AM}|\bI(?:'ve|\s+have)\s+been|^{ADV}been)\s+{ADV}(?:with|at)\s+(?=[A-Z])",
        "employer",
    ),
    (
        ("employer", "company"),
        r"\bmy\s+(?:employer|company)\s+is\s+(?=[A-Z])",
        "employer",
    ),
    (
        ("retired", "by trade", "for a living"),
        rf"{I_AM}\s+(?:an?\s+)?(?:retired\s+)?(?=(?:[\w-]+\s+){{0,2}}?[\w-]+\s+by\s+trade)"
        r"|\b(?:I'm|I\s+am)\s+(?:an?\s+)?retired\s+(?P<det>)",
        "role",
    ),
    # an introduction without a verb: "Tomás here, teacher from Valencia", "uni student in
    # Kraków", "I'm a barista at a tiny cafe in Porto"
    (
        ("here", ","),
        r"(?:^|,\s*)(?:(?:uni|university|high\s+school|phd|grad)\s+)?(?=[a-z]+\s+(?:from|in)\s+[A-Z])",
        "role",
    ),
    (
        ("from", " in "),
        rf"(?:^|,\s*|{I_AM}\s+(?:an?|the)\s+)(?:[\w-]+\s+){{0,3}}?(?:{ROLE_HEADS})"
        r"\s+in\s+(?=[A-Z])",  # "from X" is where the user comes from ("I'm Ada from Paris")
        "location_less_sure",  # "developer in Allegro" may name the employer
    ),
    # email, phone, pronouns, birthday
    (
        ("@",),
        r"\b(?:my\s+(?:(?:work|personal|main|primary|private|business|school)\s+)?"
        r"e-?mail(?:\s+address)?(?:\s+is|'s)|e-?mail\s+me\s+(?:at|on)|"
        r"(?:you\s+can\s+)?(?:reach|contact)\s+me\s+(?:at|on|via))\s*:?\s*<?"
        rf"(?P<value>{EMAIL})",
        "email",
    ),
    (
        ("me", "my"),
        r"\b(?:my\s+(?:(?:work|personal|home|mobile|cell|office)\s+)?"
        r"(?:phone|cell|mobile|telephone)(?:\s+number)?(?:\s+is|'s)|my\s+number\s+is|"
        r"(?:call|text|ring)\s+me\s+(?:at|on)|(?:you\s+can\s+)?reach\s+me\s+(?:at|on))"
        rf"\s*:?\s*(?P<value>{PHONE})",
        "phone",
    ),
    (
        ("@",),
        r"(?:\b(?:my|me)\b[^.;!?\n@]{0,40}?|\b(?:e-?mail|mail)\s*:\s*|\bcontact\s*:[^\n@]{0,40}?)"
        rf"(?P<value>{EMAIL})",
        "email",
    ),
    # "Use ann@new.example from now on", "I've switched to a new address: raj@work.example"
    (
        ("@",),
        r"(?:\b(?:please\s+)?use\s+(?=\S+@\S+\s+(?:from\s+now\s+on|instead|going\s+forward|"
        r"for\s+(?:me|everything)))|\b(?:new|updated|current|different)\s+(?:e-?mail\s+)?"
        r"address\s*(?:is|:)?\s*|\bswitched\s+(?:my\s+e-?mail\s+)?to\s+(?=\S+@))<?"
        rf"(?P<value>{EMAIL})",
        "email",
    ),
    (
        ("number", "contact", "phone", "mobile", "cell"),
        r"(?:\b(?:(?:my|new)\s+)?(?:new\s+)?(?:phone\s+|mobile\s+|cell\s+)?number\s*(?:is|:)|"
        r"\b(?:contact|phone|mobile|cell)\s*:)\s*"
        rf"(?P<value>{PHONE})",
        "phone",
    ),
    (
        ("pronouns",),
        rf"(?:^|\n)\W*pronouns\s*(?:are|:)\s*(?P<value>{PRONOUNS})",
        "pronouns",
    ),
    (
        ("birthday",),
        r"^(?:my\s+)?birthday(?:\s+is|'s)\s+(?:on\s+)?"
        rf"(?P<value>{DATE})",
        "birthday",
    ),
    (
        ("pronouns",),
        rf"\bmy\s+pronouns\s+are\s+(?P<value>{PRONOUNS})",
        "pronouns",
    ),
    (
        ("/",),
        rf"\bI\s+(?:use|go\s+by)\s+(?P<value>{PRONOUNS})",
        "pronouns",
    ),
    (
        ("birth", "bday", "b-day", "born"),
        r"\b(?:my\s+(?:birthday|bday|b-day|date\s+of\s+birth|birth\s*date)"
        r"(?:\s+is|'s|\s+falls)(?:\s+on)?|(?:\bI\s+was\s+|^)born(?:\s+on)?)\s+"
        rf"(?P<value>{DATE})",
        "birthday",
    ),
)
