"""Turn a question into Gmail's own search syntax and into the terms relevance measures.

A question written in Gmail syntax (``from:dana "restore drill" -label:old``)
is sent verbatim. Plain prose loses its English function words first, since
Gmail requires every word it is given. Dates become ``after:``/``before:``
terms in epoch seconds, which Gmail evaluates to the second.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from adapter_sdk.lexical import FUNCTION_WORDS, analyze_query, tokenize

# Operators whose value names a person or words of the message (kept for relevance).
_TEXT_OPERATORS = frozenset({"from", "to", "cc", "bcc", "subject"})
_OPERATOR = re.compile(r"^-?([a-z_]+):", re.IGNORECASE)
_GMAIL_SYNTAX = re.compile(r'(^|\s)-\S|["(){}]|(^|\s)(OR|AND)(\s|$)|(^|\s)-?[a-z_]+:\S', re.I)
_HEX_THREAD_ID = re.compile(r"[0-9a-f]{16}")
_DECIMAL_THREAD_ID = re.compile(r"[0-9]{17,20}")


@dataclass(frozen=True)
class MailQuery:
    text: str  # the question as sent to Gmail (without prefix and dates)
    terms: tuple[str, ...]  # analyzed terms relevance is measured for
    removed: tuple[str, ...]  # function words dropped from the terms
    verbatim: bool  # the question was already Gmail syntax
    thread_ids: tuple[str, ...]  # thread ids the question names (hex, as the API spells them)

    @property
    def is_empty(self) -> bool:
        return not self.text.strip() and not self.thread_ids


def parse_question(question: str) -> MailQuery:
    named = thread_ids_in(question)
    # a thread id is fetched directly: Gmail's search would look for it as a word
    words = [w for w in question.split() if not thread_ids_in(w)]
    verbatim = bool(_GMAIL_SYNTAX.search(" ".join(words)))
    if verbatim:
        text = " ".join(words)
    else:
        content = [w for w in words if _is_content_word(w)]
        text = " ".join(content or [w for w in words if tokenize(w)])
    relevance_words: list[str] = []
    for word in words:
        if word.startswith("-") or word in ("OR", "AND"):
            continue
        operator = _OPERATOR.match(word)
        if operator:
            if operator.group(1).lower() in _TEXT_OPERATORS:
                relevance_words.append(word[operator.end():])
            continue
        relevance_words.append(word)
    analyzed = analyze_query(" ".join(relevance_words))
    return MailQuery(text, analyzed.content_terms, analyzed.removed, verbatim,
                     tuple(dict.fromkeys(named)))


def thread_ids_in(question: str) -> list[str]:
    found = []
    for word in question.split():
        token = word.strip("\"'()[]{}<>,;.!?").lower()
        if token.startswith("thread/"):
            token = token[len("thread/"):]
        if _HEX_THREAD_ID.fullmatch(token):
            found.append(token)
        elif _DECIMAL_THREAD_ID.fullmatch(token):
            found.append(format(int(token), "x"))
    return found


def gmail_search(
    query: MailQuery, prefix: str, since: datetime | None, until: datetime | None,
    as_of: datetime | None,
) -> str:
    """The full ``q`` sent to ``users.threads.list``: prefix, question, date bounds."""
    parts = [prefix.strip(), query.text]
    if since is not None:
        parts.append(f"after:{math.floor(_epoch(since)) - 1}")
    bounds = [instant for instant in (until, as_of) if instant is not None]
    if bounds:
        parts.append(f"before:{math.floor(_epoch(min(bounds))) + 1}")
    return " ".join(part for part in parts if part)


def _is_content_word(word: str) -> bool:
    tokens = tokenize(word)
    return bool(tokens) and not all(token in FUNCTION_WORDS for token in tokens)


def _epoch(instant: datetime) -> float:
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return instant.timestamp()
