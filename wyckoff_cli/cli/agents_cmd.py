"""`wyckoff agents list`: every sub-agent the `task` tool offers, with where it came from.

Also `add_budget_argument`, the `--max-budget-usd` option `chat` and `run` share.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="agents_command", metavar="ACTION")
    listing = sub.add_parser("list", help="list the agents and where each is defined")
    listing.add_argument("--cwd", type=Path, default=None, help="workspace folder (default: current)")


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.session.subagents import workspace_agents
    from wyckoff_cli.storage.paths import find_project_root

    if args.agents_command != "list":
        print("usage: wyckoff agents list", file=sys.stderr)
        return 2
    root = find_project_root((args.cwd or Path.cwd()).expanduser().resolve())
    catalog = workspace_agents(root)
    width = max(len(name) for name in catalog.names())
    for agent in catalog:
        tools = ", ".join(agent.tools) if agent.tools is not None else "the parent's tools"
        extra = [f"tools: {tools}"]
        if agent.model != "inherit":
            extra.append(f"model: {agent.model}")
        if agent.permission_mode:
            extra.append(f"mode: {agent.permission_mode}")
        if agent.max_rounds:
            extra.append(f"max_rounds: {agent.max_rounds}")
        print(f"{agent.name:<{width}}  {agent.source}")
        print(f"{'':<{width}}  {agent.description}")
        print(f"{'':<{width}}  {'; '.join(extra)}")
    for problem in catalog.problems:
        print(f"wyckoff: {problem}", file=sys.stderr)
    return 0


def add_budget_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-budget-usd",
        type=budget_usd,
        metavar="USD",
        help="stop the session, sub-agents included, once its model calls cost this much "
        "(default: [session] max_budget_usd)",
    )


def budget_usd(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an amount in USD, e.g. 2.50, not {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"the budget must be a positive amount in USD, not {text!r}")
    return value
