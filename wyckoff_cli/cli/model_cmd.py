"""`wyckoff model list|cost|use|fallback|add|remove`: models, their facts and prices.

Reads the effective configuration (user file, then the project's); every change is
written to the user's `config.toml` atomically with dotted keys, so changing one
field never wipes the others. Model facts come from `models.facts`, the one
resolution every consumer uses (override → catalogue → name pattern → 64K).
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.cli.model_figures import (
    PRICE_FLAGS,
    PRICE_LABELS,
    close_models,
    parse_figures,
)
from wyckoff_cli.core.errors import ConfigError, UsageError
from wyckoff_cli.models.catalogue import PRICE_FIELDS, Catalogue, CatalogueEntry, CatalogueError
from wyckoff_cli.models.costs import example_turn, format_price, format_usd
from wyckoff_cli.models.facts import ModelFacts, find_override, resolve_model_facts, split_model_id
from wyckoff_cli.storage import config as cfg
from wyckoff_cli.storage import paths

ALIAS_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", help="aliases and catalogue models: context windows, prices, default"
    )
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    cost = actions.add_parser(
        "cost",
        help="show a model's context window and prices, or save your own figures",
        description="With no flags, show the figures and a worked example; with flags, save them "
        "to your config.toml (prices in USD per million tokens).",
    )
    cost.add_argument("model", metavar="ID", help="PROVIDER:MODEL, an alias, or a catalogue model name")
    cost.add_argument(
        "--context-window",
        metavar="N",
        help="context window in tokens: 32768, 32,768, 32k (= 32,000) or 1m (= 1,000,000)",
    )
    for name, flag in PRICE_FLAGS.items():
        cost.add_argument(flag, metavar="P", dest=name, help=f"USD per million {PRICE_LABELS[name]} tokens")
    cost.add_argument("--reset", action="store_true", help="remove your saved figures for this model")
    cost.add_argument(
        "--new",
        action="store_true",
        help="save figures for a model the catalogue does not know, even when its name is close to one it does",
    )
    use = actions.add_parser("use", help="set the default model")
    use.add_argument("model", metavar="ID", help="PROVIDER:MODEL, an alias, or a catalogue model name")
    fallback = actions.add_parser("fallback", help="set the models tried, in order, when the default fails")
    fallback.add_argument("models", nargs="*", metavar="ID")
    fallback.add_argument("--clear", action="store_true", help="remove every fallback")
    add = actions.add_parser("add", help="add an alias, or change fields of one")
    add.add_argument("alias")
    add.add_argument("--provider", help="adapter: anthropic, openai (any OpenAI-compatible endpoint), gemini")
    add.add_argument("--model", help="the model id the endpoint expects")
    add.add_argument("--base-url", metavar="URL", help="endpoint base URL, e.g. http://localhost:11434/v1")
    add.add_argument("--api-key-env", metavar="VAR", help="name of the environment variable holding the key")
    remove = actions.add_parser("remove", help="remove an alias")
    remove.add_argument("alias")


def run(args: argparse.Namespace) -> int:
    root = paths.find_project_root(Path.cwd())
    loaded = cfg.load_config(root)
    context = Context(loaded, load_catalogue(), paths.config_file(), root)
    handlers = {
        "list": cmd_list,
        "cost": cmd_cost,
        "use": cmd_use,
        "fallback": cmd_fallback,
        "add": cmd_add,
        "remove": cmd_remove,
    }
    return handlers[args.action](args, context)


def load_catalogue() -> Catalogue:
    from wyckoff_cli.models.catalogue import default_catalogue

    try:
        return default_catalogue()
    except CatalogueError as exc:
        raise ConfigError(f"the shipped model catalogue is broken: {exc}") from None


@dataclass
class Context:
    loaded: cfg.LoadedConfig
    catalogue: Catalogue
    user_file: Path
    root: Path

    @property
    def config(self) -> cfg.Config:
        return self.loaded.config

    def facts(self, model_id: str) -> ModelFacts:
        return resolve_model_facts(model_id, self.config.model_overrides, self.catalogue)

    def user_data(self) -> dict[str, Any]:
        return cfg.read_toml(self.user_file) or {}

    def save(self, changes: dict[str, Any]) -> None:
        try:
            cfg.update_config_file(self.user_file, changes)
        except ConfigError as exc:
            raise ConfigError(f"not saved: {exc.message}") from None


# --------------------------------------------------------------------------- resolving names


@dataclass(frozen=True)
class Resolved:
    name: str  # as typed
    model_id: str  # provider:model, or a bare name nobody knows the provider of
    alias: str | None = None
    entry: CatalogueEntry | None = None


def resolve(name: str, context: Context) -> Resolved:
    """An alias, `provider:model`, or a model name (found in the catalogue or not)."""
    name = name.strip()
    if not name or '"' in name:
        raise UsageError(f"not a model id: {name!r}")
    alias = context.config.models.get(name)
    if alias is not None:
        return Resolved(name, alias.model_id, name)
    provider, model = split_model_id(name)
    hit = context.catalogue.lookup(model)
    entry = None if hit is None else hit[0]
    if provider is None and entry is not None:
        return Resolved(name, f"{entry.provider}:{model}", None, entry)
    return Resolved(name, name, None, entry)


def resolve_runnable(name: str, context: Context) -> tuple[str, Resolved]:
    """For `use`/`fallback`: the value to save (alias or `provider:model`)."""
    from wyckoff_cli.core.errors import ProviderConfigError
    from wyckoff_cli.providers.spec import parse_model_id

    resolved = resolve(name, context)
    if resolved.alias is not None:
        return resolved.alias, resolved
    try:
        parse_model_id(resolved.model_id)
    except ProviderConfigError as exc:
        raise UsageError(exc.message) from None
    return resolved.model_id, resolved


# --------------------------------------------------------------------------- list


def cmd_list(args: argparse.Namespace, context: Context) -> int:
    config = context.config
    roles: dict[str, list[str]] = {}
    for name in [config.model, *config.fallbacks, *config.models, *config.model_overrides]:
        roles.setdefault(name, [])
    roles[config.model].append("default")
    for number, name in enumerate(config.fallbacks, 1):
        roles[name].append(f"fallback {number}")
    for name in config.models:
        roles[name].insert(0, "alias")
    for name in config.model_overrides:
        roles[name].append("figures saved")
    configured = []
    for name, marks in roles.items():
        resolved = resolve(name, context)
        configured.append((name, resolved, context.facts(resolved.model_id), marks))
    by_id: dict[str, list[str]] = {}
    for _, resolved, _, marks in configured:
        by_id.setdefault(resolved.model_id, []).extend(
            m for m in marks if m not in ("alias", "figures saved")
        )
    catalogue = [(entry, context.facts(entry.id)) for entry in context.catalogue]

    if args.json:
        print(
            json.dumps(
                {
                    "default": config.model,
                    "fallbacks": config.fallbacks,
                    "catalogue_checked": context.catalogue.checked,
                    "configured": [
                        {"name": name, "alias": r.alias is not None, "roles": marks, **facts.to_dict()}
                        for name, r, facts, marks in configured
                    ],
                    "catalogue": [
                        {**facts.to_dict(), "roles": by_id.get(entry.id, [])} for entry, facts in catalogue
                    ],
                },
                indent=2,
            )
        )
        return 0

    print(f"Default model: {config.model}")
    print(f"Fallbacks:     {', '.join(config.fallbacks) or '(none)'}")
    print(
        f"Prices: USD per million tokens (catalogue checked {context.catalogue.checked}; re-check before relying on them)."
    )
    print()
    header = ["NAME", "MODEL", "CONTEXT", "SOURCE", "INPUT", "OUTPUT", "C.READ", "C.WRITE", "ROLE"]
    rows = [
        [name, r.model_id, *_window_cells(f), *_price_cells(f), ", ".join(m)] for name, r, f, m in configured
    ]
    print("Configured")
    _table(header, rows)
    print()
    header = [
        "MODEL",
        "VENDOR",
        "CONTEXT",
        "SOURCE",
        "INPUT",
        "OUTPUT",
        "C.READ",
        "C.WRITE",
        "THINKING",
        "ROLE",
    ]
    rows = [
        [
            entry.id,
            entry.vendor,
            *_window_cells(f),
            *_price_cells(f),
            entry.reasoning,
            ", ".join(by_id.get(entry.id, [])),
        ]
        for entry, f in catalogue
    ]
    print(f"Catalogue ({len(rows)} models)")
    _table(header, rows)
    return 0


def _window_cells(facts: ModelFacts) -> list[str]:
    return [f"{facts.context_window:,}", facts.context_window_source]


def _price_cells(facts: ModelFacts) -> list[str]:
    return [format_price(value) for value in facts.prices.as_dict().values()]


def _table(header: list[str], rows: list[list[str]]) -> None:
    if not rows:
        print("  (none)")
        return
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    numeric = {"CONTEXT", "INPUT", "OUTPUT", "C.READ", "C.WRITE"}
    for row in [header, *rows]:
        cells = [
            cell.rjust(width) if header[i] in numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  " + "  ".join(cells).rstrip())


# --------------------------------------------------------------------------- cost


def cmd_cost(args: argparse.Namespace, context: Context) -> int:
    resolved = resolve(args.model, context)
    from wyckoff_cli.session.models import known_model_name, unknown_bare_name

    if resolved.alias is None and resolved.entry is None and not known_model_name(args.model, context.config):
        if ":" not in resolved.name:
            raise UsageError(unknown_bare_name(resolved.name, context.config))
        resolve_runnable(resolved.name, context)  # an unknown provider is an error
    changes = parse_figures(args)
    if changes and not args.new:
        refuse_a_likely_typo(resolved, context)
    if args.reset and changes:
        flags = ", ".join(_flag(name) for name in changes)
        raise UsageError(f"--reset removes your figures; it cannot be combined with {flags}")
    if args.reset:
        return reset_figures(resolved, context)
    if changes:
        return save_figures(resolved, changes, context)
    show_cost(resolved, context.facts(resolved.model_id), context)
    return 0


def refuse_a_likely_typo(resolved: Resolved, context: Context) -> None:
    """Saving figures for a `provider:model` the catalogue and config do not know, that
    looks like a catalogue model mistyped, needs `--new` (a new or local model)."""
    from wyckoff_cli.session.models import known_model_name

    if resolved.alias is not None or resolved.entry is not None:
        return
    if known_model_name(resolved.model_id, context.config):
        return
    close = close_models(resolved.model_id, (f"{e.provider}:{e.name}" for e in context.catalogue))
    if close:
        raise UsageError(
            f"{resolved.model_id} is not in the catalogue: did you mean {' or '.join(close)}? "
            f"Nothing was saved. To save figures for {resolved.model_id} as a new model, pass --new."
        )


def _flag(name: str) -> str:
    return PRICE_FLAGS.get(name, "--context-window")


def _label(name: str) -> str:
    return PRICE_LABELS.get(name, "context window")


def _figure_text(name: str, value: float | int | None) -> str:
    if name == "context_window":
        return "-" if value is None else f"{int(value):,}"
    return format_price(None if value is None else float(value))


def save_figures(resolved: Resolved, figures: dict[str, int | float], context: Context) -> int:
    key = resolved.model_id
    before = context.facts(key)
    current = {"context_window": before.context_window, **before.prices.as_dict()}
    sources: dict[str, str] = {"context_window": before.context_window_source, **before.price_sources}
    context.save({f'model_overrides."{key}".{name}': value for name, value in figures.items()})
    print(f"Saved for {key} in {context.user_file}:")
    for name, value in figures.items():
        old = current[name]
        was = f"{_figure_text(name, old)} ({sources[name]})" if old is not None else "unknown"
        print(f"  {_label(name):<15} {was} -> {_figure_text(name, value)}")
    after = resolve_model_facts(key, _reloaded_overrides(context), context.catalogue)
    _unknown_notes(resolved, after)
    return 0


def _reloaded_overrides(context: Context) -> dict[str, cfg.ModelOverride]:
    return cfg.load_config(context.root).config.model_overrides


def reset_figures(resolved: Resolved, context: Context) -> int:
    data = context.user_data()
    saved = data.get("model_overrides", {})
    found = find_override(resolved.model_id, {k: _Plain(v) for k, v in saved.items() if isinstance(v, dict)})
    if found is None:
        print(f"No figures saved for {resolved.model_id} in {context.user_file}; nothing to reset.")
        return 0
    key, _ = found
    removed = saved[key]
    whole = len(saved) == 1
    context.save({"model_overrides": None} if whole else {f'model_overrides."{key}"': None})
    listed = ", ".join(f"{_label(k)} {_figure_text(k, v)}" for k, v in removed.items())
    print(f"Removed your figures for {key} from {context.user_file}: {listed}")
    after = resolve_model_facts(resolved.model_id, _reloaded_overrides(context), context.catalogue)
    print(f"  context window now {after.context_window:,} tokens ({after.context_window_source})")
    return 0


class _Plain:
    """A saved override read straight from the file (for `find_override`)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.context_window: int | None = raw.get("context_window")
        self.input: float | None = raw.get("input")
        self.output: float | None = raw.get("output")
        self.cache_read: float | None = raw.get("cache_read")
        self.cache_write: float | None = raw.get("cache_write")


def show_cost(resolved: Resolved, facts: ModelFacts, context: Context) -> None:
    entry = facts.entry
    title = facts.model_id if resolved.alias is None else f"{resolved.alias} (alias of {facts.model_id})"
    print(title)
    if entry is not None:
        how = "" if facts.exact_match else f"; matched without the suffix of {facts.model}"
        images = "yes" if entry.images else "no"
        print(
            f"  catalogue entry  {entry.name} ({entry.vendor}; thinking: {entry.reasoning}; images: {images}{how})"
        )
    else:
        print("  catalogue entry  none (see the note below)")
    print(f"  context window   {facts.context_window:,} tokens ({_window_source_text(facts)})")
    if facts.max_output is not None:
        print(f"  max output       {facts.max_output:,} tokens")
    print("  prices           USD per million tokens")
    for name, value in facts.prices.as_dict().items():
        source = facts.price_sources.get(name)
        suffix = f" ({source})" if source else " (not known)"
        print(f"    {_label(name):<14} {format_price(value)}{suffix}")
    for tier in facts.prices.tiers:
        figures = " / ".join(
            format_price(v) for v in (tier.input, tier.output, tier.cache_read, tier.cache_write)
        )
        print(f"    prompts above {tier.above:,} tokens: {figures}")
    if entry is not None and entry.note:
        print(f"  note             {entry.note}")
    example = example_turn(facts.prices)
    print()
    if example is None:
        print("No worked example: the input and output prices are not known.")
    else:
        read, wrote = example.cached_usage.cache_read_tokens, example.cached_usage.cache_write_tokens
        print(f"One turn of {example.input_tokens:,} input and {example.output_tokens:,} output tokens:")
        print(f"  without cache        {format_usd(example.no_cache.total)}")
        share = f"{example.cache_hit:.0%}"
        saved = example.cached.saved
        saving = f"saves {format_usd(saved)}" if saved >= 0 else f"costs {format_usd(-saved)} more"
        print(
            f"  with {share} cache hits  {format_usd(example.cached.total)}  "
            f"({read:,} read from the cache, {wrote:,} written to it; {saving})"
        )
    _unknown_notes(resolved, facts)


def _window_source_text(facts: ModelFacts) -> str:
    if facts.context_window_source == "inferred":
        return f"inferred from the name pattern {facts.context_pattern!r}"
    if facts.context_window_source == "default":
        return "default: no name pattern matched"
    if facts.context_window_source == "configured":
        return f'configured in model_overrides."{facts.override_key}"'
    return "catalogue"


def _unknown_notes(resolved: Resolved, facts: ModelFacts) -> None:
    if facts.in_catalogue:
        return
    print(f"Note: {facts.model_id} is not in the catalogue (it may be new or local).")
    if facts.context_window_source in ("inferred", "default"):
        print(
            f"  Its context window is {_window_source_text(facts)}; "
            f"save the real one with `wyckoff model cost {resolved.name} --context-window N`."
        )
    missing = [_flag(name) for name in PRICE_FIELDS if name not in facts.price_sources]
    if missing:
        print(f"  Prices not known: {', '.join(missing)} (unknown cache prices count as the input price).")


# --------------------------------------------------------------------------- use / fallback


def cmd_use(args: argparse.Namespace, context: Context) -> int:
    value, resolved = resolve_runnable(args.model, context)
    previous = context.config.model
    context.save({"model": value})
    shown = value if value == resolved.model_id else f"{value}, alias of {resolved.model_id}"
    print(f"Default model: {shown} (was {previous})")
    _summary(resolved, context)
    _shadow_note(context, "model")
    return 0


def cmd_fallback(args: argparse.Namespace, context: Context) -> int:
    if args.clear and args.models:
        raise UsageError("give model ids or --clear, not both")
    if not args.clear and not args.models:
        raise UsageError(
            "name the fallback models in order (`wyckoff model fallback ID...`), or give --clear"
        )
    previous = ", ".join(context.config.fallbacks) or "none"
    if args.clear:
        context.save({"fallbacks": None})
        print(f"Fallbacks cleared (were: {previous})")
        _shadow_note(context, "fallbacks")
        return 0
    chosen: list[str] = []
    resolved_all = []
    for name in args.models:
        value, resolved = resolve_runnable(name, context)
        if value in chosen:
            raise UsageError(f"{name!r} is listed twice")
        chosen.append(value)
        resolved_all.append(resolved)
    context.save({"fallbacks": chosen})
    print(f"Fallbacks: {', '.join(chosen)} (were: {previous})")
    for resolved in resolved_all:
        _summary(resolved, context)
    if context.config.model in chosen:
        print(f"Note: {context.config.model} is also the default model; as a fallback it adds nothing.")
    _shadow_note(context, "fallbacks")
    return 0


def _summary(resolved: Resolved, context: Context) -> None:
    facts = context.facts(resolved.model_id)
    prices = " / ".join(format_price(v) for v in facts.prices.as_dict().values())
    print(
        f"  {facts.model_id}: context window {facts.context_window:,} ({facts.context_window_source}); "
        f"prices {prices}"
    )
    _unknown_notes(resolved, facts)


def _shadow_note(context: Context, key: str) -> None:
    project = paths.project_config_file(context.root)
    data = cfg.read_toml(project) if project.exists() else None
    if data and key in data:
        print(f"Note: {project} sets {key} = {data[key]!r}, which wins in this project.")


# --------------------------------------------------------------------------- add / remove


def cmd_add(args: argparse.Namespace, context: Context) -> int:
    from wyckoff_cli.providers.spec import PROVIDERS

    alias = args.alias
    if not ALIAS_NAME.fullmatch(alias):
        raise UsageError(
            f"alias must be letters, digits, '.', '_' or '-' (starting with a letter or digit), got {alias!r}"
        )
    existing = context.user_data().get("models", {}).get(alias)
    fields: dict[str, str] = {}
    if args.provider is not None:
        if args.provider not in PROVIDERS:
            raise UsageError(f"--provider must be one of {', '.join(PROVIDERS)}, got {args.provider!r}")
        fields["provider"] = args.provider
    if args.model is not None:
        if not args.model.strip() or args.model != args.model.strip() or '"' in args.model:
            raise UsageError(f"--model must be a model id without surrounding spaces, got {args.model!r}")
        fields["model"] = args.model
    if args.base_url is not None:
        if not re.fullmatch(r"https?://\S+", args.base_url):
            raise UsageError(f"--base-url must be an http:// or https:// URL, got {args.base_url!r}")
        fields["base_url"] = args.base_url
    if args.api_key_env is not None:
        if not ENV_NAME.fullmatch(args.api_key_env):
            value = args.api_key_env
            if len(value) >= 20 or value.startswith(("sk-", "AIza")):
                # Never echo what may be a secret.
                shown = "a value that looks like an API key itself (not shown): give the NAME of the variable"
            else:
                shown = repr(value)
            raise UsageError(f"--api-key-env must be an environment variable name, got {shown}")
        fields["api_key_env"] = args.api_key_env
    if existing is None:
        missing = [
            flag for flag, name in (("--provider", "provider"), ("--model", "model")) if name not in fields
        ]
        if missing:
            raise UsageError(f"a new alias needs {' and '.join(missing)}")
    elif not fields:
        raise UsageError("nothing to change: give --provider, --model, --base-url or --api-key-env")
    context.save({f'models."{alias}".{name}': value for name, value in fields.items()})
    if existing is None:
        print(f"Added alias {alias} -> {fields['provider']}:{fields['model']} in {context.user_file}")
    else:
        print(f"Updated alias {alias} in {context.user_file}:")
        for name, value in fields.items():
            print(f"  {name}: {existing.get(name, '-')} -> {value}")
    saved = cfg.load_config(context.root).config.models[alias]
    entry = context.catalogue.get(saved.model)
    if entry is not None and entry.base_url and saved.provider == "openai" and not saved.base_url:
        print(
            f"Note: the catalogue reaches {entry.name} at {entry.base_url} "
            f"(key from ${entry.api_key_env}); add --base-url if this alias should too."
        )
    resolved = Resolved(alias, saved.model_id, alias)
    _summary(
        resolved, Context(cfg.load_config(context.root), context.catalogue, context.user_file, context.root)
    )
    return 0


def cmd_remove(args: argparse.Namespace, context: Context) -> int:
    alias = args.alias
    saved = context.user_data().get("models", {})
    if alias not in saved:
        if alias in context.config.models:
            raise UsageError(
                f"alias {alias!r} is defined in {paths.project_config_file(context.root)}; edit that file"
            )
        known = ", ".join(sorted(saved)) or "none"
        raise UsageError(f"no alias {alias!r} in {context.user_file} (aliases there: {known})")
    if context.config.model == alias:
        raise UsageError(f"{alias!r} is the default model; choose another with `wyckoff model use ID` first")
    if alias in context.config.fallbacks:
        raise UsageError(f"{alias!r} is a fallback; change them with `wyckoff model fallback ID...` first")
    context.save({"models": None} if len(saved) == 1 else {f'models."{alias}"': None})
    print(f"Removed alias {alias} from {context.user_file}")
    return 0
