"""Compaction replaces the images of the messages it summarises with a one-line note
naming them; images in the kept tail stay."""

from __future__ import annotations

from pathlib import Path

from tests.context.test_compaction import SUMMARY, before_model_call, long_history, manager_for, tool_round
from tests.images_support import png_bytes
from tests.runtime.support import assert_history_valid
from wyckoff_cli.core.messages import Message
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.storage.images import ImageStore


async def test_old_images_become_a_note_and_recent_ones_stay(tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "images")
    old = store.add(png_bytes(1280, 720), "screenshot.png")
    read = store.add(png_bytes(64, 64), "icon.png")
    recent = store.add(png_bytes(32, 32), "recent.png")
    history = [Message.user("What is wrong in this screenshot?", images=[old]), *long_history(3)]
    history[2] = Message.tool_result(
        history[2].tool_call_id or "", "read_file", "[image icon.png]", images=[read]
    )
    history += [Message.user("And this one?", images=[recent])]
    for r in range(8):
        history += tool_round(f"t{r}", "x " * 400)
    manager = manager_for(history, over_by=1, tail_fraction=0.05)
    provider = ScriptedProvider([{"text": SUMMARY}])
    await before_model_call(manager, history, "", [], provider)
    summary = history[0]
    assert summary.meta["synthetic"] == "compaction" and not summary.images
    assert summary.text.splitlines()[-1] == (
        "[images screenshot.png 1280\u00d7720, icon.png 64\u00d764: attached here; not kept after compaction]"
    )
    assert summary.meta["replaced_images"] == ["screenshot.png 1280\u00d7720", "icon.png 64\u00d764"]
    assert [image.name for m in history for image in m.images] == ["recent.png"]  # the latest request
    transcript = provider.requests[0].messages[0].text
    assert "[image screenshot.png 1280\u00d7720: attached here; not kept after compaction]" in transcript
    assert not any(m.images for m in provider.requests[0].messages)  # the summariser gets text only
    assert_history_valid(history)
