"""Word tables for ``rules.py`` (the offline classifier): word lists only, no logic.

Two shapes:

- ``frozenset``s (and one dict) of lower-case words, looked up one word at a time;
- alternations, ``"a|b|c"`` strings that ``rules.py`` puts inside its regular expressions.
  They are regex fragments: an item may carry regex syntax (``kids?``, ``apologi[sz]\\w*``),
  and ``rules.py`` adds the ``\\b`` boundaries and the flags.

Changing a list changes what the rules find: measure with ``manage.py bench extraction``.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- text shape ---------------------------------------------------------------------------------
# People and animals close to the user; shared by the relation and the rule detectors.
RELATIONS = (
    r"wife|husband|partner|spouse|girlfriend|boyfriend|fianc[eé]e?|son|daughter|kids?|child"
    r"|children|baby|mom|mum|mother|dad|father|parents?|brother|sister|siblings?|grandma"
    r"|grandmother|grandpa|grandfather|grandparents|aunt|uncle|cousin|niece|nephew|family"
    r"|dog|cat|puppy|kitten|pets?|rabbit|parrot|horse|manager|boss|team|company|cofounder"
    r"|co-founder|landlord|assistant|flatmate|roommate|best friend|friend"
)
# Abbreviations whose full stop does not end a sentence ("St. Mary's", "e.g.").
ABBREVIATIONS = r"st|mr|mrs|ms|dr|jr|sr|vs|etc|e\.g|i\.e|approx"
# First-person openings that start a new clause after a comma or a conjunction.
CLAUSE_SUBJECTS = r"i|i am|i have|i would|i will|we|we are|we have|my|our"
# Conjunctions that join two first-person clauses ("I love cycling and I have two cats").
CLAUSE_CONJUNCTIONS = r"and|but|so|also|though|although|while|because|plus"

# --- sentence-level reading ---------------------------------------------------------------------
# Openers dropped from the start of a sentence ("Hi,", "By the way", "Honestly", "From now on").
LEAD_MARKERS = (
    r"hi|hey|hello|ok|okay|so|well|oh|ah|also|and|but|plus|btw|by the way|actually"
    r"|honestly|frankly|lol|haha|fyi|just so you know|quick context|scratch that|sorry"
    r"|oh wait|anyway|anyways|i meant|i mean|to be honest|tbh|for the record|good question"
    r"|oops|whoops|my bad|my mistake"
    r"|from now on|going forward|in future|in the future"
)
# Openers that also begin real sentences ("No merges after 4pm"): dropped only before punctuation.
LEAD_MARKERS_WITH_PUNCTUATION = (
    r"no|nope|yes|yeah|yep|sure|right|thanks|thank you|great|cool|nice|context|update"
    r"|correction|wait|note"
)
# Hedges that make a sentence speculative ("I might", "maybe"); "may" is not the month.
SPECULATIVE = (
    r"might|maybe|perhaps|possibly|not sure|unsure|considering|thinking (?:about|of)"
    r"|i guess|i suppose|(?<!\bin )(?<!\bon )may(?!\s+\d)|could"
    # wishes: what the user would love, dreams of or hopes for is not (yet) so
    r"|would love to|'d love to|dreams? of|dreaming of|someday|some day|if only|ideally"
    r"|hopefully|i hope to|in an ideal world|one day (?:i'll|i will|i'd|i would|i want)"
)
# Hedges that make a sentence likely but not certain ("probably", "I think").
LIKELY = (
    r"probably|likely|i think|i believe|kind of|sort of|planning|plan to|going to"
    # a change of something named only by a pronoun ("I've increased it to 10 km"): what
    # changed was said elsewhere, so a person confirms it before it is believed
    r"|(?:increased|decreased|raised|cut|upped|reduced|changed|doubled|halved|bumped|dropped"
    r"|lowered)\s+(?:it|that|this|them)\s+(?:up\s+|down\s+)?to"
)
# Words that open a question ("What ...", "How ...").
QUESTION_WORDS = r"what|where|who|whom|whose|why|which|how"
# Auxiliaries that open a yes/no question ("Do you ...", "Is it ...") ...
QUESTION_AUXILIARIES = r"do|does|did|can|could|would|will|should|is|are|am|was|were|have|has|shall"
# ... when one of these subjects follows them.
QUESTION_SUBJECTS = r"you|i|we|it|they|he|she|there|my|your|this|that|the"
# Words that make "could you ...?" a standing order rather than a question.
STANDING = (
    r"always|never|from now on|in future|in the future|going forward|every time|whenever"
    r"|by default"
)

# --- procedures ---------------------------------------------------------------------------------
# Nouns that head a workflow ("The release process is: ...").
WORKFLOW_NOUNS = r"process|routine|procedure|steps?|checklist|workflow|playbook|runbook"
# How the assistant should talk: length, tone, format, language, units, naming.
STYLE_CUES = (
    r"brief(?:ly)?|short(?:er)?|concise(?:ly)?|terse|verbose|wordy|detail(?:ed)?|in depth"
    r"|step by step|simpl[ey]|plain english|like i am an? |beginner|expert|formal(?:ly)?"
    r"|casual(?:ly)?|blunt(?:ly)?|direct(?:ly)?|polite(?:ly)?|friendly|tone|emojis?"
    r"|bullet(?: points?)?|markdown|tables?|in (?:english|french|german|spanish|italian"
    r"|portuguese|dutch|japanese|chinese|korean|russian|arabic|hindi|polish|swedish)"
    r"|metric|imperial|units|sources|citations?|apologi[sz]\w*|sugarcoat\w*|call me|address me"
    r"|first name|my name|type hints|jargon|tl;?dr|summary first|explanations?|pleasantries"
    r"|long (?:explanations?|answers?|responses?|replies|messages|intros?)"
    r"|small talk|disclaimers?|caveats?|preamble|fluff|filler|spelling|british|american"
    r"|(?:short|concrete|more|fewer|code|real|small|simple) examples"
    r"|just (?:give|show) me the \w+|your (?:answers|responses|replies|tone)"
)
# Imperatives addressed to the assistant ("Answer ...", "Keep ...", "Skip ...").
ASSISTANT_VERBS = (
    r"answer|reply|respond|write|explain|keep|be|use|call|address|talk|speak|stop|avoid"
    r"|show|give|include|add|format|summari[sz]e|cite|translate|switch|skip|spare|cut|drop"
    r"|no need for|there is no need for|do not bother with"
)
# Words that open a hard rule ("Never deploy on Fridays", "Make sure ...").
CONSTRAINT_OPENERS = r"never|always|do not|don't|must|make sure|ensure|avoid|only|stop"
# Words that make a statement about things a rule ("Code reviews are mandatory").
RULE_WORDS = (
    r"mandatory|compulsory|required|forbidden|prohibited|not allowed|not permitted"
    r"|under no circumstances|at all times|never"
)
# What a rule can require ("needs two approvals", "requires a ticket").
REQUIRED_THINGS = r"approvals?|reviews?|reviewers?|sign-?offs?|tests?|tickets?"
# Subjects that make a sentence personal, so not an impersonal rule ("I never eat meat").
PERSONAL_SUBJECTS = r"i|we|my|our|your|his|her|their|it|this|that|these|those|he|she|they|you|there"

# --- clause dispatch ----------------------------------------------------------------------------
# Credentials whose values are never stored ("the wifi password is ...").
CREDENTIALS = (
    r"password|passcode|passphrase|pin(?: code)?|api key|secret key|access token|token"
    r"|credit card number|card number|ssn|social security number"
)

# --- episodes -----------------------------------------------------------------------------------
# Past-tense verbs that make a clause an event ("I decided", "We launched").
EVENT_VERBS = _words(
    """decided switched moved launched shipped released deployed migrated quit left joined started
    began finished completed submitted passed ran adopted hired signed bought sold chose picked
    selected deleted accepted graduated married retired founded opened closed published won booked
    upgraded replaced dropped cancelled canceled rewrote built created became welcomed enrolled
    earned got had lost broke proposed raised merged renamed introduced relocated resigned applied
    interviewed visited travelled traveled flew celebrated registered paid fixed solved rolled
    finalized finalised announced acquired reached hit turned went learned learnt set ended
    handed"""
)
# Event verbs that also make an event without a subject ("Moved to Amsterdam in May").
SUBJECTLESS_EVENTS = EVENT_VERBS - {"had", "set", "hit", "turned", "went", "got", "lost", "ran"}
# Event verbs that make a decision, not just an event.
DECISION_VERBS = frozenset({"decided", "chose", "picked", "selected", "switched"})
# What "had" is an event with ("had a baby"; "had a cold" is not one).
HAD_EVENTS = frozenset({"baby", "son", "daughter", "surgery", "wedding"})
# What "got" is an event before ("got a job", "got back"), besides a participle.
GOT_EVENT_STARTS = frozenset({"a", "an", "my", "our", "back", "home"})
# What "went" is an event before ("went freelance", "went live").
WENT_EVENT_STARTS = frozenset({"with", "for", "freelance", "vegan", "public", "live"})
# Adverbs skipped between the subject and its verb ("I really love", "we finally launched").
ADVERBS = _words(
    """really truly absolutely totally honestly also just still genuinely definitely generally
    usually mostly actually quite secretly always never often sometimes rarely seldom normally
    typically mainly finally recently officially already even only currently now personally
    first then literally basically much ever kinda probably maybe perhaps remotely"""
)
# Two-word adverbs skipped the same way.
ADVERB_PAIRS = frozenset({"kind of", "sort of", "no longer", "pretty much", "very much"})
# Participles after "I was" that make an event ("I was diagnosed", "I was promoted").
PASSIVE_EVENTS = _words(
    """diagnosed promoted hired fired laid accepted admitted elected awarded offered married
    engaged born discharged operated"""
)
# Past forms that describe a state, not an event ("I was tired yesterday").
STATIVE_PAST = _words(
    """was were had did liked loved hated enjoyed preferred wanted needed felt thought knew
    seemed used meant"""
)
# Family members and pets whose milestones are the user's episodes ("Our daughter was born").
FAMILY_EVENT_RELATIONS = (
    r"wife|husband|partner|son|daughter|baby|kids?|children"
    r"|mom|mum|mother|dad|father|parents|brother|sister|grandma|grandmother|grandpa"
    r"|grandfather|dog|cat"
)
# Those milestones.
FAMILY_EVENTS = (
    r"was born|were born|passed away|died|got married|got engaged|graduated|retired"
    r"|started school|moved"
)
# Words that make an episode a milestone (more important).
MILESTONES = (
    r"married|engaged|divorced|promoted|quit|resigned|retired|graduated|moved|relocated"
    r"|joined|founded|launched|bought a house|baby|born|hired|fired|laid off|new job"
)

# --- facts --------------------------------------------------------------------------------------
# What a relation does in a fact about them ("My sister lives ...", "My dog is ...").
RELATION_VERBS = (
    r"is|are|was|were|lives|live|works|work"
    r"|loves|love|likes|like|hates|hate|prefers|prefer|has|have|uses|use|speaks|speak|studies"
    r"|goes|go|plays|play|name is|names are|does not|do not|never|always|just|turned|turns"
)
# Relation words that make a relation fact about pets ...
PETS = r"dog|cat|puppy|kitten|pet"
# ... or about work.
WORK_RELATIONS = r"team|company|manager|boss|assistant"
# Verbs of liking and disliking ("I prefer", "I can't stand").
PREFERENCE_VERBS = _words(
    "prefer love like enjoy adore hate dislike detest loathe stand mind rather"
)
# Verbs that state a habit ("I drive", "I meditate").
HABIT_VERBS = _words(
    """speak use run drive play eat drink cook read write code program practise practice study
    learn wear ride collect meditate smoke commute own follow watch listen bike cycle swim work
    sleep avoid share rent"""
)
# Verbs that state a plan before "to" ("I want to", "I hope to").
PLAN_VERBS = frozenset({"want", "plan", "hope", "intend", "aim", "expect"})
# What "take" is no habit with ("take it", "take care").
TAKE_NOT_HABIT = frozenset({"it", "that", "this", "care", "a", "note"})
# Progressives after "I am" that state a plan ("I'm considering", "I'm about to").
PLAN_PROGRESSIVES = (
    r"considering|thinking about|thinking of|planning to|planning on|going to|hoping to"
    r"|about to|looking to|looking into"
)
# A change under way after "I am" is a plan, not yet an event ("I'm switching to ...").
LIFE_CHANGES = (
    r"switching|moving|changing|leaving|quitting|joining|starting|retiring|relocating"
    r"|transitioning|going back"
)
# Modals after "I": a plan ("I might move"), a preference ("I would rather") or nothing.
MODALS = frozenset({"might", "may", "could", "will", "would", "should", "can", "cannot"})
# What follows "I am" in a lasting fact: diet, health, traits, family status, fandom, networks.
COPULA_FACTS = (
    r"vegetarian|vegan|pescatarian|gluten[- ]free"
    r"|coeliac|celiac|lactose[- ]intolerant|kosher|halal|teetotal|sober|allergic\b.*|intolerant\b.*"
    r"|diabetic|asthmatic|epileptic|colou?r ?blind|deaf|hard of hearing|left[- ]handed"
    r"|right[- ]handed|dyslexic|autistic|night owl|introvert|extrovert|married"
    r"|(?:more of |much more of )?an? (?:[\w-]+ ){0,2}(?:person|fan|supporter|lover|enthusiast"
    r"|addict|nerd|geek|foodie|owl)\b.*"
    r"|single|divorced|engaged|widowed|fluent in\b.*|learning\b.*|fan of\b.*|into\b.*"
    r"|on (?:twitter|x|facebook|instagram|linkedin|mastodon|bluesky|reddit|tiktok|whatsapp|signal"
    r"|telegram|discord|slack)\b.*|(?:a |an )?(?:remote|freelance) worker"
)
# The tag of an "I am ..." fact, the first whose alternation is found in it ("personal" if none).
COPULA_TAGS = (
    ("health", r"allergic|intolerant|diabetic|asthmatic|epileptic|colou?r ?blind|deaf"),
    ("diet", r"vegetarian|vegan|pescatarian|gluten|coeliac|celiac|kosher|halal|teetotal"),
    ("preference", r"fan of|into\b"),
    ("family", r"married|single|divorced|engaged|widowed"),
)
# Nationalities: "I am Dutch" is background, not an identity slot.
NATIONALITIES = _words(
    """american british english scottish welsh irish canadian australian dutch german french
    spanish italian portuguese brazilian mexican argentinian chilean colombian peruvian swedish
    norwegian danish finnish icelandic polish czech slovak hungarian romanian bulgarian greek
    turkish ukrainian russian estonian latvian lithuanian swiss austrian belgian indian pakistani
    bangladeshi chinese japanese korean vietnamese thai filipino indonesian malaysian nigerian
    kenyan ghanaian egyptian moroccan ethiopian israeli iranian lebanese"""
)
# Passing states after "I am": kept as rejected ephemeral noise ("I'm so tired").
TRANSIENT_STATES = (
    r"tired|exhausted|hungry|thirsty|sleepy|bored|sick|ill|busy|stressed|excited|happy|sad"
    r"|annoyed|confused|cold|hot|late|running late|stuck|lost|frustrated|grumpy|nervous"
    r"|at (?:the|a|my) \w+|on (?:my|the) way|in a meeting|back|here|done|ready|good|fine|ok|okay"
    r"|home|off"
)
# Subjects that are not a named thing with an opinion about it ("It is amazing").
NOT_OPINION_SUBJECTS = (
    r"it|this|that|these|those|everything|something|which|the|a|an|there|he"
    r"|she|they|you|i|we|my|our|your|his|her|their"
)
# Verdicts that make "<thing> is ..." the user's opinion ("Pineapple on pizza is disgusting").
OPINION_VERDICTS = (
    r"disgusting|gross|overrated|underrated|the best|the worst|amazing|awesome"
    r"|terrible|awful|delicious|my jam|life|unbearable|fantastic"
)
# What "I have" a lasting fact with ("I have two kids", "I have type 1 diabetes").
HAVE_OBJECTS = (
    frozenset({"a", "an", "no", "any", "type"})
    | frozenset(str(n) for n in range(2, 21))
    | _words("two three four five six seven eight nine ten eleven twelve several")
)
# Importance of a fact by health words, the first found ("standard" if none).
IMPORTANCE_STEMS = (
    ("critical", r"allerg|anaphyla|epilep"),  # getting it wrong can hurt the user
    ("core", r"diabet|intoleran|coeliac|celiac|vegetarian|vegan|halal|kosher|colou?r ?blind"),
)

# Home-life words: "we" is the user's family, not their team.
HOUSEHOLD = (
    r"kids?|children|bab(?:y|ies)|daughters?|sons?|dogs?|cats?|pupp(?:y|ies)|kittens?|pets?"
    r"|house|flat|apartment|home|married|wedding|honeymoon|garden|cars?|bikes?|engaged"
)

# --- building candidates ------------------------------------------------------------------------
# Topic tags and their words: every topic found in a candidate's text becomes a tag.
TOPICS = (
    (
        "food",
        r"food|eat|eats|meat|pork|beef|fish|coffee|tea|sushi|cilantro|spicy|sugar|salt"
        r"|vegetarian|vegan|pescatarian|gluten|lactose|dinner|lunch|breakfast|cook\w*|recipe|bak\w+"
        r"|thai|shellfish|peanuts?|fast food",
    ),
    (
        "health",
        r"allerg\w*|diabet\w*|intoleran\w*|colou?r ?blind|penicillin|asthma\w*"
        r"|medical|doctor|celiac|coeliac",
    ),
    (
        "family",
        r"wife|husband|partner|kids?|children|son|daughter|mom|mum|mother|dad"
        r"|father|brother|sister|married|parents|family|baby",
    ),
    ("pets", r"dog|cat|cats|puppy|kitten|pets?"),
    (
        "tools",
        r"editor|neovim|vim|emacs|vs ?code|linux|windows|macos|git|gitlab|github"
        r"|obsidian|todoist|slack|jira|linear|postgres|mysql|aws|docker|kubernetes|laptop",
    ),
    ("music", r"music|band|jazz|genre|piano|cello|guitar|song|concerts?"),
    ("travel", r"travel\w*|flights?|fly|flew|train|trip|journeys?|seats?"),
    ("language", r"french|spanish|japanese|english|german|italian|language"),
    ("sport", r"hiking|cycling|marathon|running|climbing|gym|yoga|swimming|football"),
    (
        "work",
        r"job|office|deploy\w*|release\w*|merge\w*|client\w*|customers?|meetings?"
        r"|standup|hired|hiring|promot\w+|production|staging|pr|api",
    ),
)
