"""The session side of sub-agents: the `task` tool wired to a session's parts.

`add_task_tool(builder, session, budget)` loads the workspace's agents and adds the
`task` tool to the session's registry with a `SessionChildFactory`, which builds each
child from the parent session's parts (provider, tools, policy, recorder) and the
builder's configuration. See runtime/subagents.py for the run itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.core.messages import Message
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.runtime.agent_files import AgentCatalog, AgentDefinition, load_agents, narrower_mode
from wyckoff_cli.runtime.hooks import RuntimeHooks
from wyckoff_cli.runtime.loop import AgentRuntime, RuntimeSettings
from wyckoff_cli.runtime.subagents import (
    TASK_TOOL,
    BudgetHook,
    ChildRun,
    SessionBudget,
    child_policy,
    child_registry,
    task_tool,
    transcript_path,
)
from wyckoff_cli.runtime.worktree_merge_tool import MERGE_TOOL, merge_worktree_tool
from wyckoff_cli.storage.config import Config
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

# The builder imports this module (lazily), so its types are not imported back here:
SessionBuilder = Any  # session/builder.py SessionBuilder
Session = Any  # session/builder.py Session


def workspace_agents(root: Path, *, trust_settings: bool = False) -> AgentCatalog:
    """The agents of the workspace at `root` (built-ins and files)."""
    from wyckoff_cli.storage.paths import config_dir

    return load_agents(root, config_dir(), trust_settings=trust_settings)


def catalogue_cost(config: Config) -> Callable[[str, Usage], float | None]:
    """(model, usage) -> USD from the model catalogue and `[model_overrides]`."""

    def cost(model: str, usage: Usage) -> float | None:
        from wyckoff_cli.models.costs import cost_of
        from wyckoff_cli.models.facts import resolve_model_facts
        from wyckoff_cli.session.models import model_id

        facts = resolve_model_facts(model_id(model, config), config.model_overrides)
        priced = cost_of(usage, facts.prices)
        return None if priced is None else priced.total

    return cost


@dataclass
class SessionChildFactory:
    """Builds a `task`'s child from the parent session's parts."""

    builder: SessionBuilder
    parent: Session
    budget: SessionBudget | None
    cost: Callable[[str, Usage], float | None]

    def price(self, model: str, usage: Usage) -> float | None:
        try:
            return self.cost(model, usage)
        except Exception:
            return None

    def child(self, agent: AgentDefinition, workspace: Path | None = None) -> ChildRun:
        parent, config = self.parent, self.builder.config
        root = workspace or parent.runtime.workspace
        model = parent.model if agent.model == "inherit" else agent.model
        provider = parent.provider if model == parent.model else self.builder.provider(model)
        registry = child_registry(parent.registry, agent)
        policy = child_policy(parent.policy, narrower_mode(parent.policy.mode, agent.permission_mode), agent)
        hooks = [*self.builder.hooks, self.user_hooks(policy)]
        if self.budget is not None:
            hooks.append(BudgetHook(self.budget))
        runtime = AgentRuntime(
            provider,
            registry,
            workspace=root,
            policy=policy,
            settings=RuntimeSettings(max_tool_rounds=agent.max_rounds or config.agents.max_rounds),
            hooks=hooks,
            results_dir=parent.recorder.results_dir if parent.recorder is not None else None,
            tool_env=parent.runtime.tool_env,
            redact=parent.runtime.redact,
            host_files=parent.runtime.host_files,
            host_terminal=parent.runtime.host_terminal,
            price=self.price,
        )
        limits = config.agents
        prompt = self.system_prompt(agent, registry.names(), workspace)
        return ChildRun(runtime, prompt, model, limits.max_seconds, limits.idle_seconds)

    def user_hooks(self, policy: ApprovalPolicy) -> RuntimeHooks:
        """The workspace's user hooks for a child: PreToolUse and PostToolUse hold for
        its calls as for the parent's, and its turn's end runs `SubagentStop`."""
        from wyckoff_cli.runtime.user_hooks import UserHooks

        parent = self.builder.user_hooks
        hooks = UserHooks(parent.hooks, project_dir=parent.project_dir, cwd=parent.cwd, subagent=True)
        hooks.session_id, hooks.transcript_path = parent.session_id, parent.transcript_path
        hooks.permission_mode = lambda: policy.mode
        return hooks

    def system_prompt(
        self, agent: AgentDefinition, tools: Sequence[str], workspace: Path | None = None
    ) -> str:
        """The definition's body, the tools it has and the project instructions
        (`workspace`: the child's own worktree, named as its working directory)."""
        from wyckoff_cli.context.instructions import load_project_instructions
        from wyckoff_cli.storage.paths import claude_home, config_dir

        root = self.builder.workspace.root
        claude = claude_home() if self.builder.config.compat.claude_home else None
        instructions = load_project_instructions(
            root, self.builder.cwd or root, config_dir(), claude_home=claude
        ).text
        where = f"Working directory: {workspace or root}"
        if workspace is not None:
            where += " (a git worktree of your own: your changes stay there until the user merges them)"
        parts = [agent.prompt, f"{where}\nYour tools: {', '.join(tools) or 'none'}."]
        if instructions:
            parts.append("# Project instructions\n\n" + instructions)
        return "\n\n".join(parts)

    def save_transcript(
        self, agent_id: str, agent: AgentDefinition, messages: Sequence[Message]
    ) -> str | None:
        recorder = self.parent.recorder
        if recorder is None:
            return None
        path = transcript_path(recorder.directory, agent_id)
        header = {"kind": "header", "agent": agent.name, "agent_id": agent_id, "source": agent.source}
        lines = [
            header,
            *({"kind": "message", "message": recorder.redactor.message(m.to_dict())} for m in messages),
        ]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as handle:
                for line in lines:
                    handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        except OSError:
            return None
        return str(path.relative_to(recorder.directory))


def add_task_tool(builder: SessionBuilder, session: Session, budget: SessionBudget | None) -> None:
    """Give `session` the `task` tool over the workspace's agents."""
    if TASK_TOOL in session.registry:
        return
    catalog = builder.agents()
    cost = builder.cost or catalogue_cost(builder.config)
    factory = SessionChildFactory(builder, session, budget, cost)
    limit = builder.config.agents.max_parallel
    session.registry.add(task_tool(catalog, factory, session.registry, limit))
    if MERGE_TOOL not in session.registry:  # a child in a worktree is merged back through it
        session.registry.add(merge_worktree_tool())
