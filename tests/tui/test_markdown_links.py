"""Links in answers: OSC 8 hyperlinks where the terminal shows them, `text (url)` elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it.token import Token
from rich.console import Console
from textual.strip import Strip

from tests.tui.support import make_app
from tests.waiting import until
from wyckoff_cli.tui.hyperlinks import terminal_shows_hyperlinks
from wyckoff_cli.tui.widgets.markdown_links import show_links
from wyckoff_cli.tui.widgets.markdown_render import render_markdown
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView

ANSWER = (
    "Read [the config guide](https://example.com/docs/config) first, then https://example.org/faq. "
    "The spec is at <https://spec.example.net/v2>, mail <team@example.com>; "
    "not `https://in.code/span` nor main.py."
)


def _render(source: str, hyperlinks: bool, width: int = 100) -> list[Strip]:
    console = Console(width=width, color_system="truecolor", force_terminal=True)
    return render_markdown(source, width, console, hyperlinks=hyperlinks)


def _links(strips: list[Strip]) -> dict[str, str]:
    """Linked text → its target."""
    found: dict[str, str] = {}
    for strip in strips:
        for segment in strip:
            if segment.style is not None and segment.style.link:
                found[segment.text] = found.get(segment.text, "") + segment.style.link
    return found


def _text(strips: list[Strip]) -> str:
    return " ".join(strip.text.strip() for strip in strips)


def test_with_hyperlinks_links_carry_the_osc8_link_style_and_hide_the_url() -> None:
    strips = _render(ANSWER, hyperlinks=True)
    assert _links(strips) == {
        "the config guide": "https://example.com/docs/config",
        "https://example.org/faq": "https://example.org/faq",  # a bare URL, without its full stop
        "https://spec.example.net/v2": "https://spec.example.net/v2",
        "team@example.com": "mailto:team@example.com",
    }
    text = _text(strips)
    assert "(https://example.com/docs/config)" not in text
    assert "https://in.code/span" in text and "main.py" in text  # shown, never linked


def test_textuals_strip_render_emits_osc8_for_them() -> None:
    # What Textual's compositor writes to the terminal for a line (Strip.render).
    console = Console(width=100, color_system="truecolor", force_terminal=True)
    [line] = render_markdown("See [the guide](https://example.com/g).", 100, console, hyperlinks=True)
    output = line.render(console)
    assert "\x1b]8;id=" in output and ";https://example.com/g\x1b\\" in output
    assert output.count("\x1b]8;;\x1b\\") >= 1  # the link is closed


def test_without_hyperlinks_the_url_follows_the_text_once() -> None:
    strips = _render(ANSWER, hyperlinks=False)
    assert _links(strips) == {}  # no OSC 8 at all
    text = _text(strips)
    assert "the config guide (https://example.com/docs/config) first" in text
    assert "then https://example.org/faq. The" in text  # the text is the URL: not repeated
    assert "<https://spec.example.net/v2>" not in text and "spec.example.net/v2 (" not in text
    assert "team@example.com;" in text  # an e-mail autolink is not followed by its mailto:
    console = Console(width=40, color_system="truecolor")
    [line] = render_markdown("[x](https://a.example)", 40, console, "monokai", False)
    styles = {segment.text: segment.style for segment in line}
    assert styles["x"] == console.get_style("markdown.link")  # the text styled as a link
    assert styles["https://a.example"] == console.get_style("markdown.link_url")


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("go to https://example.com/a_b_c?q=1&r=2, then stop", "https://example.com/a_b_c?q=1&r=2"),
        ("(see https://en.wikipedia.org/wiki/Foo_(bar))", "https://en.wikipedia.org/wiki/Foo_(bar)"),
        ("(see https://example.com/x)", "https://example.com/x"),
        ("quoted 'https://example.com/q'!", "https://example.com/q"),
    ],
)
def test_bare_urls_end_where_gfm_ends_them(source: str, target: str) -> None:
    assert list(_links(_render(source, hyperlinks=True)).values()) == [target]


def test_a_bare_scheme_or_a_file_name_is_not_a_link() -> None:
    assert _links(_render("type https:// then the host; edit main.py or www.example.com", True)) == {}


def test_links_in_table_cells_and_headings_follow_the_setting() -> None:
    source = "| tool | docs |\n|---|---|\n| rg | [manual](https://rg.example/m) |"
    assert _links(_render(source, hyperlinks=True)) == {"manual": "https://rg.example/m"}
    assert "manual (https://rg.example/m)" in _text(_render(source, hyperlinks=False, width=60))


def test_a_target_with_a_control_character_is_never_a_hyperlink() -> None:
    # markdown-it percent-encodes these; the rewrite refuses them anyway, so a target
    # can never end the OSC 8 sequence early and write to the terminal.
    inline = Token("inline", "", 0)
    inline.children = [
        Token("link_open", "a", 1, attrs={"href": "https://x.example/\x1b]8;;evil"}),
        Token("text", "", 0, content="click"),
        Token("link_close", "a", -1),
    ]
    show_links([inline], hyperlinks=True)
    assert [token.type for token in inline.children] == ["link_text_open", "text", "link_text_close"]


@pytest.mark.parametrize(
    ("setting", "environ", "expected"),
    [
        ("on", {"TERM": "dumb", "TMUX": "/tmp/tmux-1/default,1,0"}, True),
        ("off", {"TERM_PROGRAM": "iTerm.app"}, False),
        ("auto", {"TERM_PROGRAM": "iTerm.app"}, True),
        ("auto", {"TERM_PROGRAM": "WezTerm"}, True),
        ("auto", {"TERM_PROGRAM": "vscode"}, True),
        ("auto", {"TERM_PROGRAM": "ghostty"}, True),
        ("auto", {"TERM": "xterm-kitty"}, True),
        ("auto", {"TERM": "xterm-256color", "KITTY_WINDOW_ID": "1"}, True),
        ("auto", {"TERM": "foot"}, True),
        ("auto", {"TERM": "alacritty"}, True),
        ("auto", {"TERM": "xterm-256color", "WT_SESSION": "b3f1"}, True),
        ("auto", {"TERM": "xterm-256color", "VTE_VERSION": "7600"}, True),
        ("auto", {"TERM": "xterm-256color", "VTE_VERSION": "4600"}, False),  # before VTE 0.50
        ("auto", {"TERM": "xterm-256color"}, False),  # plain xterm, Konsole (off by default), …
        ("auto", {"TERM_PROGRAM": "Apple_Terminal"}, False),
        ("auto", {"TERM": "tmux-256color", "TERM_PROGRAM": "tmux", "TMUX": "/tmp/t,1,0"}, False),
        ("auto", {"TERM": "screen-256color", "VTE_VERSION": "7600"}, False),  # stale outer variable
        ("auto", {"TERM": "xterm-kitty", "STY": "1234.pts-0"}, False),  # GNU screen
        ("auto", {"TERM": "dumb"}, False),
        ("auto", {"TERM": "xterm-256color", "FORCE_HYPERLINK": "1"}, True),
        ("auto", {"TERM": "xterm-kitty", "FORCE_HYPERLINK": "0"}, False),
        ("auto", {}, False),
    ],
)
def test_terminal_detection(setting: str, environ: dict[str, str], expected: bool) -> None:
    assert terminal_shows_hyperlinks(setting, environ) is expected  # type: ignore[arg-type]


def _config(root: Path, value: str) -> None:
    (root / ".wyckoff").mkdir(exist_ok=True)
    (root / ".wyckoff" / "config.toml").write_text(f'[ui]\nhyperlinks = "{value}"\n')


@pytest.mark.parametrize(("value", "hyperlinks"), [("on", True), ("off", False)])
async def test_the_app_follows_ui_hyperlinks(tmp_path: Path, value: str, hyperlinks: bool) -> None:
    _config(tmp_path, value)
    app, _provider = make_app(tmp_path, [{"text": ANSWER}])
    assert app.hyperlinks is hyperlinks
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press(*"hi", "enter")
        await until(
            pilot, lambda: (views := app.screen.query(MarkdownStreamView)) and views.last().is_settled
        )
        view = app.screen.query(MarkdownStreamView).last()
        text = " ".join(view.rendered_lines())
        strips = [view.render_line(y) for y in range(view.line_count)]  # what is painted
    assert ("(https://example.com/docs/config)" in text) is not hyperlinks
    assert bool(_links(strips)) is hyperlinks


@pytest.mark.parametrize(("tmux", "hyperlinks"), [(False, True), (True, False)])
def test_auto_follows_the_terminal_and_shows_urls_in_tmux(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmux: bool, hyperlinks: bool
) -> None:
    monkeypatch.delenv("FORCE_HYPERLINK")  # set by the suite's fixture
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("STY", raising=False)
    monkeypatch.setenv("TERM", "xterm-kitty")
    if tmux:
        monkeypatch.setenv("TMUX", "/tmp/tmux-1000/default,1,0")
    app, _provider = make_app(tmp_path, [])
    assert app.hyperlinks is hyperlinks


def test_a_wrong_value_is_a_config_error(tmp_path: Path) -> None:
    from wyckoff_cli.core.errors import ConfigError
    from wyckoff_cli.storage.config import load_config

    _config(tmp_path, "yes")
    with pytest.raises(ConfigError, match=r"ui\.hyperlinks must be one of 'auto', 'on', 'off', got 'yes'"):
        load_config(tmp_path)
