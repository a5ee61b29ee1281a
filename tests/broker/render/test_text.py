from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from broker.render.text import duration_text, elapsed_text, num, stamp


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0s"),
        (25_000_000, "25ms"),
        (1_500_000_000, "1.5s"),
        (5_000_000_000, "5s"),
        (90_000_000_000, "1m30s"),
        (3_600_000_000_000, "1h0m0s"),
        (1_500_000, "1.5ms"),
        (750, "750ns"),
    ],
)
def test_durations_are_spelled_in_the_largest_units(ns: int, text: str) -> None:
    assert duration_text(ns) == text


def test_elapsed_times_are_rounded_to_the_millisecond() -> None:
    assert (elapsed_text(14_400_000), elapsed_text(14_500_000)) == ("14ms", "15ms")


@pytest.mark.parametrize(
    ("value", "text"), [(1.0, "1"), (1.2, "1.2"), (1.2 / 61, "0.0196721"), (0.1, "0.1")]
)
def test_numbers_print_six_significant_digits_without_trailing_zeros(
    value: float, text: str
) -> None:
    assert num(value) == text


def test_times_print_in_utc_to_the_second() -> None:
    moment = datetime(2026, 3, 4, 7, 6, 7, 900_000, tzinfo=timezone(timedelta(hours=2)))
    assert stamp(moment) == "2026-03-04T05:06:07Z"
