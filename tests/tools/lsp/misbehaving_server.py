"""A language server that answers `initialize`, then misbehaves as its argument says:
`silent` never answers a request, `garbage` answers with bytes that are not JSON-RPC,
`die` exits in the middle of a request, `no-init` never answers `initialize`,
`stubborn` ignores shutdown, exit and SIGTERM and starts a child that lives on."""

from __future__ import annotations

import json
import signal
import subprocess
import sys


def read_message() -> dict[str, object] | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value.strip())
    return json.loads(sys.stdin.buffer.read(length))  # type: ignore[no-any-return]


def send(payload: dict[str, object]) -> None:
    body = json.dumps(payload).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main(mode: str) -> None:
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])
        sys.stderr.write(f"child {child.pid}\n")
        sys.stderr.flush()
    while (message := read_message()) is not None:
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            if mode != "no-init":
                send({"jsonrpc": "2.0", "id": ident, "result": {"capabilities": {"textDocumentSync": 1}}})
        elif ident is not None and method not in ("shutdown",):
            if mode == "garbage":
                sys.stdout.buffer.write(b"Content-Length: 12\r\n\r\n{not json!!}")
                sys.stdout.buffer.flush()
            elif mode == "die":
                sys.stderr.write("dying on purpose\n")
                sys.exit(3)
        elif method == "shutdown" and mode != "stubborn":
            send({"jsonrpc": "2.0", "id": ident, "result": None})
        elif method == "exit" and mode != "stubborn":
            return


if __name__ == "__main__":
    main(sys.argv[1])
