"""Defer the `__init__` of an SDK's big sub-packages until a name of theirs is used.

`import anthropic` imports its whole type tree: the package's `__init__` reaches
`anthropic.types.beta` (1,900 modules) and `anthropic.types.organization` through one
error-details model each, and its Vertex/Bedrock helpers import `anthropic.resources`,
whose `__init__` imports every resource. Wyckoff's requests use none of that, yet each
process paid ~45 MB for it (docs/PERFORMANCE.md, background sessions).

`defer_package_inits(names)` installs an import finder for exactly those package
names: when one is imported its module object is made as usual (`__path__`, `__spec__`)
but its `__init__` does not run, so importing one of its submodules
(`anthropic.types.beta.beta_invalid_metadata_error_details`) loads that submodule
only. The first time any other name is looked up on the package (`from
anthropic.resources import Beta`, `anthropic.resources.beta`, a star import's
`__all__`), its real `__init__` runs, once, under a lock, and the lookup is answered
from it, so code that uses those names sees the package exactly as it would have
been. Nothing changes for a package that is already imported.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import keyword
import re
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

_lock = threading.RLock()

ANTHROPIC_DEFERRED = ("anthropic",)
"""The SDK's top package: its `__init__` imports everything (every resource, every
type, the Vertex, Bedrock, AWS and Foundry clients)."""
OPENAI_DEFERRED = ("openai",)
"""The OpenAI SDK's top package: its `__init__` imports every resource and type (the
Responses, Realtime, Assistants APIs: ~700 modules where a chat completion needs ~280)."""
OPENAI_PREFIXES = ("openai.",)
ANTHROPIC_PREFIXES = ("anthropic.",)
"""Its sub-packages, `anthropic.types`, `anthropic.types.beta` (1,900 modules) and the
others: their `__init__` files only re-export their submodules' names."""


Exports = tuple[dict[str, tuple[str, str]], list[str] | None]
"""`{name: (submodule, its name there)}` and the literal `__all__` (None without one)."""

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ONE_LINE_EXPORT = re.compile(
    rf"from \.({_NAME}(?:\.{_NAME})*) import ({_NAME})(?: as ({_NAME}))?[ \t]*", re.ASCII
)
_OPEN = re.compile(rf"from \.({_NAME}(?:\.{_NAME})*) import \([ \t]*", re.ASCII)
_INNER = re.compile(rf"[ \t]+({_NAME})(?: as ({_NAME}))?(,?)[ \t]*", re.ASCII)
_CLOSE = re.compile(r"\)[ \t]*")
_KEYWORDS = frozenset(keyword.kwlist)
_LINE_BREAK = re.compile(r"\r\n?|\n")
_FUTURE = re.compile(rf"from __future__ import {_NAME}(?:, {_NAME})*[ \t]*", re.ASCII)


def re_exports(source: str) -> Exports | None:
    """`{name: (submodule, its name there)}` and `__all__` of an `__init__` made only of
    `from .sub import Name as Name` lines (and `from __future__`, a docstring, a literal
    `__all__`); None for any other `__init__`, which then runs whole when first used."""
    simple = _line_exports(source)
    return simple if simple is not None else _parsed_exports(source)


def _line_exports(source: str) -> Exports | None:
    """`re_exports` of the common case read line by line, as generated SDK `__init__`s
    are written (the Anthropic SDK's beta types package holds ~2,000 re-exports; parsing
    it took 10-20 ms, and it was parsed twice): every line blank, a comment at the margin,
    a `from __future__` import, or `from .sub import Name [as Other]` at the margin, on one
    line or as `from .sub import (` with one `Name [as Other],` a line and `)` alone.
    None for anything else (a docstring, `__all__`, a comment inside the parentheses, a
    keyword as a name), which the parser then reads: where this answers, it answers as
    the parser does."""
    exports: dict[str, tuple[str, str]] = {}
    submodule: str | None = None  # inside `from .submodule import (`
    names: list[tuple[str, str | None, bool]] = []  # (name, alias, followed by a comma)
    lines = source.split("\n") if "\r" not in source else _LINE_BREAK.split(source)
    for line in lines:  # at Python's own line breaks, not str.splitlines()'s
        if submodule is not None:
            if _CLOSE.fullmatch(line):
                if not names or not all(comma for _name, _alias, comma in names[:-1]):
                    return None
                for name, alias, _comma in names:
                    if not _exported(exports, submodule, name, alias):
                        return None
                submodule, names = None, []
            elif line and not line.isspace():
                inner = _INNER.fullmatch(line)
                if inner is None:
                    return None
                names.append((inner[1], inner[2], bool(inner[3])))
            continue
        if not line or line.isspace() or line.startswith("#"):
            continue
        if (export := _ONE_LINE_EXPORT.fullmatch(line)) is not None:
            if not _exported(exports, export[1], export[2], export[3]):
                return None
        elif (opening := _OPEN.fullmatch(line)) is not None:
            submodule = opening[1]
        elif _FUTURE.fullmatch(line) is None:
            return None
    return (exports, None) if submodule is None else None


def _exported(exports: dict[str, tuple[str, str]], submodule: str, name: str, alias: str | None) -> bool:
    """Record one re-export; False for a keyword among the names (not Python)."""
    if not _KEYWORDS.isdisjoint((name, alias, *submodule.split("."))):
        return False
    exports[alias or name] = (submodule, name)
    return True


def _parsed_exports(source: str) -> Exports | None:
    exports: dict[str, tuple[str, str]] = {}
    names: list[str] | None = None
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
            continue
        if isinstance(statement, ast.ImportFrom) and statement.level == 1 and statement.module:
            if any(alias.name == "*" for alias in statement.names):
                return None
            for alias in statement.names:
                exports[alias.asname or alias.name] = (statement.module, alias.name)
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        elif (
            isinstance(statement, ast.Assign)
            and [ast.unparse(t) for t in statement.targets] == ["__all__"]
            and isinstance(statement.value, ast.List | ast.Tuple)
        ):
            names = [str(item) for item in ast.literal_eval(statement.value)]
        else:
            return None
    return exports, names


def _read_exports(origin: str | None) -> Exports | None:
    """`re_exports` of the `__init__` file at `origin`; None when it cannot be read."""
    if not origin:
        return None
    try:
        return re_exports(Path(origin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None


def _is_submodule(package: ModuleType, name: str) -> bool:
    """`name` is a module of `package` (`from package import name` imports it)."""
    if name.startswith("__"):
        return False
    path = getattr(package, "__path__", None)
    return (
        path is not None
        and importlib.machinery.PathFinder.find_spec(f"{package.__name__}.{name}", path) is not None
    )


class _DeferredInit(importlib.abc.Loader):
    """Wraps a package's loader: `exec_module` installs a module `__getattr__` instead of
    running the `__init__`. A name the `__init__` re-exports from a submodule is taken
    from that submodule alone; any other name runs the whole `__init__` first."""

    def __init__(self, loader: importlib.abc.Loader, found: Exports | None = None) -> None:
        self.loader = loader
        self.found = found  # the `__init__`'s re-exports when the finder has read them

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        loader = self.loader
        found = self.found
        if found is None and module.__spec__ is not None:
            found = _read_exports(module.__spec__.origin)
        exports, exported = found if found is not None else ({}, None)

        init_lock = threading.RLock()
        state: dict[str, Any] = {"done": False, "running": None}  # `running`: the thread running it

        def run_init() -> None:
            """Once. Another thread that comes meanwhile waits for it (the lazy `__getattr__`
            stays until the `__init__` has run, so no lookup sees the package half-made);
            the thread running it gets the usual answers of a package being initialised."""
            with init_lock:
                if state["done"] or state["running"] == threading.get_ident():
                    return
                state["running"] = threading.get_ident()
                try:
                    module.__loader__ = loader
                    if module.__spec__ is not None:
                        module.__spec__.loader = loader
                    loader.exec_module(module)
                finally:
                    state["running"], state["done"] = None, True
                    if module.__dict__.get("__getattr__") is lazy_getattr:  # not the package's own
                        del module.__dict__["__getattr__"]

        def lazy_getattr(name: str) -> Any:
            # no lock here: a submodule's import has the import system's own locks, and
            # two threads resolving one name set the same value
            if name in module.__dict__:
                return module.__dict__[name]
            if not state["done"]:
                if name == "__all__" and exported is not None:
                    return module.__dict__.setdefault("__all__", list(exported))
                if _is_submodule(module, name):
                    return importlib.import_module(f"{module.__name__}.{name}")
                if name in exports:
                    submodule, original = exports[name]
                    value = getattr(importlib.import_module(f"{module.__name__}.{submodule}"), original)
                    return module.__dict__.setdefault(name, value)
            run_init()  # also when another thread runs it now: wait for it, then look again
            try:
                return module.__dict__[name]
            except KeyError:
                hook = module.__dict__.get("__getattr__")
                if hook is not None and hook is not lazy_getattr:
                    return hook(name)
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None

        module.__getattr__ = lazy_getattr  # type: ignore[method-assign]


class _DeferringFinder(importlib.abc.MetaPathFinder):
    """Defers the `__init__` of the packages named exactly (whatever it holds) and of
    the packages under a prefix whose `__init__` only re-exports (others run as usual)."""

    def __init__(self, names: Iterable[str], prefixes: Iterable[str]) -> None:
        self.names = frozenset(names)
        self.prefixes = tuple(prefixes)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        exact = fullname in self.names
        if not exact and not fullname.startswith(self.prefixes):
            return None
        spec = self._find_after(fullname, path, target)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return spec  # a plain module, or not on the file system: imported as it is
        found = None
        if not exact:
            found = _read_exports(spec.origin)
            if found is None:
                return spec
        spec.loader = _DeferredInit(spec.loader, found)
        return spec

    def _find_after(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec the finders after this one give (the file system's, usually): what
        the module would have been found as without it."""
        finders = list(sys.meta_path)
        after = finders[finders.index(self) + 1 :] if self in finders else finders
        for finder in after:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if isinstance(spec, importlib.machinery.ModuleSpec):
                return spec
        return None


_installed: set[str] = set()


def defer_package_inits(names: Iterable[str] = (), prefixes: Iterable[str] = ()) -> None:
    """Install (once per name or prefix) the finder that defers these packages' `__init__`:
    `names` whatever their `__init__` holds, the packages under `prefixes` (`"anthropic."`)
    whose `__init__` only re-exports names of their submodules."""
    with _lock:
        exact = [name for name in names if name not in _installed and name not in sys.modules]
        under = [prefix for prefix in prefixes if prefix not in _installed]
        if not exact and not under:
            return
        _installed.update(exact + under)
        sys.meta_path.insert(0, _DeferringFinder(exact, under))


def defer_anthropic_sdk() -> None:
    """Import the Anthropic SDK by the modules Wyckoff uses (`anthropic._client`,
    `anthropic._exceptions`): its top `__init__` runs only if a name of it is used, and
    its re-exporting packages load only the submodules that are used."""
    defer_package_inits(ANTHROPIC_DEFERRED, ANTHROPIC_PREFIXES)


def import_anthropic_client() -> ModuleType:
    """`anthropic._client` (`AsyncAnthropic`), the SDK's packages deferred first. The
    one thing the SDK's `__init__` does besides importing, its `ANTHROPIC_LOG` set-up,
    is done here (once, as the `__init__` would: it only sets logger levels)."""
    defer_anthropic_sdk()
    client = importlib.import_module("anthropic._client")
    if "anthropic" in sys.modules and "__getattr__" in vars(sys.modules["anthropic"]):
        importlib.import_module("anthropic._utils._logs").setup_logging()
    return client


def import_openai_client() -> ModuleType:
    """`openai._client` (`AsyncOpenAI`), the SDK's packages deferred first: a resource
    imports its own module and types on first use (`client.chat`, `client.responses`).
    The one thing the SDK's `__init__` does besides importing and declaring its module
    client, its `OPENAI_LOG` set-up, is done here (once, as the `__init__` would); should
    a name of the package itself be used (`openai.api_key`), its `__init__` runs then."""
    defer_package_inits(OPENAI_DEFERRED, OPENAI_PREFIXES)
    client = importlib.import_module("openai._client")
    with _lock:
        if "openai" in sys.modules and "__getattr__" in vars(sys.modules["openai"]) and not _openai_logs:
            importlib.import_module("openai._utils._logs").setup_logging()
            _openai_logs.append(True)
    return client


_openai_logs: list[bool] = []
