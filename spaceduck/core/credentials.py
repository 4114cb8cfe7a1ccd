"""Credentials in what a client writes: found, redacted, or refused. One place decides.

Whoever can read a row could read the secret, and recall would paste it into prompts. The
kernel holds the detectors and the policy, so both apps (memories, notes) and every front
end (the API, the dashboard, the admin, MCP, ``spaceduck.store``, ``manage.py import``) apply
the same rule with the same words (``screened``):

- **conversation** (a message's content and provenance, a thread's title: a record of what
  was said) is stored with each credential replaced by ``[redacted: <shape>]`` while
  ``SPACEDUCK_REDACT_SECRETS`` is on (the default), as sent when it is off;
- **knowledge** (a memory's title, content, summary, tags and context, a note's body, kind,
  tags and provenance, a fact's value and provenance: what a writer asks to keep) is refused
  with ``InvalidInput`` ("rejected: secret: <shape> in <field> (credentials are never stored
  as ...)"), whatever the setting: redacting would change the meaning of what was asked.

Inside the memories app the extraction firewall (``memories.extraction.firewall``) is the
door to these functions; the extraction guard refuses a candidate with a credential.

``find_secret(text)`` returns the *shape* of the first credential found, or None:

- from the ``detect-secrets`` detector plugins (instantiated once, called with
  ``analyze_string`` directly: no settings, no filters, no baseline):
  ``url_password`` (``scheme://user:pass@host``), ``private_key`` (PEM/PuTTY/... headers),
  ``jwt`` (formally valid), ``aws_key``, ``api_key`` (GitHub, GitLab, Slack, Stripe, OpenAI,
  npm, PyPI, SendGrid, Twilio, Telegram, Discord, Mailchimp, Square, Azure, Artifactory);
- shapes those plugins do not know, written for chat sentences rather than code:
  ``card_number`` (13-19 digits, Luhn-checked, or a CVV with its digits), ``pin`` ("my PIN is
  4821", "passcode 0000", "the door code is 7391", "2FA code: 552 019"), ``password_phrase``
  ("password Winter2024!", "the wifi password is swordfish", "secret: open sesame"),
  ``login_pair`` ("username mike.t and password Bluebird!77", "same login everywhere, it's
  mike.t and Bluebird!77", "log in as admin with Tr0ub4dor&3"), ``api_key`` (a key/token
  name followed by a long token, or a vendor prefix such as ``sk-``), ``ssn``,
  ``high_entropy`` (a long random-looking token, Shannon entropy from detect-secrets).

What is *not* a secret: passwords as a topic ("reset my password", "use a password manager",
"the password policy requires 12 characters"), versions, dates, phone numbers (personal data,
not a credential), order numbers, code identifiers, hashes.

Known limits: English only. A password made of one ordinary lowercase word is recognised only
right after "password is"/"password:" (and not when it reads like an adjective, "my password is
weak"). Cost: a few tens of microseconds per short sentence (see the test module).
"""

from __future__ import annotations

import itertools
import re
from functools import cache
from typing import Any

from django.conf import settings

from spaceduck.core.errors import InvalidInput

# --- detect-secrets plugins -------------------------------------------------------------------

# Plugin class path -> shape name. Left out on purpose: KeywordDetector (tuned for source code,
# both noisy and blind on chat sentences), IPPublicDetector (an address is not a credential),
# the two HighEntropyString plugins (they want quoted strings; their entropy helper is used
# below), and the IBM/Cloudant/SoftLayer keyword detectors (need code-style assignments).
_PLUGINS = (
    ("private_key.PrivateKeyDetector", "private_key"),
    ("basic_auth.BasicAuthDetector", "url_password"),
    ("jwt.JwtTokenDetector", "jwt"),
    ("aws.AWSKeyDetector", "aws_key"),
    ("github_token.GitHubTokenDetector", "api_key"),
    ("gitlab_token.GitLabTokenDetector", "api_key"),
    ("slack.SlackDetector", "api_key"),
    ("stripe.StripeDetector", "api_key"),
    ("openai.OpenAIDetector", "api_key"),
    ("npm.NpmDetector", "api_key"),
    ("pypi_token.PypiTokenDetector", "api_key"),
    ("sendgrid.SendGridDetector", "api_key"),
    ("twilio.TwilioKeyDetector", "api_key"),
    ("telegram_token.TelegramBotTokenDetector", "api_key"),
    ("discord.DiscordBotTokenDetector", "api_key"),
    ("mailchimp.MailchimpDetector", "api_key"),
    ("square_oauth.SquareOAuthDetector", "api_key"),
    ("azure_storage_key.AzureStorageKeyDetector", "api_key"),
    ("artifactory.ArtifactoryDetector", "api_key"),
)


@cache
def _plugins() -> tuple[tuple[Any, str], ...]:
    """One instance per plugin, built on first use (importing them costs ~50 ms)."""
    import importlib

    loaded = []
    for path, shape in _PLUGINS:
        module, name = path.rsplit(".", 1)
        cls = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        loaded.append((cls(), shape))
    return tuple(loaded)


@cache
def _entropy_fn() -> Any:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    return Base64HighEntropyString().calculate_shannon_entropy


def _plugin_shape(text: str) -> str | None:
    for plugin, shape in _plugins():
        for _ in plugin.analyze_string(text):
            return shape
    return None


# --- What a password looks like ---------------------------------------------------------------

# Filler that sits between a name and its value ("is now", "set to", "for the"): never a value.
_FILLER = (
    r"(?!(?:now|still|also|set|changed|reset|updated|to|is|was|the|my|a|an|our|your|his|her|"
    r"their|this|that|it|for|of|on|in|at)\b)"
)
# A value: a run of non-space characters, optionally quoted (trailing sentence punctuation is
# dropped later by _strip_tail, but "!"/"?" stay: "Winter2024!").
_VALUE = rf"[\"'\u201c\u2018`]?{_FILLER}(?P<value>[^\s\"'\u201d\u2019`]{{3,80}})[\"'\u201d\u2019`]?"
_SYMBOLS = set("!@#$%^&*+=?~|<>{}[]\\/;:")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+[a-z0-9-]*$", re.IGNORECASE)
_DATE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}$")
_NUMBERISH = re.compile(r"^[#(]?\+?[\d\s().,/-]+%?$")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_URLISH = re.compile(r"^(?:https?://|www\.)", re.IGNORECASE)


def _strip_tail(value: str) -> str:
    """``value`` without trailing ".,;:)]}" (sentence punctuation, not part of a password)."""
    stripped = value.rstrip(".,;:)]}")
    return stripped or value


def _looks_like_password(value: str) -> bool:
    """A token mixing letters with digits or symbols, not a version/date/email/URL/number."""
    value = _strip_tail(value)
    if len(value) < 6 or _VERSION.match(value) or _DATE.match(value):
        return False
    if _NUMBERISH.match(value) or _EMAIL.match(value) or _URLISH.match(value):
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    symbols = sum(c in _SYMBOLS for c in value)
    if not letters:
        return False
    if digits or symbols:
        return True
    # camelCase with an inner capital and lowercase around it, e.g. "tRoubadour" / "hUnTeR".
    inner = value[1:]
    return any(c.isupper() for c in inner) and any(c.islower() for c in inner) and "-" not in value


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that describe a password instead of being one ("my password is weak").
_NOT_VALUES = _words(
    """
    a an the my your our their his her its this that it same one different new old another
    weak strong long short simple complex secure insecure safe unsafe good bad wrong right
    correct incorrect invalid valid expired required mandatory optional saved stored stolen
    leaked compromised changed reset locked blocked hidden encrypted hashed forgotten lost
    easy hard difficult too very not also still now just only never always already
    case sensitive protected needed set there here in on at for of to from with by as if so
    and or but ok okay fine empty blank none null unknown private personal secret sure
    something nothing anything everything somewhere written manager policy rules rule reset
    requirement requirements hint hints length strength field prompt box dialog screen
    mine yours ours theirs same-as printed shared known i we you they he she someone
"""
)
_ADJECTIVE_SUFFIX = re.compile(r"(?:ed|ing|ly|ive|ous|ble|ful|less|ent|ant|al|ic|ory|ary)$")


def _plain_word_value(value: str) -> bool:
    """A lone lowercase/capitalised word after "password is": a secret unless it describes."""
    word = _strip_tail(value).lower()
    if not word.isalpha() or len(word) < 4 or word in _NOT_VALUES:
        return False
    return not _ADJECTIVE_SUFFIX.search(word)


# --- Password / passphrase phrasings ----------------------------------------------------------

_PW_NAME = (
    r"(?:pass\s?word|passwd|pwd|pw|pass\s?phrase|secret\s+(?:word|phrase)|"
    r"master\s+password|wi-?fi\s+(?:password|key|pw)|wpa2?\s+key|network\s+key|"
    r"recovery\s+(?:phrase|key)|seed\s+phrase|unlock\s+pattern)"
)
# "password for the router", "password of my email", "password on the NAS", "password to it"
# "for the router", "of my email", "to my laptop": what the secret opens.
_QUALIFIER = r"\s+(?:for|of|on|to|at|in)(?:\s+[\w'.@-]+){1,4}?"
# A verb (or sign) attaching a value to its name: "is", "was now", ":", "set to", "changed to".
_VERB = (
    r"(?:\s*(?:is|was|are|has\s+been)\b\s*[:=]?\s*|\s*(?:[:=]|->|=>)\s*|"
    r"\s+(?=(?:now|still|set|changed|reset|updated|to|became)\b))"
    r"(?:(?:now|still|also)\s+)?(?:(?:(?:set|changed|reset|updated)\s+)?to\s+|became\s+)?"
)
# Name, then value: through a verb (after an optional qualifier) or directly ("bare").
_ATTACH = rf"(?:(?:{_QUALIFIER})?{_VERB}|\s+(?P<bare>))"
# "the wifi password is swordfish", "password Winter2024!", "Set the DB password to Qw3rty!!".
_PASSWORD = re.compile(rf"\b{_PW_NAME}\b{_ATTACH}{_VALUE}", re.IGNORECASE)
# "secret: open sesame", "password = 'correct horse battery staple'": an explicit assignment
# takes any value, even plain words.
_EXPLICIT = re.compile(
    rf"\b(?:{_PW_NAME}|secret)(?:\s+is)?\s*[:=]\s*(?P<value>[^\s.,;]{{2,}}(?:\s+[^\s.,;]+){{0,5}})",
    re.IGNORECASE,
)
_QUOTED_AFTER_NAME = re.compile(
    rf"\b{_PW_NAME}\b(?:{_QUALIFIER})?{_VERB}[\"'\u201c\u2018`](?P<value>[^\"'\u201d\u2019`]{{3,80}})"
    r"[\"'\u201d\u2019`]",
    re.IGNORECASE,
)


def _password_phrase(text: str) -> bool:
    for match in _QUOTED_AFTER_NAME.finditer(text):
        if _strip_tail(match["value"]).lower() not in _NOT_VALUES:
            return True
    for match in _EXPLICIT.finditer(text):
        first = match["value"].split()[0].lower()
        if first not in _NOT_VALUES and not _ADJECTIVE_SUFFIX.search(first):
            return True
    for match in _PASSWORD.finditer(text):
        value = match["value"]
        if _looks_like_password(value) or (match["bare"] is None and _plain_word_value(value)):
            return True
    return False


# --- Login pairs ------------------------------------------------------------------------------

_LOGIN_NAME = (
    r"(?:log\s?-?ins?|sign\s?-?in|user\s?-?name|user\s?id|creds|credentials|"
    r"login\s+details|account\s+details)"
)
_PAIR_SEPARATOR = (
    r"(?:\s*[,/:]\s*(?:and\s+)?|\s+(?:and|with)\s+)(?:(?:the|my)\s+)?"
    r"(?:(?:password|passwd|pw|pwd|pass)\s*(?:is\s+|[:=]\s*)?)?"
)
# "username mike.t and password Bluebird!77", "login ... it's mike.t and Bluebird!77",
# "credentials: admin / admin123", "login is ana:Sunset!42"
_LOGIN_PAIR = re.compile(
    rf"\b{_LOGIN_NAME}\b(?:[^.!?\n]{{0,60}}?(?:\b(?:is|are|it's|its|it\s+is|they're)\b|[:=])\s*"
    r"|\s+)"
    r"(?P<user>[^\s,;/:]{2,60})" + _PAIR_SEPARATOR + _VALUE,
    re.IGNORECASE,
)
# "log in to the NAS as admin with Tr0ub4dor&3", "sign in with mike.t / Bluebird!77"
_LOGIN_WITH = re.compile(
    rf"\b(?:{_LOGIN_NAME}|log\s+(?:me\s+)?in(?:to)?|sign\s+(?:me\s+)?in(?:to)?)\b"
    r"[^.!?\n]{0,60}?\bwith\s+(?:(?:the\s+)?password\s+)?(?:[^\s,;/:]{2,60}"
    + _PAIR_SEPARATOR
    + r")?"
    + _VALUE,
    re.IGNORECASE,
)


# "log in to the NAS as admin / Tr0ub4dor&3", "use admin / Tr0ub4dor&3 for the NAS": a user
# and a password-like value around a slash, with no login word needed ("TCP / IP" has no
# password-like value).
_SLASH_PAIR = re.compile(r"(?<!\S)[\w.@+-]{2,60}\s+/\s+(?P<value>\S{6,80})")


def _login_pair(text: str) -> bool:
    for pattern in (_LOGIN_PAIR, _LOGIN_WITH, _SLASH_PAIR):
        if any(_looks_like_password(m["value"]) for m in pattern.finditer(text)):
            return True
    return False


# --- PINs and codes ---------------------------------------------------------------------------

_CODE_NAME = (
    r"(?:pin(?:\s+(?:code|number))?|passcode|pass\s+code|pincode|"
    r"(?:door|gate|garage|alarm|lock|unlock|safe|locker|entry|entrance|access|keypad|"
    r"security|verification|confirmation|one-time|otp|2fa|mfa|totp|sms|backup|recovery|"
    r"voicemail|phone|screen|bike\s+lock|padlock)\s+(?:code|pin|combination|combo)s?|"
    r"combination|combo)"
)
# 3-10 digits (spaces/dashes allowed: "552 019", "12-34-56"), not a count ("4 digits", "3 times")
# and not part of a longer number, date or time.
_DIGITS = (
    r"(?P<digits>\d(?:[ -]?\d){2,9})(?!\s*(?:digits?|characters?|chars?|numbers?|times?|"
    r"tries|attempts?|minutes?|seconds?|hours?|days?|%|percent)\b)(?![\d.,/:-]\d)"
)
_PIN = re.compile(
    rf"\b{_CODE_NAME}\b(?:{_ATTACH}|\s*-\s*|\s+of\s+)(?:#\s*)?{_DIGITS}",
    re.IGNORECASE,
)
# "4821 is my PIN"
_PIN_BEFORE = re.compile(
    rf"(?<![\d.,/:-])(?P<digits>\d{{4,8}})\s+(?:is|was)\s+(?:my|our|the|his|her|their)\s+"
    rf"(?:\w+\s+)?{_CODE_NAME}\b",
    re.IGNORECASE,
)


def _pin(text: str) -> bool:
    for match in _PIN.finditer(text):
        digits = re.sub(r"\D", "", match["digits"])
        if len(digits) >= 3 and not (len(digits) == 4 and _plausible_year_context(text, match)):
            return True
    return bool(_PIN_BEFORE.search(text))


def _plausible_year_context(text: str, match: re.Match[str]) -> bool:
    """'the PIN reader from 2019': a year after 'since/from/in', not after 'is'."""
    before = text[max(0, match.start("digits") - 8) : match.start("digits")].lower()
    return bool(re.search(r"\b(?:since|from|in|until|before|after)\s+$", before))


# --- Card numbers -----------------------------------------------------------------------------

# Not glued to letters: a digit run inside a hex id ("987df45818674124849a34b6...", a
# uuid that may pass Luhn) is part of the id, not a card.
_CARD = re.compile(r"(?<![\dA-Za-z+#.,/-])(?:\d[ -]?){12,18}\d(?![\d.,/-]\d)(?![A-Za-z])")
_CARD_WORDS = re.compile(
    r"\b(?:card|visa|mastercard|amex|american\s+express|discover|debit|credit|cc|iban|"
    r"account\s+number)\b",
    re.IGNORECASE,
)


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


_CVV = re.compile(
    rf"\b(?:cvv2?|cvc2?|csc|card\s+security\s+code){_ATTACH}\d{{3,4}}\b",
    re.IGNORECASE,
)


def _card_number(text: str) -> bool:
    if _CVV.search(text):
        return True
    for match in _CARD.finditer(text):
        raw = match.group()
        digits = re.sub(r"\D", "", raw)
        if not 13 <= len(digits) <= 19 or not _luhn(digits):
            continue
        groups = re.split(r"[ -]", raw)
        card_grouping = len(groups) == 1 or all(len(g) in (4, 5, 6) for g in groups[:-1])
        if digits[0] in "23456" and card_grouping:
            return True
        if _CARD_WORDS.search(text):
            return True
    return False


# --- API keys, SSNs, high entropy -------------------------------------------------------------

_KEY_PREFIX = re.compile(
    r"\b(?:sk|pk|rk|ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[bapors]|sk_live|sk_test|pk_live|"
    r"rk_live|sg|key|api|tok|token|secret|AIza)[-_.][A-Za-z0-9_-]{16,}"
)
_KEY_NAME = (
    r"(?:api[\s_-]?key|api[\s_-]?token|access[\s_-]?(?:key|token)|auth[\s_-]?token|"
    r"bearer(?:\s+token)?|secret[\s_-]?key|client[\s_-]?secret|private[\s_-]?key|"
    r"refresh[\s_-]?token|session[\s_-]?token|personal\s+access\s+token|token|key|secret)"
)
_KEY_ASSIGNED = re.compile(
    rf"\b{_KEY_NAME}\b{_ATTACH}[\"'`]?"
    r"(?P<value>[A-Za-z0-9_+/=.-]{15,}[A-Za-z0-9_+/=-])",
    re.IGNORECASE,
)
_SSN = re.compile(
    r"\b(?:ssn|social\s+security(?:\s+number)?|social\s+insurance\s+number|sin)\b"
    r"[^.\n]{0,20}?(?P<value>\d{3}[- ]?\d{2}[- ]?\d{4})\b",
    re.IGNORECASE,
)
_LONG_TOKEN = re.compile(r"(?<![\w/.:@-])[A-Za-z0-9_+/=-]{20,}(?![\w/.@-])")
# snake_case / SCREAMING_SNAKE / dotted names: code identifiers, not keys.
_IDENTIFIER = re.compile(
    r"^(?:[a-z]+\d{0,4}(?:[_.](?:[a-z]+\d{0,4}|\d{1,4}))+|[A-Z]+\d{0,4}(?:_(?:[A-Z]+\d{0,4}|\d{1,4}))+)$"
)
_HEX = re.compile(r"^[0-9a-fA-F-]+$")


def _api_key(text: str) -> bool:
    if _KEY_PREFIX.search(text):
        return True
    for match in _KEY_ASSIGNED.finditer(text):
        value = match["value"]
        has_digit = any(c.isdigit() for c in value)
        has_alpha = any(c.isalpha() for c in value)
        if has_digit and has_alpha and not _VERSION.match(value) and not _IDENTIFIER.match(value):
            return True
    return False


def _high_entropy(text: str) -> bool:
    """A long unbroken token that looks random: mixed case and digits, entropy > 4.0 bits."""
    for match in _LONG_TOKEN.finditer(text):
        token = match.group()
        if _HEX.match(token):  # hashes, UUIDs, commit ids: identifiers, not credentials
            continue
        kinds = (
            any(c.islower() for c in token)
            + any(c.isupper() for c in token)
            + any(c.isdigit() for c in token)
        )
        if kinds < 3 or sum(c.isdigit() for c in token) < 2:
            continue
        if "_" in token.strip("_") and token.replace("_", "").isalnum() and not _mixed(token):
            continue  # snake_case identifiers
        if _entropy_fn()(token) > 4.0:
            return True
    return False


def _mixed(token: str) -> bool:
    """Case flips inside the token more often than camelCase would (e.g. 'aB3xQ9...')."""
    flips = sum(1 for a, b in itertools.pairwise(token) if a.islower() and b.isupper())
    return flips >= 3


# --- Entry point ------------------------------------------------------------------------------

# Cheap gate: text with none of these cannot hold any shape below, so most memories ("The user
# lives in Paris.") cost a few substring tests (a regex alternation is several times slower).
_HINTS = (
    ":", "pass", "pw", "pin", "code", "combo", "secret", "key", "token", "log", "sign", "cred",
    "username", "user id", "userid", "user-id", "user name", "account details", "phrase", "cvv",
    "cvc", "csc", "eyj", "-----begin",
)  # fmt: skip
_DIGIT = re.compile(r"\d")
_LONG_RUN = re.compile(r"[A-Za-z0-9_+/=-]{20}")


# A lone uuid (a run or message id in provenance, a fact value) is an identifier: answered
# without the ~0.1 ms of the detectors, which would find nothing in it.
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\Z")


def _maybe(text: str) -> bool:
    if _DIGIT.search(text):
        return True
    lower = text.lower()
    return any(hint in lower for hint in _HINTS) or bool(_LONG_RUN.search(text))


_CHECKS = (
    ("login_pair", _login_pair),
    ("card_number", _card_number),
    ("pin", _pin),
    ("ssn", lambda text: bool(_SSN.search(text))),
    ("api_key", _api_key),
    ("password_phrase", _password_phrase),
    ("high_entropy", _high_entropy),
)


def find_secret(text: str) -> str | None:
    """The shape of the first credential in ``text`` (e.g. "jwt", "pin"), or None. A
    ``[redacted: <shape>]`` mark counts as the credential it replaced: the sentence around
    it is still about a secret, and is never learnt."""
    if not text:
        return None
    marked = _MARK.search(text)
    if marked is not None:
        return marked.group("shape")
    if not _maybe(text) or _UUID.match(text):
        return None
    shape = _plugin_shape(text)
    if shape is not None:
        return shape
    for name, check in _CHECKS:
        if check(text):
            return name
    return None


def secret_reason(*texts: str) -> str | None:
    """``"secret: <shape>"`` for the first of ``texts`` holding a credential, else None."""
    for text in texts:
        shape = find_secret(text)
        if shape is not None:
            return f"secret: {shape}"
    return None


# --- Redaction (messages are stored without their credentials) --------------------------------

_MARK = re.compile(r"\[redacted: (?P<shape>[a-z_]+)\]")
_BREAK = re.compile(r"((?<=[.!?])\s+|\n)")  # kept by split: the text is put back as it was
# A word without the punctuation that ends its sentence or clause: "is Winter2024! I moved"
# keeps its "!", so the sentence after it stays a sentence of its own.
_TOKEN_SPAN = re.compile(r"\S+?(?=[.,;:!?)]*(?:\s|$))")
# Credentials written as several words: the whole run goes, not only the word that tips it.
_RUNS = {"card_number": _CARD, "ssn": _SSN}
# A key block spans lines: it goes whole, before the text is cut into lines.
_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)


def redact(text: str) -> tuple[str, list[str]]:
    """``text`` with each credential replaced by ``[redacted: <shape>]``, and the shapes.

    Sentence by sentence (and line by line): the words that carry the credential are found
    by blanking words, the most random-looking first, until the sentence holds none; then
    each blanked word that is not needed for that is put back ("My API key is sk-..." keeps
    "My API key is"). A card number or an SSN goes whole; a sentence where blanking words
    does not help is replaced whole.
    """
    if not text or (not _maybe(text) and not _MARK.search(text)):
        return text, []
    shapes: list[str] = []
    text, blocks = _KEY_BLOCK.subn("[redacted: private_key]", text)
    shapes += ["private_key"] * blocks
    parts = _BREAK.split(text)
    for n in range(0, len(parts), 2):  # even: sentences; odd: the breaks between them
        piece = parts[n]
        if _MARK.search(piece):
            continue  # redacted already
        shape = find_secret(piece)
        if shape is not None:
            parts[n] = _redacted_piece(piece, shape)
            shapes.append(shape)
    return "".join(parts), shapes


def _redacted_piece(piece: str, shape: str) -> str:
    mark = f"[redacted: {shape}]"
    run = _RUNS.get(shape)
    if run is not None:
        piece = run.sub(mark, piece)
        if find_secret(_MARK.sub(" ", piece)) is None:
            return piece
    spans = [m.span() for m in _TOKEN_SPAN.finditer(piece)]
    order = sorted(spans, key=lambda span: _randomness(piece[span[0] : span[1]]), reverse=True)
    blanked: set[tuple[int, int]] = set()
    for span in order:
        blanked.add(span)
        if _without(piece, blanked, mark) is not None:
            break
    else:
        return mark
    for span in sorted(blanked, key=lambda s: _randomness(piece[s[0] : s[1]])):
        if _without(piece, blanked - {span}, mark) is not None:
            blanked.discard(span)  # not needed: the sentence is clean without blanking it
    result = _without(piece, blanked, mark)
    return result if result is not None else mark


def _without(piece: str, blanked: set[tuple[int, int]], mark: str) -> str | None:
    """``piece`` with the ``blanked`` words replaced by ``mark``, or None while it still
    holds a credential."""
    kept: list[str] = []
    at = 0
    for start, end in sorted(blanked):
        kept.append(piece[at:start])
        kept.append(mark)
        at = end
    kept.append(piece[at:])
    text = "".join(kept)
    unmarked = _MARK.sub(" ", text)
    return text if find_secret(unmarked) is None else None


def _randomness(token: str) -> tuple[int, int, int]:
    """Digits and symbols mixed with letters first, then the longest."""
    kinds = sum(
        (
            any(c.isdigit() for c in token),
            any(c.isalpha() for c in token),
            any(not c.isalnum() for c in token.strip(".,;:!?")),
        )
    )
    return kinds, len(token), 0


def redact_value(value: Any) -> tuple[Any, list[str]]:
    """A JSON value with ``redact`` applied to every string in it (keys too), and the shapes."""
    if isinstance(value, str):
        return redact(value)
    shapes: list[str] = []
    if isinstance(value, list):
        items = []
        for item in value:
            clean, found = redact_value(item)
            items.append(clean)
            shapes += found
        return items, shapes
    if isinstance(value, dict):
        pairs = {}
        for key, item in value.items():
            clean_key, found_key = redact(key) if isinstance(key, str) else (key, [])
            clean, found = redact_value(item)
            if not (found or found_key):
                paired = _pair_shape(key, item)
                if paired is not None:  # {"password": "Winter2024!"}: the value goes whole
                    clean, found = f"[redacted: {paired}]", [paired]
            pairs[clean_key] = clean
            shapes += found_key + found
        return pairs, shapes
    return value, shapes


def shape_in(value: Any) -> str | None:
    """The shape of the first credential anywhere in a JSON value (strings, keys, and a key
    read with its text value), or None."""
    if isinstance(value, str):
        return find_secret(value)
    if isinstance(value, list):
        return next((s for s in map(shape_in, value) if s is not None), None)
    if isinstance(value, dict):
        for key, item in value.items():
            shape = (
                (find_secret(key) if isinstance(key, str) else None)
                or shape_in(item)
                or _pair_shape(key, item)
            )
            if shape is not None:
                return shape
    return None


def _pair_shape(key: Any, item: Any) -> str | None:
    """The shape a JSON key and its text value hold only together: ``{"pin": "4821"}`` is
    "pin: 4821", though "4821" alone is a number. Marks already put are left as they are."""
    if not (isinstance(key, str) and isinstance(item, str)) or not item or _MARK.search(item):
        return None
    name = key.replace("_", " ").replace("-", " ").lower()  # "wifi_password" names a password
    if not any(hint in name for hint in _HINTS):
        return None  # "run_id", "date": no name of a credential, no second scan
    return find_secret(f"{name}: {item}")


# --- The policy: conversation is redacted, knowledge is refused -------------------------------

# Each kind of row a client writes, and its fields that hold free text (the import reads the
# same tables). A record of what was said keeps its place with the credential marked; what
# a writer asks to keep is refused, since a mark would change what it says.
CONVERSATION: dict[str, tuple[str, ...]] = {
    "thread": ("title",),
    "message": ("content", "provenance"),
}
KNOWLEDGE: dict[str, tuple[str, ...]] = {
    "memory": ("title", "content", "summary", "tags", "context"),
    "fact": ("value", "provenance"),
    "note": ("body", "kind", "tags", "provenance"),
}
_STORED_AS = {"memory": "memories", "fact": "facts", "note": "notes"}


def screened(record: str, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` of a new or changed ``record`` ("message", "memory", ...) as they may be
    stored: conversation with its credentials marked (while ``SPACEDUCK_REDACT_SECRETS`` is
    on), knowledge unchanged, or InvalidInput saying which credential was found where."""
    if record in CONVERSATION:
        if not settings.REDACT_SECRETS:
            return fields
        names = CONVERSATION[record]
        return {name: _marked(v) if name in names else v for name, v in fields.items()}
    reason = refusal(record, fields)
    if reason is not None:
        raise InvalidInput(reason)
    return fields


def refusal(record: str, fields: dict[str, Any]) -> str | None:
    """Why a knowledge ``record`` with these ``fields`` is refused, or None: the words every
    front end shows ("rejected: secret: api_key in tags (credentials are never stored as
    memories)")."""
    for name in KNOWLEDGE[record]:
        shape = shape_in(fields.get(name))
        if shape is not None:
            stored_as = _STORED_AS[record]
            return (
                f"rejected: secret: {shape} in {name} (credentials are never stored as {stored_as})"
            )
    return None


def _marked(value: Any) -> Any:
    # Empty (no provenance, no title): nothing to read. Every message passes here.
    return redact_value(value)[0] if value else value
