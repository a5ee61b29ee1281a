"""The shared tokenizer and query analysis every adapter uses.

Tokens are runs of Unicode letters and digits, lowercased; everything else
separates. Tokens longer than 64 characters are dropped. No stemming.
A natural-language question loses its English function words (unless the
question is nothing but function words), so scaffolding such as "what did we"
cannot manufacture matches; numbers and identifiers are always kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_TOKEN_CHARS = 64

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

FUNCTION_WORDS = frozenset(
    """a an the am are be been being did do does is was were what when where which who
    whom whose why how i me my we our you your he she it its they them their this that
    these those of in on at to for from by with about into over under and or but not no
    if then than so as can could should would will shall may might must has have had
    there here any some all""".split()
)


def tokenize(text: str) -> list[str]:
    """Lowercased letter/digit runs of ``text``, in order, long tokens dropped."""
    return [t for t in _TOKEN.findall(text.lower()) if len(t) <= MAX_TOKEN_CHARS]


@dataclass(frozen=True)
class AnalyzedQuery:
    raw_terms: tuple[str, ...]
    content_terms: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def normalized(self) -> bool:
        return bool(self.removed)


def analyze_query(query: str) -> AnalyzedQuery:
    """Split a query into terms and drop function words (kept if nothing else remains)."""
    raw = tuple(tokenize(query))
    content = tuple(t for t in raw if t not in FUNCTION_WORDS)
    if not content:
        return AnalyzedQuery(raw, _distinct(raw), ())
    removed = tuple(t for t in raw if t in FUNCTION_WORDS)
    return AnalyzedQuery(raw, _distinct(content), _distinct(removed))


def _distinct(terms: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(terms))


_STABLE_TRIM = "\"'()[]{}<>,;!?:"


def stable_identifiers(query: str) -> list[str]:
    """Whitespace tokens of ``query`` that look like stable identifiers.

    Paths and file names (``/ \\ : @ #`` or a dot), underscore forms
    (``snake_case_name``), hyphenated letter+digit codes (``REC-201``), and long
    letter+digit runs (``aaaa0001``). Plain words and short forms like ``v2`` are prose.
    """
    found = []
    for word in query.split():
        token = word.strip(_STABLE_TRIM).rstrip(".")
        if token and is_stable_identifier(token):
            found.append(token)
    return found


def is_stable_identifier(token: str) -> bool:
    if any(ch in token for ch in "/\\:@#") or "." in token:
        return True
    if "_" in token and all(
        part and all(ch.isalnum() or ch == "-" for ch in part) for part in token.split("_")
    ):
        return True
    letters = sum(ch.isalpha() for ch in token)
    digits = sum(ch.isdecimal() for ch in token)
    if "-" in token and letters >= 1 and digits >= 1:
        return True
    return len(token) >= 8 and letters >= 2 and digits >= 2


# -- number variants -----------------------------------------------------------------------

NUMBER_VARIANT_WEIGHT = 0.5
"""Share of a term's own score a number variant contributes. Coverage and relevance count a
variant in full: a plural is as much about the question as its singular."""

_MIN_VARIANT_CHARS = 3
_MIN_IES_CHARS = 6  # "ties" and "lies" are -s plurals; "cities" may be either reading
_NOT_PLURAL = frozenset({"lens", "news"})


def number_variants(term: str) -> list[str]:
    """Regular plural and singular spellings of ``term``, for lookup in a source's vocabulary.

    Only the regular rules: ``-s``; ``-es`` after s/x/z/ch/sh; consonant + ``y`` ↔ ``-ies``
    (both readings for ``-ies`` words of six letters or more). Nothing is stripped from
    ``-ss``/``-is``/``-us`` words (class, basis, status) or from lens and news. Function
    words and words shorter than three letters have no variants.
    """
    if len(term) < _MIN_VARIANT_CHARS or term in FUNCTION_WORDS:
        return []
    out: list[str] = []

    def add(variant: str) -> None:
        if variant != term and len(variant) >= _MIN_VARIANT_CHARS and variant not in out:
            out.append(variant)

    if _sibilant(term):
        add(term + "es")
    elif term.endswith("y") and len(term) > 1 and term[-2] not in "aeiou":
        add(term[:-1] + "ies")
    else:
        add(term + "s")
    if term.endswith("ies") and len(term) >= _MIN_IES_CHARS:
        add(term[:-3] + "y")
        add(term[:-1])
    elif term.endswith("es") and _sibilant(term[:-2]):
        add(term[:-2])
        add(term[:-1])
    elif term.endswith("s") and not term.endswith(("ss", "is", "us")) and term not in _NOT_PLURAL:
        add(term[:-1])
    return out


def _sibilant(word: str) -> bool:
    return word.endswith(("s", "x", "z", "ch", "sh"))
