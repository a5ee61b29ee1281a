"""The ``recall`` command: dispatch to one command module, imported only when used.

Each command lives in ``broker.surfaces.commands.<name>`` and exposes ``HELP``,
``configure(parser)`` and ``run(args, io) -> exit code``, writing only to the
streams it is given (:mod:`broker.surfaces.streams`). Errors reach the user as
one line, ``recall: <message>``, with exit code 1; never a stack trace.

A command that talks to sources is first offered to the resident broker
(:mod:`broker.warm.daemon`), which runs this same dispatch against warm
adapters and hands back its output; this module's top level therefore imports
only what that thin path needs.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from typing import Any

    from broker.surfaces.parser import Parser
    from broker.surfaces.streams import Streams
    from broker.warm.launch_plan import Plan
    from broker.warm.prestart import Prestarted

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
    "open": ("open", "open the search page in a browser"),
    "mcp": ("mcp", "serve the MCP tools over stdio"),
    "sidecar-plugin": ("sidecar_plugin", "answer one Sidecar plugin request on stdin"),
    "hook": ("hook", "evidence before every reply, for agent hosts; install the hook"),
    "report-stale": ("report_stale", "report that one note supersedes another, for review"),
    "review": ("review", "list, accept or reject reported supersession claims"),
    "daemon": ("daemon", "list, show or stop the resident brokers commands start on demand"),
    "version": ("version", "print the version"),
    "completion": ("completion", "print a shell completion script (bash, zsh or fish)"),
}

EXIT_CODES = """exit codes:
  0  answered (or the command succeeded)
  1  error: bad usage, configuration or request; no claim about the sources
  2  abstained: nothing matched and the sources answered
  3  degraded: some eligible source could not answer
  4  failed: every source asked failed (or the expansion failed)"""


def usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: recall <command> [flags] [args]", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "Run 'recall <command> --help' for a command's flags.", "", EXIT_CODES]
    return "\n".join(lines)


def unknown_command(name: str) -> str:
    from difflib import get_close_matches

    close = get_close_matches(name, COMMANDS, n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"recall: unknown command {name!r}{hint}\nRun 'recall --help' for the list of commands.\n"


# Commands that serve many requests or may run for minutes. Any other command ends
# within seconds and runs with the cyclic collector off: it allocates most of its objects
# importing modules, none of them garbage, and what cycles it makes are few and end
# with it (reference counting frees everything else as usual).
LASTING_COMMANDS = frozenset({"serve", "mcp", "daemon", "open", "eval", "refresh", "doctor"})


def main(argv: list[str] | None = None) -> None:
    import gc

    argv = sys.argv[1:] if argv is None else argv
    lasting = bool(argv) and argv[0] in LASTING_COMMANDS
    if lasting:
        from adapter_sdk.collector import start_quietly

        start_quietly()
    else:
        gc.disable()
    try:
        from broker.warm.daemon.thin_client import forward

        code, stdin_read = forward(argv)
        if code is None:
            from broker.surfaces.streams import Streams

            io = Streams.of_process()
            code = dispatch(argv, io if stdin_read is None else io.reading(stdin_read))
    except KeyboardInterrupt:
        sys.stderr.write("recall: interrupted\n")
        sys.exit(130)
    except OSError as exc:
        code = os_error(exc)
    if not lasting:
        exit_now(code)
    # Everything the command built is garbage now; the interpreter's last collections
    # would walk all of it (tens of milliseconds after a query). Frozen objects are left
    # to the process's exit; files are still flushed and exit handlers still run.
    gc.freeze()
    sys.exit(code)


def os_error(exc: OSError) -> int:
    """Report what the system refused a command (a full disk, a folder it may not
    write, an output pipe closed early) as one line, never a stack trace: exit code 1.
    What is still buffered for standard output is dropped. A reader that went away
    (``recall query ... | head``) is told nothing: it is not listening."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # so the exit's flush of the buffered rest cannot fail
    os.close(devnull)
    if not isinstance(exc, BrokenPipeError):
        where = f": {exc.filename}" if exc.filename else ""
        sys.stderr.write(f"recall: {exc.strerror or exc}{where}\n")
    return 1


def exit_now(code: int) -> None:
    """End a short command once its output is written, without the interpreter's
    teardown of every module it imported (2-3 ms after a query). Nothing of recall's
    waits for that teardown: it registers no exit handler, and every adapter process
    has ended. A stream that cannot be flushed is left to the usual exit to report."""
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


def dispatch(argv: list[str], io: Streams, *, resident: Any = None) -> int:
    """Run one command line in this process with the streams ``io``; ``resident`` runs
    broker work in the resident broker."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        io.stdout.write(usage() + "\n")
        return 0
    if argv[0] in ("--version", "-V"):
        argv = ["version"]
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        io.stderr.write(unknown_command(name))
        return 1
    if name != "query" or resident is not None:
        return run_command(name, rest, io, resident, None, None)
    from broker.warm.prestart import Prestarted

    prestarted = Prestarted()  # the adapters this command starts ahead of their spawn
    try:
        plan = launch_ahead(rest, prestarted)
        return run_command(name, rest, io, resident, plan, prestarted)
    finally:
        prestarted.discard()  # whatever the query did not take


def launch_ahead(rest: list[str], prestarted: Prestarted) -> Plan | None:
    """Start the adapters the last query of this shape asked into ``prestarted``, before
    importing the rest of the broker (:mod:`broker.warm.launch_plan`)."""
    import os

    from broker.warm import launch_plan

    try:
        cwd = os.getcwd()
    except OSError:
        return None  # the command reports it
    plan = launch_plan.for_command(rest, os.environ, cwd)
    if plan is not None:
        plan.launch(prestarted)
    return plan


def run_command(
    name: str, rest: list[str], io: Streams, resident: Any, plan: Plan | None, prestarted: Prestarted | None
) -> int:
    from broker.errors import RecallError

    parser, module = command_parser(name, io, reuse=resident is not None)
    try:
        args = parser.parse_command(rest)
        args.resident = resident
        args.launch_plan = plan
        args.prestarted = prestarted
        return int(module.run(args, io))
    except RecallError as exc:
        io.stderr.write(f"recall: {exc}\n")
        return 1
    except KeyboardInterrupt:
        io.stderr.write("recall: interrupted\n")
        return 130


# The resident broker's parsers, by thread and command: it runs command after command on
# the same few threads, and building a command's parser costs more than parsing with it.
# Its environment is fixed, so a default a parser took from it stays right.
_parsers: Any = None


def command_parser(name: str, io: Streams, *, reuse: bool = False) -> tuple[Parser, Any]:
    """The parser of command ``name``, writing to ``io``, and the command's module;
    ``reuse``: the one this thread built for it before, if any (the resident broker's)."""
    import threading
    from importlib import import_module

    global _parsers
    module = import_module(f"broker.surfaces.commands.{COMMANDS[name][0]}")
    if _parsers is None:
        _parsers = threading.local()
    built: dict[str, Parser] = _parsers.__dict__
    parser = built.get(name) if reuse else None
    if parser is None:
        import argparse

        from broker.surfaces.parser import Parser

        parser = Parser(
            io,
            prog=f"recall {name}",
            description=getattr(module, "DESCRIPTION", module.HELP),
            epilog=getattr(module, "EXIT_CODES", EXIT_CODES),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.configure(parser)
        if reuse:
            built[name] = parser
    parser.io = io
    return parser, module


if __name__ == "__main__":
    main()
