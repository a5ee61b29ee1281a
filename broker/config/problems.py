"""Collects every configuration problem so they are reported together."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from broker.errors import ConfigError, ConfigProblem, TrustError

TRUST = "trust_boundary"
IDENTITY = "identity"


class Problems:
    def __init__(self) -> None:
        self.items: list[ConfigProblem] = []

    def add(
        self,
        file: Path | None,
        key: str | None,
        message: str,
        *,
        kind: str = "configuration",
        source_id: str | None = None,
    ) -> None:
        self.items.append(
            ConfigProblem(
                message,
                file=str(file) if file is not None else None,
                key=key,
                source_id=source_id,
                kind=kind,
            )
        )

    def trust(self, file: Path, key: str, message: str, *, source_id: str | None = None) -> None:
        self.add(file, key, message, kind=TRUST, source_id=source_id)

    def extend(self, problems: Iterable[ConfigProblem]) -> None:
        self.items.extend(problems)

    def raise_if_any(self) -> None:
        if not self.items:
            return
        if any(p.kind == TRUST for p in self.items):
            raise TrustError(self.items)
        raise ConfigError(self.items)


def nearest(word: str, choices: Iterable[str]) -> str | None:
    import difflib  # needed only to word a problem, never to load a valid configuration

    found = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def suggestion(word: str, choices: Iterable[str], what: str = "valid keys") -> str:
    choices = sorted(choices)
    match = nearest(word, choices)
    if match is not None:
        return f"did you mean {match!r}?"
    return f"{what}: {', '.join(choices) if choices else 'none'}"
