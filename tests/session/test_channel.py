"""The background channel: its codec, its file modes and who it lets in."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import eventually
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.session.channel import (
    ChannelClient,
    ChannelError,
    ChannelServer,
    PeerCredentials,
    decision_of,
    decision_to_dict,
    decode,
    encode,
    event_message,
    event_of,
    peer_credentials,
    refusal,
)
from wyckoff_cli.storage.running import socket_dir

EVENTS: list[ev.RuntimeEvent] = [
    ev.TextDelta("héllo"),
    ev.ApprovalRequested("c1", "run_shell", {"command": "ls"}, {"kind": "command"}, "run_shell(ls)", "asks"),
    ev.ToolSucceeded("c1", "run_shell", "out", 3),
    ev.SubagentEvent("a1", "reviewer", "c0", ev.ApprovalRequested("c2", "edit_file", {"path": "x"})),
    ev.TurnDone("ok", "completed", 2, {"input_tokens": 3}),
    ev.Notice("warning", "careful"),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.type)
def test_every_event_survives_the_wire(event: ev.RuntimeEvent) -> None:
    assert event_of(decode(encode(event_message(event)))) == event


@pytest.mark.parametrize(
    "decision",
    [
        ApprovalDecision.allow(),
        ApprovalDecision.always("run_shell(ls*)"),
        ApprovalDecision.edit({"command": "ls -a"}),
        ApprovalDecision.deny("not now"),
    ],
)
def test_decisions_survive_the_wire(decision: ApprovalDecision) -> None:
    assert decision_of(
        decode(encode({"kind": "approve", "decision": decision_to_dict(decision)}))["decision"]
    ) == (decision)


@pytest.mark.parametrize(
    "bad",
    [None, "allow", {"kind": "yes"}, {"kind": "edit"}, {"kind": "edit", "args": "ls"}, []],
)
def test_a_malformed_decision_is_a_channel_error(bad: Any) -> None:
    with pytest.raises(ChannelError, match="decision|arguments"):
        decision_of(bad)


@pytest.mark.parametrize("line", [b"{", b"[1]", b'{"no": "kind"}', b"\xff\xfe", b'"text"'])
def test_a_malformed_line_is_a_channel_error(line: bytes) -> None:
    with pytest.raises(ChannelError):
        decode(line)


# ---------------------------------------------------------------- who is let in

OWN = 1000
PEERS = [
    (PeerCredentials(10, OWN, OWN), None),
    (PeerCredentials(10, OWN + 1, OWN), "uid 1001 is not this session's user"),
    (PeerCredentials(10, 0, 0), "uid 0 is not this session's user"),  # not even root is let in
    (PeerCredentials(10, OWN + 1, OWN + 1), "uid 1001"),
    (PeerCredentials(OWN, 65534, OWN), "uid 65534"),  # a pid equal to our uid changes nothing
    (PeerCredentials(10, -1, OWN), "uid -1"),  # the overflow uid
    (None, "cannot be read"),
]


@pytest.mark.parametrize(("peer", "why"), PEERS)
def test_refusal_table(peer: PeerCredentials | None, why: str | None) -> None:
    reason = refusal(peer, OWN)
    if why is None:
        assert reason is None
    else:
        assert reason is not None and why in reason


def test_the_kernel_reports_our_own_uid() -> None:
    left, right = socket.socketpair(socket.AF_UNIX)
    with left, right:
        creds = peer_credentials(left)
    assert (creds.pid, creds.uid, creds.gid) == (os.getpid(), os.getuid(), os.getgid())


async def _serve(path: Path, credentials: Any) -> tuple[ChannelServer, list[dict[str, Any]]]:
    got: list[dict[str, Any]] = []

    async def on_request(request: dict[str, Any], controlling: bool) -> None:
        got.append(request)

    server = ChannelServer(path, on_request, lambda: {"entry": {}, "pending": []}, credentials=credentials)
    await server.start()
    return server, got


@pytest.mark.parametrize(
    "credentials",
    [
        lambda sock: PeerCredentials(1, os.getuid() + 1, os.getgid()),
        lambda sock: PeerCredentials(1, 0, 0) if os.getuid() else PeerCredentials(1, 1, 1),
        lambda sock: None,
        lambda sock: (_ for _ in ()).throw(OSError("no creds")),
    ],
    ids=["another-user", "root-or-other", "unreadable", "error"],
)
def test_another_users_process_is_refused_and_nothing_it_sends_is_handled(credentials: Any) -> None:
    async def scenario() -> None:
        server, got = await _serve(socket_dir() / "refuse.sock", credentials)
        try:
            with pytest.raises(ChannelError, match="refused"):
                await ChannelClient.connect(server.path, "control")
            reader, writer = await asyncio.open_unix_connection(str(server.path))
            writer.write(encode({"kind": "hello", "want": "control"}) + encode({"kind": "stop"}))
            await writer.drain()
            assert decode(await reader.readline())["kind"] == "refused"
            try:
                rest = await reader.readline()
            except ConnectionResetError:  # closed with our `stop` unread: also closed
                rest = b""
            assert rest == b""
            writer.close()
            assert got == [] and server.clients == []
        finally:
            await server.close()

    asyncio.run(scenario())


def test_the_socket_is_0600_in_a_0700_folder_and_our_own_process_is_served() -> None:
    async def scenario() -> None:
        server, got = await _serve(socket_dir() / "modes.sock", peer_credentials)
        try:
            info = server.path.stat()
            assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
            assert stat.S_IMODE(server.path.parent.stat().st_mode) == 0o700
            client = await ChannelClient.connect(server.path, "control")
            viewer = await ChannelClient.connect(server.path, "control")
            assert (client.role, viewer.role) == ("control", "view")
            await viewer.send({"kind": "turn", "text": "no"})  # refused: view-only
            await client.send({"kind": "turn", "text": "yes"})
            await eventually(lambda: got)
            assert got == [{"kind": "turn", "text": "yes"}]
            await viewer.send({"kind": "interrupt"})  # anyone of ours may interrupt or stop
            await eventually(lambda: len(got) == 2)
            await client.close()
            await eventually(lambda: server.controller is None)
            again = await ChannelClient.connect(server.path, "control")  # control is free again
            assert again.role == "control"
            await again.close()
            await viewer.close()
        finally:
            await server.close()
        assert not server.path.exists()

    asyncio.run(scenario())


def test_a_folder_open_to_others_is_narrowed_and_a_foreign_one_refused(tmp_path: Path) -> None:
    from wyckoff_cli.storage.paths import StorageError
    from wyckoff_cli.storage.running import check_private_dir

    folder = tmp_path / "open"
    folder.mkdir(mode=0o777)
    os.chmod(folder, 0o777)
    check_private_dir(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    link = tmp_path / "link"
    link.symlink_to(folder)
    with pytest.raises(StorageError, match="symlink"):
        check_private_dir(link)
