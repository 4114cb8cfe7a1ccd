"""Word tables for ``regex.py`` (identity slots and "remember that ..."): word lists only.

Two shapes:

- ``frozenset``s of lower-case words, looked up one word at a time;
- alternations, ``"a|b|c"`` strings that ``regex.py`` puts inside its regular expressions
  (regex fragments: an item may carry regex syntax such as ``wish(?:ed)?`` or ``as\\s+if``).

Changing a list changes what the regex stage finds: measure with ``manage.py bench extraction``.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- values -------------------------------------------------------------------------------------
# Month names and abbreviations: a value stops before them ("I moved to Tokyo in May").
MONTHS = _words(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
# Weekdays and weekends: a value stops before them.
WEEKDAYS = _words(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays "
    "thursdays fridays saturdays sundays weekend weekends weekdays"
)
# A value stops before any of these (compared in lower case).
STOP = (
    _words(
        """
        and but or nor so because since though although while where which who whom whose that
        with for from to at in on by as of near until till now currently today yesterday
        tomorrow tonight last next this these those ago recently already anymore anyway again
        too also lol haha btw right then when if is are was were am be been has have had do does
        did will would can could should might must may just still not no never yet very really
        actually probably here there full-time part-time remotely
        """
    )
    | WEEKDAYS
    | MONTHS
)
# Determiners: a value never starts with one ("I live in a flat" has no place).
DETERMINERS = _words("a an the my our his her their your this that some one another any no its")
# Lower-case words inside a place name ("Isle of Man", "Frankfurt am Main").
PLACE_CONNECTORS = _words(
    "of de del della da di du des la le les los las el upon am der den van von y sur"
)
# Lower-case words inside a person's name ("Ludwig van Beethoven").
NAME_CONNECTORS = _words("van von de da del di du le la bin ibn al ter ten")
# Lower-case words inside an employer's name ("Bank of America", "Procter & Gamble").
EMPLOYER_CONNECTORS = _words("of de &")
# "I live in peace": states, not places.
# What a team moves to that is no place to live ("we moved to Postgres", "... to the cloud").
NOT_A_HOME = (
    r"database|db|cloud|server|servers|cluster|stack|framework|library|platform|provider|vendor"
    r"|version|release|backend|frontend|repo|repository|branch|service|services|api|app|tool"
    r"|tools|team|office|offices|headquarters|hq|sprint|project|codebase|pipeline|postgres\w*"
    r"|mysql|aws|azure|gcp|docker|kubernetes|k8s|python|rust|go|java|typescript|react|slack"
    r"|jira|linear|github|gitlab|notion"
)
LOCATION_BLOCK = _words(
    """
    peace fear hope sin denial harmony luxury poverty comfort style hell heaven bliss dread
    terror shame silence misery hiding limbo paradise fantasy dreams reality ignorance
    """
)
# "I work at home", "I work for money": not employers.
EMPLOYER_BLOCK = _words(
    """
    home night nights weekends work school it that this there here remote myself yourself free
    fun money hours you them him her us me everyone anyone both
    """
)
# Nationalities, faiths, politics and star signs: "I'm Dutch" is no name.
DEMONYMS = _words(
    """
    american british english scottish welsh irish french german italian spanish portuguese dutch
    belgian swiss austrian swedish norwegian danish finnish icelandic polish czech slovak
    hungarian romanian bulgarian greek turkish russian ukrainian belarusian serbian croatian
    bosnian slovenian albanian lithuanian latvian estonian canadian mexican brazilian
    argentinian argentine chilean peruvian colombian venezuelan cuban chinese japanese korean
    vietnamese thai filipino filipina indonesian malaysian singaporean indian pakistani
    bangladeshi nepali iranian persian iraqi syrian lebanese israeli palestinian jordanian
    egyptian moroccan algerian tunisian nigerian ghanaian kenyan ethiopian somali australian
    kiwi asian european african latino latina latinx hispanic arab kurdish maltese taiwanese
    jewish catholic muslim christian hindu buddhist sikh atheist agnostic mormon protestant
    orthodox democrat republican libertarian conservative liberal gemini aries taurus cancer
    leo virgo libra scorpio sagittarius capricorn aquarius pisces
    """
)
# Words people Title-Case after "I'm" that are not names.
NOT_NAMES = DEMONYMS | _words(
    """
    sorry fine good great ok okay well here there back done sure glad happy sad tired sick busy
    ready new home late early free available interested excited curious confused stuck lost
    afraid aware certain not so very really just also still always never going trying looking
    working thinking learning coming getting doing using planning hungry bored alright alive
    awake single married divorced engaged widowed vegan vegetarian pregnant retired unemployed
    allergic human bilingual bad all in on at a an the from into over out off up down about like
    totally pretty quite kind sort almost currently now actually literally probably definitely
    honestly both one your his her their our my gay straight bi trans queer deaf blind disabled
    autistic dyslexic diabetic colorblind colourblind left-handed right-handed neurodivergent
    secret private irrelevant unimportant unknown long complicated hard weird funny unusual
    common rare spelled spelt pronounced nice cool awesome fantastic wonderful okay yes no
    anonymous nobody someone everyone the a it
    pescatarian pescetarian flexitarian fruitarian omnivore carnivore keto paleo teetotal sober
    """
)
# Occupations: the head noun of a role ("I'm a nurse", "senior data scientist").
ROLE_HEADS = _words(
    """
    engineer developer dev programmer coder architect designer scientist researcher analyst manager
    director lead consultant accountant auditor lawyer attorney paralegal solicitor barrister
    judge nurse doctor physician surgeon dentist pharmacist therapist psychologist psychiatrist
    counselor counsellor paramedic midwife veterinarian vet teacher professor lecturer tutor
    instructor educator librarian student intern apprentice trainee resident writer author
    journalist editor reporter translator interpreter photographer artist illustrator animator
    musician composer producer actor actress dancer chef cook baker barista bartender waiter
    waitress cashier clerk receptionist secretary administrator technician mechanic
    electrician plumber carpenter builder contractor welder machinist farmer gardener
    landscaper driver pilot firefighter officer detective soldier sailor founder cofounder
    co-founder entrepreneur freelancer investor banker trader broker realtor recruiter marketer
    strategist salesperson salesman saleswoman specialist coordinator supervisor operator
    planner economist statistician mathematician physicist chemist biologist geologist
    astronomer tester clinician caregiver carer nanny housekeeper cleaner janitor pastor
    priest rabbi imam politician diplomat curator archivist scholar postdoc dean principal
    headteacher coach trainer physiotherapist optometrist radiologist anesthesiologist
    pediatrician paediatrician sre devops
    """
)
# Occupations written as acronyms ("I'm the CTO").
ROLE_ACRONYMS = _words("ceo cto cfo coo cio ciso cmo cpo vp sre pm qa dba swe sde po evp svp")
# Roles read better as "is a ..." than "works as a ...".
STUDY_ROLES = _words("student postdoc resident apprentice trainee")
# "a former teacher" is not a current role.
NOT_CURRENT = _words("former ex retired aspiring future wannabe would-be recovering ex-")
# "I work as a team": not a role.
WORK_AS_BLOCK = _words("team group pair unit whole family hobby favour favor volunteer")

# --- clause checks ------------------------------------------------------------------------------
# Before the trigger in the same clause, these make the statement hypothetical, negated,
# or someone else's belief.
HEDGES = (
    r"if|unless|whether|wish(?:ed)?|suppose|supposing|imagine|imagining|pretend(?:ing)?|"
    r"hope|hoping|dream(?:ed|ing|t)?|maybe|perhaps|not|never|no|don't|doesn't|didn't|isn't|"
    r"wasn't|won't|wouldn't|can't|cannot|say|says|said|think|thinks|thought|tell|tells|told|"
    r"believe|believes|believed|assume|assumes|assumed|guess|guessed|would|could|might|should|"
    r"as\s+if|in\s+case|lie|lied|lying|joke|joking|kidding"
)
# Greetings allowed before "I'm <name>" ("Hi, I'm Ada") ...
GREETINGS = r"hi|hello|hey|hiya|howdy|greetings|yo|oh|well|so|ok|okay"
# ... and whom they greet ("Hi there", "Hello all").
GREETING_ADDRESSEES = r"there|all|everyone|folks|guys|again"
# All a clause may hold before "call me"/"I'm" for a name to count.
OPENERS = f"{GREETINGS}|and|but|also|btw|{GREETING_ADDRESSEES}|anyway|sorry|oops|actually"

# --- text preparation ---------------------------------------------------------------------------
# Abbreviations whose full stop does not end a sentence ("St. Louis", "Dr. Who").
ABBREVIATIONS = _words("st dr mr mrs ms mt ft jr sr inc ltd co corp prof vs approx dept univ")

# --- triggers -----------------------------------------------------------------------------------
# Adverbs allowed inside a trigger ("I currently live in", "I'm now based in").
TRIGGER_ADVERBS = (
    r"currently|now|still|actually|also|just|recently|finally|permanently|officially|"
    r"presently|remotely"
)
# Words that may follow an age ("I'm 34 and ...", "I'm 34 this year").
AGE_END_WORDS = r"and|but|so|now|btw|lol|too|myself|already|though|this\s+year|today"
# Personal pronouns, the parts of "she/her", "they/them".
PRONOUNS = (
    r"she|her|hers|he|him|his|they|them|theirs|xe|xem|xir|ze|zir|hir|ey|em|eir|fae|faer|"
    r"it|its|any|all"
)

# --- "remember that ..." ------------------------------------------------------------------------
# What may come before "remember" ("please", "can you", "make sure to").
REMEMBER_LEADS = (
    r"please|pls|plz|also|and|oh|btw|hey|ok|okay|so|just|but|now|can\s+you|could\s+you|"
    r"would\s+you|will\s+you|i\s+want\s+you\s+to|i\s+need\s+you\s+to|i'd\s+like\s+you\s+to|"
    r"make\s+sure\s+(?:to|you)"
)
# Courtesies dropped from the end of a remembered clause (", please", ", thanks").
COURTESIES = r"please|pls|thanks|thank\s+you|thx|ok|okay|alright"
# Words that make "remember that ..." point elsewhere ("remember this", "remember what I said").
DEICTIC = _words(
    "this that it these those what when where how who why which me us him her them you to for "
    "about everything anything something"
)
# Adverbs between "I" and its verb ("I always use"), besides any word in -ly.
ADVERBS = (
    r"always|never|usually|often|sometimes|really|also|still|just|only|generally|mostly|"
    r"rarely|actually|currently|now|strongly|mainly|normally|typically|definitely|absolutely|"
    r"even|already|totally|kinda|kind\s+of|sort\s+of"
)
