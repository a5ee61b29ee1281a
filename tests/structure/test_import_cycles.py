"""No module of the tree imports itself back through others: the import graph has no cycle."""

from __future__ import annotations

from pathlib import Path

from tests.structure.import_graph import cycles, import_graph, modules_under

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["broker", "adapter_sdk", "adapters"]


def test_no_module_of_the_tree_reaches_itself_through_its_imports() -> None:
    assert cycles(import_graph(modules_under(ROOT, PACKAGES))) == []


def test_a_lazy_import_back_into_a_module_is_reported_as_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "cart.py").write_text("from shop.prices import total\n")
    (package / "prices.py").write_text("def total():\n    from shop import cart\n    return cart\n")
    (package / "labels.py").write_text("from . import prices\n")

    assert cycles(import_graph(modules_under(tmp_path, ["shop"]))) == [["shop.cart", "shop.prices"]]
