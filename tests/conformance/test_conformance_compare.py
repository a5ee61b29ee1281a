from __future__ import annotations

import orjson

from adapter_sdk.conformance import compare


def frames(*values: object) -> list[bytes]:
    return [orjson.dumps(value) for value in values]


def test_key_order_is_irrelevant() -> None:
    recorded = [b'{"id":1,"jsonrpc":"2.0","result":{"a":1,"b":[1,2]}}']
    replayed = [b'{"result":{"b":[1,2],"a":1},"jsonrpc":"2.0","id":1}']

    assert compare(recorded, replayed, []) == []


def test_numbers_compare_by_value() -> None:
    assert compare([b'{"n":1,"x":0.5}'], [b'{"n":1.0,"x":5e-1}'], []) == []


def test_large_integers_compare_exactly() -> None:
    differences = compare([b'{"n":9007199254740993}'], [b'{"n":9007199254740992}'], [])

    assert [d.pointer for d in differences] == ["/n"]


def test_boolean_is_not_a_number() -> None:
    differences = compare(frames({"ok": True}), frames({"ok": 1}), [])

    assert [(d.pointer, d.want, d.got) for d in differences] == [("/ok", "true", "1")]


def test_strings_compare_literally() -> None:
    differences = compare(
        frames({"error": {"code": -32007, "message": "context canceled"}}),
        frames({"error": {"code": -32007, "message": "request cancelled"}}),
        [],
    )

    assert str(differences[0]) == (
        'response 1: /error/message: want "context canceled", got "request cancelled"'
    )


def test_star_masks_every_array_element_field() -> None:
    recorded = frames({"result": {"candidates": [{"t": "a", "at": "x"}, {"t": "b", "at": "y"}]}})
    replayed = frames({"result": {"candidates": [{"t": "a", "at": "p"}, {"t": "b", "at": "q"}]}})

    assert compare(recorded, replayed, ["/result/candidates/*/at"]) == []


def test_star_masks_every_object_member() -> None:
    recorded = frames({"result": {"diagnostics": {"elapsed_ms": 3, "cpu_ms": 1}}})
    replayed = frames({"result": {"diagnostics": {"elapsed_ms": 9, "cpu_ms": 7}}})

    assert compare(recorded, replayed, ["/result/diagnostics/*"]) == []


def test_mask_leaves_unmasked_fields_compared() -> None:
    recorded = frames({"result": {"candidates": [{"t": "a", "at": "x"}]}})
    replayed = frames({"result": {"candidates": [{"t": "z", "at": "p"}]}})

    differences = compare(recorded, replayed, ["/result/candidates/*/at"])

    assert [d.pointer for d in differences] == ["/result/candidates/0/t"]


def test_masked_field_missing_from_the_replay_still_differs() -> None:
    differences = compare(
        frames({"result": {"checked_at": "<volatile>", "status": "healthy"}}),
        frames({"result": {"status": "healthy"}}),
        ["/result/checked_at"],
    )

    assert [(d.pointer, d.detail) for d in differences] == [
        ("/result/checked_at", "member missing from the replayed frame")
    ]


def test_pointer_escapes_reach_keys_with_slash_and_tilde() -> None:
    recorded = frames({"result": {"a/b": 1, "c~d": 2}})
    replayed = frames({"result": {"a/b": 5, "c~d": 6}})

    assert compare(recorded, replayed, ["/result/a~1b", "/result/c~0d"]) == []


def test_unexpected_member_is_named() -> None:
    differences = compare(frames({"result": {}}), frames({"result": {"extra": 1}}), [])

    assert [(d.pointer, d.detail) for d in differences] == [("/result/extra", "member is not in the recording")]


def test_array_length_difference_is_reported() -> None:
    differences = compare(frames({"r": [1, 2]}), frames({"r": [1]}), [])

    assert differences[0].detail == "length differs: recorded 2, replayed 1"


def test_frames_are_compared_by_position_not_by_id() -> None:
    recorded = frames({"id": 1, "result": {}}, {"id": 2, "result": {}})
    replayed = frames({"id": 2, "result": {}}, {"id": 1, "result": {}})

    assert [d.pointer for d in compare(recorded, replayed, [])] == ["/id", "/id"]
