"""`wyckoff run` with images, per vendor, through the real SDKs and the fake server:
`--image FILE`, an `@image.png` mention and a read_file result reach the model in the
vendor's shape; `--continue` sends them again; a text-only model is refused before
any request; bad files are one line; `sessions export` includes them."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.images_support import png_bytes, write
from wyckoff_cli.cli.main import main
from wyckoff_cli.testing.fake_server import FakeServer

# (the --model argument, the fake server's vendor for its base URL)
CASES = {
    "anthropic": "anthropic:claude-sonnet-4-5",
    "openai-chat": "openai:gpt-4o",
    "openai-responses": "vision-responses",
    "gemini": "gemini:gemini-2.5-pro",
}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def configure(workspace: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-anthropic")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-openai")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url_for("gemini"))
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-gemini")
    (workspace / ".wyckoff" / "config.toml").write_text(
        f'model = "{model}"\n\n[models.vision-responses]\nprovider = "openai"\nmodel = "gpt-5"\n'
        f'base_url = "{server.openai_url}"\napi = "responses"\n'
    )


def images_in(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, base64) of every image a request carries: `user` for the prompt's,
    `tool` for a tool result's, whatever the vendor's shape."""
    found: list[tuple[str, str]] = []
    if "contents" in body:  # Gemini
        for content in body["contents"]:
            where = "tool" if any("functionResponse" in p for p in content["parts"]) else "user"
            for part in content["parts"]:
                blob = part.get("inlineData") or part.get("inline_data")
                if blob:
                    found.append((where, blob["data"]))
        return found
    for message in body.get("messages") or body.get("input") or []:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        texts = [c.get("text", "") for c in content if c.get("type") in ("text", "input_text")]
        where = "tool" if any(t.startswith("[images returned by") for t in texts) else "user"
        for block in content:
            if block.get("type") == "image":
                found.append((where, block["source"]["data"]))
            elif block.get("type") == "image_url":
                found.append((where, block["image_url"]["url"].split(",", 1)[1]))
            elif block.get("type") == "input_image":
                found.append((where, block["image_url"].split(",", 1)[1]))
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                found += [("tool", b["source"]["data"]) for b in block["content"] if b.get("type") == "image"]
    return found


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_attachment_mention_and_read_file_reach_the_model_and_resume_sends_them_again(
    case: str,
    server: FakeServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    configure(workspace, server, monkeypatch, CASES[case])
    attached, mentioned, read = png_bytes(60, 40), png_bytes(30, 20), png_bytes(20, 30)
    write(tmp_path / "outside" / "attached.png", attached)
    write(workspace / "ui" / "mentioned.png", mentioned)
    write(workspace / "ui" / "read.png", read)
    server.script(
        {"tool_calls": [{"name": "read_file", "args": {"path": "ui/read.png"}}]},
        {"text": "Three images seen."},
    )
    args = ["run", "--cwd", str(workspace), "--image", str(tmp_path / "outside" / "attached.png")]
    code = main([*args, "Compare with @ui/mentioned.png"])
    out = capsys.readouterr()
    assert code == 0, out.err
    first, second = (r.body for r in server.requests)
    assert images_in(first) == [("user", b64(attached)), ("user", b64(mentioned))]
    assert images_in(second) == [("user", b64(attached)), ("user", b64(mentioned)), ("tool", b64(read))]
    chat = _chat_log()
    text = chat.read_text()
    for data in (attached, mentioned, read):
        assert b64(data) not in text  # references only
    stored = sorted(p.name for p in (chat.parent / "images").iterdir())
    assert len(stored) == 3

    server.reset()
    server.script({"text": "Still there."})
    assert main(["run", "--cwd", str(workspace), "--continue", "and now?"]) == 0
    (resumed,) = (r.body for r in server.requests)
    assert images_in(resumed) == images_in(second)


def _chat_log() -> Path:
    import os

    home = Path(os.environ["WYCKOFF_HOME"])
    (chat,) = home.rglob("chat.jsonl")
    return chat


@pytest.mark.parametrize("model", ["openai:o3-mini", "deepseek-text"])
def test_a_text_only_model_is_refused_before_any_request(
    model: str,
    server: FakeServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    configure(workspace, server, monkeypatch, model)
    config = workspace / ".wyckoff" / "config.toml"
    config.write_text(
        config.read_text()
        + f'\n[models.deepseek-text]\nprovider = "openai"\nmodel = "deepseek-chat"\nbase_url = "{server.openai_url}"\n'
    )
    write(tmp_path / "shot.png", png_bytes(10, 10))
    code = main(["run", "--cwd", str(workspace), "--image", str(tmp_path / "shot.png"), "what is this?"])
    err = capsys.readouterr().err
    assert code != 0
    assert server.requests == []
    assert "takes no images (by the model catalogue), so nothing was sent." in err
    assert "Models configured here that take images: vision-responses" in err


BAD_FILES: list[tuple[str, bytes | None, str]] = [
    ("missing.png", None, "missing.png: no such file"),
    ("corrupt.png", b"\x89PNG\r\n\x1a\nnot really", "corrupt.png: the image is corrupt or truncated"),
    ("notes.bmp", None, "notes.bmp: BMP images are not supported"),
]


@pytest.mark.parametrize(("name", "data", "message"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_bad_image_is_one_line_and_nothing_is_sent(
    name: str,
    data: bytes | None,
    message: str,
    server: FakeServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    from tests.images_support import encoded

    configure(workspace, server, monkeypatch, CASES["anthropic"])
    if name.endswith(".bmp"):
        data = encoded(4, 4, "BMP")
    if data is not None:
        write(tmp_path / name, data)
    code = main(["run", "--no-session", "--cwd", str(workspace), "--image", str(tmp_path / name), "look"])
    err = capsys.readouterr().err
    assert code != 0 and server.requests == []
    (line,) = [line for line in err.splitlines() if message in line]
    assert line.startswith(f"wyckoff: image: {tmp_path / name}: {message.split(': ', 1)[1]}")
    assert "Traceback" not in err


def test_a_bad_mentioned_image_sends_nothing(
    server: FakeServer, workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(workspace, server, monkeypatch, CASES["anthropic"])
    write(workspace / "broken.png", png_bytes(400, 300, noisy=True)[:2_000])  # truncated
    code = main(["run", "--no-session", "--cwd", str(workspace), "what is @broken.png?"])
    err = capsys.readouterr().err
    assert code != 0 and server.requests == []
    assert "wyckoff: image: broken.png: the image is corrupt or truncated" in err


def test_sessions_export_includes_the_images(
    server: FakeServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    configure(workspace, server, monkeypatch, CASES["anthropic"])
    data = png_bytes(64, 32)
    write(tmp_path / "screenshot.png", data)
    server.script({"text": "A box."})
    assert main(["run", "--cwd", str(workspace), "--image", str(tmp_path / "screenshot.png"), "what?"]) == 0
    session_id = _chat_log().parent.name
    capsys.readouterr()
    out = tmp_path / "export" / "talk.md"
    out.parent.mkdir()
    assert main(["sessions", "export", session_id, "-o", str(out)]) == 0
    markdown = out.read_text()
    (copied,) = (tmp_path / "export" / "talk-images").iterdir()
    assert copied.read_bytes() == data
    assert f"![screenshot.png 64\u00d732](talk-images/{copied.name})" in markdown
    capsys.readouterr()
    assert main(["sessions", "export", session_id, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    parts = [
        p
        for item in document["transcript"]
        if item.get("kind") == "message"
        for p in item["message"]["parts"]
    ]
    (image,) = [p for p in parts if p["type"] == "image"]
    assert (image["name"], image["width"], image["height"], image["media_type"]) == (
        "screenshot.png",
        64,
        32,
        "image/png",
    )
    assert Path(image["path"]).read_bytes() == data and b64(data) not in json.dumps(document)
