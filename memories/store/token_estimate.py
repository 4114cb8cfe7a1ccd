"""Token estimates for budgets (thread limits, context building).

The estimate is deliberately model-agnostic: ceil(characters / 4) for the text
(JSON content is measured as its compact JSON), plus 4 tokens of per-message
overhead for the role and separators. English averages ~4 characters per token
with OpenAI's and Llama's tokenizers; code and CJK text use more tokens per
character, so budgets built on this should keep some headroom.
"""

from __future__ import annotations

import json
import math
from typing import Any

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"))


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_message_tokens(content: Any) -> int:
    return estimate_tokens(text_of(content)) + MESSAGE_OVERHEAD_TOKENS
