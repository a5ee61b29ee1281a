"""How close together a chunk holds the question's words: its best passage's coverage.

A long chunk (a command's whole option list, a long how-to section) can hold
the words of a question scattered over hundreds of lines without saying
anything about what was asked. A chunk's coverage, which scales its score, is
therefore the largest share of the question's term weight held within
``PASSAGE_TOKENS`` consecutive tokens of its body, a term of its heading
counting in every passage. A chunk no longer than a passage is one passage: its
coverage is its plain weighted coverage.

``PASSAGE_TOKENS`` was chosen on the tuning halves of the judged packs (30, 50,
100 and 200 tried; eval/README.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence

from adapter_sdk.relevance import weighted_coverage

PASSAGE_TOKENS = 50


def passage_coverage(
    title_tokens: Sequence[str],
    body_tokens: Sequence[str],
    spelled: Collection[str],
    weights: Mapping[str, float],
    key: Callable[[str], str],
) -> float:
    """The largest weighted share of ``weights``' terms that the heading plus any
    ``PASSAGE_TOKENS`` consecutive body tokens hold; ``spelled`` are the chunk's tokens
    that match a term (as ``key`` reduces them), the only ones looked up."""
    keys = {token: k for token in spelled if (k := key(token)) in weights}
    in_title = {keys[t] for t in title_tokens if t in keys}
    if len(body_tokens) <= PASSAGE_TOKENS:
        return weighted_coverage({*in_title, *(keys[t] for t in body_tokens if t in keys)}, weights)
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    hits = [(i, keys[t]) for i, t in enumerate(body_tokens) if t in keys and keys[t] not in in_title]
    best, window, start = 0.0, Counter[str](), 0
    for position, term in hits:
        window[term] += 1
        while hits[start][0] <= position - PASSAGE_TOKENS:
            gone = hits[start][1]
            window[gone] -= 1
            if not window[gone]:
                del window[gone]
            start += 1
        best = max(best, sum(weights[k] for k in window))
    return min((sum(weights[k] for k in in_title) + best) / total, 1.0)
