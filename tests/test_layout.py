"""The package's layout by layer (ARCHITECTURE.md): imports go down the layers only, no module
imports itself back through others, and the paths of the flat layout still import."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import streamnb
from streamnb import _moved

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "streamnb"

# Each old module path and where it lives now; the old path is a module of a few lines that warns and re-exports it.
MOVED = _moved.MOVED
# The layers, bottom up: a module imports its own layer and those below, never one above.
# filter and integrations stand side by side on the models: neither imports the other.
LAYERS = {"features": 1, "models": 2, "filter": 3, "integrations": 3, "service": 4}
BASE = 0  # the modules directly in streamnb/: errors, validate, store, persist, clock, ledger ...
# streamnb.filter.decision, split by concept: it re-exports the names of these modules of streamnb/filter/.
DECISION_PARTS = ["base", "evidence", "combining", "rules", "spam_filter", "report"]


# Modules split by concern: the module re-exports its parts' names.
SPLIT_PARTS = {
    "filter.evaluate": ["filter.metrics", "filter.scores", "filter.running"],
    "filter.datasets": ["filter.download", "filter.worked_examples"],
    "persist": ["archive", "registry"],
    "store": ["keys"],
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    """Every module of the package but the facades: streamnb/__init__.py (it names everything, and
    imports each on first use) and the old paths (re-exports of the modules they name)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    for old in ["streamnb", *(f"streamnb.{name}" for name in MOVED)]:
        del modules[old]
    return modules


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that module ``name`` imports when it runs (at its top or in a function;
    imports under ``if TYPE_CHECKING:`` are for the type checker only)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def add(target: str) -> None:
        while target and target not in known:  # a name imported from a module: the module
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {module for module in found if module.startswith("streamnb.")}


def layer(module: str) -> tuple[int, str]:
    parts = module.split(".")
    if len(parts) > 2 and parts[1] in LAYERS:
        return LAYERS[parts[1]], parts[1]
    if module == "streamnb.__main__":
        return LAYERS["service"], "service"
    return BASE, "base"


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    known = set(modules) | {"streamnb", "streamnb._core"}
    return {name: imports(name, path, known) - {"streamnb", "streamnb._core"} for name, path in modules.items()}


def test_imports_go_down_the_layers_only():
    upward = []
    for module, targets in import_graph().items():
        rank, where = layer(module)
        for target in targets:
            target_rank, target_where = layer(target)
            if target_rank > rank or (target_rank == rank and target_where != where):
                upward.append(f"{module} ({where}) imports {target} ({target_where})")
    assert not upward, "\n".join(sorted(upward))


def test_no_import_loops():
    """No module imports itself back through others, even from inside a function."""
    graph = import_graph()
    loops = []
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                loops.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                walk(target, path + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            walk(module, [module])
    assert not loops, "\n".join(loops)


def test_the_graph_sees_the_layers():
    """A check of the checks: the graph holds the imports the layers are made of."""
    graph = import_graph()
    assert "streamnb.features.email" in graph["streamnb.models.base"]
    assert "streamnb.filter.decision" in graph["streamnb.service.serve"]
    assert "streamnb.filter.sources" in graph["streamnb.service.cli"]  # imported inside a command
    assert "streamnb.models.base" not in graph["streamnb.ledger"]  # for the type checker only
    assert "streamnb.service.cli_serve" in graph["streamnb.service.cli"]  # `streamnb serve` ...
    assert "streamnb.service.serve" in graph["streamnb.service.cli_serve"]  # ... imports the server when it runs
    assert "streamnb.service.cli" not in graph["streamnb.service.serve"]  # the loop there was


# Run in a child interpreter: importing every old path imports river, Dask and matplotlib, and
# the test process stays as the other tests leave it (the soak's client runs in it).
_OLD_PATHS_CHECK = """
import importlib, json, sys, warnings
report = {}
for old, new in json.loads(sys.argv[1]).items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            shim = importlib.import_module("streamnb." + old)
        except ImportError as error:  # an optional extra that is not installed
            report[old] = "skipped: " + str(error)
            continue
    moved = importlib.import_module("streamnb." + new)
    names = getattr(moved, "__all__", [name for name in vars(moved) if not name.startswith("_")])
    differ = [name for name in names if getattr(shim, name, None) is not getattr(moved, name)]
    warned = [str(w.message) for w in caught if w.category is DeprecationWarning and "streamnb." + old + " moved" in str(w.message)]
    report[old] = {"objects": "differ: " + ", ".join(differ) if differ or not names else "same", "warned": warned}
print(json.dumps(report))
"""


def test_old_paths_warn_and_still_import():
    """``streamnb.decision`` and the other paths of the flat layout: a DeprecationWarning that names the
    new path and the version that removes the old one, then the same objects as the new homes."""
    result = subprocess.run([sys.executable, "-c", _OLD_PATHS_CHECK, json.dumps(MOVED)], capture_output=True,
                            text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert set(report) == set(MOVED)
    imported = {old: verdict for old, verdict in report.items() if not isinstance(verdict, str)}
    assert {"decision", "mail", "cli"} <= set(imported)  # these need no optional extra
    for old, verdict in imported.items():
        assert verdict["objects"] == "same", old
        assert verdict["warned"] == [f"streamnb.{old} moved to streamnb.{MOVED[old]}; import it from there "
                                     f"(the old path goes in streamnb {_moved.REMOVED_IN})"], old
    for old in MOVED:
        assert len((PACKAGE / f"{old}.py").read_text(encoding="utf-8").splitlines()) <= 14, old


def test_from_streamnb_import_an_old_module_warns_at_the_caller():
    with pytest.warns(DeprecationWarning, match=r"streamnb\.decision moved to streamnb\.filter\.decision") as caught:
        vars(streamnb).pop("decision", None)  # as in a fresh interpreter: not yet an attribute
        from streamnb import decision
    assert decision is importlib.import_module("streamnb.filter.decision")
    assert caught[0].filename == __file__


@pytest.mark.filterwarnings("ignore:streamnb.* moved to:DeprecationWarning")
def test_documented_names_under_the_old_paths():
    from streamnb.decision import SpamFilter
    from streamnb.mail import EmailTokenizer
    from streamnb.text import Tokenizer
    from streamnb.weighting import QUANTUM_BITS, EmailWeights

    assert streamnb.SpamFilter is SpamFilter is importlib.import_module("streamnb.filter.decision").SpamFilter
    assert EmailTokenizer is streamnb.EmailTokenizer and Tokenizer is streamnb.Tokenizer
    assert EmailWeights is streamnb.EmailWeights and QUANTUM_BITS == 16
    assert "SpamFilter" in streamnb.__all__


def test_decision_re_exports_its_parts():
    """Each public name of ``streamnb.filter.decision`` is one of exactly one part's, the same object."""
    decision = importlib.import_module("streamnb.filter.decision")
    parts = {part: importlib.import_module(f"streamnb.filter.{part}") for part in DECISION_PARTS}
    homes = {name: [part for part, module in parts.items() if name in module.__all__] for name in decision.__all__}
    assert {name: where for name, where in homes.items() if len(where) != 1} == {}
    assert [name for name, (where,) in homes.items() if getattr(decision, name) is not getattr(parts[where], name)] == []
    assert len((PACKAGE / "filter" / "decision.py").read_text(encoding="utf-8").splitlines()) <= 40


@pytest.mark.parametrize("whole", sorted(SPLIT_PARTS))
def test_split_modules_re_export_their_parts(whole):
    """Each public name of a part is importable, the same object, from the module it left."""
    module = importlib.import_module(f"streamnb.{whole}")
    for part in SPLIT_PARTS[whole]:
        names = importlib.import_module(f"streamnb.{part}").__all__
        assert names and [name for name in names if getattr(module, name, None) is not
                          getattr(importlib.import_module(f"streamnb.{part}"), name)] == [], part
        if hasattr(module, "__all__"):
            assert {name for name in names if not name.startswith("_")} <= set(module.__all__), part


def test_saved_tokenizer_names_did_not_move():
    """A tokenizer's type name is part of the file format: the names of the flat layout."""
    from streamnb.persist import build_tokenizer, describe_tokenizer

    for tokenizer, name in [(streamnb.Tokenizer(), "streamnb.text.Tokenizer"),
                            (streamnb.EmailTokenizer(), "streamnb.mail.EmailTokenizer"),
                            (streamnb.EmailWeights(), "streamnb.weighting.EmailWeights"),
                            (streamnb.ByteNgrams(), "streamnb.ngrams.ByteNgrams")]:
        description = describe_tokenizer(tokenizer)
        assert description is not None and description["type"] == name
        assert type(build_tokenizer(description)) is type(tokenizer)


def test_the_superseded_pipeline_left_the_package():
    assert not (PACKAGE / "email_pipeline.py").exists()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("streamnb.email_pipeline")


@pytest.mark.parametrize("module", ["streamnb", "streamnb.cli", "streamnb.service.cli"])
def test_python_m_runs_the_command(module):
    result = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True, cwd=ROOT,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("streamnb ")


def test_discrete_nb_is_one_class_holding_its_learner():
    """``DiscreteNB`` by composition: one class (no mixins) whose counts change through the
    ``Learner`` it holds; what a model reads (``Document``, ``FeatureValues``) has one home,
    ``values.py``, which ``base.py`` does not re-export."""
    base = importlib.import_module("streamnb.models.base")
    values = importlib.import_module("streamnb.models.values")
    learning = importlib.import_module("streamnb.models.learning")
    assert [cls.__name__ for cls in base.DiscreteNB.__mro__] == ["DiscreteNB", "ABC", "object"]
    assert isinstance(streamnb.MultinomialNB()._learner, learning.Learner)
    assert "FeatureValues" not in vars(base) and "Document" not in getattr(base, "__all__", ())
    assert values.Document and values.FeatureValues


def test_models_check_parameters_in_validate():
    """No module of streamnb/models/ raises InvalidParameterError itself."""
    assert [path.name for path in (PACKAGE / "models").glob("*.py")
            if "raise InvalidParameterError" in path.read_text(encoding="utf-8")] == []


# The server and the command, split by concern (issue 29): each part and what it re-exports from.
SERVER_PARTS = ["protocol", "replies", "site", "userfiles", "users", "server"]
COMMAND_PARTS = ["cli_common", "cli_options", "cli_model", "cli_evaluate"]


def test_the_server_s_parts_never_import_the_command():
    graph = import_graph()
    for part in [*SERVER_PARTS, "serve"]:
        module = f"streamnb.service.{part}"
        assert module in graph, module
        assert not {target for target in graph[module] if target.startswith("streamnb.service.cli")}, module
    # the command reaches the server only when `streamnb serve` runs, through serve.py
    for part in COMMAND_PARTS:
        assert not set(graph[f"streamnb.service.{part}"]) & {f"streamnb.service.{p}" for p in [*SERVER_PARTS, "serve"]}


@pytest.mark.parametrize("facade, parts", [("serve", SERVER_PARTS), ("cli", COMMAND_PARTS)])
def test_serve_and_cli_re_export_their_parts(facade, parts):
    """``streamnb.service.serve.X`` and ``streamnb.service.cli.X``: the same objects as in the parts."""
    module = importlib.import_module(f"streamnb.service.{facade}")
    homes = [importlib.import_module(f"streamnb.service.{part}") for part in parts]
    for part in homes:
        public = [name for name, value in vars(part).items() if not name.startswith("_")
                  and getattr(value, "__module__", None) == part.__name__]
        assert [name for name in public if name not in module.__all__] == [], part.__name__
        assert [name for name in public if getattr(module, name) is not getattr(part, name)] == [], part.__name__
    assert all(hasattr(module, name) for name in module.__all__)


def rust_module_imports() -> dict[str, set[str]]:
    """The crate's top modules (src/<name>.rs or src/<name>/) and the others each names
    (``crate::x`` in a ``use`` or a path; test modules and the Python bindings left out:
    the bindings sit on top of everything)."""
    src = ROOT / "src"
    modules: dict[str, set[str]] = {}
    for path in src.rglob("*.rs"):
        parts = path.relative_to(src).with_suffix("").parts
        name = parts[0]
        if name in ("lib", "python") or parts[-1] == "tests":
            continue
        text = path.read_text(encoding="utf-8").split("#[cfg(test)]")[0]
        used = set(re.findall(r"\bcrate::(\w+)", text))
        modules.setdefault(name, set()).update(used - {name})
    return modules


def test_the_crate_s_modules_import_without_loops():
    graph = rust_module_imports()
    assert {"nb", "store", "vocab", "space", "smoothing"} <= graph.keys()
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path + [node, nxt]
            if nxt not in state and (loop := visit(nxt, path + [node])):
                return loop
        state[node] = 2
        return None

    loops = [loop for node in sorted(graph) if node not in state and (loop := visit(node, []))]
    assert loops == []
