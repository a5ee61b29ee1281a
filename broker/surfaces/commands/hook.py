"""recall hook: evidence before every reply, for agent hosts (and their settings files)."""

from __future__ import annotations

import argparse
import sys

from broker.surfaces.commands._common import add_json, add_profile, add_server
from broker.surfaces.streams import Streams

HELP = "fetch current evidence before a reply (agent-host hooks); install the hook"
DESCRIPTION = """Fetch current evidence before an agent replies, in the shape its host reads.

  recall hook claude-code                      a Claude Code UserPromptSubmit hook
  recall hook pre-reply [--json]               any host: a prompt on stdin, a context block out
  recall hook install claude-code [--user|--project] [--dry-run]
  recall hook uninstall claude-code [--user|--project] [--dry-run]

Each prompt runs one pre_reply query: only current evidence is injected, quoted
as data with its locator; withheld records are counted on one line; nothing is
injected when the sources abstain; a degraded search names the sources that did
not answer. Lineages already injected in a session (Claude Code's session_id,
or "session_id" in the pre-reply JSON) are not injected again.

pre-reply reads plain text, or {"prompt": ..., "session_id": ...,
"suppress_lineages": [...]}; with --json it prints {"context", "lineages",
"outcome", "coverage"} so a host can pass the lineages back next turn.

install writes the hook entry into Claude Code's settings (user:
~/.claude/settings.json, project: .claude/settings.json), keeping every other
byte of the file, through a symlink if it is one; installing again changes
nothing; uninstall removes exactly that entry (never a hook of your own that
runs recall, such as a wrapper script) and gives the file back as it was. A
file that is not UTF-8 JSON, or repeats the "hooks" key, is refused and left
alone."""
EXIT_CODES = """exit codes:
  claude-code, pre-reply: always 0, so the prompt is never blocked; problems go
     to standard error as one line 'recall hook: ...' and nothing is injected
  install, uninstall: 0 done (or nothing to change), 1 the settings file could
     not be read or written"""

ACTIONS = ("claude-code", "pre-reply", "install", "uninstall")
HOSTS = ("claude-code",)
HOST_TIMEOUT_MARGIN_S = 8
"""The host's own timeout for the hook, beyond our latency budget: a backstop, never reached."""


def configure(parser: argparse.ArgumentParser) -> None:
    from broker.prereply import DEFAULT_TURN_LATENCY_MS, DEFAULT_TURN_LIMIT, DEFAULT_TURN_TOKENS

    parser.add_argument("action", choices=ACTIONS, help=" | ".join(ACTIONS))
    parser.add_argument("host", nargs="?", help="install, uninstall: the host (claude-code)")
    add_profile(parser)
    parser.add_argument("--budget-ms", type=int, default=DEFAULT_TURN_LATENCY_MS, metavar="N",
                        help=f"latency budget of the query in milliseconds (default {DEFAULT_TURN_LATENCY_MS})")
    parser.add_argument("--budget-tokens", type=int, default=DEFAULT_TURN_TOKENS, metavar="N",
                        help=f"size budget of the evidence in estimated tokens (default {DEFAULT_TURN_TOKENS})")
    parser.add_argument("--limit", type=int, default=DEFAULT_TURN_LIMIT, metavar="N",
                        help=f"most evidence items injected (default {DEFAULT_TURN_LIMIT})")
    parser.add_argument("--valid-at", metavar="TIME",
                        help="judge verdicts at this instant (valid time) instead of now")
    parser.add_argument("--session", metavar="ID", help="pre-reply: the host's session id")
    parser.add_argument("--suppress-lineage", action="append", default=[], metavar="ROOT",
                        help="pre-reply: a lineage root already shown (repeatable)")
    add_json(parser)
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--user", dest="scope", action="store_const", const="user",
                       help="install, uninstall: the user's settings (default)")
    scope.add_argument("--project", dest="scope", action="store_const", const="project",
                       help="install, uninstall: this project's .claude/settings.json")
    parser.add_argument("--dry-run", action="store_true",
                        help="install, uninstall: show the change, write nothing")
    parser.add_argument("--command", dest="hook_command", metavar="PATH",
                        help="install: the recall executable the host runs (default: this one); "
                             "uninstall: also remove entries that run it")
    add_server(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    if args.action in ("install", "uninstall"):
        return _edit_settings(args, io)
    return _hook(args, io)


# -- the hook ------------------------------------------------------------------


def _hook(args: argparse.Namespace, io: Streams) -> int:
    """Never fails the prompt: every problem is one stderr line and exit 0."""
    from broker.surfaces.agent_host_hook import warn

    try:
        return _answer(args, io)
    except KeyboardInterrupt:
        warn(io.stderr, "interrupted; nothing injected")
    except TimeoutError:
        warn(io.stderr, f"no answer within the {args.budget_ms} ms budget; nothing injected")
    except Exception as exc:  # the prompt goes on whatever happened here
        warn(io.stderr, f"{_one_line(exc)}; nothing injected")
    return 0


def _answer(args: argparse.Namespace, io: Streams) -> int:
    import os
    from dataclasses import replace

    from broker.errors import UsageError
    from broker.instants import parse_time
    from broker.prereply import Turn, TurnSettings
    from broker.surfaces.agent_host_hook import (
        MAX_INPUT_BYTES,
        claude_code_output,
        read_claude_code,
        read_generic,
        run_turn,
        warn,
    )
    from broker.surfaces.commands._common import print_json, with_broker

    if args.budget_ms <= 0 or args.budget_tokens <= 0 or args.limit <= 0:
        raise UsageError("--budget-ms, --budget-tokens and --limit must be positive")
    raw = io.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    if len(raw) > MAX_INPUT_BYTES:
        raise UsageError(f"the hook input is larger than {MAX_INPUT_BYTES} bytes")
    hook = read_claude_code(raw) if args.action == "claude-code" else read_generic(raw)
    if hook is None:
        warn(io.stderr, "not a UserPromptSubmit event; nothing injected")
        return 0
    if args.action == "pre-reply" and (args.session or args.suppress_lineage):
        turn = hook.turn
        hook = replace(hook, turn=Turn(turn.prompt, args.session or turn.session_id,
                                       (*turn.suppress_lineages, *args.suppress_lineage)))
    if not hook.turn.prompt:
        return 0
    if hook.cwd is not None and args.resident is None:
        # the host's project: its recall.toml applies (a resident broker was chosen for
        # that folder's configuration by the client, and never changes its own folder)
        os.chdir(hook.cwd)
    valid_at = parse_time(args.valid_at, "--valid-at") if args.valid_at else None
    settings = TurnSettings(args.profile, args.budget_ms, args.budget_tokens, args.limit, valid_at)
    result = run_turn(lambda work: with_broker(args, work), hook, settings, io.stderr)
    if result.coverage == "degraded" and result.block is None:
        warn(io.stderr, f"outcome {result.outcome}, coverage degraded; nothing injected")
    if args.action == "claude-code":
        if result.block:
            io.stdout.write(claude_code_output(result.block) + "\n")
    elif args.json:
        print_json(io, {"context": result.block, "lineages": result.lineages,
                    "outcome": result.outcome, "coverage": result.coverage})
    elif result.block:
        io.stdout.write(result.block + "\n")
    return 0


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"


# -- the settings file -------------------------------------------------------------


def _edit_settings(args: argparse.Namespace, io: Streams) -> int:
    import difflib
    import os
    from pathlib import Path

    from broker.errors import UsageError
    from broker.surfaces.claude_hook_settings import (
        apply,
        hook_entry,
        plan_install,
        plan_uninstall,
        settings_path,
    )

    if args.host not in HOSTS:
        raise UsageError(f"hook {args.action}: name the host, one of {', '.join(HOSTS)}")
    path = settings_path(args.scope or "user", Path.cwd(), os.environ)
    if args.action == "install":
        entry = hook_entry(_hook_command(args), args.budget_ms // 1000 + 1 + HOST_TIMEOUT_MARGIN_S)
        edit = plan_install(path, entry)
    else:
        edit = plan_uninstall(path, [args.hook_command] if args.hook_command else [])
    if not edit.changed:
        state = "installed" if args.action == "install" else "not installed"
        io.stdout.write(f"{path}: the recall hook is already {state}; nothing to change\n")
        return 0
    if args.dry_run:
        diff = difflib.unified_diff(
            (edit.before or "").splitlines(keepends=True),
            (edit.after or "").splitlines(keepends=True),
            fromfile=str(path) if edit.before is not None else "/dev/null",
            tofile=str(path) if edit.after is not None else "/dev/null",
        )
        io.stdout.write("".join(diff))
        io.stdout.write(f"(dry run: {path} not changed)\n")
        return 0
    apply(edit)
    if edit.after is None:
        io.stdout.write(f"{path}: recall hook removed (install had created the file for it; it is deleted)\n")
    else:
        io.stdout.write(f"{path}: recall hook {'installed' if args.action == 'install' else 'removed'}\n")
    return 0


def _hook_command(args: argparse.Namespace) -> str:
    """The command line the host runs: this recall, by absolute path, and the chosen budgets."""
    import shlex
    from pathlib import Path

    from broker.prereply import DEFAULT_TURN_LATENCY_MS, DEFAULT_TURN_LIMIT, DEFAULT_TURN_TOKENS

    executable = args.hook_command
    if not executable:
        invoked = Path(sys.argv[0])
        executable = str(invoked.absolute()) if invoked.name == "recall" else "recall"
    words = [executable, "hook", "claude-code"]
    if args.profile:
        words += ["--profile", args.profile]
    for flag, value, default in (
        ("--budget-ms", args.budget_ms, DEFAULT_TURN_LATENCY_MS),
        ("--budget-tokens", args.budget_tokens, DEFAULT_TURN_TOKENS),
        ("--limit", args.limit, DEFAULT_TURN_LIMIT),
    ):
        if value != default:
            words += [flag, str(value)]
    return shlex.join(words)
