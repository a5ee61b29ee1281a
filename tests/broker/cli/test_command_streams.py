"""A command is a function of its streams: it writes only to the ones it is handed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from broker.surfaces.cli import dispatch
from broker.surfaces.streams import Streams

REPO = Path(__file__).resolve().parents[3]
STANDARD_STREAMS = {"stdin", "stdout", "stderr"}


def run(argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    io, stdout, stderr = Streams.in_memory(stdin)
    try:
        code = dispatch(argv, io)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, stdout.getvalue(), stderr.getvalue()


@pytest.mark.parametrize(
    ("argv", "code", "on_stdout", "on_stderr"),
    [
        (["version"], 0, "recall ", ""),
        (["--help"], 0, "usage: recall <command>", ""),
        (["query", "--help"], 0, "usage: recall query", ""),
        (["query", "--no-such-flag", "x"], 1, "", "recall: unrecognized arguments: --no-such-flag"),
        (["qurey"], 1, "", "did you mean 'query'?"),
        (["completion", "bash"], 0, "complete -o filenames -F _recall recall", ""),
        (["eval", "validate"], 1, "", "recall: eval validate needs --pack DIR"),
    ],
)
def test_a_command_writes_to_its_own_streams_and_nowhere_else(argv, code, on_stdout, on_stderr, capfd):
    printed, stdout, stderr = run(argv)
    assert printed == code
    assert on_stdout in stdout and (on_stdout or stdout == "")
    assert on_stderr in stderr and (on_stderr or stderr == "")
    assert capfd.readouterr() == ("", "")  # not a byte on the process's own streams


def test_a_hook_reads_the_input_it_is_handed(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    code, stdout, stderr = run(["hook", "claude-code"], b'{"hook_event_name": "Stop"}')
    assert (code, stdout) == (0, "")
    assert stderr == "recall hook: not a UserPromptSubmit event; nothing injected\n"
    assert capfd.readouterr() == ("", "")


def rebinds(tree: ast.AST) -> list[int]:
    """Lines of ``tree`` that assign to sys.stdin, sys.stdout or sys.stderr."""
    found = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            for name in ast.walk(target) if target is not None else ():
                if (isinstance(name, ast.Attribute) and name.attr in STANDARD_STREAMS
                        and isinstance(name.value, ast.Name) and name.value.id == "sys"):
                    found.append(node.lineno)
    return found


def test_no_module_rebinds_the_standard_streams():
    """Commands run side by side in the resident broker: none may swap the process's streams."""
    offenders = [
        f"{path.relative_to(REPO)}:{line}"
        for package in ("broker", "adapter_sdk", "adapters")
        for path in sorted((REPO / package).rglob("*.py"))
        for line in rebinds(ast.parse(path.read_text(), str(path)))
    ]
    assert offenders == []
