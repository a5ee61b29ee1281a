"""The shared tokenizer and query analysis every adapter uses.

Tokens are runs of Unicode letters and digits, lowercased; everything else
separates. Tokens longer than 64 characters are dropped. Markup that marks
part of a word is removed first (``unmark_words``), so ``[s]ave``, ``Sa[v]e``,
``re**start**`` and ``Sa<u>v</u>e`` are the words they display. A natural-language
question loses its English function words (unless the question is nothing but
function words), so scaffolding such as "what did we" cannot manufacture
matches; numbers and identifiers are always kept.

Whether two spellings are one term is a *term key*: a function every token of
the question and of a record is reduced by before they are compared.
``exact`` keeps tokens as they are; ``stemmed`` folds diacritics and takes the
Porter stem, which is what an FTS5 index declared with ``STEMMED_FTS5_TOKENIZER``
stores, so "backups", "backup" and "backed up" meet at "backup". An adapter
searching such an index measures relevance with ``stemmed`` (``term_keys`` and
``adapter_sdk.relevance.lexical_relevance(..., key=stemmed)``), so a term
counts as matched exactly when the index matched it.

Stemming is for English words. An abbreviation or protocol name (no vowel:
"https", "nfs") or a code holding a digit ("ipv6", "sha256sum") is a name, and
Porter's rules would turn it into another one ("https" into "http"). An
adapter that measures with ``matching_stem`` keeps such tokens whole: its index
still admits "http" for "https" (it stores ``stemmed``), but a record holding
only "http" does not hold the term "https"; it looks a term up in the index
by its ``stemmed`` form.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from adapter_sdk.porter import stem

MAX_TOKEN_CHARS = 64

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# kana, CJK ideographs (with extension A and compatibility forms) and Hangul syllables;
# compiled on first use (``_cjk``): its character set takes milliseconds to build, and
# most processes never read a non-ASCII word
_CJK = "([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"

FUNCTION_WORDS = frozenset(
    """a an the am are be been being did do does is was were what when where which who
    whom whose why how i me my we our you your he she it its they them their this that
    these those of in on at to for from by with about into over under and or but not no
    if then than so as can could should would will shall may might must has have had
    there here any some all""".split()
)


# A bracketed letter starting or inside a word (a shortcut key: "[s]ave", "Sa[v]e"), an
# emphasised span touching a letter ("re**start**", "**re**start", "Sa*v*e"), or an inline
# HTML tag between two letters ("Sa<u>v</u>e"). A lone asterisk ("x*y") is not emphasis.
_L = r"[^\W_]"
_IN_WORD_MARKUP = re.compile(
    rf"(?=[\[*<])(?:\[({_L})\](?={_L})"
    rf"|(?<={_L})(\*{{1,3}})({_L}+)\2|(\*{{1,3}})({_L}+)\4(?={_L})"
    rf"|(?<={_L})</?[A-Za-z][A-Za-z0-9]{{0,9}}>(?={_L}))"
)


def tokenize(text: str) -> list[str]:
    """Lowercased letter/digit runs of ``text`` (markup inside words removed), in order,
    long tokens dropped."""
    return tokenize_unmarked(unmark_words(text))


def tokenize_unmarked(text: str) -> list[str]:
    """``tokenize`` for text already passed through ``unmark_words`` (text an index stores)."""
    tokens = _TOKEN.findall(text.lower())
    if not tokens or max(map(len, tokens)) <= MAX_TOKEN_CHARS:  # the usual case, in C
        return tokens
    return [t for t in tokens if len(t) <= MAX_TOKEN_CHARS]


def unmark_words(text: str) -> str:
    """``text`` in NFKC form (full-width and compatibility letters as their plain
    forms), each CJK character a word of its own (those scripts write words without
    spaces, so a search for part of a run must still find it), with the markup that marks letters inside a word removed, so the word is
    whole again. Index text the same way, so a search and its index agree on the words."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        cjk = _cjk()
        if cjk.search(text):
            text = cjk.sub(r" \1 ", text)
    if "[" not in text and "*" not in text and "<" not in text:  # substring search, not a walk per character
        return text
    return _IN_WORD_MARKUP.sub(_kept_letter, text)


@lru_cache(maxsize=1)
def _cjk() -> re.Pattern[str]:
    return re.compile(_CJK)


def _kept_letter(match: re.Match[str]) -> str:
    return match.group(1) or match.group(3) or match.group(5) or ""


@dataclass(frozen=True)
class AnalyzedQuery:
    raw_terms: tuple[str, ...]
    content_terms: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def normalized(self) -> bool:
        return bool(self.removed)


# An English clitic after an apostrophe: the tokenizer would make a one-letter word of
# it ("flamingo's" -> "flamingo", "s"; "doesn't" -> "doesn", "t"), and one letter
# matches scaffolding anywhere ("it's", a "-t" flag).
_CLITIC = re.compile(r"(?<=[^\W_])['\u2019](?:s|t|m|d|ll|re|ve)\b", re.IGNORECASE)


def without_clitics(query: str) -> str:
    """``query`` without the clitics 's 't 'm 'd 'll 're 've ("doesn't" is "doesn")."""
    if "'" not in query and "\u2019" not in query:
        return query
    return _CLITIC.sub("", query)


def analyze_query(query: str) -> AnalyzedQuery:
    """Split a query into terms and drop function words (kept if nothing else remains).

    A clitic is no word of the question (``without_clitics``): "the flamingo's
    feathers" asks about flamingo and feathers, not about "s"."""
    raw = tuple(tokenize(without_clitics(query)))
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


# -- term keys ----------------------------------------------------------------------------

TermKey = Callable[[str], str]

STEMMED_FTS5_TOKENIZER = "porter unicode61 remove_diacritics 2"
"""The FTS5 ``tokenize`` option whose index terms are exactly ``stemmed`` tokens."""


def exact(token: str) -> str:
    return token


@lru_cache(maxsize=65536)
def stemmed(token: str) -> str:
    """``token`` with its diacritics removed, Porter-stemmed (``adapter_sdk.porter``)."""
    return stem(fold_diacritics(token))


@lru_cache(maxsize=65536)
def matching_stem(token: str) -> str:
    """``stemmed``, except that a token Porter's rules would turn into another name
    (``kept_whole``) is only diacritic-folded."""
    folded = fold_diacritics(token)
    return folded if kept_whole(folded) else stem(folded)


_VOWELS = frozenset("aeiouy")


def kept_whole(token: str) -> bool:
    """Whether ``token`` is a name rather than an English word: it holds a digit, or it
    is ASCII with no vowel (an abbreviation or protocol name: "https", "nfs", "tcp")."""
    if any(ch.isdigit() for ch in token):
        return True
    return token.isascii() and not _VOWELS.intersection(token)


def fold_diacritics(token: str) -> str:
    """Combining marks removed from each letter: "café" → "cafe", "łódź" → "łodz".

    As FTS5's ``remove_diacritics 2`` does for Latin letters (bar a few Latin
    Extended-B letters stacking marks on æ, ø or ʒ, which FTS5 keeps); letters that
    are not a base letter plus marks (ø, æ, ß, ł) stay as they are.
    """
    if token.isascii():
        return token
    decomposed = unicodedata.normalize("NFD", token)
    return unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))


def term_keys(terms: Iterable[str], key: TermKey) -> dict[str, str]:
    """Each distinct key among ``terms`` → the first term spelling it, in order.

    A question saying "backup backups" asks about one stemmed term, not two.
    """
    keys: dict[str, str] = {}
    for term in terms:
        keys.setdefault(key(term), term)
    return keys
