"""Secrets never reach the disk: everything a session writes passes through a `Redactor`.

Three layers, applied to every string of a record:
1. exact values of known secrets (API keys from the environment and from the
   config's `api_key_env` variables, keys pasted into `credentials.toml`);
2. patterns of key-looking values (`sk-…`, `sk-ant-…`, `AIza…`, GitHub, GitLab, AWS,
   Slack, Stripe, npm, Hugging Face and SendGrid tokens, Slack webhook URLs,
   `Authorization:` headers, `Bearer` tokens, `api_key=…` / `*_TOKEN=…`-style
   assignments), AWS secret access keys (`aws_secret_access_key = …`, and a bare
   40-character key: see `_bare_aws_secrets`), passwords in URLs
   (`postgres://user:PASSWORD@host`), JSON Web Tokens, `.netrc` passwords, private key
   blocks (`-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----`);
3. values stored under secret-looking keys (`authorization`, `api_key`, `password`, …).

Strings longer than `MAX_STRING_CHARS` are cut, with a marker saying how much was cut.
Vendor data that must round-trip byte for byte (thinking signatures, `extra`) is left
as it is; a signed thinking block whose text had to change loses its signature, since
the signature would no longer verify.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REDACTED = "[REDACTED]"
MAX_STRING_CHARS = 200_000
MIN_SECRET_CHARS = 8  # shorter "secrets" would redact ordinary words

_SECRET_ENV_SUFFIXES = (
    "_API_KEY",
    "_AUTH_TOKEN",
    "_ACCESS_TOKEN",
    "_SECRET",
    "_SECRET_KEY",
    "_TOKEN",
    "_PASSWORD",
)
_SECRET_KEYS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api_key",
        "api-key",
        "apikey",
        "x-api-key",
        "x-goog-api-key",
        "password",
        "passwd",
        "secret",
        "client_secret",
        "access_token",
        "refresh_token",
        "auth_token",
        "id_token",
    }
)
# Keys whose values are vendor data or identifiers that must be kept exactly.
MESSAGE_KEEP_KEYS = frozenset({"signature", "redacted_data", "extra", "id", "tool_call_id"})

_TOKEN = r"[A-Za-z0-9_\-./+=]"
_PATTERN_SOURCES: tuple[tuple[str, str], ...] = (
    # `Authorization: Bearer x` / `"Authorization": "..."`: keep the name, drop the value.
    (
        r"(?i)\b((?:proxy-)?authorization['\"]?\s*[:=]\s*['\"]?)(?:[A-Za-z]+\s+)?"
        + _TOKEN
        + r"{8,}+(?![(\[])",
        r"\1" + REDACTED,
    ),
    (r"(?i)\b(bearer\s+)(?=" + _TOKEN + r"*[0-9._\-/+=])" + _TOKEN + r"{12,}", r"\1" + REDACTED),
    # OpenAI / Anthropic / DeepSeek style keys: sk-…, sk-ant-…, sk-proj-…
    (r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{20,}", REDACTED),
    # Google API keys
    (r"AIza[0-9A-Za-z_\-]{35,}", REDACTED),
    # GitHub, AWS access key ids, Slack
    (r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}", REDACTED),
    (r"\bAKIA[0-9A-Z]{16}\b", REDACTED),
    (r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", REDACTED),
    (r"\bhttps://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{16,}", REDACTED),
    # Stripe secret and restricted keys, webhook secrets
    (r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", REDACTED),
    (r"\bwhsec_[A-Za-z0-9]{16,}", REDACTED),
    # GitLab, npm, Hugging Face, SendGrid
    (r"\bglpat-[A-Za-z0-9_\-]{20,}", REDACTED),
    (r"\bnpm_[A-Za-z0-9]{36}\b", REDACTED),
    (r"\bhf_[A-Za-z0-9]{30,}", REDACTED),
    (r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", REDACTED),
    # private key blocks (PEM, OpenSSH): the whole block
    (
        r"-----BEGIN ((?:[A-Z0-9]+ ){0,4})PRIVATE KEY-----[A-Za-z0-9+/=\s:,\-.]{0,20000}?"
        r"-----END \1PRIVATE KEY-----",
        REDACTED,
    ),
    # JSON Web Tokens: header.payload.signature
    (r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", REDACTED),
    # passwords in URLs: scheme://user:PASSWORD@host
    (r"\b([A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@]{0,200}:)[^\s@/]{1,200}(@)", r"\1" + REDACTED + r"\2"),
    # AWS secret access keys in credentials files and environment listings
    (
        r"(?i)((?:aws_)?secret[_-]?access[_-]?key['\"]?\s*[:=]\s*['\"]?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
        r"\1" + REDACTED,
    ),
    # .netrc: machine HOST login USER password SECRET
    (r"(?i)\b((?:machine|login|default)\s+\S+\s+(?:login\s+\S+\s+)?password\s+)\S+", r"\1" + REDACTED),
    # api_key = "value", SECRET_KEY: value, password=value (a value that looks generated:
    # 12+ token characters with a digit, not a call or an index expression)
    (
        r"(?i)\b([A-Za-z0-9_]*(?:api[_-]?key|secret(?:[_-]?key)?|password|passwd|access[_-]?token|auth[_-]?token)"
        r"['\"]?\s*[:=]\s*['\"]?)(?=" + _TOKEN + r"*[0-9])" + _TOKEN + r"{12,}+(?![(\[])",
        r"\1" + REDACTED,
    ),
    # environment-style NAME_TOKEN=value / NAME_SECRET=value / NAME_PASSWORD=value (upper
    # case names, as in `env` or a .env file): the value even without a digit
    (
        r"\b([A-Z][A-Z0-9_]*_(?:TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD|API_KEY|ACCESS_KEY)=['\"]?)"
        + _TOKEN
        + r"{12,}+(?![(\[])",
        r"\1" + REDACTED,
    ),
)

# A bare AWS secret access key: exactly 40 characters of base64 (letters, digits, `/`,
# `+`), standing alone. Redacted when it has upper and lower case letters and a digit
# (a 40-character git SHA is hex: never), and at most three `/` (so a path is kept).
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=_\-.])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_\-])")
_HEX = re.compile(r"^[0-9a-fA-F]+$")


@functools.cache
def secret_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Compiled on first use (~4 ms), so importing this module stays cheap; the first
    session's warm-up thread asks for them before its first message is recorded."""
    return tuple((re.compile(source), replacement) for source, replacement in _PATTERN_SOURCES)


def cap(text: str, limit: int = MAX_STRING_CHARS) -> str:
    """`text` cut to `limit` characters, with a marker saying how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… truncated {len(text) - limit} characters …]"


class Redactor:
    """Removes secrets from strings and JSON-like values. Pure: no I/O after creation."""

    def __init__(self, secrets: Iterable[str] = (), *, limit: int = MAX_STRING_CHARS) -> None:
        values = sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        self._known = re.compile("|".join(re.escape(v) for v in values)) if values else None
        self.limit = limit

    @classmethod
    def from_environment(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        key_env_names: Iterable[str] = (),
        credentials_file: Path | None = None,
        extra: Iterable[str] = (),
    ) -> Redactor:
        """Secrets from `env` (variables named like keys or tokens, plus
        `key_env_names`), from a credentials TOML file, and `extra` values."""
        env = os.environ if env is None else env
        names = set(key_env_names)
        secrets = [value for key, value in env.items() if key.upper().endswith(_SECRET_ENV_SUFFIXES)]
        secrets += [env[name] for name in names if env.get(name)]
        if credentials_file is not None:
            secrets += credential_values(credentials_file)
        secrets += list(extra)
        return cls(secrets)

    def text(self, text: str) -> str:
        """`text` with every secret replaced by `[REDACTED]`, then capped."""
        return cap(self.secrets(text), self.limit)

    def secrets(self, text: str) -> str:
        """`text` with every secret replaced by `[REDACTED]`, whatever its length
        (for files such as offloaded tool results, which are never capped)."""
        if self._known is not None:
            text = self._known.sub(REDACTED, text)
        for pattern, replacement in secret_patterns():
            text = pattern.sub(replacement, text)
        return _bare_aws_secrets(text)

    def value(self, value: Any, keep: frozenset[str] = frozenset()) -> Any:
        """A copy of a JSON-like value with every string redacted. Values under a
        secret-looking key are replaced whole; values under a key in `keep` are kept."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if key in keep:
                    out[key] = item
                elif isinstance(item, str) and item and str(key).lower() in _SECRET_KEYS:
                    out[key] = REDACTED
                else:
                    out[key] = self.value(item, keep)
            return out
        if isinstance(value, list | tuple):
            return [self.value(item, keep) for item in value]
        return value

    def message(self, data: dict[str, Any]) -> dict[str, Any]:
        """A `Message.to_dict()` redacted. Ids, signatures and vendor `extra` are kept;
        a signed thinking part whose text changed loses its (now invalid) signature."""
        out: dict[str, Any] = self.value(data, MESSAGE_KEEP_KEYS)
        for before, after in zip(data.get("parts", ()), out.get("parts", ()), strict=False):
            if after.get("type") == "thinking" and after.get("text") != before.get("text"):
                after.pop("signature", None)
        return out


def _bare_aws_secrets(text: str) -> str:
    if len(text) < 40:
        return text
    return _AWS_SECRET.sub(lambda m: REDACTED if _looks_like_aws_secret(m.group(0)) else m.group(0), text)


def _looks_like_aws_secret(token: str) -> bool:
    if _HEX.match(token) or token.count("/") > 3:
        return False
    return (
        any(c.isupper() for c in token)
        and any(c.islower() for c in token)
        and any(c.isdigit() for c in token)
    )


def credential_values(path: Path) -> list[str]:
    """Every string value in a credentials TOML file (none when it is missing or bad)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            for item in node.values():
                walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data)
    return found
