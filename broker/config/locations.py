"""Where configuration lives, and how a source's ``location`` is resolved."""

from __future__ import annotations

import ntpath
import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from broker.errors import ConfigProblem

PROJECT_FILE_NAME = "recall.toml"
LOCATION_KINDS = ("path", "opaque", "uri")

_XDG = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_STATE_HOME": ".local/state",
    "XDG_CACHE_HOME": ".cache",
}
_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_INFERRED_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def xdg_base(name: str, environ: Mapping[str, str], problems: list[ConfigProblem]) -> Path | None:
    """An XDG base directory; a relative value is refused (the spec says ignore it, we say so)."""
    value = environ.get(name, "")
    if value:
        if not os.path.isabs(value):
            problems.append(
                ConfigProblem(
                    f"{name} must be an absolute path, got {value!r}; set it to an absolute "
                    "directory or unset it",
                    key=name,
                )
            )
            return None
        return Path(value)
    home = environ.get("HOME", "")
    if not home or not os.path.isabs(home):
        problems.append(
            ConfigProblem(f"{name} is not set and HOME is not an absolute path", key=name)
        )
        return None
    return Path(home) / _XDG[name]


def find_project_file(cwd: Path) -> Path | None:
    """The nearest ``recall.toml`` from ``cwd`` upward; the first found is the only one."""
    for directory in (cwd, *cwd.parents):
        candidate = directory / PROJECT_FILE_NAME
        if candidate.is_file():
            return candidate
    return None


def expand_home(text: str, home: str | None) -> str:
    if home and (text == "~" or text.startswith(("~/", "~\\"))):
        return home + text[1:]
    return text


@dataclass(frozen=True)
class ResolvedLocation:
    """A source's location after resolution: the value, its kind, and whether the configuration named it."""

    value: str
    kind: str
    explicit: bool


def infer_kind(location: str) -> str:
    if _INFERRED_URI.match(location):
        return "uri"
    if location in (".", "..", "~") or location.startswith(("/", "\\")):
        return "path"
    if "/" in location or "\\" in location:
        return "path"
    return "opaque"


def resolve_location(
    location: str, kind: str | None, base_dir: Path, home: str | None
) -> ResolvedLocation | str:
    """The location as the adapter receives it, or a problem message."""
    explicit = kind is not None
    kind = kind or infer_kind(location)
    if kind == "opaque":
        return ResolvedLocation(location, kind, explicit)
    if kind == "uri":
        if not _URI_SCHEME.match(location):
            return f'location {location!r} has location_kind "uri" but no scheme (like https:)'
        return ResolvedLocation(location, kind, explicit)
    if _WINDOWS_DRIVE.match(location) or location.startswith("\\\\"):
        return ResolvedLocation(ntpath.normpath(location), kind, explicit)
    expanded = expand_home(location, home)
    if expanded.startswith("~"):
        return f"location {location!r} starts with '~' but HOME is not set to expand it"
    if not posixpath.isabs(expanded):
        expanded = str(base_dir / expanded)
    return ResolvedLocation(posixpath.normpath(expanded), kind, explicit)
