"""Context windows inferred from a model's name, for models not in the catalogue.

The patterns are data (`[[patterns]]` in `config/models.toml`): shell-style globs
compared, case-insensitively and in order, with the model name without any
`provider:` or `vendor/` prefix. The first match wins; no match means
`DEFAULT_CONTEXT_WINDOW` (64K tokens). Callers that need to know which of the two
happened use `match_context_pattern()`; `models.facts.resolve_model_facts()` does.
"""

from __future__ import annotations

from collections.abc import Sequence

from wyckoff_cli.models.catalogue import ContextPattern, default_catalogue

DEFAULT_CONTEXT_WINDOW = 65_536
"""The context window assumed for a model nobody knows anything about (64K)."""


def inference_name(model: str) -> str:
    """The part of a model name the patterns are compared with: lower-cased, without
    a `vendor/` path prefix (OpenRouter, Together, Hugging Face spellings)."""
    return model.strip().lower().rsplit("/", 1)[-1]


def match_context_pattern(
    model: str, patterns: Sequence[ContextPattern] | None = None
) -> ContextPattern | None:
    """The first pattern that matches `model` (a bare model name), or None."""
    name = inference_name(model)
    for pattern in default_catalogue().patterns if patterns is None else patterns:
        if pattern.matches(name):
            return pattern
    return None


def infer_context_window(model: str, patterns: Sequence[ContextPattern] | None = None) -> int:
    """The context window suggested by the name of `model` (a bare model name, e.g.
    `llama-3.3-70b-versatile`), or 64K when no pattern matches. `patterns` defaults
    to the shipped table."""
    found = match_context_pattern(model, patterns)
    return DEFAULT_CONTEXT_WINDOW if found is None else found.context_window
