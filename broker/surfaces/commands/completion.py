"""recall completion: a static completion script for bash, zsh or fish.

The script lists the commands and each command's flags as they are defined now,
so regenerate it after upgrading (``recall completion bash > ~/.local/share/...``).
"""

from __future__ import annotations

import argparse

from broker.surfaces.streams import Streams

HELP = "print a shell completion script (bash, zsh or fish)"
DESCRIPTION = """Print a shell completion script for recall's commands and flags.

  bash:  recall completion bash > ~/.local/share/bash-completion/completions/recall
  zsh:   recall completion zsh > "${fpath[1]}/_recall"   (then restart the shell)
  fish:  recall completion fish > ~/.config/fish/completions/recall.fish"""
EXIT_CODES = """exit codes:
  0  printed
  1  bad usage"""

SHELLS = ("bash", "zsh", "fish")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def command_flags(io: Streams) -> dict[str, list[str]]:
    """Every command's long and short flags, read from its own parser."""
    from importlib import import_module

    from broker.surfaces.cli import COMMANDS
    from broker.surfaces.parser import Parser

    flags: dict[str, list[str]] = {}
    for name, (module_name, _) in COMMANDS.items():
        module = import_module(f"broker.surfaces.commands.{module_name}")
        parser = Parser(io, prog=f"recall {name}")
        module.configure(parser)
        flags[name] = sorted({opt for action in parser._actions for opt in action.option_strings})
    return flags


def bash_script(flags: dict[str, list[str]]) -> str:
    cases = "\n".join(f'    {name}) opts="{" ".join(opts)}" ;;' for name, opts in flags.items())
    return f"""# bash completion for recall
_recall() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "{" ".join(flags)} --help --version" -- "$cur"))
    return
  fi
  local opts=""
  case "${{COMP_WORDS[1]}}" in
{cases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -F _recall recall
"""


def zsh_script(flags: dict[str, list[str]]) -> str:
    from broker.surfaces.cli import COMMANDS

    commands = "\n".join(f"    '{name}:{text}'" for name, (_, text) in COMMANDS.items())
    cases = "\n".join(
        f"    {name}) _arguments {' '.join(repr(opt) for opt in opts)} '*:file:_files' ;;"
        for name, opts in flags.items()
    )
    return f"""#compdef recall
_recall() {{
  local -a commands
  commands=(
{commands}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  case "$words[2]" in
{cases}
  esac
}}
_recall "$@"
"""


def fish_script(flags: dict[str, list[str]]) -> str:
    from broker.surfaces.cli import COMMANDS

    lines = ["# fish completion for recall", "complete -c recall -f"]
    for name, (_, text) in COMMANDS.items():
        lines.append(
            f"complete -c recall -n __fish_use_subcommand -a {name} -d {_fish_quote(text)}"
        )
        for opt in flags[name]:
            kind = "-l" if opt.startswith("--") else "-s"
            lines.append(
                f"complete -c recall -n '__fish_seen_subcommand_from {name}' {kind} {opt.lstrip('-')}"
            )
    return "\n".join(lines) + "\n"


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def run(args: argparse.Namespace, io: Streams) -> int:
    script = {"bash": bash_script, "zsh": zsh_script, "fish": fish_script}[args.shell]
    io.stdout.write(script(command_flags(io)))
    return 0
