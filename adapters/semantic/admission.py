"""Which chunks the leg admits: those that stand out from the corpus for this question.

A vector space has no "nothing matched": every chunk has some similarity to any
question, and how high an unrelated question's best match reaches depends on the
corpus (its length of chunks, how alike its pages are, the model), so a fixed cosine
floor calibrated on one corpus admits topic neighbours on another. The rule here
measures each chunk against the question's own background instead: the question's
median similarity over an evenly spread sample of at most ``BACKGROUND_SAMPLE``
chunks (a median, so that the few chunks about the question, in a small folder a
third of it, do not lift their own bar). A chunk is admitted when its similarity
exceeds that background by at least ``MIN_MARGIN``. A question the corpus is about
lifts the background with it, one it is not about leaves every chunk near it; either
way only a chunk that is about the question itself stands out.

``MIN_MARGIN`` was set on the tuning packs (``eval/README.md``): above the largest
margin any must-abstain question reached, below most judged answers'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MIN_MARGIN = 0.27
BACKGROUND_SAMPLE = 2048


@dataclass(frozen=True)
class Admission:
    background: float  # the question's median similarity to the corpus
    sampled: int  # chunks the background was measured on
    margin: float  # how far above the background a chunk must be

    @property
    def least_similarity(self) -> float:
        return self.background + self.margin

    def explain(self) -> dict[str, Any]:
        return {
            "rule": "similarity at least background + margin",
            "background": round(self.background, 4),
            "background_chunks": self.sampled,
            "margin": self.margin,
            "least_similarity": round(self.least_similarity, 4),
        }


def admission(similarity: np.ndarray, margin: float = MIN_MARGIN) -> Admission:
    """The bar for this question's similarities (one per chunk of the corpus)."""
    import numpy as np

    step = max(1, len(similarity) // BACKGROUND_SAMPLE)
    sample = similarity[::step]
    return Admission(float(np.median(sample)) if len(sample) else 0.0, len(sample), margin)
