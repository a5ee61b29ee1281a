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

A chunk whose note holds no word of the question (stemmed as the notes index
stems, ``shared_words.py``) has only the model's word for it: nothing in the record
agrees lexically. Such a chunk must stand out by ``MEANING_ONLY_MARGIN``. It was set
on the tuning packs: there 13 such chunks cleared ``MIN_MARGIN``, one an answer
(margin 0.277), eleven unjudged, and one the answer to a must-abstain question
(0.326: a word the model splits into pieces, the first of which is a page's name);
a paraphrase sharing no word with a small folder's note reaches 0.38.

Even then the model's word alone is not enough where no chunk near the question (the
pool a search ranks) comes from a note holding a word of it: such a question is about
something the folder does not hold, and its nearest chunks are only what the model
associates with it (in a command reference, a question about songbirds finds a routing
daemon named BIRD at margin 0.42). Such chunks are withheld too (``question_words_nearby``
in the diagnostics). On the five older packs no chunk sharing no word with the question
ever reached a judged answer above the meaning-only margin; on ``tldr-pages`` four
must-abstain questions were answered that way.

``MIN_MARGIN`` was also set on the tuning packs (``eval/README.md``): above the largest
margin any must-abstain question reached, below most judged answers'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MIN_MARGIN = 0.27
MEANING_ONLY_MARGIN = 0.35
BACKGROUND_SAMPLE = 2048


@dataclass(frozen=True)
class Admission:
    background: float  # the question's median similarity to the corpus
    sampled: int  # chunks the background was measured on
    margin: float  # how far above the background a chunk must be
    meaning_only_margin: float  # the same, for a chunk whose note holds no word of the question

    @property
    def least_similarity(self) -> float:
        return self.background + self.margin

    @property
    def least_similarity_meaning_only(self) -> float:
        return self.background + max(self.margin, self.meaning_only_margin)

    def explain(self) -> dict[str, Any]:
        return {
            "rule": "similarity at least background + margin; where the note holds no word of the question,"
            " background + meaning_only_margin, and only if a note near the question holds one",
            "background": round(self.background, 4),
            "background_chunks": self.sampled,
            "margin": self.margin,
            "least_similarity": round(self.least_similarity, 4),
            "meaning_only_margin": self.meaning_only_margin,
            "least_similarity_meaning_only": round(self.least_similarity_meaning_only, 4),
        }


def admission(similarity: np.ndarray, margin: float = MIN_MARGIN) -> Admission:
    """The bar for this question's similarities (one per chunk of the corpus)."""
    import numpy as np

    step = max(1, len(similarity) // BACKGROUND_SAMPLE)
    sample = similarity[::step]
    background = float(np.median(sample)) if len(sample) else 0.0
    return Admission(background, len(sample), margin, MEANING_ONLY_MARGIN)
