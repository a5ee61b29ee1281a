"""What an adapter process sees of the environment, and so what keys a resident broker.

An adapter starts with a defined environment, never the whole of the broker's:

* the base a program needs to run: :data:`BASE_NAMES`, and every ``LC_*`` and
  ``RECALL_*`` variable but the three that choose how a command is run
  (:data:`TRANSPORT_NAMES`);
* the variables its registration declares: a built-in adapter's are in
  :data:`BUILTIN_PASS_ENV` (libpq's ``PG*`` for postgres, the proxy variables for
  gmail, ...), a registered adapter's in its ``pass_env``;
* the variables its source declares: the source's ``pass_env``, and the variable
  named by each setting whose name ends in ``_env`` (postgres' ``dsn_env``,
  the event store's ``backend_key_env``);
* over all of these, the values the registration's ``env`` table sets.

A resident broker serves every command whose key it was started for, so that key
holds the value of every variable any adapter of its configuration may see
(:func:`key_environment`): two shells that differ in one of them get two brokers,
and a broker answers as the command would in process. The thin client computes the
key without parsing the configuration (a TOML parser costs a command more than the
whole exchange with the broker): a configuration file spells each name it declares
as a quoted string, so the quoted words of the files, crossed with the environment,
cover every declared name; a word that only looks like a variable's name widens the
key, never narrows it. The configuration loader refuses a declared name its file
does not spell as a plain quoted string, so the cover is complete.

Standard library only: the thin client and :mod:`broker.warm.prestart` import it first.
"""

from __future__ import annotations

import os

from broker.environment import DAEMON_ENV, DAEMON_IDLE_ENV, SERVER_ENV

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

BASE_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR",
    "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
})  # fmt: skip
BASE_PREFIXES = ("LC_", "RECALL_")
# These choose how a command is run, not what it answers: no adapter sees them.
TRANSPORT_NAMES = frozenset({DAEMON_ENV, DAEMON_IDLE_ENV, SERVER_ENV})
# A source setting named so holds the name of a variable its adapter reads.
SETTING_SUFFIX = "_env"

LIBPQ_NAMES = (
    "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD", "PGPASSFILE",
    "PGSERVICE", "PGSERVICEFILE", "PGSYSCONFDIR", "PGOPTIONS", "PGAPPNAME", "PGCONNECT_TIMEOUT",
    "PGCLIENTENCODING", "PGTARGETSESSIONATTRS", "PGLOADBALANCEHOSTS", "PGREQUIREAUTH",
    "PGCHANNELBINDING", "PGSSLMODE", "PGREQUIRESSL", "PGSSLNEGOTIATION", "PGSSLCERT", "PGSSLKEY",
    "PGSSLCERTMODE", "PGSSLROOTCERT", "PGSSLCRL", "PGSSLCRLDIR", "PGSSLSNI", "PGSSLCOMPRESSION",
    "PGSSLMINPROTOCOLVERSION", "PGSSLMAXPROTOCOLVERSION", "PGGSSENCMODE", "PGKRBSRVNAME",
    "PGGSSLIB", "PGGSSDELEGATION", "PGREQUIREPEER", "PGTZ", "PGDATESTYLE", "PGGEQO",
    "PGLOCALEDIR",
)  # fmt: skip
# what an HTTP client reads to reach a server: proxies and the certificates it trusts
HTTP_CLIENT_NAMES = (
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
    "all_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
)  # fmt: skip
# What each built-in adapter reads besides the base (and its settings' ``*_env``). The
# tasks adapter runs ``task`` with ``TASKRC=/dev/null`` and without ``TASKDATA``, so
# neither can change its answer, and it is given neither.
BUILTIN_PASS_ENV: dict[str, tuple[str, ...]] = {
    "notes": (),
    "semantic": (),
    "tasks": (),
    "postgres": LIBPQ_NAMES,
    "gmail": HTTP_CLIENT_NAMES,
    "eventstore": HTTP_CLIENT_NAMES,
}
MAX_CONFIG_BYTES = 1 << 20


def in_base(name: str) -> bool:
    """Whether every adapter sees ``name``, declared or not."""
    if name in BASE_NAMES:
        return True
    return name.startswith(BASE_PREFIXES) and name not in TRANSPORT_NAMES


def adapter_environment(
    environ: Mapping[str, str], pass_env: Iterable[str], env: Mapping[str, str]
) -> dict[str, str]:
    """The environment an adapter starts with: the base and the ``pass_env`` names that
    ``environ`` sets, then the registration's ``env`` values over them."""
    passed = set(pass_env)
    seen = {name: value for name, value in environ.items() if name in passed or in_base(name)}
    seen.update(env)
    return seen


def named_by_settings(settings: Mapping[str, Any]) -> list[str]:
    """The variables a source's settings name (each ``*_env`` setting holding a string)."""
    return [
        value for key, value in settings.items()
        if key.endswith(SETTING_SUFFIX) and isinstance(value, str) and value
    ]


def quoted_words(text: str) -> set[str]:
    """Every string ``text`` holds between two consecutive quotes of one kind: a superset
    of the plain quoted strings of a TOML file, however its tables and arrays are laid out."""
    return set(text.split('"')) | set(text.split("'"))


def key_environment(environ: Mapping[str, str], texts: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """The values, in ``environ``, of every variable an adapter configured by the files
    whose ``texts`` are given may see: what a resident broker is keyed by."""
    words: set[str] = set()
    for text in texts:
        words |= quoted_words(text)
    declared = set(words)
    for adapter, names in BUILTIN_PASS_ENV.items():
        if adapter in words:
            declared.update(names)
    return tuple(sorted(
        (name, value) for name, value in environ.items() if name in declared or in_base(name)
    ))  # fmt: skip


def configuration_texts(config_home: str, project_file: str) -> list[str]:
    """The text of each configuration file the loader would read: the user file and
    ``adapters.d/*.toml`` under ``config_home``, and ``project_file`` (if not empty).
    An unreadable file is left out: the command that reads it reports it."""
    folder = os.path.join(config_home, "recall")  # the names broker.config.load reads
    paths = [os.path.join(folder, "config.toml")]
    adapters = os.path.join(folder, "adapters.d")
    try:
        paths += sorted(os.path.join(adapters, name) for name in os.listdir(adapters) if name.endswith(".toml"))
    except OSError:
        pass
    if project_file:
        paths.append(project_file)
    texts = []
    for path in paths:
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            size = min(os.fstat(descriptor).st_size, MAX_CONFIG_BYTES)
            texts.append(os.read(descriptor, size).decode("utf-8", "surrogateescape"))
        except OSError:
            continue
        finally:
            os.close(descriptor)
    return texts
