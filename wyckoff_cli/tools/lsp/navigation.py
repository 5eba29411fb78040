"""The read-only lsp_* tools: definition, references, hover, symbols, diagnostics.
Each runs in parallel with other reads and in plan mode; a server that never answers,
dies or answers nonsense makes the call a tool error (the turn goes on)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from lsprotocol import types as lsp

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.lsp.client import LspClient, LspError, path_uri, uri_path
from wyckoff_cli.tools.lsp.diagnostics import format_diagnostics, relevant
from wyckoff_cli.tools.lsp.manager import LspManager
from wyckoff_cli.tools.lsp.positions import (
    POSITION_PROPERTIES,
    describe_location,
    position_of,
    read_source,
    target_path,
)
from wyckoff_cli.tools.permissions.workspace import display_path

MAX_LOCATIONS = 100
Run = Callable[[dict[str, Any], ToolContext], Coroutine[Any, Any, str]]

_POSITION_SCHEMA = {
    "type": "object",
    "properties": POSITION_PROPERTIES,
    "required": ["path", "line"],
    "additionalProperties": False,
}


async def _opened(
    manager: LspManager, args: dict[str, Any], ctx: ToolContext
) -> tuple[LspClient, str, str, str]:
    path, shown = target_path(args, ctx.workspace)
    text = read_source(path, shown)
    try:
        client = await manager.query_client(path)
    except LspError as exc:
        raise ToolError(str(exc)) from None
    client.sync(path, text)
    return client, path_uri(path), text, shown


def _locations(ctx: ToolContext, found: Any) -> list[tuple[str, lsp.Position]]:
    if found is None:
        return []
    items = list(found) if isinstance(found, list | tuple) else [found]
    out: list[tuple[str, lsp.Position]] = []
    for item in items:
        if isinstance(item, lsp.Location):
            out.append((item.uri, item.range.start))
        elif isinstance(item, lsp.LocationLink):
            out.append((item.target_uri, item.target_selection_range.start))
    return out


def _listing(ctx: ToolContext, found: list[tuple[str, lsp.Position]], what: str) -> str:
    if not found:
        return f"No {what} found."
    texts: dict[str, list[str]] = {}
    shown = [describe_location(ctx.workspace, uri, start, texts) for uri, start in found[:MAX_LOCATIONS]]
    if len(found) > MAX_LOCATIONS:
        shown.append(f"… and {len(found) - MAX_LOCATIONS} more")
    return "\n".join(shown)


async def _ask(client: LspClient, request: Any, manager: LspManager, what: str) -> Any:
    try:
        return await client.call(request, manager.request_timeout, what)
    except LspError as exc:
        raise ToolError(str(exc)) from None


def _make(manager: LspManager) -> dict[str, Run]:
    async def definition(args: dict[str, Any], ctx: ToolContext) -> str:
        client, uri, text, shown = await _opened(manager, args, ctx)
        at = position_of(args, text, shown)
        params = lsp.DefinitionParams(lsp.TextDocumentIdentifier(uri), at)
        found = await _ask(
            client, client.client.text_document_definition_async(params), manager, "definition"
        )
        return _listing(ctx, _locations(ctx, found), "definition")

    async def references(args: dict[str, Any], ctx: ToolContext) -> str:
        client, uri, text, shown = await _opened(manager, args, ctx)
        at = position_of(args, text, shown)
        params = lsp.ReferenceParams(
            lsp.ReferenceContext(include_declaration=bool(args.get("include_declaration", True))),
            lsp.TextDocumentIdentifier(uri),
            at,
        )
        found = await _ask(
            client, client.client.text_document_references_async(params), manager, "references"
        )
        spots = sorted(_locations(ctx, found), key=lambda f: (f[0], f[1].line, f[1].character))
        return _listing(ctx, spots, "references")

    async def hover(args: dict[str, Any], ctx: ToolContext) -> str:
        client, uri, text, shown = await _opened(manager, args, ctx)
        at = position_of(args, text, shown)
        params = lsp.HoverParams(lsp.TextDocumentIdentifier(uri), at)
        found = await _ask(client, client.client.text_document_hover_async(params), manager, "hover")
        return _hover_text(found) or "Nothing to show at that position."

    async def symbols(args: dict[str, Any], ctx: ToolContext) -> str:
        query = args.get("query")
        if args.get("path") is None:
            if query is None:
                raise ToolError("give `path` for a file's outline, or `query` to search the workspace")
            return await _workspace_symbols(manager, str(query), ctx)
        client, uri, _text, _shown = await _opened(manager, args, ctx)
        params = lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(uri))
        found = await _ask(
            client, client.client.text_document_document_symbol_async(params), manager, "documentSymbol"
        )
        lines = _outline(found or [], ctx)
        if query is not None:
            lines = [line for line in lines if str(query).lower() in line.lower()]
        return "\n".join(lines[:500]) or "No symbols found."

    async def diagnostics(args: dict[str, Any], ctx: ToolContext) -> str:
        if args.get("path") is not None:
            client, uri, text, shown = await _opened(manager, args, ctx)
            document = client.documents[uri]
            got = client.published.get(uri)
            if client.pulls_diagnostics() or got is None or (got.version or 0) < document.version:
                current = await client.current_diagnostics(
                    uri, client.publications(uri), manager.diagnostics_wait
                )
            else:
                current = list(got.diagnostics)
            found = relevant(current or [])
            return format_diagnostics(shown, found) if found else f"No errors or warnings in {shown}."
        parts: list[str] = []
        for slot in manager.running():
            assert slot.client is not None
            await manager.resync(slot.client)
            if slot.client.pulls_diagnostics():
                for open_uri in list(slot.client.documents):
                    await slot.client.pull_diagnostics(open_uri, manager.diagnostics_wait)
            for uri, got in sorted(slot.client.published.items()):
                found = relevant(got.diagnostics)
                if found:
                    parts.append(format_diagnostics(display_path(uri_path(uri), ctx.workspace), found))
        return "\n".join(parts) or "No errors or warnings in the files the servers have open."

    return {
        "definition": definition,
        "references": references,
        "hover": hover,
        "symbols": symbols,
        "diagnostics": diagnostics,
    }


async def _workspace_symbols(manager: LspManager, query: str, ctx: ToolContext) -> str:
    lines: list[str] = []
    for slot in manager.running():
        assert slot.client is not None
        client = slot.client
        await manager.resync(client)
        found = await _ask(
            client,
            client.client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query)),
            manager,
            "workspace/symbol",
        )
        texts: dict[str, list[str]] = {}
        for item in found or []:
            location = item.location
            if isinstance(location, lsp.Location):
                where = describe_location(ctx.workspace, location.uri, location.range.start, texts)
            else:
                where = display_path(uri_path(location.uri), ctx.workspace)
            lines.append(f"{_kind(item.kind)} {item.name} — {where}")
    if not manager.running():
        raise ToolError("no language server is running yet: give `path` to start the one for that file")
    return "\n".join(lines[:MAX_LOCATIONS]) or f"No symbols match {query!r}."


def _kind(kind: lsp.SymbolKind) -> str:
    return kind.name.lower()


def _outline(found: list[Any], ctx: ToolContext, depth: int = 0) -> list[str]:
    lines: list[str] = []
    for item in found:
        if isinstance(item, lsp.DocumentSymbol):
            lines.append(
                f"{'  ' * depth}{_kind(item.kind)} {item.name} (line {item.selection_range.start.line + 1})"
            )
            lines += _outline(list(item.children or []), ctx, depth + 1)
        elif isinstance(item, lsp.SymbolInformation):
            lines.append(f"{_kind(item.kind)} {item.name} (line {item.location.range.start.line + 1})")
    return lines


def _hover_text(found: lsp.Hover | None) -> str:
    if found is None:
        return ""
    contents = found.contents
    items = list(contents) if isinstance(contents, list | tuple) else [contents]
    parts: list[str] = []
    for item in items:
        if isinstance(item, lsp.MarkupContent):
            parts.append(item.value)
        elif isinstance(item, str):
            parts.append(item)
        else:
            parts.append(getattr(item, "value", str(item)))
    return "\n\n".join(p.strip() for p in parts if p.strip())


_DESCRIPTIONS = {
    "definition": "Where the symbol at a position is defined (a language server's answer), as path:line:column "
    "with the line's text. Give `path`, `line` and `column` or `symbol` (its name on that line).",
    "references": "Every use of the symbol at a position across the workspace (a language server's answer), as "
    "path:line:column with each line's text. Give `path`, `line` and `column` or `symbol`.",
    "hover": "The type and documentation of the symbol at a position (a language server's answer). Give "
    "`path`, `line` and `column` or `symbol`.",
    "symbols": "A file's outline (`path`: its classes, functions, … with lines), or the workspace's symbols "
    "matching `query` (no `path`).",
    "diagnostics": "The language server's errors and warnings for `path`, or (no `path`) for every file the "
    "servers have open.",
}


def navigation_tools(manager: LspManager) -> list[Tool]:
    runs = _make(manager)
    schemas: dict[str, dict[str, Any]] = {
        "definition": _POSITION_SCHEMA,
        "references": {
            **_POSITION_SCHEMA,
            "properties": {
                **POSITION_PROPERTIES,
                "include_declaration": {
                    "type": "boolean",
                    "description": "List the definition too (default true).",
                },
            },
        },
        "hover": _POSITION_SCHEMA,
        "symbols": {
            "type": "object",
            "properties": {
                "path": POSITION_PROPERTIES["path"],
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "A name (or part of one) to look for.",
                },
            },
            "additionalProperties": False,
        },
        "diagnostics": {
            "type": "object",
            "properties": {"path": POSITION_PROPERTIES["path"]},
            "additionalProperties": False,
        },
    }
    return [
        Tool(
            name=f"lsp_{name}",
            description=_DESCRIPTIONS[name],
            parameters=schemas[name],
            run=runs[name],
            concurrency_safe=True,
            kind="read",
            path_args=("path",),
            summary_arg="path",
        )
        for name in runs
    ]
