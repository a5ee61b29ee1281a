"""Whole floats print as integers, as the reference prints them; nothing else changes."""

from __future__ import annotations

import math
from collections import OrderedDict

import orjson
from hypothesis import given
from hypothesis import strategies as st

from broker.render.encode import json_bytes

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30,
)


@given(JSON_VALUES)
def test_the_json_reads_back_as_the_same_numbers_with_no_whole_float_left(value: object) -> None:
    printed = orjson.loads(json_bytes(value))
    assert printed == value  # 1 == 1.0: every number keeps its value
    assert not any(isinstance(n, float) and n.is_integer() and abs(n) < 2.0**53 for n in _numbers(printed))


def test_whole_floats_inside_tuples_and_dict_subclasses_are_integers_too() -> None:
    value = OrderedDict(score=1.0, ranks=(2.0, 0.5), nested=[{"prior": 3.0, "big": 2.0**60}])
    assert json_bytes(value) == b'{"score":1,"ranks":[2,0.5],"nested":[{"prior":3,"big":1.152921504606847e+18}]}'
    assert json_bytes(True) == b"true" and json_bytes(-0.0) == b"0"


def _numbers(value: object) -> list[float | int]:
    if isinstance(value, dict):
        return [n for item in value.values() for n in _numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    return [value] if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) else []
