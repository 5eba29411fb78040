"""Images in the app: Ctrl+V through a clipboard command (a fake `wl-paste` on PATH),
a pasted or dragged image path, chips above the prompt that Backspace removes, the
image sent with the message, the chips in the transcript and on resume, and a
snapshot of the chips at 80×24."""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot

from tests.images_support import png_bytes, write
from tests.tui.support import make_app
from tests.tui.test_chat_flows import chat, send, settle
from tests.waiting import until
from wyckoff_cli.core.messages import Message
from wyckoff_cli.tui.clipboard import ClipboardMiss, read_clipboard_image
from wyckoff_cli.tui.image_attach import pasted_image_path
from wyckoff_cli.tui.replay import widgets_for
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.image_chips import ImageChips
from wyckoff_cli.tui.widgets.prompt_input import PromptInput


def fake_clipboard(folder: Path, image: bytes | None, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `wl-paste` that offers `image` as image/png (or only text), alone on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "clip.png").write_bytes(image or b"")
    types = "image/png\\ntext/plain" if image else "text/plain"
    script = folder / "wl-paste"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "args = sys.argv[1:]\n"
        f"if '--list-types' in args: print('{types}'); raise SystemExit(0)\n"
        "if 'image/png' in args:\n"
        f"    sys.stdout.buffer.write(open({str(folder / 'clip.png')!r}, 'rb').read()); raise SystemExit(0)\n"
        "print('some text')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(folder))
    return script


def notices(pilot: Pilot[None]) -> list[str]:
    return [n.message for n in pilot.app.screen.query(NoticeLine)]


def test_the_clipboard_reader_says_how_to_attach_without_a_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    missed = read_clipboard_image()
    assert isinstance(missed, ClipboardMiss)
    assert missed.reason.startswith("no clipboard command (wl-paste, xclip, xsel, pngpaste, osascript)")
    assert "@path/to/image.png" in missed.reason
    fake_clipboard(tmp_path / "bin", None, monkeypatch)
    missed = read_clipboard_image()
    assert (
        isinstance(missed, ClipboardMiss) and "the clipboard holds no image (wl-paste asked)" in missed.reason
    )
    data = png_bytes(20, 10)
    fake_clipboard(tmp_path / "bin", data, monkeypatch)
    assert read_clipboard_image() == data


@pytest.mark.parametrize(
    ("pasted", "found"),
    [
        ("shots/screen shot.png", True),
        ("'shots/screen shot.png'", True),
        ('"shots/screen shot.png"', True),
        ("shots/screen\\ shot.png", True),
        ("file://{root}/shots/screen%20shot.png", True),
        ("  {root}/shots/screen shot.png  ".replace(" shot", "\\ shot"), True),
        ("shots/missing.png", False),
        ("shots/notes.txt", False),
        ("look at shots/screen shot.png", False),
        ("shots/screen shot.png\nmore", False),
    ],
)
def test_which_pastes_are_image_paths(tmp_path: Path, pasted: str, found: bool) -> None:
    write(tmp_path / "shots" / "screen shot.png", png_bytes(4, 4))
    write(tmp_path / "shots" / "notes.txt", b"text")
    result = pasted_image_path(pasted.format(root=tmp_path), tmp_path)
    assert (result == (tmp_path / "shots" / "screen shot.png").resolve()) is found


async def test_ctrl_v_attaches_the_clipboard_image_and_it_is_sent(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = png_bytes(1280, 720)
    fake_clipboard(tmp_path / "bin", data, monkeypatch)
    write(workspace / "ui" / "dragged.png", png_bytes(64, 48))
    app, provider = make_app(workspace, [{"text": "Two images."}])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = chat(app)
        chips = screen.query_one(ImageChips)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        await pilot.press("ctrl+v")
        await until(pilot, lambda: len(chips.images) == 1)
        assert chips.images[0].read_bytes() == data  # within the limits: the same bytes
        pilot.app.post_message(events.Paste(str(workspace / "ui" / "dragged.png")))  # a dragged file
        await until(pilot, lambda: len(chips.images) == 2)
        assert prompt.text == ""  # attached, not typed
        assert "Attached [Image #2 dragged.png 64\u00d748]" in notices(pilot)
        pilot.app.post_message(events.Paste("plain words"))
        await until(pilot, lambda: prompt.text == "plain words")
        await send(pilot, "What differs?")
        await settle(pilot, screen)
        (request,) = provider.requests
        sent = [m for m in request.messages if m.role == "user"][-1]
        assert sent.text == "What differs?" and [i.name for i in sent.images] == [
            "clipboard.png",
            "dragged.png",
        ]
        assert chips.images == [] and not chips.has_class("-visible")
        shown = [str(u.text) for u in screen.query(UserMessage)][-1]
        assert shown == (
            "What differs?\n[Image #1 clipboard.png 1280\u00d7720] [Image #2 dragged.png 64\u00d748]"
        )
        history = list(screen.controller.session.conversation.messages)
    replayed = [w for w in widgets_for(history) if isinstance(w, UserMessage)]
    assert str(replayed[-1].text) == shown  # resume shows the chips where they were


async def test_backspace_removes_a_chip_and_a_bad_paste_is_one_line(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_clipboard(tmp_path / "bin", png_bytes(30, 20), monkeypatch)
    write(workspace / "broken.png", png_bytes(400, 300, noisy=True)[:2_000])
    app, provider = make_app(workspace, [{"text": "No image."}])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = chat(app)
        chips = screen.query_one(ImageChips)
        screen.query_one(PromptInput).focus()
        await pilot.press("ctrl+v")
        await until(pilot, lambda: len(chips.images) == 1)
        await pilot.press("backspace")
        await until(pilot, lambda: not chips.images)
        assert "[Image #1 clipboard.png 30\u00d720] will not be sent" in notices(pilot)
        pilot.app.post_message(events.Paste("broken.png"))
        await until(pilot, lambda: any("broken.png: the image is corrupt" in n for n in notices(pilot)))
        assert not chips.images
        await send(pilot, "hello")
        await settle(pilot, screen)
        assert not any(m.images for m in provider.requests[0].messages)


async def test_ctrl_v_without_a_clipboard_command_says_how_to_attach(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    app, _ = make_app(workspace, [])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = chat(app)
        screen.query_one(PromptInput).focus()
        await pilot.press("ctrl+v")
        await until(pilot, lambda: any(n.startswith("Ctrl+V: no clipboard command") for n in notices(pilot)))


def test_chips_snapshot_at_80x24(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wyckoff_cli.storage.images import ImageStore

    root = Path("/home/dev/project")
    store = ImageStore(tmp_path / "images")
    first = store.add(png_bytes(1280, 720), "screenshot.png")
    second = store.add(png_bytes(640, 480), "diagram.png")
    app, _ = make_app(root, [])

    async def run_before(pilot: Pilot[None]) -> None:
        screen = chat(pilot.app)  # type: ignore[arg-type]
        chips = screen.query_one(ImageChips)
        chips.add(first)
        chips.add(second)
        screen.add_user("Earlier:\n[Image #1 screenshot.png 1280\u00d7720]")
        screen.query_one(PromptInput).load_text("Why is the button cut off?")
        await until(pilot, lambda: chips.has_class("-visible") and len(screen.query(UserMessage)) == 1)
        for _ in range(5):
            await pilot.pause()  # the chips and the message laid out

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_message_images_survive_the_chat_log(tmp_path: Path) -> None:
    from wyckoff_cli.storage.images import ImageStore

    part = ImageStore(tmp_path).add(png_bytes(8, 8), "a.png")
    message = Message.user("x", images=[part])
    assert Message.from_dict(message.to_dict()).images == [part]


async def test_a_mentioned_image_shows_as_a_chip_once_sent_as_on_resume(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`@ui/shot.png` attaches the image when the turn starts (runtime/mentions.py): the
    message in the transcript then shows its chip after the prompt's own, numbered as
    sent, exactly as the resumed transcript shows it."""
    fake_clipboard(tmp_path / "bin", png_bytes(320, 200), monkeypatch)
    write(workspace / "ui" / "shot.png", png_bytes(64, 48))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-used")
    app, provider = make_app(workspace, [{"text": "Two images."}], model="anthropic:claude-sonnet-4-5")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = chat(app)
        screen.query_one(PromptInput).focus()
        await pilot.press("ctrl+v")
        await until(pilot, lambda: len(screen.query_one(ImageChips).images) == 1)
        await send(pilot, "Compare with @ui/shot.png")
        await settle(pilot, screen)
        shown = [str(u.text) for u in screen.query(UserMessage)][-1]
        assert shown == (
            "Compare with @ui/shot.png\n[Image #1 clipboard.png 320\u00d7200] [Image #2 shot.png 64\u00d748]"
        )
        history = list(screen.controller.session.conversation.messages)
    assert [i.name for i in provider.requests[-1].messages[-1].images] == ["clipboard.png", "shot.png"]
    replayed = [w for w in widgets_for(history) if isinstance(w, UserMessage)]
    assert str(replayed[-1].text) == shown


async def test_a_tool_results_image_shows_as_a_chip_live_and_on_resume(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """read_file on a PNG gives the model the image: its tool widget shows the chip, as
    the prompt shows an attachment, and so does the resumed transcript (issue 30)."""
    from wyckoff_cli.tui.widgets.tool_call import ToolCallView, plain_text

    write(workspace / "ui" / "shot.png", png_bytes(64, 48))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-used")  # no set-up screen: the provider is scripted
    app, provider = make_app(
        workspace,
        [
            {"tool_calls": [{"name": "read_file", "args": {"path": "ui/shot.png"}}]},
            {"text": "A blue square."},
        ],
        model="anthropic:claude-sonnet-4-5",  # a model that takes images (the provider is scripted)
    )
    chip = "[Image #1 shot.png 64\u00d748]"
    async with app.run_test(size=(100, 30)) as pilot:
        screen = chat(app)
        await send(pilot, "Look at ui/shot.png")
        await settle(pilot, screen)
        (view,) = screen.query(ToolCallView)
        assert view.status == "ok" and view.images == ["shot.png 64\u00d748"], (view.status, view.images)
        assert chip in plain_text(view.render_call())
        history = list(screen.controller.session.conversation.messages)
    assert [i.name for i in provider.requests[-1].messages[-1].images] == ["shot.png"]  # it was sent
    (replayed,) = [w for w in widgets_for(history) if isinstance(w, ToolCallView)]
    assert chip in plain_text(replayed.render_call())


async def test_a_dragged_image_is_normalised_off_the_apps_loop(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decoding a 4000×3000 screenshot takes a tenth of a second or more: a dragged
    file is checked and stored in a thread, as a Ctrl+V paste is, so the app keeps
    drawing meanwhile (issue 30)."""
    import threading

    from wyckoff_cli.storage.images import ImageStore

    threads: list[bool] = []
    add_file = ImageStore.add_file

    def recording_add_file(self: ImageStore, path: Path, *, name: str | None = None) -> Any:
        threads.append(threading.current_thread() is threading.main_thread())
        return add_file(self, path, name=name)

    monkeypatch.setattr(ImageStore, "add_file", recording_add_file)
    write(workspace / "big.png", png_bytes(4000, 3000))
    app, _ = make_app(workspace, [])
    async with app.run_test(size=(100, 30)) as pilot:
        chips = chat(app).query_one(ImageChips)
        pilot.app.post_message(events.Paste(str(workspace / "big.png")))
        await until(pilot, lambda: len(chips.images) == 1)
        assert chips.images[0].label == "big.png 1568\u00d71176"
    assert threads == [False]  # in a worker thread, never on the app's loop
