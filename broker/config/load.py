"""Finding, reading and merging the configuration files."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from broker.adapter_environment import named_by_settings, quoted_words
from broker.config.locations import find_project_file, xdg_base
from broker.config.merge import build_config
from broker.config.problems import Problems
from broker.config.read import Document, read_document
from broker.config.resolved import Config, ConfigFile, Layer, Paths
from broker.errors import ConfigProblem

USER_FILE_NAME = "config.toml"
ADAPTERS_DIR_NAME = "adapters.d"


def _parse(text: str, file: Path, problems: Problems) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        problems.add(file, None, f"malformed TOML: {err}")
        return None


def _read_text(file: Path, problems: Problems) -> str | None:
    try:
        data = file.read_bytes()
    except OSError as err:
        problems.add(file, None, f"cannot read configuration file: {err.strerror or err}")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        problems.add(file, None, f"not valid UTF-8 (byte {err.start})")
        return None


class _Layers:
    """Reads each file once, in merge order, remembering which ones contributed."""

    def __init__(self, problems: Problems, home: str | None) -> None:
        self.problems = problems
        self.home = home
        self.files: list[ConfigFile] = []
        self.unreadable = False
        self.quoted: set[str] = set()  # every quoted word of every file read

    def read(
        self, file: Path, layer: Layer, *, text: str | None = None, adapters_only: bool = False
    ) -> Document | None:
        if text is None:
            text = _read_text(file, self.problems)
        raw = None if text is None else _parse(text, file, self.problems)
        self.files.append(ConfigFile(layer, file))
        if text is not None:
            self.quoted |= quoted_words(text)
        if raw is None:
            self.unreadable = True
            return None
        return read_document(
            raw, file, layer, self.problems, home=self.home, adapters_only=adapters_only
        )


def _state_roots(environ: Mapping[str, str], problems: Problems) -> tuple[Path, Path] | None:
    found: list[ConfigProblem] = []
    state = xdg_base("XDG_STATE_HOME", environ, found)
    cache = xdg_base("XDG_CACHE_HOME", environ, found)
    problems.extend(found)
    if state is None or cache is None:
        return None
    return state / "recall", cache / "recall"


def _default_user_file(environ: Mapping[str, str], problems: Problems) -> Path | None:
    found: list[ConfigProblem] = []
    config_home = xdg_base("XDG_CONFIG_HOME", environ, found)
    problems.extend(found)
    return config_home / "recall" / USER_FILE_NAME if config_home is not None else None


def load_config(
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    user_file: Path | None = None,
    project_file: Path | None = None,
    discover_project: bool = True,
) -> Config:
    """Load user configuration, ``adapters.d`` and the nearest project ``recall.toml``.

    Raises :class:`broker.errors.ConfigError` (or its subclass ``TrustError`` when a
    project file crossed the trust boundary) carrying every problem found.
    """
    environ = os.environ if environ is None else environ
    problems = Problems()
    home = environ.get("HOME") or None
    explicit_user = user_file is not None
    if user_file is not None:
        user_file = user_file.absolute()
    else:
        user_file = _default_user_file(environ, problems)
    roots = _state_roots(environ, problems)
    if project_file is None and discover_project:
        project_file = find_project_file((cwd or Path.cwd()).absolute())

    layers = _Layers(problems, home)
    user: Document | None = None
    adapter_files: list[Document] = []
    if user_file is not None:
        if explicit_user or user_file.exists():
            user = layers.read(user_file, Layer.user)
        adapters_dir = user_file.parent / ADAPTERS_DIR_NAME
        for file in sorted(adapters_dir.glob("*.toml")) if adapters_dir.is_dir() else []:
            if (document := layers.read(file, Layer.user, adapters_only=True)) is not None:
                adapter_files.append(document)
    project: Document | None = None
    if project_file is not None:
        project_file = project_file.absolute()
        project = layers.read(project_file, Layer.project)

    if user_file is None or roots is None or layers.unreadable:
        # Without every file parsed, merge problems would only echo the first ones.
        problems.raise_if_any()
    assert user_file is not None and roots is not None
    paths = Paths(
        config_file=user_file,
        adapters_dir=user_file.parent / ADAPTERS_DIR_NAME,
        state_root=roots[0],
        cache_root=roots[1],
        project_file=project_file,
    )
    config = build_config(
        user,
        adapter_files,
        project,
        paths=paths,
        files=layers.files,
        home=home,
        problems=problems,
    )
    _check_declared_names(config, layers.quoted, problems)
    return config


def config_from_text(
    text: str,
    *,
    base_dir: Path,
    environ: Mapping[str, str] | None = None,
    name: str = USER_FILE_NAME,
) -> Config:
    """One trusted document, read as if it were the user's ``config.toml`` in ``base_dir``."""
    environ = os.environ if environ is None else environ
    problems = Problems()
    home = environ.get("HOME") or None
    roots = _state_roots(environ, problems)
    file = base_dir.absolute() / name
    layers = _Layers(problems, home)
    user = layers.read(file, Layer.user, text=text)
    if roots is None or layers.unreadable:
        problems.raise_if_any()
    assert roots is not None
    paths = Paths(
        config_file=file,
        adapters_dir=file.parent / ADAPTERS_DIR_NAME,
        state_root=roots[0],
        cache_root=roots[1],
    )
    config = build_config(
        user, [], None, paths=paths, files=layers.files, home=home, problems=problems
    )
    _check_declared_names(config, layers.quoted, problems)
    return config


def _check_declared_names(config: Config, quoted: set[str], problems: Problems) -> None:
    """Refuse a name that decides what an adapter sees, a variable's or a built-in
    adapter's, unless its file spells it as a plain quoted string: the resident broker's
    key, made without parsing the files, would miss it (:mod:`broker.adapter_environment`)."""
    for source in config.sources:
        registration = config.adapter_for(source)
        written = [*source.pass_env, *named_by_settings(source.settings)]
        if registration.builtin:
            written += [registration.name] if registration.pass_env else []
        else:
            written += registration.pass_env
        for name in dict.fromkeys(written):
            if name not in quoted:
                problems.add(
                    source.declared_in.file, source.declared_key,
                    f"{name!r} must be written as a plain quoted string (\"{name}\"), without "
                    "escapes: it decides which environment variables an adapter sees",
                    source_id=source.source_id,
                )
    problems.raise_if_any()
