"""The shipped model catalogue (`config/models.toml`), read into typed, frozen records.

Two tables: `[models."NAME"]` (one entry per model, NAME being the id its API
expects) and `[[patterns]]` (name patterns for `infer_context_window()`, first match
wins). Every field is checked on load; a mistake raises `CatalogueError` naming the
file and the key. Imports nothing else of ours: callers pass plain values.

After a wheel install the file is `wyckoff_cli/_shipped_config/models.toml` (the
wheel force-includes the top-level `config/` folder there); in a source checkout it
is `<repo>/config/models.toml`.
"""

from __future__ import annotations

import fnmatch
import functools
import importlib.resources
import math
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast, get_args

Reasoning = Literal["none", "budget", "effort", "adaptive", "always"]
"""How a model reasons: `none`; `budget` (a token budget for thinking); `effort` (a
level such as low/medium/high); `adaptive` (the model decides how much); `always`
(it always reasons and offers no control)."""

REASONING_KINDS: tuple[str, ...] = get_args(Reasoning)
PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")
FILE_NAME = "models.toml"


class CatalogueError(ValueError):
    """The catalogue file is missing or wrong; the message names the file and key."""


@dataclass(frozen=True, slots=True)
class PriceTier:
    """Prices that replace the base prices when a request's prompt (every input
    token, cached or not) is longer than `above` tokens."""

    above: int
    input: float
    output: float
    cache_read: float
    cache_write: float


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """One model. Prices are USD per million tokens; `input` is for input not read
    from the cache, `cache_write` for tokens written to it (5-minute cache where a
    vendor has several)."""

    name: str
    vendor: str
    provider: str
    context_window: int
    max_output: int
    reasoning: Reasoning
    images: bool
    input: float
    output: float
    cache_read: float
    cache_write: float
    tiers: tuple[PriceTier, ...] = ()
    aliases: tuple[str, ...] = ()
    base_url: str | None = None
    api_key_env: str | None = None
    note: str | None = None
    api: str | None = None  # "responses": served by the OpenAI Responses API only
    # USD per 1,000 server-side web searches; set only for models whose vendor search
    # Wyckoff uses (Anthropic web search, OpenAI Responses web search, Gemini grounding)
    web_search: float | None = None

    @property
    def id(self) -> str:
        """`provider:name`, the id to give `--model` or `wyckoff model use`."""
        return f"{self.provider}:{self.name}"


@dataclass(frozen=True, slots=True)
class ContextPattern:
    """A name pattern (shell-style glob, case-insensitive) and the context window of
    the models it matches."""

    pattern: str
    context_window: int

    def matches(self, name: str) -> bool:
        return glob_match(name.lower(), self.pattern.lower())


def glob_match(name: str, pattern: str) -> bool:
    """`fnmatch.fnmatchcase(name, pattern)`, without compiling a regular expression
    for a pattern whose only wildcard is `*` (75 of the 79 shipped ones: compiling them
    all cost a session's set-up tens of ms of CPU); `?` and `[...]` go to fnmatch."""
    if "?" in pattern or "[" in pattern:
        return fnmatch.fnmatchcase(name, pattern)
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return name == pattern
    first, *middle, last = pieces
    if len(name) < len(first) + len(last) or not name.startswith(first) or not name.endswith(last):
        return False
    at, end = len(first), len(name) - len(last)
    for piece in middle:
        found = name.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


@dataclass(frozen=True)
class Catalogue:
    checked: str  # the date the figures were last checked, YYYY-MM-DD
    entries: tuple[CatalogueEntry, ...]
    patterns: tuple[ContextPattern, ...]
    source: str  # where it was read from

    def __iter__(self) -> Iterator[CatalogueEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, name: str) -> CatalogueEntry | None:
        """The entry whose name or alias is `name` exactly (case-insensitive)."""
        return self._index.get(name.lower())

    def lookup(self, name: str) -> tuple[CatalogueEntry, bool] | None:
        """The entry for a model name, trying the exact name first and then the name
        without its dated/variant suffixes (`-20250929`, `-2025-08-07`, `@20250929`,
        `-latest`, `-preview`, `org/` prefixes, `:tag`s...). Returns the entry and
        whether the exact name matched."""
        exact = self.get(name)
        if exact is not None:
            return exact, True
        for candidate in base_names(name):
            found = self.get(candidate)
            if found is not None:
                return found, False
        return None

    @functools.cached_property
    def _index(self) -> dict[str, CatalogueEntry]:
        index: dict[str, CatalogueEntry] = {}
        for entry in self.entries:
            for key in (entry.name, *entry.aliases):
                index[key.lower()] = entry
        return index


# --------------------------------------------------------------------------- names

_SUFFIXES = (
    re.compile(r"[-@]\d{8}$"),  # -20250929, @20250929 (Vertex)
    re.compile(r"-\d{4}-\d{2}-\d{2}$"),  # -2025-08-07
    re.compile(r"-\d{2}-\d{4}$"),  # -09-2025 (Gemini previews)
    re.compile(r"-\d{2}-\d{2}$"),  # -06-17
    re.compile(r"-\d{4}$"),  # -0905, -2512
    re.compile(r"-\d{3}$"),  # -001 (Gemini stable versions)
    re.compile(r"-(latest|preview|exp|experimental|instruct)$"),
    re.compile(r"-v\d+(:\d+)?$"),  # -v1:0 (Bedrock)
)


def base_names(name: str) -> list[str]:
    """Shorter forms of a model name, most specific first: lower-cased, without a
    `vendor/` or `us.anthropic.`-style prefix, a `:tag`, then one dated or variant
    suffix at a time. The name itself is not included."""
    out: list[str] = []

    def add(candidate: str) -> None:
        if candidate and candidate != name and candidate not in out:
            out.append(candidate)

    current = name.strip().lower()
    add(current)
    current = current.rsplit("/", 1)[-1]
    current = re.sub(r"^(?:[a-z]{2}\.)?(?:anthropic|amazon|meta|mistral|cohere)\.", "", current)
    add(current)
    if ":" in current and not re.search(r"-v\d+:\d+$", current):
        current = current.split(":", 1)[0]
        add(current)
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            shorter = suffix.sub("", current)
            if shorter != current and shorter:
                current = shorter
                add(current)
                changed = True
                break
    return out


# --------------------------------------------------------------------------- loading


def shipped_catalogue_path() -> Path:
    """The shipped `models.toml`: the package resource, else the source checkout's file."""
    resource = importlib.resources.files("wyckoff_cli") / "_shipped_config" / FILE_NAME
    if resource.is_file():
        return Path(str(resource))
    return Path(__file__).resolve().parents[2] / "config" / FILE_NAME


@functools.lru_cache(maxsize=1)
def default_catalogue() -> Catalogue:
    """The shipped catalogue, read once per process."""
    return load_catalogue(shipped_catalogue_path())


def load_catalogue(path: Path) -> Catalogue:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogueError(f"{path}: cannot read the model catalogue ({exc.strerror})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{path}: invalid TOML: {exc}") from None
    return parse_catalogue(data, str(path))


def parse_catalogue(data: Mapping[str, Any], source: str = "<catalogue>") -> Catalogue:
    """Check and convert parsed TOML; raises `CatalogueError` on the first problem."""
    reader = _Reader(source)
    reader.keys(data, "", required={"catalogue", "models", "patterns"})
    head = reader.table(data, "catalogue")
    reader.keys(head, "catalogue", required={"checked"}, optional={"currency", "unit"})
    checked = reader.string(head, "checked", "catalogue.checked")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", checked):
        raise reader.error("catalogue.checked", "must be a date YYYY-MM-DD", checked)
    models = reader.table(data, "models")
    entries = tuple(_entry(reader, name, reader.table(models, name, f'models."{name}"')) for name in models)
    _check_unique_names(reader, entries)
    raw_patterns = data["patterns"]
    if not isinstance(raw_patterns, list):
        raise reader.error("patterns", "must be an array of tables", raw_patterns)
    patterns = tuple(_pattern(reader, i, item) for i, item in enumerate(raw_patterns))
    return Catalogue(checked, entries, patterns, source)


_REQUIRED = {"vendor", "provider", "context_window", "max_output", "reasoning", "images", *PRICE_FIELDS}
_OPTIONAL = {"tiers", "aliases", "base_url", "api_key_env", "note", "api", "web_search"}


def _entry(reader: _Reader, name: str, raw: Mapping[str, Any]) -> CatalogueEntry:
    where = f'models."{name}"'
    reader.keys(raw, where, required=_REQUIRED, optional=_OPTIONAL)
    reasoning = reader.string(raw, "reasoning", where)
    if reasoning not in REASONING_KINDS:
        raise reader.error(f"{where}.reasoning", f"must be one of {', '.join(REASONING_KINDS)}", reasoning)
    context_window = reader.positive_int(raw, "context_window", where)
    max_output = reader.positive_int(raw, "max_output", where)
    if max_output > context_window:
        raise reader.error(f"{where}.max_output", "must not exceed context_window", max_output)
    images = raw["images"]
    if not isinstance(images, bool):
        raise reader.error(f"{where}.images", "must be true or false", images)
    raw_tiers = raw.get("tiers", [])
    if not isinstance(raw_tiers, list):
        raise reader.error(f"{where}.tiers", "must be an array of tables", raw_tiers)
    tiers = tuple(_tier(reader, f"{where}.tiers[{i}]", t) for i, t in enumerate(raw_tiers))
    if any(b.above <= a.above for a, b in zip(tiers, tiers[1:], strict=False)):
        raise reader.error(
            f"{where}.tiers", "must be in increasing order of `above`", [t.above for t in tiers]
        )
    if tiers and tiers[-1].above >= context_window:
        raise reader.error(f"{where}.tiers", "start above the context window", tiers[-1].above)
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a for a in aliases):
        raise reader.error(f"{where}.aliases", "must be an array of names", aliases)
    return CatalogueEntry(
        name=name,
        vendor=reader.string(raw, "vendor", where),
        provider=reader.string(raw, "provider", where),
        context_window=context_window,
        max_output=max_output,
        reasoning=cast(Reasoning, reasoning),
        images=images,
        input=reader.price(raw, "input", where),
        output=reader.price(raw, "output", where),
        cache_read=reader.price(raw, "cache_read", where),
        cache_write=reader.price(raw, "cache_write", where),
        tiers=tiers,
        aliases=tuple(aliases),
        base_url=reader.optional_string(raw, "base_url", where),
        api_key_env=reader.optional_string(raw, "api_key_env", where),
        note=reader.optional_string(raw, "note", where),
        api=_api(reader.optional_string(raw, "api", where), where),
        web_search=reader.price(raw, "web_search", where) if "web_search" in raw else None,
    )


def _api(value: str | None, where: str) -> str | None:
    if value not in (None, "chat", "responses"):
        raise CatalogueError(f'{where}.api must be "chat" or "responses", got {value!r}')
    return value


def _tier(reader: _Reader, where: str, raw: Any) -> PriceTier:
    if not isinstance(raw, dict):
        raise reader.error(where, "must be a table", raw)
    reader.keys(raw, where, required={"above", *PRICE_FIELDS})
    return PriceTier(
        above=reader.positive_int(raw, "above", where),
        input=reader.price(raw, "input", where),
        output=reader.price(raw, "output", where),
        cache_read=reader.price(raw, "cache_read", where),
        cache_write=reader.price(raw, "cache_write", where),
    )


def _pattern(reader: _Reader, index: int, raw: Any) -> ContextPattern:
    where = f"patterns[{index}]"
    if not isinstance(raw, dict):
        raise reader.error(where, "must be a table", raw)
    reader.keys(raw, where, required={"match", "context_window"})
    pattern = reader.string(raw, "match", where)
    if not pattern.strip():
        raise reader.error(f"{where}.match", "must not be empty", pattern)
    return ContextPattern(pattern, reader.positive_int(raw, "context_window", where))


def _check_unique_names(reader: _Reader, entries: tuple[CatalogueEntry, ...]) -> None:
    seen: dict[str, str] = {}
    for entry in entries:
        for key in (entry.name, *entry.aliases):
            owner = seen.setdefault(key.lower(), entry.name)
            if owner != entry.name:
                raise reader.error(f'models."{entry.name}".aliases', f"name already used by {owner!r}", key)


class _Reader:
    """Small typed accessors that raise `CatalogueError` naming file and key."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, key: str, problem: str, value: Any) -> CatalogueError:
        return CatalogueError(f"{self.source}: {key} {problem}, got {value!r}")

    def keys(
        self,
        raw: Mapping[str, Any],
        where: str,
        *,
        required: set[str],
        optional: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        prefix = f"{where}." if where else ""
        unknown = sorted(set(raw) - required - set(optional))
        if unknown:
            known = ", ".join(sorted(required | set(optional)))
            raise CatalogueError(f"{self.source}: unknown key {prefix}{unknown[0]} (known keys: {known})")
        missing = sorted(required - set(raw))
        if missing:
            raise CatalogueError(f"{self.source}: {prefix}{missing[0]} is required")

    def table(self, raw: Mapping[str, Any], key: str, where: str | None = None) -> Mapping[str, Any]:
        value = raw[key]
        if not isinstance(value, dict):
            raise self.error(where or key, "must be a table", value)
        return value

    def string(self, raw: Mapping[str, Any], key: str, where: str) -> str:
        value = raw[key]
        if not isinstance(value, str) or not value:
            raise self.error(f"{where}.{key}", "must be a non-empty string", value)
        return value

    def optional_string(self, raw: Mapping[str, Any], key: str, where: str) -> str | None:
        return self.string(raw, key, where) if key in raw else None

    def positive_int(self, raw: Mapping[str, Any], key: str, where: str) -> int:
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise self.error(f"{where}.{key}", "must be a positive integer", value)
        return value

    def price(self, raw: Mapping[str, Any], key: str, where: str) -> float:
        value = raw[key]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise self.error(
                f"{where}.{key}", "must be a non-negative number (USD per million tokens)", value
            )
        return float(value)
