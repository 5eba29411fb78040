"""Deferred package `__init__`s (providers/lazy_packages.py): what loads, and that the
packages look the same to code that uses them. Each case runs in a fresh interpreter,
since the point is what an import leaves in `sys.modules`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from wyckoff_cli.providers.lazy_packages import _line_exports, _parsed_exports, re_exports
from wyckoff_cli.testing.fake_server import FakeServer


def _python(code: str, *, path: Path | None = None, env: dict[str, str] | None = None) -> str:
    environment = {**os.environ, **(env or {})}
    if path is not None:
        environment["PYTHONPATH"] = os.pathsep.join([str(path), environment.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """`toy` (an `__init__` that does work), `toy.pure` (re-exports only, 3 submodules),
    `toy.busy` (re-exports and a statement)."""
    root = tmp_path / "toy"
    (root / "pure").mkdir(parents=True)
    (root / "busy").mkdir()
    (root / "__init__.py").write_text("from .pure.one import One as One\nSTARTED = True\n")
    (root / "pure" / "__init__.py").write_text(
        '"""Re-exports."""\nfrom __future__ import annotations\n'
        "from .one import One as One\nfrom .two import Two as Two\nfrom .three import Three\n"
        '__all__ = ["One", "Two", "Three"]\n'
    )
    for name in ("one", "two", "three"):
        (root / "pure" / f"{name}.py").write_text(f"class {name.title()}:\n    pass\n")
    (root / "busy" / "__init__.py").write_text("from .four import Four as Four\nREADY = Four()\n")
    (root / "busy" / "four.py").write_text("class Four:\n    pass\n")
    return tmp_path


@pytest.mark.parametrize(
    ("source", "pure"),
    [
        ("from .a import A as A\nfrom .b import B\n", True),
        ('"""doc"""\nfrom __future__ import annotations\nfrom .a import A\n__all__ = ["A"]\n', True),
        ("from .a import A\nA.rebuild()\n", False),  # a statement that does work
        ("from .a import *\n", False),  # a star import: its names are unknown
        ("import os\nfrom .a import A\n", False),
        ("from ..up import A\n", False),  # not one of its own submodules
        ("from .a import A\n__all__ = names()\n", False),  # `__all__` not a literal
        ("try:\n    from .a import A\nexcept ImportError:\n    A = None\n", False),
    ],
)
def test_only_an_init_of_re_exports_is_read_as_one(source: str, pure: bool) -> None:
    assert (re_exports(source) is not None) is pure


@pytest.mark.parametrize(
    ("source", "read_by_lines"),
    [
        (
            "# generated\n\nfrom __future__ import annotations\n\nfrom .a import A as A\nfrom .b.c import C\n",
            True,
        ),
        ("from .a import A as A \t\r\nfrom .b import B\rfrom .c import C\n", True),  # Python's line breaks
        ("from .a import A as A  # noqa\n", False),  # a comment after the import
        ("from .a import (\n    A as A,\n\n    B\n)\nfrom .c import C\n", True),  # over several lines
        ("from .a import (\n    A as A,\n    B,\n)\n", True),
        ("from .a import (\n    A\n    B\n)\n", False),  # no comma between: not Python
        ("from .a import (\n)\n", False),  # nothing imported: not Python
        ("from .a import (\n    A,  # first\n)\n", False),  # a comment inside
        ("from .a import (\n    A,\n", False),  # never closed
        ("from .a import (\nA,\n)\n", False),  # at the margin inside (Python allows it)
        ("from .a import (\n    A,\n    )\n", False),
        ("from .a import (\n    if,\n)\n", False),
        ('"""doc"""\nfrom .a import A\n', False),
        ('from .a import A\n__all__ = ["A"]\n', False),
        ("    from .a import A\n", False),  # indented: not Python
        ("from .class import A\n", False),  # a keyword: not Python
        ("from .a import A as None\n", False),
        ("from .a import A\x1cfrom .b import B\n", False),  # a character Python rejects
        ("from .a import A\x0cfrom .b import B\n", False),
        ("from .é import A\n", False),  # names the parser normalises
        ("from .a import A; B = 1\n", False),
        ("from . import a\n", False),
        ("from .a import *\n", False),
        ("from __future__ import annotations, division\n", True),
    ],
)
def test_an_init_read_line_by_line_reads_as_the_parser_reads_it(source: str, read_by_lines: bool) -> None:
    def answer(read: Callable[[str], object]) -> object:
        try:
            return read(source)
        except SyntaxError:
            return "not Python"

    fast = _line_exports(source)
    assert (fast is not None) is read_by_lines
    assert answer(re_exports) == answer(_parsed_exports)  # the parser's answer, either way
    if fast is not None:
        assert fast == _parsed_exports(source)


def test_every_installed_sdk_init_reads_the_same_line_by_line_as_parsed() -> None:
    """The line reader answers for the SDKs' generated `__init__`s (where the time went)
    and, wherever it answers, as the parser does, over every package of the SDKs and
    their dependencies."""
    import importlib.util

    roots = []
    for name in ("anthropic", "openai", "google.genai", "pydantic", "httpx2", "textual", "mcp"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            roots.extend(Path(location) for location in spec.submodule_search_locations)
    answered = compared = 0
    for init in sorted(init for root in roots for init in root.rglob("__init__.py")):
        source = init.read_text(encoding="utf-8")
        fast = _line_exports(source)
        compared += 1
        if fast is not None:
            answered += 1
            assert fast == _parsed_exports(source), init
    assert compared > 100
    spec = importlib.util.find_spec("anthropic")
    assert spec is not None and spec.origin is not None
    beta = Path(spec.origin).parent / "types" / "beta" / "__init__.py"
    read = _line_exports(beta.read_text(encoding="utf-8"))
    assert read is not None and len(read[0]) > 1_000
    assert answered > 20


def test_a_re_exporting_package_loads_only_the_submodule_a_name_is_taken_from(toy: Path) -> None:
    out = _python(
        """
        import json, sys
        from wyckoff_cli.providers.lazy_packages import defer_package_inits
        defer_package_inits(prefixes=["toy."])
        import toy.pure.two
        first = sorted(m for m in sys.modules if m.startswith("toy"))
        from toy.pure import One
        second = sorted(m for m in sys.modules if m.startswith("toy"))
        import toy.pure as pure
        same = pure.One is One and pure.two.Two is pure.Two and pure.__all__ == ["One", "Two", "Three"]
        try:
            pure.Missing
            missing = "no error"
        except AttributeError as exc:
            missing = str(exc)
        print(json.dumps([first, second, same, missing]))
        """,
        path=toy,
    )
    first, second, same, missing = json.loads(out)
    # `toy` itself is not deferred (not under the prefix): its __init__ imported toy.pure.one
    assert first == ["toy", "toy.pure", "toy.pure.one", "toy.pure.two"]
    assert "toy.pure.three" not in second
    assert same is True
    assert missing == "module 'toy.pure' has no attribute 'Missing'"


def test_a_star_import_and_a_submodule_by_from_import_see_the_whole_package(toy: Path) -> None:
    out = _python(
        """
        import json, sys
        from wyckoff_cli.providers.lazy_packages import defer_package_inits
        defer_package_inits(prefixes=["toy."])
        from toy.pure import three
        from toy.pure import *
        print(json.dumps([three.Three is Three, One.__name__, Two.__name__]))
        """,
        path=toy,
    )
    assert json.loads(out) == [True, "One", "Two"]


def test_an_init_that_does_work_runs_as_usual_under_a_prefix_and_whole_when_named(toy: Path) -> None:
    out = _python(
        """
        import json, sys
        from wyckoff_cli.providers.lazy_packages import defer_package_inits
        defer_package_inits(names=["toy"], prefixes=["toy."])
        import toy.busy
        busy_ran = hasattr(sys.modules["toy.busy"], "READY") and "__getattr__" not in vars(sys.modules["toy.busy"])
        top_deferred = "STARTED" not in vars(sys.modules["toy"])
        import toy
        started = toy.STARTED  # any name of its own runs its whole __init__, once
        print(json.dumps([busy_ran, top_deferred, started, "__getattr__" in vars(toy)]))
        """,
        path=toy,
    )
    assert json.loads(out) == [True, True, True, False]


def test_the_anthropic_client_loads_without_the_sdks_type_tree() -> None:
    out = _python(
        """
        import json, sys
        from wyckoff_cli.providers.lazy_packages import import_anthropic_client
        client = import_anthropic_client().AsyncAnthropic(api_key="k")
        client.messages.with_streaming_response.create
        lean = len([m for m in sys.modules if m.startswith("anthropic")])
        beta_init_ran = "__getattr__" not in vars(sys.modules["anthropic.types.beta"])
        resources_beta = "anthropic.resources.beta" in sys.modules
        import anthropic  # a user of the whole SDK still gets all of it
        whole = [anthropic.AsyncAnthropic is type(client), anthropic.AnthropicVertex.__name__,
                 anthropic.types.beta.BetaMessage.__name__, anthropic.APIStatusError.__name__]
        from anthropic.resources import *
        print(json.dumps([lean, beta_init_ran, resources_beta, whole, Messages.__name__]))
        """
    )
    lean, beta_init_ran, resources_beta, whole, messages = json.loads(out)
    assert lean < 1_600  # the whole SDK is ~3,160 modules
    assert beta_init_ran is False
    assert resources_beta is False
    assert whole == [True, "AnthropicVertex", "BetaMessage", "APIStatusError"]
    assert messages == "Messages"


def _two_calls(server: FakeServer, vendor: str, model: str, then: str) -> str:
    """A script (for `_python`) that makes `vendor`'s provider in a fresh process and
    streams two calls through it against `server` (`text`: the first answer; `error`:
    the class of the second call's `ProviderError`, "none" without one), then runs
    `then`."""
    base_url = server.openai_url if vendor.startswith("openai") else server.url
    return textwrap.dedent(
        f"""
        import asyncio, json, sys
        from wyckoff_cli.core.errors import ProviderError
        from wyckoff_cli.core.messages import Message
        from wyckoff_cli.providers.base import TextChunk
        from wyckoff_cli.providers.factory import build_provider
        from wyckoff_cli.providers.spec import ModelSpec

        async def main():
            provider = build_provider(ModelSpec({vendor!r}, {model!r}, api_key="k",
                                                base_url={base_url!r}), retry=None)
            text = ""
            async for chunk in provider.chat_stream([Message.user("hi")], [], ""):
                text += chunk.text if isinstance(chunk, TextChunk) else ""
            try:
                async for _ in provider.chat_stream([Message.user("again")], [], ""):
                    pass
                error = "none"
            except ProviderError as exc:
                error = type(exc).__name__
            await provider.aclose()
            return text, error

        text, error = asyncio.run(main())
        """
    ) + textwrap.dedent(then)


def test_a_request_and_an_api_error_go_through_the_deferred_sdk(server: FakeServer) -> None:
    server.script({"text": "Hello through the lean SDK."}, {"status": 401, "error_message": "bad key"})
    out = _python(
        _two_calls(
            server,
            "anthropic",
            "claude-sonnet-4-5",
            """
            print(json.dumps([text, error, "__getattr__" in vars(sys.modules["anthropic"])]))
            """,
        )
    )
    text, error, deferred = json.loads(out)
    assert text == "Hello through the lean SDK."
    assert error == "AuthenticationFailed"
    assert deferred is True  # the SDK's top __init__ never had to run


def test_threads_taking_names_and_running_the_init_at_once_see_one_package(toy: Path) -> None:
    out = _python(
        """
        import json, sys, threading
        from wyckoff_cli.providers.lazy_packages import defer_package_inits
        defer_package_inits(names=["toy"], prefixes=["toy."])
        import toy, toy.pure
        seen, start = [], threading.Barrier(12)

        def take(name):
            start.wait()
            module = toy if name == "STARTED" else toy.pure
            seen.append((name, getattr(module, name)))

        names = ["One", "Two", "Three", "STARTED"] * 3
        threads = [threading.Thread(target=take, args=(n,)) for n in names]
        for t in threads: t.start()
        for t in threads: t.join()
        from toy.pure.one import One
        from toy.pure.two import Two
        from toy.pure.three import Three
        same = all(v is {"One": One, "Two": Two, "Three": Three, "STARTED": True}[n] for n, v in seen)
        print(json.dumps([len(seen), same]))
        """,
        path=toy,
    )
    assert json.loads(out) == [12, True]


def test_the_openai_client_loads_without_the_sdks_whole_tree(server: FakeServer) -> None:
    server.script({"text": "Hello through the lean OpenAI SDK."}, {"status": 429})
    out = _python(
        _two_calls(
            server,
            "openai",
            "gpt-4.1",
            """
            lean = len([m for m in sys.modules if m.startswith("openai")])
            deferred = "__getattr__" in vars(sys.modules["openai"])
            responses = "openai.resources.responses.responses" in sys.modules
            import openai  # a user of the whole SDK still gets all of it
            whole = [openai.api_key is None, openai.AsyncOpenAI.__name__, openai.types.responses.Response.__name__]
            print(json.dumps([text, error, lean, deferred, responses, whole]))
            """,
        )
    )
    text, error, lean, deferred, responses, whole = json.loads(out)
    assert text == "Hello through the lean OpenAI SDK."
    assert error == "RateLimited"
    assert lean < 400  # ~700 for the whole SDK
    assert deferred is True  # the SDK's top __init__ never had to run
    assert responses is False
    assert whole == [True, "AsyncOpenAI", "Response"]
