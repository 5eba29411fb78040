"""grep through the rg binary and through the pure-Python fallback: same results."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tools.conftest import run_tool, write
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.search import find_rg, grep, make_grep_tool

FALLBACK_NOTE = "searched without ripgrep"

TOOLS = {"rg": make_grep_tool(find_rg), "python": make_grep_tool(lambda: None)}


@pytest.fixture(params=["rg", "python"])
def tool(request: pytest.FixtureRequest) -> Tool:
    return TOOLS[request.param]


@pytest.fixture
def tree(root: Path) -> Path:
    write(root, ".gitignore", "build/\n*.log\n")
    write(root, ".wyckoff/ignore", "vendor/\n")
    write(root, "src/app.py", "import os\n\ndef main():\n    print('hello world')\n    return 0\n")
    write(root, "src/util.py", "def helper():\n    return 'Hello'\n")
    write(root, "src/web/page.ts", "const hello = 1;\nexport { hello };\n")
    write(root, "docs/guide.md", "# Guide\nSay hello.\n")
    write(root, ".github/workflow.yml", "name: hello ci\n")
    write(root, "build/gen.py", "hello = 'generated'\n")
    write(root, "debug.log", "hello log\n")
    write(root, "vendor/lib.py", "hello = 'vendored'\n")
    write(root, ".git/config", "hello git\n")
    write(root, "dossier été/note 1.txt", "hello unicode\n")
    (root / "data.bin").write_bytes(b"hello\x00binary")
    return root


def body(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if FALLBACK_NOTE not in line)


async def test_the_default_tool_uses_rg(tree: Path, ctx: ToolContext) -> None:
    assert find_rg() is not None
    text = (await run_tool(grep, ctx, pattern="hello")).text
    assert FALLBACK_NOTE not in text


async def test_fallback_says_so(tree: Path, ctx: ToolContext) -> None:
    text = (await run_tool(TOOLS["python"], ctx, pattern="hello")).text
    assert FALLBACK_NOTE in text


async def test_files_mode_respects_ignores(tool: Tool, tree: Path, ctx: ToolContext) -> None:
    text = body((await run_tool(tool, ctx, pattern="hello", output="files")).text)
    assert text.splitlines() == [
        "5 files match 'hello' (sorted by path):",
        ".github/workflow.yml",
        "docs/guide.md",
        "dossier été/note 1.txt",
        "src/app.py",
        "src/web/page.ts",
    ]


async def test_content_mode_with_context(tool: Tool, tree: Path, ctx: ToolContext) -> None:
    text = body((await run_tool(tool, ctx, pattern="print|return", path="src", context=1)).text)
    assert text.splitlines() == [
        "3 matching lines in 2 files:",
        "",
        "src/app.py",
        "3-def main():",
        "4:    print('hello world')",
        "5:    return 0",
        "",
        "src/util.py",
        "1-def helper():",
        "2:    return 'Hello'",
    ]


async def test_context_separators(tool: Tool, root: Path, ctx: ToolContext) -> None:
    write(root, "a.txt", "".join(f"{'match' if i in (1, 10) else 'line'} {i}\n" for i in range(1, 13)))
    text = body((await run_tool(tool, ctx, pattern="match", context=1)).text)
    assert text.splitlines()[2:] == [
        "a.txt",
        "1:match 1",
        "2-line 2",
        "--",
        "9-line 9",
        "10:match 10",
        "11-line 11",
    ]


async def test_count_mode(tool: Tool, tree: Path, ctx: ToolContext) -> None:
    text = body((await run_tool(tool, ctx, pattern="hello", output="count", case="insensitive")).text)
    assert text.splitlines() == [
        "7 matching lines in 6 files:",
        ".github/workflow.yml: 1",
        "docs/guide.md: 1",
        "dossier été/note 1.txt: 1",
        "src/app.py: 1",
        "src/util.py: 1",
        "src/web/page.ts: 2",
    ]


@pytest.mark.parametrize(
    ("case", "files"),
    [
        ("sensitive", ["src/util.py"]),
        ("insensitive", ["src/app.py", "src/util.py", "src/web/page.ts"]),
        ("smart", ["src/util.py"]),
    ],
)
async def test_case_modes(tool: Tool, tree: Path, ctx: ToolContext, case: str, files: list[str]) -> None:
    text = body((await run_tool(tool, ctx, pattern="Hello", path="src", case=case, output="files")).text)
    assert text.splitlines()[1:] == files
    smart_lower = body(
        (await run_tool(tool, ctx, pattern="hello", path="src", case="smart", output="files")).text
    )
    assert "src/util.py" in smart_lower


@pytest.mark.parametrize(
    ("glob", "files"),
    [
        ("*.py", ["src/app.py"]),
        ("*.{ts,md}", ["docs/guide.md", "src/web/page.ts"]),
        ("!*.py", [".github/workflow.yml", "docs/guide.md", "dossier été/note 1.txt", "src/web/page.ts"]),
        ("!src", [".github/workflow.yml", "docs/guide.md", "dossier été/note 1.txt"]),
    ],
)
async def test_glob_filter(tool: Tool, tree: Path, ctx: ToolContext, glob: str, files: list[str]) -> None:
    text = body((await run_tool(tool, ctx, pattern="hello", glob=glob, output="files")).text)
    assert text.splitlines()[1:] == files


async def test_explicit_ignored_file_is_searched(tool: Tool, tree: Path, ctx: ToolContext) -> None:
    text = body((await run_tool(tool, ctx, pattern="generated", path="build/gen.py")).text)
    assert "build/gen.py" in text and "1:hello = 'generated'" in text


async def test_no_match_and_bad_regex(tool: Tool, tree: Path, ctx: ToolContext) -> None:
    assert "No matches for 'zzz_nothing'" in (await run_tool(tool, ctx, pattern="zzz_nothing")).text
    with pytest.raises(ToolError, match="(?i)regex|regular expression"):
        await run_tool(tool, ctx, pattern="(unclosed")


async def test_pattern_starting_with_dash(tool: Tool, root: Path, ctx: ToolContext) -> None:
    write(root, "flags.txt", "use --verbose here\n")
    assert "1:use --verbose here" in (await run_tool(tool, ctx, pattern="--verbose")).text


async def test_output_is_capped_and_counted(tool: Tool, root: Path, ctx: ToolContext) -> None:
    for i in range(40):
        write(root, f"f{i:02d}.txt", "".join(f"needle {j} " + "x" * 60 + "\n" for j in range(20)))
    text = (await run_tool(tool, ctx, pattern="needle")).text
    assert len(text) < 7_500
    assert text.startswith("800 matching lines in 40 files:")
    assert "more matching lines in" in text and "more files not shown" in text


async def test_outside_path_refused_unless_approved(tool: Tool, ctx: ToolContext, outside: Path) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        await run_tool(tool, ctx, pattern="secret", path=str(outside))
    ctx.approved_outside_paths = frozenset({outside})
    text = body((await run_tool(tool, ctx, pattern="secret", path=str(outside))).text)
    assert f"{outside}/secret.txt" in text and "1:top secret" in text


async def test_missing_path(tool: Tool, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        await run_tool(tool, ctx, pattern="x", path="nope")


async def test_binary_that_cannot_run_falls_back(tree: Path, ctx: ToolContext, tmp_path: Path) -> None:
    broken = tmp_path / "rg"
    broken.write_bytes(b"\x7fELF not really a program")
    broken.chmod(0o755)
    tool = make_grep_tool(lambda: str(broken))
    text = (await run_tool(tool, ctx, pattern="hello", output="files")).text
    assert FALLBACK_NOTE in text and "src/app.py" in text


async def test_rg_and_fallback_agree_on_a_generated_tree(root: Path, ctx: ToolContext) -> None:
    write(root, ".gitignore", "skip/\n")
    for i in range(60):
        lines = [
            f"row {j} value {(i * j) % 7} {'TODO fix' if (i + j) % 11 == 0 else ''}".rstrip()
            for j in range(30)
        ]
        write(root, f"pkg{i % 6}/mod_{i}.py", "\n".join(lines) + "\n")
        write(root, f"skip/mod_{i}.py", "TODO hidden\n")
    os.symlink(root / "pkg0", root / "pkg_link")
    for args in (
        {"pattern": "TODO", "context": 2},
        {"pattern": r"value \d"},
        {"pattern": r"value [36]$", "output": "count"},
        {"pattern": "todo", "case": "insensitive", "output": "files", "glob": "mod_1*.py"},
    ):
        texts = [body((await run_tool(TOOLS[name], ctx, **args)).text) for name in ("rg", "python")]
        assert texts[0] == texts[1], args
