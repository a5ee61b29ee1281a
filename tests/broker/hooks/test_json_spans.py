"""Textual JSON edits: the rest of the document is untouched, and each edit has an exact inverse."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from broker.surfaces import json_spans

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
layouts = st.sampled_from([None, 2, 4, "\t"])


@given(st.lists(values, min_size=1, max_size=4), values, layouts)
def test_an_appended_item_removed_again_gives_the_original_text(items, extra, indent):
    text = json.dumps({"list": items}, indent=indent)
    added = json_spans.append_item(text, json_spans.parse(text).member("list"), extra)
    assert json.loads(added) == {"list": [*items, extra]}
    array = json_spans.parse(added).member("list")
    assert json_spans.remove_item(added, array, len(items)) == text


@given(st.dictionaries(st.text(max_size=5), values, min_size=1, max_size=4), values, layouts)
def test_an_added_member_removed_again_gives_the_original_text(members, extra, indent):
    members.pop("new", None)
    if not members:
        return
    text = json.dumps(members, indent=indent)
    added = json_spans.add_member(text, json_spans.parse(text), "new", extra)
    assert json.loads(added) == {**members, "new": extra}
    assert json_spans.remove_member(added, json_spans.parse(added), "new") == text


def test_replacing_a_value_keeps_its_neighbours_bytes():
    text = '{\n  "a": [1,2],\n  "b": {"x": 1},\n  "c": "keep  me"\n}'
    edited = json_spans.replace(text, json_spans.parse(text).member("b"), {"y": 2})
    assert edited == '{\n  "a": [1,2],\n  "b": {\n    "y": 2\n  },\n  "c": "keep  me"\n}'


def test_removing_the_first_item_takes_its_separator_with_it():
    text = '[ {"a": 1},  {"b": 2} ]'
    assert json_spans.remove_item(text, json_spans.parse(text), 0) == '[ {"b": 2} ]'
