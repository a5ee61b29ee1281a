"""A pack's content hash: what two runs must share to be compared.

``sha256:`` + hex sha256 over the sorted list of sub-digests: one per
domain-tagged canonical JSON encoding (keys sorted) of the manifest, each case
and each judgment (``sha256(domain 0x00 json)``), plus one per declared fixture
tree (``sources``, ``transcripts``): sha256 over length-prefixed frames (8-byte
big-endian length, then bytes) of ``fixture-tree:<domain>``, then for each
regular file in slash-normalized path order its path and its content. Modes,
times and empty directories do not count; a symlink is refused, since what it
points at is not part of the pack. The scheme follows the reference's, but its
JSON encoding is ours, so hashes are not comparable across implementations.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from broker.evaluation.pack import Pack, PackError


def _json_digest(domain: str, value: object) -> bytes:
    body = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(domain.encode() + b"\x00" + body).digest()


def _frame(hasher: hashlib._Hash, data: bytes) -> None:
    hasher.update(len(data).to_bytes(8, "big"))
    hasher.update(data)


def tree_digest(pack: Pack, domain: str, root: Path) -> bytes:
    hasher = hashlib.sha256()
    _frame(hasher, f"fixture-tree:{domain}".encode())
    files: list[tuple[str, Path]] = []
    for path in root.rglob("*"):
        if path.is_symlink():
            raise PackError(pack.directory, [f"{path} is a symlink; packs hold regular files only"])
        if path.is_file():
            files.append((path.relative_to(root).as_posix(), path))
    for relative, path in sorted(files):
        _frame(hasher, relative.encode())
        _frame(hasher, path.read_bytes())
    return hasher.digest()


def content_hash(pack: Pack) -> str:
    digests = [_json_digest("pack", pack.manifest.model_dump(mode="json", exclude_none=True))]
    digests += [_json_digest("case", c.model_dump(mode="json", exclude_none=True)) for c in pack.cases]
    digests += [
        _json_digest("judgment", j.model_dump(mode="json", exclude_none=True))
        for group in pack.judgments.values()
        for j in group
    ]
    for domain in ("sources", "transcripts"):
        name = pack.manifest.sources_dir if domain == "sources" else pack.manifest.transcripts
        if name and (pack.directory / name).is_dir():
            digests.append(tree_digest(pack, domain, pack.directory / name))
    return "sha256:" + hashlib.sha256(b"".join(sorted(digests))).hexdigest()
