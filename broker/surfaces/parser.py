"""The argument parser every ``recall`` command is configured on."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, NoReturn

from broker.surfaces.streams import Streams

if TYPE_CHECKING:
    from _typeshed import SupportsWrite


class Parser(argparse.ArgumentParser):
    """argparse with exit code 1 for usage errors (2 means "abstained" here), printing
    help and errors to the command's own streams."""

    def __init__(self, io: Streams, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.io = io

    def print_usage(self, file: SupportsWrite[str] | None = None) -> None:
        super().print_usage(self.io.stdout if file is None else file)

    def print_help(self, file: SupportsWrite[str] | None = None) -> None:
        super().print_help(self.io.stdout if file is None else file)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        self._print_message(message or "", self.io.stderr)
        raise SystemExit(status)

    def error(self, message: str) -> NoReturn:
        self.print_usage(self.io.stderr)
        self.io.stderr.write(f"recall: {message}\n")
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
