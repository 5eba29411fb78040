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


# Issue 27: planted secrets in every form an attacker tried; none may reach the disk.
# (tests/cli/test_secrets_e2e.py plants them all in one `wyckoff run` and reads every
# file and listing afterwards.)
PLANTED = [  # fmt: skip
    # (name, text as it would appear, the secret part that must never be stored)
    ("aws access key id", "key id AKIAZ3MQ7RVX4TLP2WQN here", "AKIAZ3MQ7RVX4TLP2WQN"),
    (
        "aws secret next to its id",
        "AKIAZ3MQ7RVX4TLP2WQN 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",
        "Fq8Rz2Lm+Vn4Tb7Xc1Kd9Wp3Hs6Jg0Ye5Ua2Ni8M",
    ),
    (
        "aws secret alone (csv)",
        "Access key ID,Secret access key\nAKIAZ3MQ7RVX4TLP2WQN,Qp3Lx9Zr7Mv2Nb5Tc8Kd1Wf4Hg6Js0Ya3Ue7Io2P",
        "Qp3Lx9Zr7Mv2Nb5Tc8Kd1Wf4Hg6Js0Ya3Ue7Io2P",
    ),
    (
        "aws secret alone in a sentence",
        "my secret is Zt5Gm2Qw8Lx1Rv7Nc4Bk9Hd3Jf6Ps0Ya2Ue8Io5T. ok",
        "Zt5Gm2Qw8Lx1Rv7Nc4Bk9Hd3Jf6Ps0Ya2Ue8Io5T",
    ),
    (
        "aws secret env",
        "export AWS_SECRET_ACCESS_KEY=Hn4Kp9Wz2Lq7Rx1Vm5Tb8Cd3Gf6Js0Ye2Ua8Oi5M",
        "Hn4Kp9Wz2Lq7Rx1Vm5Tb8Cd3Gf6Js0Ye2Ua8Oi5M",
    ),
    (
        "github classic",
        "token ghp_R7mQ2xK9vL4pN8tW1zY6bC3dF5gH0jS2aE4u",
        "ghp_R7mQ2xK9vL4pN8tW1zY6bC3dF5gH0jS2aE4u",
    ),
    (
        "github fine-grained",
        "github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdef",
        "github_pat_11ABCDEFG0abcdefghijkl",
    ),
    (
        "slack bot",
        "SLACK xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUv",
        "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUv",
    ),
    ("stripe live", "stripe sk_live_51HqT2bKz8Lm4Nv7Rw1Xc9Pd3Gf6", "sk_live_51HqT2bKz8Lm4Nv7Rw1Xc9Pd3Gf6"),
    ("stripe restricted", "rk_live_51HqT2bKz8Lm4Nv7Rw1Xc9Pd3Gf6Yz", "rk_live_51HqT2bKz8Lm4Nv7Rw1Xc9Pd3Gf6Yz"),
    (
        "google api key",
        "key=AIzaSyD4x9Q2mK7pL1vN8rT3wZ6yB5cH0jF-gE_s",
        "AIzaSyD4x9Q2mK7pL1vN8rT3wZ6yB5cH0jF-gE_s",
    ),
    (
        "openai",
        "OPENAI sk-proj-a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ",
        "sk-proj-a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ",
    ),
    (
        "anthropic",
        "use sk-ant-api03-Xq7vB2kLm9Np4Rt6Wz8Yc1Df3Gh5Jk-AbCdEfAA",
        "sk-ant-api03-Xq7vB2kLm9Np4Rt6Wz8Yc1Df3Gh5Jk-AbCdEfAA",
    ),
    (
        "jwt",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
        "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    ),
    (
        "pem private key",
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5ZfNFjpxHbuRvoAoGCCqGSM49\n-----END EC PRIVATE KEY-----",
        "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5ZfNFjpxHbuRvoAoGCCqGSM49",
    ),
    ("password in a url", "git clone https://deploy:Xk9Lm2Qp7Zr4@git.example.com/r.git", "Xk9Lm2Qp7Zr4"),
    (
        "bearer header",
        "Authorization: Bearer Qm9vYmFyQmF6UXV4MTIzNDU2Nzg5MA",
        "Qm9vYmFyQmF6UXV4MTIzNDU2Nzg5MA",
    ),
    (
        "env token without a digit",
        "export GITHUB_TOKEN=abcdefghijklmnopqrstuvwxyzABCD",
        "abcdefghijklmnopqrstuvwxyzABCD",
    ),
    ("env password", "DB_PASSWORD=correct-horse-battery-staple-9", "correct-horse-battery-staple-9"),
    (
        "npm token",
        "//registry.npmjs.org/:_authToken=npm_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Y",
        "npm_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Y",
    ),
    ("gitlab", "glpat-Ab3Cd5Ef7Gh9Ij1Kl3Mn", "glpat-Ab3Cd5Ef7Gh9Ij1Kl3Mn"),
    ("hugging face", "HF hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    (
        "sendgrid",
        "SG.Ab3Cd5Ef7Gh9Ij1Kl3Mn5O.Pq7Rs9Tu1Vw3Xy5Za7Bc9De1Fg3Hi5Jk7Lm9No1Pq3",
        "Pq7Rs9Tu1Vw3Xy5Za7Bc9De1Fg3Hi5Jk7Lm9No1Pq3",
    ),
    (
        "slack webhook",
        "https://hooks.slack.com/services/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",
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7",
    ),
]


@pytest.mark.parametrize(("name", "text", "secret"), PLANTED, ids=[p[0] for p in PLANTED])
def test_planted_secrets_are_redacted(name: str, text: str, secret: str) -> None:
    out = Redactor().text(text)
    assert secret not in out and REDACTED in out, out


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f9a1c2e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the parser",  # a git SHA (hex)
        "HEAD is 3F9A1C2E8B7D6A5F4E3D2C1B0A9F8E7D6C5B4A39",
        "merge a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 into main",
        "/home/user/projects/wyckoff/src/Module2/x",  # a 40-character path
        "ThisIsAVeryLongCamelCaseNameWithoutDigit",  # no digit
        "abcdefghijklmnopqrstuvwxyz0123456789abcd",  # one case only
        "SGVsbG8gV29ybGQhIFRoaXMgaXMgYSB0ZXN0Lg== padded base64",  # base64 data (41+ characters)
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "pk_live_51HqT2bKz8Lm4Nv7Rw1Xc9Pd3Gf6 is a publishable key",
        "the SORT_KEY=name and MAX_TOKEN=4096 settings",
    ],
)
def test_lookalikes_of_planted_forms_stay(text: str) -> None:
    assert Redactor().text(text) == text
