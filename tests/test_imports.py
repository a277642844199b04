"""The project's modules import each other without a circle, and the app never imports the consumer."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("shop", "schemas", "tasks")


def project_modules() -> dict[str, Path]:
    """Every module of the project by dotted name (a package by its own name)."""
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imports_of(path: Path, modules: dict) -> set[str]:
    """The project modules a file imports anywhere in it (function-local imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in modules else node.module)
    return {name for name in found if name in modules}


def import_graph() -> dict[str, set[str]]:
    """Each project module and the project modules it imports."""
    modules = project_modules()
    return {name: imports_of(path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a path of module names, or None."""
    state, stack = {}, []

    def visit(name):
        state[name] = "open"
        stack.append(name)
        for target in sorted(graph.get(name, ())):
            if state.get(target) == "open":
                return stack[stack.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[name] = "done"
        return None

    for name in sorted(graph):
        if name not in state and (cycle := visit(name)):
            return cycle
    return None


def test_no_module_imports_itself_back_through_others():
    assert find_cycle(import_graph()) is None


def test_the_walk_sees_function_local_imports():
    graph = import_graph()
    assert "tasks.messages" in graph["tasks.worker"]  # imported inside resume_unfinished_work()
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_app_never_imports_the_consumer():
    importers = [
        name
        for name, targets in import_graph().items()
        if name.split(".")[0] == "shop" and any(t.split(".")[0] == "tasks" for t in targets)
    ]
    assert importers == []


def test_schemas_import_no_domain_module():
    """Parse at the edges: the domain may dump a schema (event payloads), a schema never reads the domain."""
    importers = {
        name: sorted(t for t in targets if t.startswith("shop.domain"))
        for name, targets in import_graph().items()
        if name.split(".")[0] == "schemas"
    }
    assert {name: targets for name, targets in importers.items() if targets} == {}
    assert "schemas.webhooks" in importers and "shop.models.events" in import_graph()["schemas.webhooks"]
