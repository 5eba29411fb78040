"""Links in a parsed Markdown block, as the terminal can show them.

`show_links(tokens, hyperlinks)` rewrites the inline tokens of one block, in place:

- a bare `http://` or `https://` URL in the text becomes a link (GFM's autolink
  extension, without `www.` and e-mail guesses: those would take file names such as
  `main.py` for hosts); trailing punctuation and an unbalanced `)` stay outside it;
- with `hyperlinks`, Rich draws each link's text with an OSC 8 link style;
- without, the text is styled as a link and followed by ` (url)`, unless the text
  is the URL already (an autolink `<https://…>`, a bare URL, `[x](x)`);
- a target holding a control character (it would end the escape sequence early)
  never becomes a hyperlink; markdown-it already percent-encodes them, so this is a
  second fence.

Costs a scan of the block's inline tokens, and only for blocks that may hold a link.
"""

from __future__ import annotations

import re

from markdown_it.token import Token

__all__ = ["LINK_TEXT", "LINK_URL", "may_hold_links", "show_links"]

LINK_TEXT = "link"
"""Tags of the inline style tokens added here: Rich styles an inline tag T with
`markdown.T`, and both `markdown.link` and `markdown.link_url` are in its theme."""
LINK_URL = "link_url"

_BARE_URL = re.compile(r"(?<![\w@/.:-])https?://[^\s<>\"'`]+", re.IGNORECASE)
_TRAILING = ".,:;!?*_~'\""


def may_hold_links(markup: str) -> bool:
    """Cheap test: False when the block certainly has no link to rewrite."""
    return "://" in markup or "](" in markup or "<" in markup or "]:" in markup


def show_links(tokens: list[Token], hyperlinks: bool) -> None:
    """Rewrite every inline token's links (module docstring)."""
    for token in tokens:
        if token.type == "inline" and token.children:
            token.children = _links_in(token.children, hyperlinks)


def _links_in(children: list[Token], hyperlinks: bool) -> list[Token]:
    out: list[Token] = []
    href: str | None = None  # inside a link: its target
    text: list[str] = []  # inside a link: its text so far
    for token in children:
        if token.type == "link_open":
            href, text = str(token.attrs.get("href", "")), []
            if hyperlinks and _safe(href):
                out.append(token)
            else:
                out.append(Token("link_text_open", LINK_TEXT, 1))
        elif token.type == "link_close" and href is not None:
            if hyperlinks and _safe(href):
                out.append(token)
            else:
                out.append(Token("link_text_close", LINK_TEXT, -1))
                shown = "".join(text)
                if not hyperlinks and href not in (shown, f"mailto:{shown}"):
                    out.extend(_url_after(href))
            href = None
        elif href is not None:
            if token.type in ("text", "code_inline"):
                text.append(token.content)
            out.append(token)
        elif token.type == "text" and "://" in token.content:
            out.extend(_bare_urls(token, hyperlinks))
        else:
            out.append(token)
    return out


def _bare_urls(token: Token, hyperlinks: bool) -> list[Token]:
    """A text token with its bare URLs made into links."""
    content = token.content
    out: list[Token] = []
    done = 0
    for match in _BARE_URL.finditer(content):
        url = _trim(match.group())
        if url.endswith("://"):
            continue  # a scheme with nothing after it
        start = match.start()
        if start > done:
            out.append(Token("text", "", 0, content=content[done:start]))
        out.extend(_link(url, hyperlinks))
        done = start + len(url)
    if not out:
        return [token]
    if done < len(content):
        out.append(Token("text", "", 0, content=content[done:]))
    return out


def _trim(url: str) -> str:
    """GFM's rule: trailing punctuation, and a `)` without its `(`, are not the URL's."""
    while url:
        unbalanced = url[-1] == ")" and url.count(")") > url.count("(")
        if url[-1] in _TRAILING or unbalanced:
            url = url[:-1]
        else:
            break
    return url


def _link(url: str, hyperlinks: bool) -> list[Token]:
    text = Token("text", "", 0, content=url)
    if hyperlinks and _safe(url):
        return [Token("link_open", "a", 1, attrs={"href": url}), text, Token("link_close", "a", -1)]
    return [Token("link_text_open", LINK_TEXT, 1), text, Token("link_text_close", LINK_TEXT, -1)]


def _url_after(href: str) -> list[Token]:
    """` (url)`, the URL in the link URL style."""
    return [
        Token("text", "", 0, content=" ("),
        Token("link_url_open", LINK_URL, 1),
        Token("text", "", 0, content=href),
        Token("link_url_close", LINK_URL, -1),
        Token("text", "", 0, content=")"),
    ]


def _safe(href: str) -> bool:
    return not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in href)
