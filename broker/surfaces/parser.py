"""The argument parser every ``recall`` command is configured on."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


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
