"""AGENTS.md / WYCKOFF.md discovery, order, headings and the size cap."""

from __future__ import annotations

from pathlib import Path

from wyckoff_cli.context.instructions import discover_instruction_files, load_project_instructions


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_files_are_read_from_the_root_down_to_cwd_then_the_user_file(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    cwd = root / "pkg" / "sub"
    cwd.mkdir(parents=True)
    user = tmp_path / "config"
    write(user / "AGENTS.md", "user rule")
    write(root / "AGENTS.md", "root rule")
    write(root / "WYCKOFF.md", "root wyckoff rule")
    write(root / "pkg" / "AGENTS.md", "pkg rule")
    write(cwd / "AGENTS.md", "sub rule")
    write(root / "other" / "AGENTS.md", "not on the path")

    found = discover_instruction_files(root, cwd, user)
    assert found == [
        root / "AGENTS.md",
        root / "WYCKOFF.md",
        root / "pkg" / "AGENTS.md",
        cwd / "AGENTS.md",
        user / "AGENTS.md",
    ]
    loaded = load_project_instructions(root, cwd, user)
    text = loaded.text
    order = [text.index(s) for s in ("root rule", "root wyckoff rule", "pkg rule", "sub rule", "user rule")]
    assert order == sorted(order)
    assert "not on the path" not in text
    assert "## AGENTS.md\n\nroot rule" in text
    assert "## pkg/sub/AGENTS.md\n\nsub rule" in text
    assert f"## {(user / 'AGENTS.md').as_posix()}\n\nuser rule" in text
    assert not loaded.truncated


def test_no_files_and_empty_files_give_no_text(tmp_path: Path) -> None:
    assert load_project_instructions(tmp_path).text == ""
    write(tmp_path / "AGENTS.md", "   \n")
    loaded = load_project_instructions(tmp_path)
    assert loaded.text == "" and loaded.files == ()


def test_a_cwd_outside_the_root_reads_only_the_root(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / "AGENTS.md", "root rule")
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "AGENTS.md", "elsewhere rule")
    assert discover_instruction_files(root, elsewhere) == [root / "AGENTS.md"]


def test_the_joined_text_is_capped_with_a_note(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / "AGENTS.md", "a" * 20_000)
    write(root / "pkg" / "AGENTS.md", "b" * 20_000)
    write(root / "pkg" / "deeper" / "AGENTS.md", "c" * 5_000)
    loaded = load_project_instructions(root, root / "pkg" / "deeper", cap_bytes=32 * 1024)
    assert loaded.truncated
    body, note = loaded.text.rsplit("\n\n", 1)
    assert len(body.encode("utf-8")) <= 32 * 1024
    assert note.startswith("[Project instructions cut at 32 KiB:")
    assert "not included: pkg/deeper/AGENTS.md" in note
    assert "pkg/AGENTS.md" not in note  # partly included, so not listed as left out
    assert loaded.omitted_bytes > 5_000


def test_the_cap_never_splits_a_multibyte_character(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "说明" * 10_000)
    loaded = load_project_instructions(tmp_path, cap_bytes=1_001)
    loaded.text.encode("utf-8")  # valid text
    assert "\ufffd" not in loaded.text
    assert loaded.truncated
