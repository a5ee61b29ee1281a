"""Reading a command line's flags before argparse is imported, as argparse would read them.

The thin client (:mod:`broker.warm.daemon.thin_client`) and the launch plan
(:mod:`broker.warm.launch_plan`) decide from the raw arguments, before the
command's parser exists, whether a flag that changes their course is given. argparse
takes a long flag by any unambiguous prefix (``--no-d`` for ``--no-daemon``) and
``--flag=value`` for ``--flag value``, and ``--`` ends the flags; both read them the
same way here. Standard library only, and nothing of it: this runs first thing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


def before_operands(args: Iterable[str]) -> Iterator[str]:
    """The words of ``args`` up to ``--``, after which every word is an operand."""
    for arg in args:
        if arg == "--":
            return
        yield arg


def names(arg: str, flags: Iterable[str]) -> bool:
    """Whether ``arg`` (``--flag`` or ``--flag=value``) gives one of ``flags``: a short
    flag exactly, a long one exactly or by a prefix of it (a prefix that could mean
    another flag too counts, as a guess on the safe side)."""
    name = arg.split("=", 1)[0]
    return any(name == flag or (len(name) > 2 and flag.startswith(name)) for flag in flags)
