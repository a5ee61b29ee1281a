"""The thin client and the launch plan read a command line's flags alike, as argparse would."""

from __future__ import annotations

import pytest

from broker.warm import launch_plan
from broker.warm.argv_flags import before_operands, names
from broker.warm.daemon.thin_client import wanted

# flags that take a query off the local, resident path in both readers
SHARED = ("--server", "--auth-token-env", "--help", "-h")


@pytest.mark.parametrize(
    ("args", "given"),
    [
        (["--server", "http://x", "restore"], True),
        (["--ser=http://x", "restore"], True),  # argparse's prefix, with its value attached
        (["--auth", "TOKEN", "restore"], True),
        (["--he"], True),
        (["-h"], True),
        (["restore", "--", "--server"], False),  # after '--' it is the question
        (["--s"], True),  # a prefix of more than one flag is taken, on the safe side
        (["-hx"], False),
        (["--"], False),
        (["restore", "--profile", "work"], False),
    ],
)
def test_both_readers_see_the_same_flags(args, given, tmp_path):
    assert any(names(arg, SHARED) for arg in before_operands(args)) is given
    assert wanted(["query", *args], {}, stderr_is_terminal=False) is not given
    (tmp_path / "config" / "recall").mkdir(parents=True)
    (tmp_path / "config" / "recall" / "config.toml").write_text("")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    environ = {"HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(runtime), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    assert (launch_plan.for_command(args, environ, str(tmp_path)) is None) is given
