"""Secrets never reach the disk. The keys below are fakes in the real formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message, ThinkingPart, ToolCallPart
from wyckoff_cli.storage.redact import MAX_STRING_CHARS, REDACTED, Redactor, cap
from wyckoff_cli.storage.sessions import SessionStore

ANTHROPIC = "sk-ant-api03-" + "Xq7vB2kLm9Np4Rt6Wz8Yc1Df3Gh5Jk" * 3 + "-AbCdEfAA"
OPENAI_PROJECT = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ" * 3
OPENAI_LEGACY = "sk-" + "T3BlbkFJ" + "q8Wm2Zx5Rv7Ny4Lp1Ks9Dh3Gf6Jb0Ct"
DEEPSEEK = "sk-" + "4f9a1c2e8b7d6a5f4e3d2c1b0a9f8e7d"
GOOGLE = "AIzaSy" + "D4x9Q2mK7pL1vN8rT3wZ6yB5cH0jF-gE_s"
GITHUB = "ghp_" + "R7mQ2xK9vL4pN8tW1zY6bC3dF5gH0jS2aE4u"
AWS = "AKIA" + "QWERTYUIOPASDFGH"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
CUSTOM = "corp-gateway-7f3e9a2b-key"  # matches no pattern: only known because it is in the env
FAKES = [ANTHROPIC, OPENAI_PROJECT, OPENAI_LEGACY, DEEPSEEK, GOOGLE, GITHUB, AWS, JWT, CUSTOM]


@pytest.fixture
def redactor() -> Redactor:
    return Redactor.from_environment({"CORP_API_KEY": CUSTOM, "HOME": "/home/me", "SHORT_TOKEN": "abc"})


@pytest.mark.parametrize(
    "text",
    [
        f"export ANTHROPIC_API_KEY={ANTHROPIC}",
        f"client = OpenAI(api_key='{OPENAI_PROJECT}')",
        f"the key {OPENAI_LEGACY} and {DEEPSEEK}.",
        f"https://generativelanguage.googleapis.com/v1/models?key={GOOGLE}",
        f"git remote add origin https://{GITHUB}@github.com/x/y",
        f"aws_access_key_id = {AWS}",
        f"curl -H 'Authorization: Bearer {JWT}' https://api",
        f'{{"headers": {{"authorization": "Bearer {JWT}"}}}}',
        f"gateway key is {CUSTOM}",
        'SECRET_KEY = "django-insecure-8f2k1m3n5b7v9c0x"',
        "password: Hunter2Hunter2Hunter2",
    ],
)
def test_key_looking_values_are_redacted(redactor: Redactor, text: str) -> None:
    out = redactor.text(text)
    assert REDACTED in out
    for fake in [*FAKES, "django-insecure-8f2k1m3n5b7v9c0x", "Hunter2Hunter2Hunter2"]:
        assert fake not in out


@pytest.mark.parametrize(
    "text",
    [
        "the task-scheduler-service-framework runs",
        "Bearer authentication is described in RFC 6750",
        "password = get_password_from_keyring()",
        "api_key = os.environ['OPENAI_API_KEY']",
        "max_tokens: 4096, input_tokens: 123456789012",
        "Authorization: the process of granting access",
        "HOME is /home/me",
        "abc is too short to be a secret",
    ],
)
def test_ordinary_text_is_left_alone(redactor: Redactor, text: str) -> None:
    assert redactor.text(text) == text


def test_values_under_secret_keys_are_redacted_whole(redactor: Redactor) -> None:
    data = {
        "headers": {"Authorization": "Basic dXNlcjpwYXNz", "X-Api-Key": "short1"},
        "password": "x",
        "n": 3,
    }
    assert redactor.value(data) == {
        "headers": {"Authorization": REDACTED, "X-Api-Key": REDACTED},
        "password": REDACTED,
        "n": 3,
    }


def test_long_strings_are_capped_with_a_marker(redactor: Redactor) -> None:
    text = "z" * (MAX_STRING_CHARS + 1234)
    out = redactor.text(text)
    assert out.startswith("z" * MAX_STRING_CHARS) and out.endswith("[… truncated 1234 characters …]")
    assert cap("short") == "short"


def test_messages_keep_ids_and_signatures_but_a_changed_signed_block_loses_its_signature(
    redactor: Redactor,
) -> None:
    message = Message(
        "assistant",
        (
            ThinkingPart("plain reasoning", signature="sig-keep/" + "A" * 40, provider="anthropic"),
            ThinkingPart(f"the user pasted {OPENAI_LEGACY}", signature="sig-drop", provider="anthropic"),
            ToolCallPart("call_sk-" + "9" * 30, "run", {"env": f"KEY={ANTHROPIC}"}, extra={"sig": GOOGLE}),
        ),
    )
    out = Message.from_dict(redactor.message(message.to_dict()))
    keep, changed = out.thinking
    assert keep == message.thinking[0]
    assert changed.signature is None and OPENAI_LEGACY not in changed.text and changed.provider == "anthropic"
    call = out.tool_calls[0]
    assert call.id == message.tool_calls[0].id and call.extra == {"sig": GOOGLE}
    assert call.arguments == {"env": f"KEY={REDACTED}"}


def test_credentials_file_values_are_known_secrets(tmp_path: Path) -> None:
    creds = tmp_path / "credentials.toml"
    creds.write_text('[keys]\nopenai = "plain-looking-credential-value"\n')
    redactor = Redactor.from_environment({}, credentials_file=creds, key_env_names=["MY_VAR"])
    assert redactor.text("x plain-looking-credential-value y") == f"x {REDACTED} y"
    assert Redactor.from_environment({}, credentials_file=tmp_path / "missing.toml").text("a") == "a"


def test_nothing_written_to_a_session_holds_a_key(
    tmp_path: Path, workspace: Path, redactor: Redactor
) -> None:
    store = SessionStore(tmp_path / "sessions", redactor=redactor)
    recorder = store.create(workspace, model="anthropic:claude")
    args = {"command": f"curl -H 'x-api-key: {ANTHROPIC}' -H 'Authorization: Bearer {JWT}'"}
    events: list[ev.RuntimeEvent] = [
        ev.MessageCommitted(Message.user(f"my key is {OPENAI_PROJECT}, use {CUSTOM}").to_dict()),
        ev.ModelStart(1, "anthropic:claude"),
        ev.TextDelta(f"I will not print {DEEPSEEK[:10]}"),
        ev.TextDelta(DEEPSEEK[10:]),
        ev.ToolCallsReceived([{"id": "c1", "name": "run_shell", "args": args}]),
        ev.ApprovalRequested("c1", "run_shell", args, {"command": args["command"]}),
        ev.ApprovalDecided("c1", "run_shell", "allow"),
        ev.ToolStarted("c1", "run_shell", args),
        ev.ToolOutput("c1", f"GOOGLE_KEY={GOOGLE}\n"),
        ev.ToolSucceeded("c1", "run_shell", f"{GITHUB} {AWS}"),
        ev.MessageCommitted(Message("assistant", (ToolCallPart("c1", "run_shell", args),)).to_dict()),
        ev.MessageCommitted(Message.tool_result("c1", "run_shell", f"{GITHUB} {AWS}").to_dict()),
        ev.TurnFailed("auth", f"invalid x-api-key {ANTHROPIC}"),
        ev.TurnDone(f"done {OPENAI_LEGACY}", "error", 1),
    ]
    for event in events:
        if isinstance(event, ev.MessageCommitted):  # the runtime appends, then announces
            recorder.conversation.append(Message.from_dict(event.message))
        recorder.record(event)
    old, new = [Message.user(ANTHROPIC)], [Message.user("summary")]
    recorder.conversation.append(old[0])
    recorder.conversation.replace_all(new, archive_path=str(recorder.archive_replaced(old, new)))
    recorder.close()
    files = [p for p in recorder.directory.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"chat.jsonl", "scratchpad.jsonl", "session.json"}
    everything = b"".join(p.read_bytes() for p in files).decode("utf-8")
    for fake in FAKES:
        assert fake not in everything, fake
    for fragment in (DEEPSEEK[:10], DEEPSEEK[10:]):  # a key split across deltas is folded first
        assert fragment not in everything
    assert everything.count(REDACTED) > 10


# Secrets the model may read from files (issue 22): redacted at rest, the name kept.
AT_REST = [
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    (
        '"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ"',
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ",
    ),
    ("DATABASE_URL=postgres://admin:hunter2pass@db.example.com:5432/app", "hunter2pass"),
    ("mysql://root:Tr0ub4dor&3@localhost/db", "Tr0ub4dor&3"),
    ("redis://:p4ssw0rd-only@cache:6379/0", "p4ssw0rd-only"),
    (
        "token: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    ("machine api.example.com login me password s3cr3t-netrc", "s3cr3t-netrc"),
    ("machine a.example.com\n  login me\n  password multi-line-netrc", "multi-line-netrc"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7Vw\nabc+/=\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA7Vw",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAA",
    ),
    (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0B",
    ),
]


@pytest.mark.parametrize(("text", "secret"), AT_REST)
def test_secrets_read_from_files_are_redacted_at_rest(text: str, secret: str) -> None:
    redacted = Redactor().text(text)
    assert secret not in redacted
    assert REDACTED in redacted


@pytest.mark.parametrize(
    "text",
    ["see https://example.com/a:b@c", "user@example.com", "the password is short", "eyJ is a prefix",
     "-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----", "http://localhost:8080/x"],
)  # fmt: skip
def test_lookalikes_stay(text: str) -> None:
    assert Redactor().text(text) == text


def test_secrets_at_rest_never_reach_the_session_files(tmp_path: Path, workspace: Path) -> None:
    store = SessionStore(tmp_path / "sessions", redactor=Redactor())
    recorder = store.create(workspace, model="anthropic:claude")
    texts = [text for text, _ in AT_REST]
    result = "\n".join(texts)
    message = Message.tool_result("c1", "read_file", result)
    recorder.conversation.append(message)
    recorder.record(ev.MessageCommitted(message.to_dict()))
    recorder.record(ev.ToolSucceeded("c1", "read_file", result))
    old, new = [Message.user(result)], [Message.user("summary")]
    recorder.conversation.append(old[0])
    recorder.conversation.replace_all(new, archive_path=str(recorder.archive_replaced(old, new)))
    recorder.close()
    files = {p.name for p in recorder.directory.rglob("*") if p.is_file()}
    assert {"chat.jsonl", "scratchpad.jsonl", "session.json"} <= files and any(
        f.endswith(".jsonl") for f in files
    )
    everything = b"".join(p.read_bytes() for p in recorder.directory.rglob("*") if p.is_file()).decode()
    for _, secret in AT_REST:
        assert secret not in everything, secret
