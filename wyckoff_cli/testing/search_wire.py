"""Server-side web search answers in each vendor's streaming wire format.

A scenario with a `web_search` key renders as an answer in which the vendor searched
the web, then wrote `text` citing the results, exactly as the real streams look:

    web_search   {"query": "...", "results": [{"url", "title", "snippet"?}, ...],
                  "preamble": "text before the search" (optional)}

- Anthropic: a `server_tool_use` block (`input_json_delta` with the query), a
  `web_search_tool_result` block with `web_search_result` entries (`encrypted_content`,
  `page_age`), the answer in a text block opened by a `citations_delta`
  (`web_search_result_location`), and `usage.server_tool_use.web_search_requests`.
- OpenAI Responses: a `web_search_call` item (`response.web_search_call.*` progress
  events, then `action: {"type": "search", "query", "sources"}`), then the message
  with `url_citation` annotations.
- Gemini: the answer's text chunks, the last one carrying `groundingMetadata`
  (`webSearchQueries`, `groundingChunks` with redirect URIs, `groundingSupports`,
  `searchEntryPoint`) and `toolUsePromptTokenCount` in the usage.

Standard library only, like wire.py, which calls `render` for such scenarios.
"""

from __future__ import annotations

import json
from typing import Any

from wyckoff_cli.testing.sse_events import AnthropicBlocks, sse

DEFAULT_USAGE = {"input_tokens": 2_000, "output_tokens": 120}


def _search(scenario: dict[str, Any]) -> tuple[str, list[dict[str, str]], str]:
    spec = scenario["web_search"]
    results = [
        {"url": str(r["url"]), "title": str(r.get("title", "")), "snippet": str(r.get("snippet", ""))}
        for r in spec.get("results") or ()
    ]
    return str(spec.get("query", "")), results, str(spec.get("preamble", ""))


def render(vendor: str, scenario: dict[str, Any]) -> tuple[list[bytes], list[bytes]]:
    renderer = {"anthropic": _anthropic, "openai-responses": _responses, "gemini": _gemini}.get(vendor)
    if renderer is None:
        raise ValueError(f"the {vendor} wire format has no server-side web search")
    return renderer(scenario)


def _usage(scenario: dict[str, Any]) -> dict[str, int]:
    return {**DEFAULT_USAGE, **(scenario.get("usage") or {})}


# --------------------------------------------------------------------------- Anthropic


def _anthropic(scenario: dict[str, Any]) -> tuple[list[bytes], list[bytes]]:
    query, results, preamble = _search(scenario)
    usage = _usage(scenario)
    text = str(scenario.get("text", ""))
    message = {
        "id": "msg_fake_search",
        "type": "message",
        "role": "assistant",
        "model": scenario.get("model", "claude-fake"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1},
    }
    events = [sse({"type": "message_start", "message": message}, "message_start")]
    block = AnthropicBlocks(events).add

    if preamble:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": preamble}])
    tool_id = "srvtoolu_01FakeSearch"
    block(
        {"type": "server_tool_use", "id": tool_id, "name": "web_search", "input": {}},
        [{"type": "input_json_delta", "partial_json": json.dumps({"query": query})}],
    )
    entries = [
        {
            "type": "web_search_result",
            "title": r["title"],
            "url": r["url"],
            "encrypted_content": f"EqgfCioIARgBIiQ{n}fake-encrypted",
            "page_age": "April 30, 2026",
        }
        for n, r in enumerate(results)
    ]
    block({"type": "web_search_tool_result", "tool_use_id": tool_id, "content": entries}, [])
    if text:
        deltas: list[dict[str, Any]] = []
        if results:
            first = results[0]
            citation = {
                "type": "web_search_result_location",
                "cited_text": first["snippet"] or first["title"],
                "url": first["url"],
                "title": first["title"],
                "encrypted_index": "Eo8BCioIAhgBIiQfake",
            }
            deltas.append({"type": "citations_delta", "citation": citation})
        deltas.append({"type": "text_delta", "text": text})
        block({"type": "text", "text": "", "citations": []}, deltas)
    end_usage = {
        "input_tokens": usage["input_tokens"],
        "output_tokens": usage["output_tokens"],
        "server_tool_use": {"web_search_requests": int(scenario["web_search"].get("requests", 1))},
    }
    tail = [
        sse({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": end_usage}, "message_delta"),
        sse({"type": "message_stop"}, "message_stop"),
    ]  # fmt: skip
    return events, tail


# --------------------------------------------------------------------------- OpenAI Responses


def _responses(scenario: dict[str, Any]) -> tuple[list[bytes], list[bytes]]:
    query, results, _preamble = _search(scenario)
    usage = _usage(scenario)
    text = str(scenario.get("text", ""))
    model = scenario.get("model", "gpt-fake")
    events: list[bytes] = []

    def send(data: dict[str, Any]) -> None:
        events.append(sse(data, data["type"]))

    base = {
        "id": "resp_fake_search",
        "object": "response",
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    send({"type": "response.created", "response": base})
    search_id = "ws_fake_1"
    send({"type": "response.output_item.added", "output_index": 0, "item": {"type": "web_search_call", "id": search_id, "status": "in_progress"}})  # fmt: skip
    for stage in ("in_progress", "searching", "completed"):
        send({"type": f"response.web_search_call.{stage}", "output_index": 0, "item_id": search_id})
    search = {
        "type": "web_search_call",
        "id": search_id,
        "status": "completed",
        "action": {
            "type": "search",
            "query": query,
            "sources": [{"type": "url", "url": r["url"]} for r in results],
        },
    }
    send({"type": "response.output_item.done", "output_index": 0, "item": search})
    annotations = [
        {
            "type": "url_citation",
            "start_index": 0,
            "end_index": len(text),
            "url": r["url"],
            "title": r["title"],
        }
        for r in results[:2]
    ]
    message_id = "msg_fake_search"
    send({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": message_id, "role": "assistant", "content": []}})  # fmt: skip
    if text:
        send({"type": "response.output_text.delta", "item_id": message_id, "output_index": 1, "content_index": 0, "delta": text})  # fmt: skip
    for n, note in enumerate(annotations):
        send({"type": "response.output_text.annotation.added", "item_id": message_id, "output_index": 1, "content_index": 0, "annotation_index": n, "annotation": note})  # fmt: skip
    message = {
        "type": "message",
        "id": message_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": annotations}],
    }
    send({"type": "response.output_item.done", "output_index": 1, "item": message})
    done = {
        **base,
        "status": "completed",
        "output": [search, message],
        "usage": {
            "input_tokens": usage["input_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["input_tokens"] + usage["output_tokens"],
        },
    }
    return events, [sse({"type": "response.completed", "response": done}, "response.completed")]


# --------------------------------------------------------------------------- Gemini


def _gemini(scenario: dict[str, Any]) -> tuple[list[bytes], list[bytes]]:
    query, results, _preamble = _search(scenario)
    usage = _usage(scenario)
    text = str(scenario.get("text", ""))
    model = scenario.get("model", "gemini-fake")
    half = len(text) // 2
    events: list[bytes] = []
    if half:
        first = {"candidates": [{"content": {"role": "model", "parts": [{"text": text[:half]}]}, "index": 0}]}
        events.append(sse({**first, "modelVersion": model}))
    rest = text[half:]
    grounding = {
        "searchEntryPoint": {"renderedContent": '<style>.container{}</style><div class="container">Google</div>'},
        "groundingChunks": [
            {"web": {"uri": f"https://vertexaisearch.cloud.google.com/grounding-api-redirect/fake{n}", "title": r["title"] or r["url"]}}
            for n, r in enumerate(results)
        ],
        "groundingSupports": [
            {"segment": {"startIndex": 0, "endIndex": len(text.encode()), "text": text}, "groundingChunkIndices": list(range(len(results))), "confidenceScores": [0.9] * len(results)}
        ] if results else [],
        "webSearchQueries": [query] + list(scenario["web_search"].get("more_queries") or []),
    }  # fmt: skip
    metadata = {
        "promptTokenCount": usage["input_tokens"],
        "candidatesTokenCount": usage["output_tokens"],
        "toolUsePromptTokenCount": 150,
        "totalTokenCount": usage["input_tokens"] + usage["output_tokens"] + 150,
    }
    last = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": rest}]},
                "finishReason": "STOP",
                "index": 0,
                "groundingMetadata": grounding,
            }
        ],
        "usageMetadata": metadata,
        "modelVersion": model,
    }
    return events, [sse(last)]
