"""Every message `wyckoff acp` sends, checked against the protocol's published JSON schema.

The package's own models are lenient where the schema leaves a field open; a strict
client is not. `WireCheck` is a stream observer for the package's connection: it sees
each raw JSON-RPC message in both directions, remembers which method each of the
client's requests called (to check the agent's answer against that method's response
type), and records every problem it finds. `assert_clean()` fails with all of them.

Beyond the schema, it checks what published clients rely on: `rawInput` and
`rawOutput` are JSON objects (toad reads them as dicts and rejects anything else).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from acp.connection import StreamDirection, StreamEvent
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

SCHEMA = Path(__file__).parent / "protocol" / "schema.json"

RESPONSE_TYPES = {
    "initialize": "InitializeResponse",
    "authenticate": "AuthenticateResponse",
    "session/new": "NewSessionResponse",
    "session/load": "LoadSessionResponse",
    "session/list": "ListSessionsResponse",
    "session/set_mode": "SetSessionModeResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
    "session/prompt": "PromptResponse",
}
REQUEST_TYPES = {
    "session/request_permission": "RequestPermissionRequest",
    "fs/read_text_file": "ReadTextFileRequest",
    "fs/write_text_file": "WriteTextFileRequest",
    "terminal/create": "CreateTerminalRequest",
    "terminal/output": "TerminalOutputRequest",
    "terminal/release": "ReleaseTerminalRequest",
    "terminal/wait_for_exit": "WaitForTerminalExitRequest",
    "terminal/kill": "KillTerminalRequest",
}
NOTIFICATION_TYPES = {"session/update": "SessionNotification"}


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return loaded


@cache
def validator(definition: str) -> Draft202012Validator:
    """A validator for one of the schema's `$defs` (its references resolved in the file)."""
    whole = _schema()
    if definition not in whole["$defs"]:
        raise KeyError(f"the ACP schema has no definition {definition!r}")
    return Draft202012Validator({"$defs": whole["$defs"], "$ref": f"#/$defs/{definition}"})


def problems(definition: str, value: Any) -> list[str]:
    error = best_match(validator(definition).iter_errors(value))
    if error is None:
        return []
    where = "/".join(str(part) for part in error.absolute_path) or "(top)"
    return [f"{definition} at {where}: {error.message}"]


def raw_fields_are_objects(value: Any, where: str = "") -> list[str]:
    """`rawInput` / `rawOutput` anywhere in a message must be objects when present."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("rawInput", "rawOutput") and item is not None and not isinstance(item, dict):
                found.append(f"{where}/{key} is {type(item).__name__}, clients expect an object")
            found.extend(raw_fields_are_objects(item, f"{where}/{key}"))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(raw_fields_are_objects(item, f"{where}/{index}"))
    return found


class WireCheck:
    """Observer of one client connection to `wyckoff acp`."""

    def __init__(self) -> None:
        self.asked: dict[Any, str] = {}  # the client's request id → its method
        self.checked = 0
        self.found: list[str] = []

    def __call__(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction is StreamDirection.OUTGOING:  # the client's own message
            if "method" in message and "id" in message:
                self.asked[message["id"]] = message["method"]
            return
        self.checked += 1
        for problem in self.check(message):
            self.found.append(f"{problem}\n    in {json.dumps(message)[:600]}")

    def check(self, message: dict[str, Any]) -> list[str]:
        found = raw_fields_are_objects(message)
        if message.get("jsonrpc") != "2.0":
            found.append("not a JSON-RPC 2.0 message")
        method = message.get("method")
        if method is not None:
            table = REQUEST_TYPES if "id" in message else NOTIFICATION_TYPES
            definition = table.get(method)
            if definition is None:
                return [*found, f"the agent sent {method!r}, which the schema does not define"]
            return found + problems(definition, message.get("params"))
        asked = self.asked.pop(message.get("id"), None)
        if "error" in message:
            return found + problems("Error", message["error"])
        if asked is None:
            return [*found, f"a response to no request the client made (id {message.get('id')!r})"]
        definition = RESPONSE_TYPES.get(asked)
        if definition is None:
            return [*found, f"a response to {asked!r}, which this check has no type for"]
        return found + problems(definition, message.get("result"))

    def assert_clean(self) -> None:
        assert self.checked, "the wire check saw no message from the agent"
        assert not self.found, "messages the ACP schema rejects:\n" + "\n".join(self.found)
