"""Custom slash commands through the controller and `wyckoff run`: arguments,
namespaces, `@file`, `!`cmd`` with approval, allowed-tools for one turn, the model,
shadowed built-ins, headless expansion."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.tui.support import make_controller
from wyckoff_cli.cli.main import main
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.controller import ChatController, TurnRequest
from wyckoff_cli.session.custom_commands import (
    discover_commands,
    project_grants,
    substitute_arguments,
    translate_rule,
)
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.project_grants import trust_grants


def command(root: Path, relative: str, text: str, folder: str = ".wyckoff/commands") -> Path:
    path = root / folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


async def run(
    chat: ChatController, request: TurnRequest, answer: ApprovalDecision | None = None
) -> list[ev.RuntimeEvent]:
    events: list[ev.RuntimeEvent] = []
    async for event in chat.handle(rq.Turn(request.text, request.required_tools, request)):
        events.append(event)
        if isinstance(event, ev.ApprovalRequested) and not event.answered:
            event.respond(answer or ApprovalDecision.deny(None))
    return events


def test_discovery_namespaces_sources_and_front_matter(workspace: Path) -> None:
    command(
        workspace,
        "git/commit.md",
        "---\ndescription: Commit\nargument-hint: [message]\n"
        "allowed-tools: Bash(git add:*), Bash(git commit:*), Read\nmodel: scripted:other\n"
        "required-tools: [run_shell]\n---\nCommit: $ARGUMENTS\n",
    )
    command(workspace, "git/commit.md", "claude's", folder=".claude/commands")
    command(workspace, "review.md", "Review the diff", folder=".claude/commands")
    command(paths.config_dir(), "mine.md", "---\nallowed-tools: Bash(unclosed\n---\nx", folder="commands")
    catalog = discover_commands(workspace)
    assert [c.name for c in catalog.commands] == ["git:commit", "mine", "review"]
    commit = catalog.get("git:commit")
    assert commit is not None and commit.source == "project" and commit.description == "Commit"
    assert commit.allowed_tools == ("run_shell(git add:*)", "run_shell(git commit:*)", "read_file")
    assert commit.model == "scripted:other" and commit.required_tools == ("run_shell",)
    assert commit.argument_hint == "[message]"
    review = catalog.get("review")
    assert (
        review is not None
        and review.source == "project (.claude)"
        and review.description == "Review the diff"
    )
    assert catalog.get("mine") is not None and any("allowed-tools" in p for p in catalog.problems)


@pytest.mark.parametrize(
    ("body", "argument", "expected"),
    [
        ("Fix issue $ARGUMENTS now", "#12 quickly", "Fix issue #12 quickly now"),
        ("From $1 to $2", '"New York" Paris', "From New York to Paris"),
        ("Only $1, not $3", "a b", "Only a, not "),
        ("No placeholders", "extra words", "No placeholders\n\nARGUMENTS: extra words"),
        ("No placeholders", "", "No placeholders"),
        ("Cost is $10", "x", "Cost is $10\n\nARGUMENTS: x"),
    ],
)
def test_arguments(body: str, argument: str, expected: str) -> None:
    assert substitute_arguments(body, argument) == expected


@pytest.mark.parametrize(
    ("written", "rule"),
    [
        ("Bash(git add:*)", "run_shell(git add:*)"),
        ("Bash", "run_shell"),
        ("Edit(src/**)", "edit_file(src/**)"),
        ("Write", "write_file"),
        ("WebFetch(domain:docs.python.org)", "web_fetch(domain:docs.python.org)"),
        ("run_shell(pytest*)", "run_shell(pytest*)"),
        ("mcp__github__list_issues", "mcp__github__list_issues"),
    ],
)
def test_claude_rules_are_translated(written: str, rule: str) -> None:
    assert translate_rule(written) == rule


async def test_a_command_becomes_a_turn_with_its_arguments(workspace: Path) -> None:
    command(workspace, "git/commit.md", "---\ndescription: Commit\n---\nCommit with message: $ARGUMENTS\n")
    chat, provider = make_controller(workspace, [{"text": "done"}])
    request = chat.expand("git:commit", "fix the parser")
    assert request is not None and request.shown == "/git:commit fix the parser"
    await run(chat, request)
    assert provider.requests[0].messages[-1].text == "Commit with message: fix the parser\n"
    listed = {c.name: c for c in chat.slash_commands}
    assert (
        listed["git:commit"].usage == "/git:commit (project)" and listed["git:commit"].description == "Commit"
    )
    await chat.aclose()


async def test_at_file_is_attached_as_a_typed_mention(workspace: Path) -> None:
    (workspace / "notes.md").write_text("notes")
    command(workspace, "summarise.md", "Summarise @notes.md")
    chat, _ = make_controller(workspace, [{"text": "no"}, {"text": "no"}, {"text": "no"}])
    request = chat.expand("summarise", "")
    assert request is not None
    events = await run(chat, request)
    retries = [e for e in events if isinstance(e, ev.RetryInjected)]
    assert retries and retries[0].missing_tools == ["read_file"]
    await chat.aclose()


async def test_shell_snippet_asks_the_first_time_then_inlines_its_output(workspace: Path) -> None:
    command(workspace, "status.md", "Status:\n!`echo snippet-output`\nExplain it.")
    chat, provider = make_controller(workspace, [{"text": "a"}, {"text": "b"}])
    request = chat.expand("status", "")
    assert request is not None
    events = await run(chat, request, ApprovalDecision.allow())
    asked = [e for e in events if isinstance(e, ev.ApprovalRequested)]
    assert len(asked) == 1 and asked[0].args == {"command": "echo snippet-output"}
    sent = provider.requests[0].messages[-1].text
    assert "snippet-output" in sent and "!`" not in sent and "[exit code 0]" not in sent
    again = await run(chat, request)  # approved this session: not asked again
    assert not [e for e in again if isinstance(e, ev.ApprovalRequested)]
    assert "snippet-output" in provider.requests[1].messages[-1].text
    await chat.aclose()


async def test_a_denied_snippet_sends_nothing(workspace: Path) -> None:
    command(workspace, "status.md", "!`echo secret`")
    chat, provider = make_controller(workspace, [{"text": "never"}])
    request = chat.expand("status", "")
    assert request is not None
    events = await run(chat, request, ApprovalDecision.deny(None))
    assert provider.requests == []
    assert any(isinstance(e, ev.Notice) and "not approved" in e.message for e in events)
    assert isinstance(events[-1], ev.TurnDone)
    await chat.aclose()


async def test_snippets_never_run_in_plan_mode(workspace: Path) -> None:
    command(workspace, "status.md", "!`touch made-by-snippet`")
    chat, provider = make_controller(workspace, [{"text": "never"}])
    chat.handle_now(rq.SetMode("plan"))
    request = chat.expand("status", "")
    assert request is not None
    events = await run(chat, request, ApprovalDecision.allow())
    assert not [e for e in events if isinstance(e, ev.ApprovalRequested)]
    assert not (workspace / "made-by-snippet").exists() and provider.requests == []
    assert any(isinstance(e, ev.Notice) and "plan mode" in e.message for e in events)
    await chat.aclose()


async def test_allowed_tools_hold_for_that_turn_only(workspace: Path) -> None:
    command(workspace, "hello.md", "---\nallowed-tools: Bash(echo:*)\n---\nSay hello")
    trust_grants(project_grants(workspace))  # a project file grants only once trusted (issue 27)
    shell = {"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "echo hi"}}]}
    chat, _ = make_controller(workspace, [shell, {"text": "ok"}, {**shell}, {"text": "ok"}])
    request = chat.expand("hello", "")
    assert request is not None and request.allow == ("run_shell(echo:*)",)
    first = await run(chat, request)
    assert not [e for e in first if isinstance(e, ev.ApprovalRequested)]
    assert any(isinstance(e, ev.ToolSucceeded) for e in first)
    plain = await run(chat, TurnRequest("again", "again"))
    assert [e for e in plain if isinstance(e, ev.ApprovalRequested)]  # asked again
    assert "run_shell(echo:*)" not in chat.session.policy.allow
    await chat.aclose()


async def test_the_command_model_answers_that_turn(workspace: Path) -> None:
    from wyckoff_cli.providers.scripted import ScriptedProvider

    command(workspace, "fast.md", "---\nmodel: scripted:other\n---\nQuick answer")
    chat, main_provider = make_controller(workspace, [{"text": "main"}])
    other = ScriptedProvider([{"text": "other"}], model="scripted:other")
    made: list[str] = []

    def factory(model: str) -> ScriptedProvider:
        made.append(model)
        return other if model == "scripted:other" else main_provider

    chat.builder.provider_factory = factory
    chat.check_model = lambda _name: None  # type: ignore[method-assign]
    request = chat.expand("fast", "")
    assert request is not None and request.model == "scripted:other"
    events = await run(chat, request)
    assert "scripted:other" in made and len(other.requests) == 1
    assert [e.text for e in events if isinstance(e, ev.TurnDone)] == ["other"]
    await run(chat, TurnRequest("next", "next"))
    assert len(main_provider.requests) == 1
    await chat.aclose()


async def test_a_project_command_never_silently_shadows_a_built_in(workspace: Path) -> None:
    command(workspace, "model.md", "---\ndescription: my model notes\n---\nNotes")
    chat, _ = make_controller(workspace, [])
    assert chat.expand("model", "") is None  # the built-in wins
    shown = [c for c in chat.slash_commands if c.name == "model"]
    assert len(shown) == 2 and shown[1].usage == "/model (project)"
    assert "the built-in /model runs" in shown[1].description
    chat.builder.config.commands.prefer.append("model")
    request = chat.expand("model", "")
    assert request is not None and request.text.strip() == "Notes"


async def test_required_tools_feed_the_loop_guard(workspace: Path) -> None:
    command(workspace, "write.md", "---\nrequired-tools: [write_file]\n---\nWrite it")
    chat, _ = make_controller(workspace, [{"text": "no"}, {"text": "no"}, {"text": "no"}])
    request = chat.expand("write", "")
    assert request is not None and request.required_tools == ("write_file",)
    events = await run(chat, request)
    assert any(isinstance(e, ev.RetryInjected) and e.missing_tools == ["write_file"] for e in events)
    await chat.aclose()


def script(tmp_path: Path, rounds: list[Any]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


def first_message(out: str) -> str:
    for line in out.splitlines():
        event = json.loads(line)
        if event["type"] == "message":
            return "".join(p.get("text", "") for p in event["message"]["parts"])
    raise AssertionError("no message")


def test_headless_run_expands_a_command(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command(workspace, "greet.md", "Greet $1 warmly")
    model = script(tmp_path, [{"text": "Hello!"}])
    argv = ["run", "-m", model, "--cwd", str(workspace), "--output-format", "stream-json", "/greet Bob"]
    assert main(argv) == 0
    assert first_message(capsys.readouterr().out) == "Greet Bob warmly"


def test_headless_snippets_need_an_allow_rule(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command(workspace, "status.md", "Output: !`echo from-the-shell`")
    model = script(tmp_path, [{"text": "ok"}])
    base = ["run", "-m", model, "--cwd", str(workspace), "--output-format", "stream-json"]
    assert main([*base, "/status"]) == 1  # nobody to ask: refused, nothing sent
    out = capsys.readouterr().out
    assert '"type": "message"' not in out and "not approved" in out
    assert main([*base, "--allow", "run_shell(echo:*)", "/status"]) == 0
    assert "from-the-shell" in first_message(capsys.readouterr().out)


# ------------------------------------------------- project files grant only once trusted (issue 27)


@pytest.mark.parametrize("folder", [".wyckoff/commands", ".claude/commands", ".claude/commands/ns"])
async def test_an_untrusted_project_command_grants_nothing_in_the_app(workspace: Path, folder: str) -> None:
    command(workspace, "go.md", "---\nallowed-tools: Bash\n---\nSaw !`echo from-snippet`", folder)
    shell = {"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "echo by-model"}}]}
    chat, _ = make_controller(workspace, [shell, {"text": "ok"}])
    name = "ns:go" if folder.endswith("/ns") else "go"
    request = chat.expand(name, "")
    assert request is not None and request.allow == () and request.untrusted
    events = await run(chat, request, ApprovalDecision.allow())
    asked = [e.args["command"] for e in events if isinstance(e, ev.ApprovalRequested)]
    assert asked == ["echo from-snippet", "echo by-model"]  # both asked, never run unasked
    warnings = [e.message for e in events if isinstance(e, ev.Notice) and e.level == "warning"]
    assert any("have not trusted" in w and "wyckoff permissions trust" in w for w in warnings)
    await chat.aclose()


async def test_permissions_trust_in_the_app_trusts_commands_and_allow_rules(workspace: Path) -> None:
    (workspace / ".wyckoff" / "config.toml").write_text(
        '[permissions]\nallow = ["run_shell(echo by-model)"]\n'
    )
    command(workspace, "go.md", "---\nallowed-tools: Bash(echo:*)\n---\nSaw !`echo from-snippet`")
    shell = {"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "echo by-model"}}]}
    chat, _ = make_controller(workspace, [{"text": "hi"}, shell, {"text": "ok"}])
    assert "allow rules in" in chat.untrusted_allow_notice()
    await run(chat, TurnRequest("hi", "hi"))  # the session exists
    assert "run_shell(echo by-model)" not in chat.session.policy.allow
    listed = [e async for e in chat.handle(rq.Permissions())]
    assert "[not trusted: ignored]" in listed[0].text  # type: ignore[attr-defined]
    answer = [e async for e in chat.handle(rq.Permissions(trust=True))]
    assert isinstance(answer[0], ev.Notice) and "go.md" in answer[0].message
    assert "run_shell(echo by-model)" in chat.session.policy.allow  # at once, this session
    assert chat.untrusted_allow_notice() == ""
    request = chat.expand("go", "")
    assert request is not None and request.allow == ("run_shell(echo:*)",) and not request.untrusted
    events = await run(chat, request)
    assert not [e for e in events if isinstance(e, ev.ApprovalRequested)]  # trusted: its grants hold
    await chat.aclose()
