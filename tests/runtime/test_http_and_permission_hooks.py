"""`http` hooks against a real server on 127.0.0.1, and `PermissionRequest` hooks
answering the approval, both as Claude Code documents them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tests.runtime.hook_support import group, hook_command, inputs
from tests.runtime.support import collect, make_runtime, of_type
from tests.runtime.test_claude_hooks import claude_hooks
from tests.runtime.test_user_hooks import Approver, call, shell, tool_result
from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime.hook_config import load_hooks
from wyckoff_cli.storage import paths


class HookServer:
    """Answers POSTs by path: `answers[path] = (status, body)`; records each request."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple[int, str]] = {}
        self.received: list[tuple[str, dict[str, str], Any]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                server.received.append((self.path, dict(self.headers), body))
                if self.path == "/slow":
                    server.release.wait(30)
                status, text = server.answers.get(self.path, (200, ""))
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def server() -> Iterator[HookServer]:
    hooks = HookServer()
    thread = threading.Thread(target=hooks.httpd.serve_forever, daemon=True)
    thread.start()
    yield hooks
    hooks.release.set()
    hooks.httpd.shutdown()
    hooks.httpd.server_close()
    thread.join()


def allow_urls(*patterns: str) -> None:
    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps({"hooks": {"allowed_urls": list(patterns)}}))


def http(url: str, matcher: str = "Bash", **extra: Any) -> dict[str, Any]:
    return {"matcher": matcher, "hooks": [{"type": "http", "url": url, **extra}]}


async def test_an_http_hook_gets_the_claude_payload_and_its_json_blocks(
    workspace: Path, server: HookServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    allow_urls(f"{server.url}/*")
    monkeypatch.setenv("HOOK_TOKEN", "t-123")
    monkeypatch.setenv("OTHER_SECRET", "s-456")
    deny = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "use rg"}}
    server.answers["/pre"] = (200, json.dumps(deny))
    headers = {"Authorization": "Bearer $HOOK_TOKEN", "X-Other": "${OTHER_SECRET}"}
    hooks = claude_hooks(
        workspace,
        {
            "PreToolUse": [
                http(f"{server.url}/pre", headers=headers, allowedEnvVars=["HOOK_TOKEN"], timeout=5)
            ]
        },
    )
    ran: list[str] = []
    runtime, _ = make_runtime([call("grep x"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks])
    events, messages = await collect(runtime)
    assert ran == []
    assert "use rg" in tool_result(messages).text
    ((path, sent_headers, body),) = server.received
    assert path == "/pre" and body["tool_name"] == "Bash" and body["tool_input"] == {"command": "grep x"}
    assert body["hook_event_name"] == "PreToolUse"
    assert sent_headers["Authorization"] == "Bearer t-123"
    assert sent_headers["X-Other"] == ""  # not in allowedEnvVars: never sent
    (ran_event,) = of_type(events, ev.HookRan)
    assert ran_event.outcome == "blocked" and ran_event.command == f"{server.url}/pre"


async def test_a_url_not_allowed_by_the_users_config_is_skipped_and_listed(
    workspace: Path, server: HookServer
) -> None:
    allow_urls("http://127.0.0.1:1/*")
    folder = workspace / ".claude"
    folder.mkdir()
    (folder / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [http(f"{server.url}/pre")]}}))
    found = load_hooks(workspace)
    assert found.specs == []
    assert any("is not in `[hooks] allowed_urls`" in p for p in found.problems)


async def test_a_project_cannot_allow_its_own_urls(workspace: Path, server: HookServer) -> None:
    project = paths.project_config_file(workspace)
    project.parent.mkdir(parents=True, exist_ok=True)
    project.write_text(tomli_w.dumps({"hooks": {"allowed_urls": ["*"]}}))
    folder = workspace / ".claude"
    folder.mkdir()
    (folder / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [http(f"{server.url}/pre")]}}))
    assert load_hooks(workspace).specs == []


@pytest.mark.parametrize(
    ("path", "answer", "outcome"),
    [("/error", (500, "boom"), "error"), ("/notjson", (200, "plain words"), "ok")],
)
async def test_http_failures_do_not_block(
    workspace: Path, server: HookServer, path: str, answer: tuple[int, str], outcome: str
) -> None:
    allow_urls(f"{server.url}/*")
    server.answers[path] = answer
    hooks = claude_hooks(workspace, {"PreToolUse": [http(f"{server.url}{path}")]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call("ls"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, _ = await collect(runtime)
    assert ran == ["ls"]
    (hook,) = of_type(events, ev.HookRan)
    assert hook.outcome == outcome
    if outcome == "error":
        assert "HTTP 500" in hook.message


async def test_an_http_hook_past_its_timeout_does_not_block(workspace: Path, server: HookServer) -> None:
    allow_urls(f"{server.url}/*")
    hooks = claude_hooks(workspace, {"PreToolUse": [http(f"{server.url}/slow", timeout=0.5)]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call("ls"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, _ = await collect(runtime)
    assert ran == ["ls"]
    assert of_type(events, ev.HookRan)[0].outcome == "timeout"


async def test_an_unreachable_hook_server_is_a_shown_error(workspace: Path) -> None:
    allow_urls("http://127.0.0.1:*/*")
    hooks = claude_hooks(workspace, {"PreToolUse": [http("http://127.0.0.1:9/pre")]})
    runtime, _ = make_runtime(
        [call("ls"), {"text": "ok"}], [shell([])], workspace, hooks=[hooks], approver=Approver()
    )
    events, _ = await collect(runtime)
    (hook,) = of_type(events, ev.HookRan)
    assert hook.outcome == "error" and "cannot reach" in hook.message


# ---------------------------------------------------------------- PermissionRequest


def answer(behavior: str, **more: Any) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": behavior, **more},
        }
    }


async def test_permission_request_allow_answers_the_question(workspace: Path, tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "perm", stdout=answer("allow"))
    hooks = claude_hooks(workspace, {"PermissionRequest": [group(command, "Bash")]})
    approver = Approver()
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call("make"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=approver
    )
    await collect(runtime)
    assert ran == ["make"] and approver.asked == []
    (record,) = inputs(log)
    assert record["input"]["hook_event_name"] == "PermissionRequest"
    assert record["input"]["tool_name"] == "Bash" and record["input"]["tool_input"] == {"command": "make"}


@pytest.mark.parametrize(
    ("stdout", "code", "stderr", "reason"),
    [
        (answer("deny", message="not on Fridays"), 0, "", "not on Fridays"),
        ("", 2, "refused by policy script", "refused by policy script"),
    ],
)
async def test_permission_request_deny_refuses_without_asking(
    workspace: Path, tmp_path: Path, stdout: Any, code: int, stderr: str, reason: str
) -> None:
    command, _ = hook_command(tmp_path / "h", "perm", stdout=stdout, code=code, stderr=stderr)
    hooks = claude_hooks(workspace, {"PermissionRequest": [group(command)]})
    approver = Approver()
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call("make"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=approver
    )
    _, messages = await collect(runtime)
    assert ran == [] and approver.asked == []
    assert reason in tool_result(messages).text


async def test_permission_request_updated_input_is_checked_again(workspace: Path, tmp_path: Path) -> None:
    from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

    output = answer("allow", updatedInput={"command": "git push --force"})
    command, _ = hook_command(tmp_path / "h", "perm", stdout=output)
    hooks = claude_hooks(workspace, {"PermissionRequest": [group(command)]})
    ran: list[str] = []
    policy = ApprovalPolicy(deny=["Bash(git push:*)"])
    rounds = [call("make"), {"text": "ok"}]
    runtime, _ = make_runtime(
        rounds, [shell(ran)], workspace, hooks=[hooks], policy=policy, approver=Approver()
    )
    _, messages = await collect(runtime)
    assert ran == []  # the changed call hits the deny rule, though a person would have allowed it
    assert tool_result(messages).is_error


async def test_permission_request_is_not_run_when_nothing_is_asked(workspace: Path, tmp_path: Path) -> None:
    from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

    command, log = hook_command(tmp_path / "h", "perm", stdout=answer("deny"))
    hooks = claude_hooks(workspace, {"PermissionRequest": [group(command)]})
    ran: list[str] = []
    policy = ApprovalPolicy(allow=["Bash(make:*)"])
    runtime, _ = make_runtime(
        [call("make"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], policy=policy
    )
    await collect(runtime)
    assert ran == ["make"] and inputs(log) == []


async def test_notification_gets_claude_codes_notification_type(workspace: Path, tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "note")
    hooks = claude_hooks(workspace, {"Notification": [group(command, "permission_prompt")]})
    await hooks.notification("Wyckoff needs your permission to use run_shell", "permission_prompt")
    await hooks.notification("idle", "idle_prompt")
    (record,) = inputs(log)
    assert record["input"]["notification_type"] == "permission_prompt"
