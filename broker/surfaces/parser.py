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
