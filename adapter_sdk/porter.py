"""The Porter stemmer exactly as SQLite FTS5's ``porter`` tokenizer applies it.

An index built with ``tokenize = 'porter unicode61 ...'`` stores stems; a
question's terms and a record's tokens must be reduced the same way for
"this record holds this term" to mean what the index matched. FTS5 runs the
classic algorithm (Porter, 1980) with the revisions of Porter's own reference
code (``bli`` → ``ble``, ``logi`` → ``log``) over a token's UTF-8 bytes:
tokens shorter than 3 or longer than 64 bytes are left alone, and any
non-ASCII byte counts as a consonant. This module reproduces that, byte for
byte, so it also agrees on words with accented or non-Latin letters.
"""

from __future__ import annotations

from collections.abc import Callable

MIN_STEM_BYTES = 3
MAX_STEM_BYTES = 64

_Condition = Callable[[str], bool]


def _vowel(ch: str, y_is_vowel: bool) -> bool:
    return ch in "aeiou" or (y_is_vowel and ch == "y")


def _after_vc(word: str, after_consonant: bool) -> int:
    """Index just past the first vowel-consonant sequence of ``word`` (0: there is none)."""
    consonant = after_consonant
    i = 0
    while i < len(word):
        consonant = not _vowel(word[i], consonant)
        if not consonant:
            break
        i += 1
    i += 1
    while i < len(word):
        consonant = not _vowel(word[i], consonant)
        if consonant:
            return i + 1
        i += 1
    return 0


def _m_gt0(stem: str) -> bool:
    return _after_vc(stem, False) > 0


def _m_gt1(stem: str) -> bool:
    n = _after_vc(stem, False)
    return n > 0 and _after_vc(stem[n:], True) > 0


def _m_eq1(stem: str) -> bool:
    n = _after_vc(stem, False)
    return n > 0 and _after_vc(stem[n:], True) == 0


def _cvc(stem: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (Porter's ``*o``)."""
    if stem[-1] in "wxy":
        return False
    mask = 0
    consonant = False
    for ch in stem:
        consonant = not _vowel(ch, consonant)
        mask = (mask << 1) | consonant
    return mask & 0b111 == 0b101


def _has_vowel(stem: str) -> bool:
    return any(_vowel(ch, i > 0) for i, ch in enumerate(stem))


def _m_gt1_s_or_t(stem: str) -> bool:
    return stem[-1] in "st" and _m_gt1(stem)


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("logi", "log"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"),
    ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)
_STEP3 = (
    ("ical", "ic"), ("ness", ""), ("icate", "ic"), ("iciti", "ic"), ("ful", ""),
    ("ative", ""), ("alize", "al"),
)
_STEP4: tuple[tuple[str, _Condition], ...] = (
    ("al", _m_gt1), ("ance", _m_gt1), ("ence", _m_gt1), ("er", _m_gt1), ("ic", _m_gt1),
    ("able", _m_gt1), ("ible", _m_gt1), ("ant", _m_gt1), ("ement", _m_gt1),
    ("ment", _m_gt1), ("ent", _m_gt1), ("ion", _m_gt1_s_or_t), ("ou", _m_gt1),
    ("ism", _m_gt1), ("ate", _m_gt1), ("iti", _m_gt1), ("ous", _m_gt1), ("ive", _m_gt1),
    ("ize", _m_gt1),
)


def _replace(word: str, rules: tuple[tuple[str, str], ...]) -> str:
    """The first rule whose suffix ends ``word`` (leaving a stem) decides; m > 0 gates it."""
    for suffix, replacement in rules:
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if _m_gt0(stem) else word
    return word


def _strip(word: str, rules: tuple[tuple[str, _Condition], ...]) -> str:
    for suffix, condition in rules:
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem if condition(stem) else word
    return word


def _step1(word: str) -> str:
    if word[-1] == "s":
        if word[-2] == "e":
            sses = len(word) > 4 and word[-4:-2] == "ss"
            ies = len(word) > 3 and word[-3] == "i"
            word = word[:-2] if sses or ies else word[:-1]
        elif word[-2] != "s":
            word = word[:-1]
    removed = False
    if len(word) > 3 and word.endswith("eed"):
        if _m_gt0(word[:-3]):
            word = word[:-1]
    elif len(word) > 2 and word.endswith("ed"):
        if _has_vowel(word[:-2]):
            word, removed = word[:-2], True
    elif len(word) > 3 and word.endswith("ing"):
        if _has_vowel(word[:-3]):
            word, removed = word[:-3], True
    if removed:
        if len(word) > 2 and word.endswith(("at", "bl", "iz")):
            word += "e"
        elif len(word) > 1 and word[-1] == word[-2] and not _vowel(word[-1], False) and word[-1] not in "lsz":
            word = word[:-1]
        elif _m_eq1(word) and _cvc(word):
            word += "e"
    if word[-1] == "y" and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


def _step5(word: str) -> str:
    if word[-1] == "e":
        stem = word[:-1]
        if _m_gt1(stem) or (_m_eq1(stem) and not _cvc(stem)):
            word = stem
    if len(word) > 1 and word.endswith("ll") and _m_gt1(word[:-1]):
        word = word[:-1]
    return word


def stem(token: str) -> str:
    """The stem FTS5's porter tokenizer indexes for ``token`` (lowercase, as tokenized)."""
    data = token.encode("utf-8")
    if not MIN_STEM_BYTES <= len(data) <= MAX_STEM_BYTES:
        return token
    word = data.decode("latin-1")  # one character per byte, as FTS5 sees the token
    if not "a" <= word[-1] <= "z":  # every rule rewrites an ending of letters: "v2", "1234"
        return token
    word = _step5(_strip(_replace(_replace(_step1(word), _STEP2), _STEP3), _STEP4))
    return word.encode("latin-1").decode("utf-8", "surrogateescape")
