"""The shipped catalogue loads, every entry is complete, and mistakes are named."""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.models.catalogue import (
    REASONING_KINDS,
    CatalogueError,
    base_names,
    default_catalogue,
    load_catalogue,
    parse_catalogue,
    shipped_catalogue_path,
)
from wyckoff_cli.models.inference import infer_context_window
from wyckoff_cli.providers.spec import PROVIDERS
from wyckoff_cli.storage.config import Config

ROOT = Path(__file__).resolve().parents[2]
VENDORS = {"anthropic", "openai", "google", "deepseek", "qwen", "moonshot", "mistral"}


def test_the_shipped_file_is_the_one_in_config_during_development() -> None:
    assert shipped_catalogue_path() == ROOT / "config" / "models.toml"
    assert not (ROOT / "config" / ".keep").exists()


def test_the_shipped_catalogue_loads_and_covers_every_vendor() -> None:
    catalogue = default_catalogue()
    assert {entry.vendor for entry in catalogue} == VENDORS
    assert len(catalogue) >= 40 and len(catalogue.patterns) >= 40
    checked = dt.date.fromisoformat(catalogue.checked)
    assert dt.date(2025, 6, 1) <= checked <= dt.date.today()


def test_the_file_says_when_prices_were_checked_and_to_recheck_them() -> None:
    text = (ROOT / "config" / "models.toml").read_text(encoding="utf-8")
    assert "PRICES CHANGE OFTEN" in text and "Re-check" in text
    assert f'checked = "{default_catalogue().checked}"' in text


@pytest.mark.parametrize("entry", default_catalogue().entries, ids=lambda e: e.name)
def test_every_entry_is_complete_and_plausible(entry: Any) -> None:
    assert entry.provider in PROVIDERS and entry.provider != "scripted"
    assert entry.reasoning in REASONING_KINDS
    assert 8_000 <= entry.context_window <= 2_100_000
    assert 0 < entry.max_output <= entry.context_window
    assert entry.input > 0 and entry.output >= entry.input
    assert entry.cache_read <= entry.input <= entry.cache_write
    for tier in entry.tiers:
        assert tier.input >= entry.input and tier.output >= entry.output
    if entry.provider == "openai" and entry.vendor != "openai":
        assert entry.base_url and entry.base_url.startswith("https://") and entry.api_key_env
    # The name patterns agree with the catalogue for the catalogue's own names.
    assert infer_context_window(entry.name) == entry.context_window


def test_the_default_model_of_the_config_is_in_the_catalogue() -> None:
    provider, _, model = Config().model.partition(":")
    entry = default_catalogue().get(model)
    assert entry is not None and entry.provider == provider


def test_anthropic_cache_writes_cost_a_quarter_more_and_reads_a_tenth() -> None:
    for entry in default_catalogue():
        if entry.vendor == "anthropic":
            assert entry.cache_write == pytest.approx(entry.input * 1.25)
            assert entry.cache_read == pytest.approx(entry.input * 0.10)


@pytest.mark.parametrize(
    ("name", "expected", "exact"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5", True),
        ("CLAUDE-SONNET-4-5", "claude-sonnet-4-5", True),
        ("claude-sonnet-4.5", "claude-sonnet-4-5", True),  # alias
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", False),
        ("claude-opus-4-20250514", "claude-opus-4-0", False),
        ("claude-opus-4@20250514", "claude-opus-4-0", False),  # Vertex
        ("us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1", False),  # Bedrock
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5", False),  # OpenRouter
        ("gpt-5-2025-08-07", "gpt-5", False),
        ("gpt-4o-2024-08-06", "gpt-4o", False),
        ("gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash", False),
        ("gemini-2.0-flash-001", "gemini-2.0-flash", False),
        ("qwen3-max-2025-09-23", "qwen3-max", False),
        ("mistral-large-latest", "mistral-large-2512", True),
    ],
)
def test_lookup_tries_the_exact_name_then_without_dated_or_variant_suffix(
    name: str, expected: str, exact: bool
) -> None:
    found = default_catalogue().lookup(name)
    assert found is not None
    assert (found[0].name, found[1]) == (expected, exact)


@pytest.mark.parametrize("name", ["mistral-large-2411", "gpt-5-chat-latest", "my-llama", "qwen3:8b", ""])
def test_lookup_does_not_guess_a_different_model(name: str) -> None:
    assert default_catalogue().lookup(name) is None


def test_base_names_strip_one_suffix_at_a_time() -> None:
    assert base_names("gemini-2.5-flash-lite-preview-06-17") == [
        "gemini-2.5-flash-lite-preview",
        "gemini-2.5-flash-lite",
    ]
    assert base_names("Qwen/Qwen3-Coder-480B-A35B-Instruct") == [
        "qwen/qwen3-coder-480b-a35b-instruct",
        "qwen3-coder-480b-a35b-instruct",
        "qwen3-coder-480b-a35b",
    ]


# --------------------------------------------------------------------------- mistakes are named

ENTRY: dict[str, Any] = {
    "vendor": "acme",
    "provider": "openai",
    "context_window": 100_000,
    "max_output": 8_000,
    "reasoning": "none",
    "images": False,
    "input": 1.0,
    "output": 2.0,
    "cache_read": 0.1,
    "cache_write": 1.0,
}
VALID: dict[str, Any] = {
    "catalogue": {"checked": "2026-01-01"},
    "models": {"acme-1": ENTRY},
    "patterns": [{"match": "acme*", "context_window": 100_000}],
}


def _broken(path: list[str | int], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(VALID)
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


def test_a_valid_minimal_catalogue_parses() -> None:
    catalogue = parse_catalogue(VALID, "x.toml")
    entry = catalogue.get("acme-1")
    assert entry is not None and entry.id == "openai:acme-1" and entry.tiers == ()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["models", "acme-1", "input"], -1, 'models."acme-1".input must be a non-negative number'),
        (["models", "acme-1", "output"], "2", 'models."acme-1".output must be a non-negative number'),
        (["models", "acme-1", "cache_read"], float("nan"), "cache_read must be a non-negative number"),
        (["models", "acme-1", "context_window"], 0, "context_window must be a positive integer"),
        (["models", "acme-1", "context_window"], True, "context_window must be a positive integer"),
        (["models", "acme-1", "max_output"], 200_000, "max_output must not exceed context_window"),
        (["models", "acme-1", "reasoning"], "sometimes", "reasoning must be one of none, budget"),
        (["models", "acme-1", "images"], "yes", "images must be true or false"),
        (["models", "acme-1", "cache_write"], KeyError, 'models."acme-1".cache_write is required'),
        (["models", "acme-1", "price"], 1.0, 'unknown key models."acme-1".price'),
        (["models", "acme-1", "aliases"], "acme", "aliases must be an array of names"),
        (
            ["models", "acme-1", "tiers"],
            [{"above": 5, "input": 1, "output": 1, "cache_read": 1, "cache_write": 1}] * 2,
            "must be in increasing order",
        ),
        (["models", "acme-1", "tiers"], [{"above": 5, "input": 1}], "tiers[0].cache_read is required"),
        (["catalogue", "checked"], "last week", "catalogue.checked must be a date"),
        (["catalogue", "checked"], KeyError, "catalogue.checked is required"),
        (["patterns"], {"match": "x"}, "patterns must be an array of tables"),
        (["patterns", 0, "context_window"], -1, "patterns[0].context_window must be a positive integer"),
        (["patterns", 0, "match"], " ", "patterns[0].match must not be empty"),
        (["models"], KeyError, "models is required"),
    ],
)
def test_every_mistake_names_the_file_and_the_key(path: list[str | int], value: Any, message: str) -> None:
    with pytest.raises(CatalogueError) as caught:
        parse_catalogue(_broken(path, value), "x.toml")
    assert str(caught.value).startswith("x.toml: ")
    assert message in str(caught.value)


def test_two_entries_cannot_share_a_name() -> None:
    data = copy.deepcopy(VALID)
    data["models"]["acme-2"] = {**ENTRY, "aliases": ["ACME-1"]}
    with pytest.raises(CatalogueError, match="name already used by 'acme-1'"):
        parse_catalogue(data)


def test_unreadable_or_invalid_files_are_catalogue_errors(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="cannot read the model catalogue"):
        load_catalogue(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[catalogue\n")
    with pytest.raises(CatalogueError, match="invalid TOML"):
        load_catalogue(bad)
