"""Configuration: TOML layers, the project trust boundary, validation and provenance.

Layers merge in this order, later winning where the trust boundary allows:
built-in defaults and adapters, the user's ``$XDG_CONFIG_HOME/recall/config.toml``,
``adapters.d/*.toml`` (adapter registrations only, lexical order), then the
nearest project ``recall.toml`` above the working directory (untrusted; see
:mod:`broker.config.trust`).
"""

from __future__ import annotations

from broker.config.load import config_from_text, load_config
from broker.config.resolved import (
    AdapterRegistration,
    Config,
    ConfigFile,
    Defaults,
    Evaluation,
    Layer,
    MustAbstain,
    Origin,
    Paths,
    Profile,
    SourceConfig,
)

__all__ = [
    "AdapterRegistration",
    "Config",
    "ConfigFile",
    "Defaults",
    "Evaluation",
    "Layer",
    "MustAbstain",
    "Origin",
    "Paths",
    "Profile",
    "SourceConfig",
    "config_from_text",
    "load_config",
]
