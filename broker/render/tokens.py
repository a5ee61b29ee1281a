"""The response budget's token estimator.

Deterministic rather than accurate: the same text always costs the same, whatever
tokenizer a downstream model uses, so shaping decisions are reproducible.
"""

from __future__ import annotations


def estimate_tokens(text: str) -> int:
    """``ceil(characters / 4)``; 0 for empty text. Python strings count code points (runes)."""
    return (len(text) + 3) // 4
