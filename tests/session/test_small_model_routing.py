"""`[routing]` (issue 33): compaction's summary goes to the small model; on any error
the session's model does it instead, with one notice; usage is attributed by purpose."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.session.subagent_support import build, make_builder, run
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.routed import SmallModelRoute
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.session.builder import Session
from wyckoff_cli.testing.fake_server import FakeServer

KEY = "fake-key-for-the-fake-server"
SESSION, SMALL = "anthropic:claude-sonnet-4-5", "anthropic:claude-haiku-4-5"


def _session(workspace: Path, providers: Any, small: str | None = SMALL) -> Session:
    builder = make_builder(workspace, providers)
    builder.manage_context = True
    builder.config.context.memory = False
    builder.config.routing.compaction = small  # (`small` would title the session too)
    return build(builder, SESSION)


async def _compact(session: Session) -> list[ev.RuntimeEvent]:
    event = await session.runtime.compact(session.conversation, session.system_prompt)
    assert event is not None and event.method == "summary"
    sides = session.runtime.side_events()
    for side in sides:
        assert session.recorder is not None
        session.recorder.record(side)
    return sides


async def test_compaction_goes_to_the_small_model_and_is_counted_as_compaction(workspace: Path) -> None:
    with FakeServer() as server:
        server.script(
            *[{"text": f"answer {i}", "usage": {"input_tokens": 100, "output_tokens": 5}} for i in range(3)],
            {"text": "SUMMARY of the talk", "usage": {"input_tokens": 700, "output_tokens": 30}},
        )

        def providers(model: str) -> Any:
            vendor, name = model.split(":", 1)
            return build_provider(ModelSpec(vendor, name, base_url=server.url, api_key=KEY))

        session = _session(workspace, providers)
        for i in range(3):
            await run(session, f"question {i}")
        sides = await _compact(session)
        bodies = server.bodies
        directory = session.recorder.directory if session.recorder is not None else None
        await session.aclose()
    assert [body["model"] for body in bodies] == ["claude-sonnet-4-5"] * 3 + ["claude-haiku-4-5"]
    usage = [e for e in sides if isinstance(e, ev.UsageReported)]
    assert [(u.model, u.purpose, u.input_tokens) for u in usage] == [(SMALL, "compaction", 700)]
    assert not any(isinstance(e, ev.Notice) for e in sides)

    from wyckoff_cli.cli.usage_cmd import collect_usage

    assert directory is not None
    since = datetime.now(UTC) - timedelta(days=1)
    by_purpose = collect_usage([directory], since, lambda m, u: None, by="purpose")
    assert by_purpose["compaction"].calls == 1 and by_purpose["compaction"].input_tokens == 700
    assert by_purpose["turn"].calls == 3
    by_model = collect_usage([directory], since, lambda m, u: None)
    assert by_model[SMALL].calls == 1


async def test_a_failing_small_model_falls_back_to_the_sessions_with_one_notice(workspace: Path) -> None:
    made = {
        SESSION: ScriptedProvider(
            [{"text": f"answer {i}"} for i in range(3)]
            + [{"text": "SUMMARY one"}, {"text": "x"}, {"text": "SUMMARY two"}],
            model=SESSION,
        ),
        SMALL: ScriptedProvider(
            [{"error": {"kind": "auth", "message": "bad key for the small model"}}], model=SMALL
        ),
    }
    session = _session(workspace, lambda model: made[model])
    for i in range(3):
        await run(session, f"question {i}")
    sides = await _compact(session)
    notices = [e.message for e in sides if isinstance(e, ev.Notice)]
    assert len(notices) == 1 and SMALL in notices[0] and SESSION in notices[0]
    usage = [e for e in sides if isinstance(e, ev.UsageReported)]
    assert [(u.model, u.purpose) for u in usage] == [(SESSION, "compaction")]
    assert "SUMMARY one" in session.conversation[0].text
    # later: straight to the session's model, no second notice
    await run(session, "more")
    sides = await _compact(session)
    assert not any(isinstance(e, ev.Notice) for e in sides)
    assert len(made[SMALL].requests) == 1
    await session.aclose()


async def test_a_small_model_that_cannot_be_built_falls_back_too() -> None:
    session_model = ScriptedProvider([{"text": "from the session's model"}], model=SESSION)

    def broken() -> Any:
        raise ConfigError("unknown model 'tiny'")

    route = SmallModelRoute("tiny", broken, "title")
    response = await route.over(session_model).chat([], [], "")
    assert response.text == "from the session's model" and route.served == SESSION
    assert route.take_notices() == [
        f"The small model tiny failed for title (ConfigError: unknown model 'tiny'); using {SESSION} for it "
        "from now on."
    ]
    assert route.take_notices() == []


def test_per_purpose_models_override_small() -> None:
    from wyckoff_cli.storage.config_agents import RoutingConfig

    routing = RoutingConfig(small="s", compaction="c")
    assert (routing.model_for("compaction"), routing.model_for("memory_flush")) == ("c", "s")
    assert RoutingConfig().model_for("compaction") is None


async def test_a_title_appears_after_the_first_turn(workspace: Path) -> None:
    with FakeServer() as server:
        server.script(
            {"text": "The redirect now goes to /home.", "usage": {"input_tokens": 100, "output_tokens": 9}},
            {"text": '"Fix the login redirect."', "usage": {"input_tokens": 60, "output_tokens": 5}},
            {"text": "Done again."},
        )

        def providers(model: str) -> Any:
            vendor, name = model.split(":", 1)
            return build_provider(ModelSpec(vendor, name, base_url=server.url, api_key=KEY))

        builder = make_builder(workspace, providers)
        builder.config.routing.title = SMALL
        session = build(builder, SESSION)
        first = await run(session, "the login page redirects to /404, please fix it")
        assert session.recorder is not None
        # the title call is the turn's last event before its done, counted in the done's totals
        done = first[-1]
        assert isinstance(done, ev.TurnDone) and done.usage["input_tokens"] == 160
        title_usage = first[-2]
        assert isinstance(title_usage, ev.UsageReported) and title_usage.purpose == "title"
        assert session.recorder.info.title == "Fix the login redirect"
        await run(session, "and the logout one")  # no second title
        bodies = server.bodies
        directory = session.recorder.directory
        await session.aclose()
        listed = builder.sessions().list(workspace)
    assert [body["model"] for body in bodies] == [
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "claude-sonnet-4-5",
    ]
    assert "the login page redirects to /404" in json_text(bodies[1])
    assert [info.title for info in listed] == ["Fix the login redirect"]

    from wyckoff_cli.cli.usage_cmd import collect_usage
    from wyckoff_cli.storage.sessions import summarize

    assert summarize(directory).title == "Fix the login redirect"  # rebuilt from the logs too
    by_purpose = collect_usage(
        [directory], datetime.now(UTC) - timedelta(days=1), lambda m, u: None, by="purpose"
    )
    assert by_purpose["title"].calls == 1 and by_purpose["title"].input_tokens == 60


def test_titles_are_cleaned() -> None:
    from wyckoff_cli.session.titles import clean_title

    assert clean_title('"Fix the login redirect."\n') == "Fix the login redirect"
    assert clean_title("Title: **Speed up the tests**") == "Speed up the tests"
    assert clean_title("# Port   the CLI\nmore") == "Port the CLI"
    long = clean_title("word " * 30)
    assert len(long) <= 61 and long.endswith("…")
    assert clean_title("   ") == ""


def json_text(body: Any) -> str:
    import json

    return json.dumps(body)


def test_headless_done_counts_the_title_call_and_stays_last(workspace: Path, tmp_path: Path) -> None:
    """`wyckoff run` with a title route: `done` is still the last stream-json event, and
    its usage and cost include the title call (Sonnet $3/$15, Haiku $1/$5 per million)."""
    import json
    import os
    import subprocess
    import sys

    import pytest

    from wyckoff_cli.storage import paths

    paths.config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.config_file().write_text(f'[routing]\ntitle = "{SMALL}"\n', encoding="utf-8")
    with FakeServer() as server:
        server.script(
            {"text": "Fixed.", "usage": {"input_tokens": 1000, "output_tokens": 100}},
            {"text": "Fix the redirect", "usage": {"input_tokens": 500, "output_tokens": 10}},
        )
        env = dict(os.environ, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        result = subprocess.run(
            [sys.executable, "-m", "wyckoff_cli", "run", "--model", SESSION, "--output-format", "stream-json"]
            + ["fix the redirect"],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert events[-1]["type"] == "done"
    assert [e["purpose"] for e in events if e["type"] == "usage"] == ["turn", "title"]
    assert events[-1]["usage"]["input_tokens"] == 1500
    expected = 1000 * 3e-6 + 100 * 15e-6 + 500 * 1e-6 + 10 * 5e-6
    assert events[-1]["cost_usd"] == pytest.approx(expected)
    summary = next(line for line in result.stderr.splitlines() if line.startswith("[summary]"))
    assert f"${expected:.4f}" in summary
