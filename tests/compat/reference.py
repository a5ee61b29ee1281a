"""Where the reference implementation is, for the tests that run its own packs and transcripts.

``RECALL_REFERENCE_SRC`` names a checkout of marcus/recall v0.4.0 (its packs,
transcripts and template adapter are read from there, never copied here); its
adapter programs (``recall-stream``, ``recall-qmd``, ``recall-gmail``, built
from that checkout) are looked up on ``PATH``. A test that needs either skips,
saying which, when it is absent.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REFERENCE_ENV = "RECALL_REFERENCE_SRC"


def reference_tree() -> Path:
    """The reference checkout, or skip."""
    value = os.environ.get(REFERENCE_ENV)
    if not value:
        pytest.skip(f"{REFERENCE_ENV} is not set (a marcus/recall v0.4.0 checkout)")
    tree = Path(value)
    if not (tree / "eval" / "packs").is_dir():
        pytest.skip(f"{REFERENCE_ENV}={value} holds no eval/packs: not a marcus/recall checkout")
    return tree


def reference_program(name: str) -> str:
    """The absolute path of a reference adapter program on PATH, or skip."""
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not on PATH (build it from the reference checkout)")
    return found
