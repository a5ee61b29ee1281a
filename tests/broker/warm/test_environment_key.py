"""A resident broker's key holds the value of every variable its adapters may see, and no other."""

from __future__ import annotations

from pathlib import Path

from broker.warm.daemon.socket_location import configuration_key

POSTGRES_SOURCE = """
[[sources]]
source_uid = "R4T8N2C6PZ1K9M3H"
source_id = "kb"
adapter = "postgres"
[sources.settings]
dsn_env = "DATABASE_URL"
"""
DECLARING_ADAPTER = """
[adapters.jira]
command = "recall-jira"
freshness_modes = ["live"]
pass_env = [
  "JIRA_TOKEN",
]
"""


def environment(tmp_path: Path, **variables: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": str(tmp_path / "config"),
            **variables}


def write_config(tmp_path: Path, text: str, name: str = "config.toml") -> None:
    path = tmp_path / "config" / "recall" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def splits(tmp_path: Path, name: str) -> bool:
    """Whether two shells differing only in ``name`` get two brokers."""
    first = configuration_key(environment(tmp_path, **{name: "one"}), str(tmp_path))
    return first != configuration_key(environment(tmp_path, **{name: "two"}), str(tmp_path))


def test_libpq_variables_key_a_broker_only_where_postgres_is_configured(tmp_path: Path) -> None:
    write_config(tmp_path, "")
    assert not splits(tmp_path, "PGUSER")
    assert not splits(tmp_path, "DATABASE_URL")
    write_config(tmp_path, POSTGRES_SOURCE)
    for name in ("PGUSER", "PGPASSWORD", "PGSERVICE", "PGHOST", "DATABASE_URL"):
        assert splits(tmp_path, name), name
    assert not splits(tmp_path, "AWS_SECRET_ACCESS_KEY")


def test_a_name_an_adapters_d_file_declares_keys_a_broker(tmp_path: Path) -> None:
    write_config(tmp_path, "")
    assert not splits(tmp_path, "JIRA_TOKEN")
    write_config(tmp_path, DECLARING_ADAPTER, "adapters.d/jira.toml")
    assert splits(tmp_path, "JIRA_TOKEN")


def test_a_name_a_project_file_spells_keys_the_broker_of_that_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "recall.toml").write_text('[[sources]]\nsource_id = "db"\nadapter = "postgres"\n')
    shells = [environment(tmp_path, PGUSER=user) for user in ("ada", "grace")]
    assert configuration_key(shells[0], str(project)) != configuration_key(shells[1], str(project))
    assert configuration_key(shells[0], str(tmp_path)) == configuration_key(shells[1], str(tmp_path))


def test_the_base_every_adapter_sees_keys_a_broker_and_the_transport_does_not(tmp_path: Path) -> None:
    for name in ("LC_TIME", "TZ", "TMPDIR", "VIRTUAL_ENV", "RECALL_BIN"):
        assert splits(tmp_path, name), name
    for name in ("RECALL_DAEMON", "RECALL_DAEMON_IDLE_SECONDS", "TERM", "SHELL"):
        assert not splits(tmp_path, name), name
