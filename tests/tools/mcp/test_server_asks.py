"""A real MCP server (asking_server.py, the SDK's MCPServer) asks Wyckoff for the model
(sampling) and the user (elicitation) during its tool calls: each is asked about through
the runtime's `CallAsker` under the real `ApprovalPolicy`, as a tool call is."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import HERE, stdio_spec
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.runtime.call_asks import CallAsker
from wyckoff_cli.tools.base import ToolContext, ToolOutcome
from wyckoff_cli.tools.mcp.server_asks import SampledReply, SamplingRequest, pick_model
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

pytestmark = pytest.mark.timeout(120)
ASKER = HERE / "asking_server.py"


def asker_spec(**changes: Any) -> Any:
    return stdio_spec("asker", command=sys.executable, args=(str(ASKER),), **changes)


class RecordingSampler:
    """Stands in for the session's model (the real one runs in test_server_ask_turns.py)."""

    def __init__(self) -> None:
        self.requests: list[SamplingRequest] = []

    async def __call__(self, request: SamplingRequest) -> SampledReply:
        self.requests.append(request)
        return SampledReply("hello from the model", "fake:model", Usage(12, 3))


class Person:
    """Answers each approval request with the next of `answers` (after it was emitted)."""

    def __init__(self, *answers: ApprovalDecision) -> None:
        self.answers = list(answers)
        self.events: list[ev.RuntimeEvent] = []

    def put(self, event: ev.RuntimeEvent) -> None:
        self.events.append(event)
        if isinstance(event, ev.ApprovalRequested):
            answer = self.answers.pop(0)
            asyncio.get_running_loop().call_soon(event.respond, answer)

    def requests(self) -> list[ev.ApprovalRequested]:
        return [e for e in self.events if isinstance(e, ev.ApprovalRequested)]

    def decided(self) -> list[str]:
        return [e.decision for e in self.events if isinstance(e, ev.ApprovalDecided)]


def context(workspace: Path, policy: ApprovalPolicy, person: Person) -> ToolContext:
    ctx = ToolContext(workspace=workspace, call_id="call-1")
    ctx.emit_event = person.put
    ctx.ask = CallAsker(policy, ctx, "call-1", person.put)
    return ctx


async def call(started: Any, tool: str, args: dict[str, Any], ctx: ToolContext) -> str:
    found = started.registry.get(f"mcp__asker__{tool}")
    assert found is not None, started.notices()
    outcome = await found.run(args, ctx)
    return outcome.text if isinstance(outcome, ToolOutcome) else str(outcome)


@pytest.fixture
async def asker(start: Any) -> Any:
    sampler = RecordingSampler()
    started = start(asker_spec())
    started.manager.use_model(sampler)
    await started.manager.wait_ready()
    assert started.manager.statuses()[0].state == "connected", started.manager.statuses()[0].reason
    started.sampler = sampler
    return started


async def test_an_approved_sampling_request_runs_on_the_model_and_is_attributed(
    asker: Any, tmp_path: Path
) -> None:
    person = Person(ApprovalDecision.allow())
    text = await call(
        asker,
        "ask_model",
        {"question": "Say hello", "hint": "sonnet"},
        context(tmp_path, ApprovalPolicy(), person),
    )
    assert text == "fake:model said: hello from the model"
    (request,) = person.requests()
    assert request.name == "McpSampling" and request.id == "call-1.ask-1"
    assert request.args["server"] == "asker"
    assert request.args["messages"] == [{"role": "user", "text": "Say hello"}]
    assert request.args["system_prompt"] == "Be brief." and request.args["max_tokens"] == 64
    assert request.rule == "McpSampling(asker)"  # what "always" would save
    (asked,) = asker.sampler.requests
    assert asked.model_hints == ("sonnet",) and asked.system_prompt == "Be brief." and asked.max_tokens == 64
    (usage,) = [e for e in person.events if isinstance(e, ev.UsageReported)]
    assert (usage.purpose, usage.source, usage.model) == ("mcp_sampling", "asker", "fake:model")
    assert (usage.input_tokens, usage.output_tokens) == (12, 3)
    assert person.decided() == ["allow"]


async def test_a_denied_sampling_request_reaches_the_server_as_a_refusal(asker: Any, tmp_path: Path) -> None:
    person = Person(ApprovalDecision.deny("not now"))
    text = await call(
        asker, "ask_model", {"question": "Say hello"}, context(tmp_path, ApprovalPolicy(), person)
    )
    assert text == "refused: the user did not allow asker to use the model: not now"
    assert asker.sampler.requests == []
    assert person.decided() == ["deny"]


async def test_always_saves_the_servers_sampling_rule_and_stops_asking(asker: Any, tmp_path: Path) -> None:
    policy = ApprovalPolicy()
    person = Person(ApprovalDecision.always())
    ctx = context(tmp_path, policy, person)
    await call(asker, "ask_model", {"question": "one"}, ctx)
    assert policy.session_allow == ["McpSampling(asker)"]
    text = await call(asker, "ask_model", {"question": "two"}, ctx)
    assert text.endswith("hello from the model")
    assert len(person.requests()) == 1
    assert person.decided() == ["always", "auto_allow"]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (ApprovalPolicy(deny=["McpSampling(asker)"]), "refused by the deny rule McpSampling(asker)"),
        (ApprovalPolicy(deny=["McpSampling"]), "refused by the deny rule McpSampling"),
        (ApprovalPolicy(deny=["McpSampling(ask*)"]), "refused by the deny rule McpSampling(ask*)"),
        (ApprovalPolicy(mode="yolo", deny=["McpSampling(asker)"]), "refused by the deny rule"),
    ],
    ids=["server", "every-server", "glob", "deny-beats-yolo"],
)
async def test_deny_rules_refuse_sampling_without_asking(
    asker: Any, tmp_path: Path, policy: ApprovalPolicy, expected: str
) -> None:
    person = Person()
    text = await call(asker, "ask_model", {"question": "hi"}, context(tmp_path, policy, person))
    assert text.startswith("refused: the user did not allow asker to use the model: ")
    assert expected in text
    assert person.requests() == [] and asker.sampler.requests == []


@pytest.mark.parametrize(
    "policy",
    [
        ApprovalPolicy(allow=["McpSampling(asker)"]),
        ApprovalPolicy(allow=["McpSampling"]),
        ApprovalPolicy(mode="yolo"),
    ],
    ids=["rule", "every-server", "yolo"],
)
async def test_allow_rules_and_yolo_run_sampling_without_asking(
    asker: Any, tmp_path: Path, policy: ApprovalPolicy
) -> None:
    person = Person()
    text = await call(asker, "ask_model", {"question": "hi"}, context(tmp_path, policy, person))
    assert text.endswith("hello from the model")
    assert person.requests() == [] and person.decided() == ["auto_allow"]


@pytest.mark.parametrize(
    "rule",
    [
        "McpSampling(other)",
        "McpSampling(ask)",  # a prefix of the name
        "McpSampling(askerx)",
        "McpSampling(ASKER)",
        "mcp__asker__*",  # the server's tools, not its requests
        "mcp__*",
        "McpElicitation(asker)",
        "McpElicitation",
    ],
)
async def test_rules_that_do_not_name_this_servers_sampling_do_not_allow_it(
    asker: Any, tmp_path: Path, rule: str
) -> None:
    person = Person(ApprovalDecision.deny())
    text = await call(
        asker, "ask_model", {"question": "hi"}, context(tmp_path, ApprovalPolicy(allow=[rule]), person)
    )
    assert text.startswith("refused:") and len(person.requests()) == 1


async def test_sampling_outside_a_call_with_an_asker_is_refused(asker: Any, tmp_path: Path) -> None:
    text = await call(asker, "ask_model", {"question": "hi"}, ToolContext(workspace=tmp_path))
    assert text == "refused: asker asked for the model outside one of its tool calls: there is no one to ask"
    assert asker.sampler.requests == []


async def test_an_edited_sampling_request_is_what_runs(asker: Any, tmp_path: Path) -> None:
    edited = {
        "server": "asker",
        "messages": [{"role": "user", "text": "Say goodbye"}],
        "system_prompt": "",
        "max_tokens": 10,
    }
    person = Person(ApprovalDecision.edit(edited))
    await call(asker, "ask_model", {"question": "Say hello"}, context(tmp_path, ApprovalPolicy(), person))
    (asked,) = asker.sampler.requests
    assert asked.messages == (("user", "Say goodbye"),) and asked.max_tokens == 10


# ------------------------------------------------------------------ elicitation


def answered(text: str) -> dict[str, Any]:
    return json.loads(text)


async def test_a_filled_form_is_sent_as_typed_values(asker: Any, tmp_path: Path) -> None:
    typed = {"name": "Ada", "age": "36", "height": "", "subscribe": True, "colour": "green"}
    person = Person(ApprovalDecision.edit({"action": "accept", "content": typed}))
    text = await call(asker, "ask_user", {}, context(tmp_path, ApprovalPolicy(), person))
    assert answered(text) == {
        "action": "accept",
        "content": {"name": "Ada", "age": 36, "subscribe": True, "colour": "green"},
    }
    (request,) = person.requests()
    assert request.name == "McpElicitation" and request.rule is None  # a form is never "always"
    assert request.args["message"] == "Tell me about you"
    assert request.args["requested_schema"]["required"] == ["name", "colour"]
    assert request.preview["kind"] == "mcp_elicitation"


@pytest.mark.parametrize(
    ("answer", "action"),
    [
        (ApprovalDecision.edit({"action": "decline"}), "decline"),
        (ApprovalDecision.edit({"action": "cancel"}), "cancel"),
        (ApprovalDecision.deny(), "decline"),  # Esc in the app, "reject" over ACP
        (ApprovalDecision.allow(), "decline"),  # accepted as it is, but a required field has no default
    ],
    ids=["decline", "cancel", "denied", "accept-without-required"],
)
async def test_a_form_declined_or_cancelled(
    asker: Any, tmp_path: Path, answer: ApprovalDecision, action: str
) -> None:
    text = await call(asker, "ask_user", {}, context(tmp_path, ApprovalPolicy(), Person(answer)))
    assert answered(text) == {"action": action, "content": None}


async def test_an_answer_that_does_not_fit_the_form_is_an_error_to_the_server(
    asker: Any, tmp_path: Path
) -> None:
    person = Person(ApprovalDecision.edit({"action": "accept", "content": {"age": "old", "colour": "blue"}}))
    text = await call(asker, "ask_user", {}, context(tmp_path, ApprovalPolicy(), person))
    assert text.startswith("refused: the answer does not fit the form: ")
    assert "Your name is required" in text and "Age must be a whole number" in text
    assert "Colour must be one of red, green" in text


@pytest.mark.parametrize(
    "policy",
    [ApprovalPolicy(mode="yolo"), ApprovalPolicy(allow=["McpElicitation"])],
    ids=["yolo", "allow-rule"],
)
async def test_no_rule_or_mode_fills_a_form(asker: Any, tmp_path: Path, policy: ApprovalPolicy) -> None:
    person = Person(ApprovalDecision.edit({"action": "cancel"}))
    text = await call(asker, "ask_user", {}, context(tmp_path, policy, person))
    assert answered(text)["action"] == "cancel" and len(person.requests()) == 1


async def test_a_deny_rule_declines_a_form_without_asking(asker: Any, tmp_path: Path) -> None:
    person = Person()
    text = await call(
        asker, "ask_user", {}, context(tmp_path, ApprovalPolicy(deny=["McpElicitation(asker)"]), person)
    )
    assert answered(text)["action"] == "decline" and person.requests() == []


@pytest.mark.parametrize("setting", ["decline", "cancel"])
async def test_unattended_forms_get_the_servers_setting(start: Any, tmp_path: Path, setting: str) -> None:
    started = start(asker_spec(elicitation=setting))
    await started.manager.wait_ready()
    unattended = Person(ApprovalDecision.deny("no one to ask", unattended=True))  # a headless run's answer
    text = await call(started, "ask_user", {}, context(tmp_path, ApprovalPolicy(), unattended))
    assert answered(text)["action"] == setting
    text = await call(started, "ask_user", {}, ToolContext(workspace=tmp_path))  # outside an asking call
    assert answered(text)["action"] == setting


# ------------------------------------------------------------------ roots


async def test_roots_follow_the_workspace(start: Any, tmp_path: Path) -> None:
    first, second = tmp_path / "main", tmp_path / "worktree"
    first.mkdir()
    second.mkdir()
    started = start(asker_spec(), root=first)
    await started.manager.wait_ready()
    assert await call(started, "roots", {}, ToolContext(workspace=first)) == first.resolve().as_uri()
    await started.manager.set_root(second)
    assert await call(started, "roots", {}, ToolContext(workspace=second)) == second.resolve().as_uri()


def test_hints_pick_a_model_of_the_session_loosely() -> None:
    models = ["anthropic:claude-sonnet-4-5", "openai:gpt-5"]
    assert pick_model([], models) == models[0]
    assert pick_model(["GPT-5"], models) == "openai:gpt-5"
    assert pick_model(["gemini", "sonnet"], models) == models[0]
    assert pick_model(["llama"], models) == models[0]
