"""The admission bar: the question's median similarity to the folder plus a margin."""

from __future__ import annotations

import numpy as np

from adapters.semantic.admission import (
    BACKGROUND_SAMPLE,
    MEANING_ONLY_MARGIN,
    MIN_MARGIN,
    admission,
)


def test_the_bar_follows_the_folder_not_one_cosine_for_all() -> None:
    # the same nearest chunk (0.45) is admitted where the rest of the folder is far from
    # the question, and not where every chunk is about as near (a folder all on the topic)
    unrelated = np.array([0.45, 0.05, 0.02, -0.03, 0.08, 0.01, 0.04], dtype=np.float32)
    alike = np.array([0.45, 0.31, 0.28, 0.33, 0.30, 0.29, 0.35], dtype=np.float32)
    assert 0.45 >= admission(unrelated).least_similarity
    assert 0.45 < admission(alike).least_similarity
    assert admission(alike).margin == MIN_MARGIN


def test_the_answers_of_a_small_folder_do_not_lift_their_own_bar() -> None:
    # three notes of nine answer: a mean would rise with them, the median does not
    similarity = np.array([0.52, 0.50, 0.48, 0.06, 0.03, 0.08, 0.01, 0.05, 0.02], dtype=np.float32)
    bar = admission(similarity)
    assert bar.background == float(np.median(similarity))
    assert all(s >= bar.least_similarity for s in similarity[:3])


def test_a_large_folder_is_measured_on_an_even_sample() -> None:
    similarity = np.linspace(-0.2, 0.6, 50_000, dtype=np.float32)
    bar = admission(similarity)
    assert BACKGROUND_SAMPLE <= bar.sampled <= 2 * BACKGROUND_SAMPLE
    assert abs(bar.background - float(np.median(similarity))) < 0.01
    assert bar.explain()["least_similarity"] == round(bar.background + MIN_MARGIN, 4)


def test_a_chunk_whose_note_shares_no_word_must_stand_out_further() -> None:
    # a chunk at margin 0.30 clears the bar when its note holds a word of the question,
    # and not on the model's word alone
    similarity = np.array([0.35, 0.05, 0.04, 0.06, 0.03, 0.05, 0.07], dtype=np.float32)
    bar = admission(similarity)
    assert bar.least_similarity <= 0.35 < bar.least_similarity_meaning_only
    assert bar.least_similarity_meaning_only == bar.background + MEANING_ONLY_MARGIN
    assert bar.explain()["least_similarity_meaning_only"] == round(bar.background + MEANING_ONLY_MARGIN, 4)


def test_a_margin_set_above_the_meaning_only_one_holds_for_every_chunk() -> None:
    bar = admission(np.array([0.2, 0.1, 0.0], dtype=np.float32), margin=0.5)
    assert bar.least_similarity_meaning_only == bar.least_similarity
