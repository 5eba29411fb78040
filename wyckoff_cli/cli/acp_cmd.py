"""`wyckoff acp`: speak the Agent Client Protocol on stdin/stdout (for Zed, JetBrains,
Toad and other ACP clients). Nothing but protocol messages is written to stdout; logs
go to the log file. See docs/ACP.md."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import IO, cast


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", "-m", help="model id (provider:model) or alias; default from config")
    parser.add_argument(
        "--permission-mode",
        choices=("default", "plan", "auto-edit", "auto", "yolo"),
        help="the sessions' starting mode (the client can change it: session/set_mode)",
    )


def run(args: argparse.Namespace) -> int:
    import acp

    from wyckoff_cli.acp.agent import WyckoffAgent
    from wyckoff_cli.acp.framing import JsonRpcLines
    from wyckoff_cli.cli.sessions_cmd import export_text

    agent = WyckoffAgent(model=args.model, mode=args.permission_mode, exporter=export_text)
    protocol_out = _private_stdout()

    async def serve() -> None:
        reader, writer = await _streams(protocol_out)
        transport = JsonRpcLines(reader, writer)  # answers batches and malformed lines (issue 27)
        try:
            await acp.run_agent(cast("acp.Agent", agent), transport, use_unstable_protocol=True)
        finally:
            await agent.aclose()

    asyncio.run(serve())
    return 0


def _private_stdout() -> IO[bytes]:
    """The protocol gets its own handle on stdout; file descriptor 1 then points at
    stderr, so a stray print (ours or a library's) can never corrupt the stream."""
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(2, 1)
    return protocol_out


async def _streams(out: IO[bytes]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)
