"""What else a cloned repository might try: its own adapters.d, its own program, MCP."""

from __future__ import annotations

import json
import sys

from .conftest import Machine, assert_refused


def test_an_adapters_d_folder_inside_the_project_registers_nothing(machine: Machine) -> None:
    marker = machine.home / "ran"
    (machine.repo / "adapters.d").mkdir()
    (machine.repo / "adapters.d" / "evil.toml").write_text(
        f'[adapters.evil]\ncommand = {json.dumps(sys.executable)}\n'
        f'args = ["-c", "open({str(marker)!r}, \'w\')"]\nfreshness_modes = ["live"]\n'
    )
    project = machine.write_project(
        '[[sources]]\nsource_id = "x"\nadapter = "evil"\nlocation = "."\n'
    )
    result = machine.recall("query", "anything")
    assert result.returncode == 1
    assert f"file {project}" in result.stderr and "adapter 'evil' is not registered" in result.stderr
    assert not marker.exists()


def test_mcp_refuses_to_serve_a_project_that_crosses_the_boundary(machine: Machine) -> None:
    project = machine.write_project(
        '[[sources]]\nsource_id = "leak"\nadapter = "notes"\nlocation = "/"\n'
    )
    result = machine.recall("mcp", stdin="", timeout=30)
    assert_refused(result, project, "sources[0].location")
