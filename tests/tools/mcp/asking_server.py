"""A real MCP server (the SDK's MCPServer) that asks its client for things during its
tool calls, for the tests of sampling, elicitation and roots.

    python asking_server.py        # stdio

Tools:
- `ask_model(question, hint="")`: `sampling/createMessage` (system prompt "Be brief.",
  maxTokens 64, the hint as a model preference); returns what the model said, or why not;
- `ask_user()`: `elicitation/create` with a form of every field kind; returns the
  action and content as JSON;
- `ask_default()`: a form whose one required field has a default;
- `roots()`: `roots/list`, the URIs one a line.
"""

from __future__ import annotations

import json

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import ModelHint, ModelPreferences, SamplingMessage, TextContent

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "description": "What to call you"},
        "age": {"type": "integer", "title": "Age"},
        "height": {"type": "number", "title": "Height (m)", "default": 1.8},
        "subscribe": {"type": "boolean", "title": "Subscribe", "default": False},
        "colour": {
            "type": "string",
            "title": "Colour",
            "enum": ["red", "green"],
            "enumNames": ["Red", "Green"],
        },
    },
    "required": ["name", "colour"],
}


def build() -> MCPServer:
    server = MCPServer("asker")

    @server.tool(description="Ask the client's model a question.")
    async def ask_model(question: str, ctx: Context, hint: str = "") -> str:
        preferences = ModelPreferences(hints=[ModelHint(name=hint)]) if hint else None
        try:
            result = await ctx.session.create_message(
                [SamplingMessage(role="user", content=TextContent(type="text", text=question))],
                max_tokens=64,
                system_prompt="Be brief.",
                model_preferences=preferences,
                related_request_id=ctx.request_id,
            )
        except MCPError as exc:
            return f"refused: {exc.error.message}"
        content = result.content
        text = content.text if isinstance(content, TextContent) else str(content)
        return f"{result.model} said: {text}"

    @server.tool(description="Ask the user to fill in a form.")
    async def ask_user(ctx: Context) -> str:
        try:
            result = await ctx.session.elicit_form(
                "Tell me about you", FORM, related_request_id=ctx.request_id
            )
        except MCPError as exc:
            return f"refused: {exc.error.message}"
        return json.dumps({"action": result.action, "content": result.content}, sort_keys=True)

    @server.tool(description="Ask the user to confirm a choice that has a default.")
    async def ask_default(ctx: Context) -> str:
        form = {
            "type": "object",
            "properties": {"colour": {"type": "string", "enum": ["red", "green"], "default": "red"}},
            "required": ["colour"],
        }
        result = await ctx.session.elicit_form("Which colour?", form, related_request_id=ctx.request_id)
        return json.dumps({"action": result.action, "content": result.content}, sort_keys=True)

    @server.tool(description="The client's roots.")
    async def roots(ctx: Context) -> str:
        listed = await ctx.session.list_roots()
        return "\n".join(str(root.uri) for root in listed.roots)

    return server


if __name__ == "__main__":
    build().run("stdio")
