"""The ``recall`` command: dispatch to one command module, imported only when used.

Each command lives in ``broker.surfaces.commands.<name>`` and exposes ``HELP``,
``configure(parser)`` and ``run(args) -> exit code``. Errors reach the user as
one line, ``recall: <message>``, with exit code 1; never a stack trace.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

COMMANDS: dict[str, tuple[str, str]] = {
    "query": ("query", "ask every source of a profile; print evidence pointers"),
    "expand": ("expand", "read the evidence behind a locator"),
    "sources": ("sources", "list configured sources with their health"),
    "refresh": ("refresh", "rebuild or re-check source indexes"),
    "init": ("init", "write a starter user configuration"),
    "config": ("config", "show the merged configuration and where each value came from"),
    "doctor": ("doctor", "check configuration, sources and adapters"),
    "eval": ("eval", "run and compare evaluation packs"),
    "serve": ("serve", "serve the HTTP API on loopback"),
    "mcp": ("mcp", "serve the MCP tools over stdio"),
    "sidecar-plugin": ("sidecar_plugin", "answer one Sidecar plugin request on stdin"),
    "version": ("version", "print the version"),
}

EXIT_CODES = """exit codes:
  0  answered (or the command succeeded)
  1  error: bad usage, configuration or request; no claim about the sources
  2  abstained: nothing matched and the sources answered
  3  degraded: some eligible source could not answer
  4  failed: every source asked failed (or the expansion failed)"""


class Parser(argparse.ArgumentParser):
    """argparse with exit code 1 for usage errors (2 means "abstained" here)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"recall: {message}\n")
        raise SystemExit(1)

    def parse_command(self, argv: list[str]) -> argparse.Namespace:
        """Flags and operands in any order; ``--`` ends the flags.

        Everything after ``--`` is an operand even when it starts with ``-``
        (``recall query -- -sourdough``). argparse's intermixed parsing drops
        that meaning, so the operands stand in as tokens that cannot look like
        flags and are put back once parsed.
        """
        if "--" not in argv:
            return self.parse_intermixed_args(argv)
        cut = argv.index("--")
        operands = {f"\0operand{i}": value for i, value in enumerate(argv[cut + 1 :])}
        args = self.parse_intermixed_args([*argv[:cut], *operands])
        for name, value in vars(args).items():
            if isinstance(value, list):
                setattr(args, name, [operands.get(v, v) if isinstance(v, str) else v for v in value])
            elif isinstance(value, str) and value in operands:
                setattr(args, name, operands[value])
        return args


def usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: recall <command> [flags] [args]", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "Run 'recall <command> --help' for a command's flags.", "", EXIT_CODES]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    sys.exit(dispatch(sys.argv[1:] if argv is None else argv))


def dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    if argv[0] in ("--version", "-V"):
        argv = ["version"]
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        sys.stderr.write(f"recall: unknown command {name!r}\n{usage()}\n")
        return 1

    from importlib import import_module

    from broker.errors import RecallError

    module = import_module(f"broker.surfaces.commands.{COMMANDS[name][0]}")
    parser = Parser(
        prog=f"recall {name}",
        description=getattr(module, "DESCRIPTION", module.HELP),
        epilog=getattr(module, "EXIT_CODES", EXIT_CODES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    module.configure(parser)
    try:
        args = parser.parse_command(rest)
        return int(module.run(args))
    except RecallError as exc:
        sys.stderr.write(f"recall: {exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("recall: interrupted\n")
        return 130
