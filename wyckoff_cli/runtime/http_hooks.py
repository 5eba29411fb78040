"""Hooks of type `http`: the event is POSTed as JSON; the answer means what a command
hook's stdout means.

As in Claude Code: `{"type": "http", "url": "…", "headers": {…}, "allowedEnvVars": […],
"timeout": 30}`. A header value may name environment variables (`$TOKEN`, `${TOKEN}`)
listed in `allowedEnvVars`; any other variable becomes empty, so a project file cannot
send your secrets anywhere. Only URLs the user allows in their own config
(`[hooks] allowed_urls`, shell-style patterns such as `http://127.0.0.1:*/*`) are
posted to (runtime/hook_config.py skips the others with a listed problem).

A 2xx answer is read as a command's exit 0 with the body as stdout (JSON decisions,
`hookSpecificOutput`, plain text as context); any other status, a connection failure
and a timeout are non-blocking errors, as a command's other exit codes are. Proxy
variables are ignored (`trust_env=False`): the hook goes where its URL says.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

from wyckoff_cli.runtime.hook_config import HookSpec

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
BODY_LIMIT = 1_000_000


def expand_header(value: str, allowed: tuple[str, ...]) -> str:
    """`$NAME` / `${NAME}` from the environment when NAME is allowed, else empty."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return os.environ.get(name, "") if name in allowed else ""

    return _VARIABLE.sub(replace, value)


@dataclass(frozen=True, slots=True)
class HookAnswer:
    """What an http or prompt hook came to, in a command's terms (exit code None: no answer)."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False


async def run_http_hook(spec: HookSpec, payload: dict[str, Any]) -> HookAnswer:
    import httpx2

    headers = {"Content-Type": "application/json"}
    headers.update({name: expand_header(value, spec.env_vars) for name, value in spec.headers})
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    try:
        async with httpx2.AsyncClient(
            timeout=spec.timeout, trust_env=False, follow_redirects=False
        ) as client:
            response = await client.post(spec.command, content=body, headers=headers)
    except httpx2.TimeoutException:
        return HookAnswer(None, "", "", timed_out=True)
    except httpx2.HTTPError as exc:
        return HookAnswer(None, "", f"cannot reach {spec.command}: {exc or type(exc).__name__}")
    text = response.text[:BODY_LIMIT]
    if not 200 <= response.status_code < 300:
        detail = " ".join(text.split())[:200]
        return HookAnswer(1, "", f"HTTP {response.status_code} from {spec.command}: {detail}")
    return HookAnswer(0, text, "")
