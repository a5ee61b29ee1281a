"""A broker's routed standard streams behave like a file where a command's error path needs one."""

from __future__ import annotations

import io
import os

import pytest

from broker.surfaces.daemon.capture import RoutedStream


def test_a_routed_stream_has_the_original_descriptor_outside_a_command():
    """What reports an OSError (``recall: ...``) redirects stdout by descriptor; in the
    broker, before or after any command, that is the broker's own log."""
    with open(os.devnull, "w") as original:
        routed = RoutedStream(original)
        assert routed.fileno() == original.fileno()
        with routed.captured():
            with pytest.raises(io.UnsupportedOperation):
                routed.fileno()
