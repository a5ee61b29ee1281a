"""Walk the notes folder: which files are notes, and their stat, without reading them.

Directories matching ``exclude_dirs`` are never entered. Symbolic links are
followed only when their target stays inside the root (a link pointing
outside is skipped and reported); each real directory is entered once, so
link cycles end. Each folder's mtime is recorded with the scan, so a later
cheap check can tell which folders gained or lost entries since.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from adapter_sdk.folder.selection import FolderSelection

# A file listed within this long of its modification time may be written again after it
# is read without its size or mtime changing (a second write in the same clock tick), so
# a stat that matches such a record is not trusted: the file is read again. Where the
# file system keeps nanoseconds, mtimes move with the kernel's clock tick (10 ms at most);
# one that keeps whole seconds (FAT: two) needs the long window.
FINE_RACY_WINDOW_NS = 100_000_000
COARSE_RACY_WINDOW_NS = 2_000_000_000
# what no locator may hold: C0 and C1 controls, DEL and the bidirectional controls
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class FileStat:
    size: int
    mtime_ns: int


@dataclass
class ScanResult:
    files: dict[str, FileStat] = field(default_factory=dict)
    skipped_dirs: list[str] = field(default_factory=list)
    skipped_links: list[str] = field(default_factory=list)
    # notes whose path holds '#' or a control character, which a locator cannot name
    unaddressable: list[str] = field(default_factory=list)
    # notes whose path is not UTF-8, which no locator (nor the index) can hold: printed
    undecodable: list[str] = field(default_factory=list)
    # folder ('' for the root) -> its mtime when listed
    dirs: dict[str, int] = field(default_factory=dict)
    # for a scan of named paths only: every path asked about, present or gone
    named: list[str] = field(default_factory=list)


def settled(mtime_ns: int, checked_ns: int) -> bool:
    """Whether a file whose mtime was ``mtime_ns`` when it was listed at ``checked_ns``
    (before it was read) cannot have been written since with that mtime unchanged."""
    coarse = mtime_ns % 1_000_000_000 == 0
    return checked_ns - mtime_ns > (COARSE_RACY_WINDOW_NS if coarse else FINE_RACY_WINDOW_NS)


def scan(root: str, settings: FolderSelection) -> ScanResult:
    """Relative POSIX path → stat of every note under ``root``."""
    result = ScanResult()
    real_root = os.path.realpath(root)
    visited = {real_root}
    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            mtime_ns = os.stat(directory).st_mtime_ns
            entries = list(os.scandir(directory))
        except OSError:
            result.skipped_dirs.append(prefix or ".")
            continue
        result.dirs[prefix.rstrip("/")] = mtime_ns
        for entry in entries:
            rel = prefix + entry.name
            if not decodable(entry.name):
                _undecodable(entry, printable(rel), settings, result)
                continue
            is_link = entry.is_symlink()
            try:
                info = entry.stat(follow_symlinks=True)
            except OSError:  # a dangling link, or an entry removed while we walk
                if is_link:
                    result.skipped_links.append(rel)
                continue
            if is_link and not inside(os.path.realpath(entry.path), real_root):
                result.skipped_links.append(rel)
                continue
            if stat.S_ISDIR(info.st_mode):
                if excluded_dir(entry.name, settings):
                    result.skipped_dirs.append(rel)
                    continue
                real = os.path.realpath(entry.path)
                if real in visited:
                    continue
                visited.add(real)
                pending.append((entry.path, rel + "/"))
            elif stat.S_ISREG(info.st_mode) and wanted(rel, entry.name, settings):
                if not addressable(rel):
                    result.unaddressable.append(rel)
                else:
                    result.files[rel] = FileStat(info.st_size, info.st_mtime_ns)
    return result


def folders(root: str, settings: FolderSelection) -> list[str]:
    """Every folder :func:`scan` enters, ``root`` first, by the path it is reached at.
    Only folders are looked at: a file's entry is told apart by its type, never stat'ed."""
    real_root = os.path.realpath(root)
    visited = {real_root}
    found: list[str] = []
    pending = [root]
    while pending:
        directory = pending.pop()
        found.append(directory)
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=True):
                    continue
            except OSError:
                continue
            if excluded_dir(entry.name, settings) or not decodable(entry.name):
                continue
            real = os.path.realpath(entry.path)
            if real in visited or not inside(real, real_root):
                continue
            visited.add(real)
            pending.append(entry.path)
    return found


def addressable(rel: str) -> bool:
    """Whether a locator can name the note at ``rel``: it holds no '#' (which starts a
    locator's line range) and no control character (a newline, say: a locator is one
    line of text, printed exactly as ``recall expand`` takes it back)."""
    if "#" in rel:
        return False
    if rel.isascii() and rel.isprintable():  # nearly every name, answered without a pattern
        return True
    return _UNPRINTABLE.search(rel) is None


def decodable(name: str) -> bool:
    """Whether a name read from the file system is UTF-8 (an undecodable byte is read as
    a lone surrogate, which no UTF-8 text can carry). Asked of every entry a scan lists,
    so an ASCII name, nearly every one, is answered without encoding it."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(rel: str) -> str:
    """``rel`` as text can hold it, each byte that is not UTF-8 written ``\\xNN``."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def one_line(rel: str) -> str:
    """``rel`` shown on one line: each control character written as its escape (``\\n``),
    so a file named with a newline is named, not broken across lines."""
    return _UNPRINTABLE.sub(lambda found: repr(found.group(0))[1:-1], rel)


def _undecodable(entry: os.DirEntry[str], shown: str, settings: FolderSelection, result: ScanResult) -> None:
    """A folder whose name is not UTF-8 is skipped; a note so named is declined."""
    try:
        is_dir = entry.is_dir(follow_symlinks=False)
    except OSError:
        return
    if is_dir:
        result.skipped_dirs.append(shown)
    elif wanted(shown, shown.rsplit("/", 1)[-1], settings):
        result.undecodable.append(shown)


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def excluded_dir(name: str, settings: FolderSelection) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in settings.exclude_dirs)


def wanted(rel: str, name: str, settings: FolderSelection) -> bool:
    """Whether a file is a note by its name and the include/exclude globs."""
    if not name.lower().endswith(settings.extensions):
        return False
    if settings.include and not any(fnmatchcase(rel, g) for g in settings.include):
        return False
    return not any(fnmatchcase(rel, g) for g in settings.exclude)
