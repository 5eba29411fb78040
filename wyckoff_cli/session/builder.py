"""One `SessionBuilder` for every host: config in, a session's parts out.

`wyckoff chat`, `wyckoff run` (and later sub-agents and ACP) build provider, tool
registry, policy, context manager, runtime, conversation and recorder the same way,
here. The system prompt lists the tools of the registry the runtime really uses.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.providers.registry import vendor_of
from wyckoff_cli.runtime.agent_hooks import agent_judge
from wyckoff_cli.runtime.checkpoints.hooks import checkpoint_hooks, ran_a_command
from wyckoff_cli.runtime.hooks import RuntimeHooks
from wyckoff_cli.runtime.loop import AgentRuntime, RuntimeSettings, child_environment
from wyckoff_cli.runtime.prompt_hooks import provider_judge
from wyckoff_cli.session.images import every_model_takes_images, image_store, image_support
from wyckoff_cli.session.mcp_sampling import ModelSampler
from wyckoff_cli.session.models import build_model
from wyckoff_cli.session.modes import ModeTools
from wyckoff_cli.session.shell import (
    check_rule_tools,
    protected_roots,
    session_tool_names,
    shell_notice,
    shell_settings,
)
from wyckoff_cli.storage.config import Config, LoadedConfig, load_config
from wyckoff_cli.storage.paths import find_project_root
from wyckoff_cli.tools.base import Tool
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.client_io import HostFiles, HostTerminal
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, PermissionMode
from wyckoff_cli.tools.permissions.sandbox import ShellSettings
from wyckoff_cli.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from wyckoff_cli.context.compaction import ArchiveFn
    from wyckoff_cli.context.manager import ContextManager, SessionId
    from wyckoff_cli.context.skills import SkillCatalog
    from wyckoff_cli.providers.routed import SmallModelRoute
    from wyckoff_cli.runtime.agent_files import AgentCatalog
    from wyckoff_cli.runtime.checkpoints.rewind import CheckpointCommands
    from wyckoff_cli.runtime.subagents import SessionBudget
    from wyckoff_cli.runtime.user_hooks import UserHooks
    from wyckoff_cli.storage.config_watch import ConfigWatch
    from wyckoff_cli.storage.images import ImageStore
    from wyckoff_cli.storage.recorder import SessionRecorder
    from wyckoff_cli.storage.sessions import LoadedSession, SessionStore
    from wyckoff_cli.tools.lsp.family import LspTools
    from wyckoff_cli.tools.mcp.host import McpHost
    from wyckoff_cli.tools.web import WebOptions


@dataclass
class Workspace:
    root: Path
    loaded: LoadedConfig
    sandbox: str | None = None  # `--sandbox MODE`, overriding `[shell] sandbox`

    @property
    def config(self) -> Config:
        return self.loaded.config

    def ignored_allow(self) -> list[str]:
        """The project's allow rules that do not apply (its file is not trusted)."""
        from wyckoff_cli.storage.project_grants import ignored_allow_rules

        return ignored_allow_rules(self.root)


def open_workspace(cwd: Path) -> Workspace:
    root = find_project_root(cwd)
    return Workspace(root, load_config(root))


@dataclass
class Session:
    """One session's parts, built together by `SessionBuilder.build`."""

    model: str
    provider: LLMProvider
    registry: ToolRegistry
    policy: ApprovalPolicy
    runtime: AgentRuntime
    conversation: Conversation
    context: ContextManager | None = None
    recorder: SessionRecorder | None = None
    fixed_prompt: str = ""
    checkpoints: CheckpointCommands | None = None  # /rewind, /undo, /redo, /diff (None: off)
    images: ImageStore | None = None  # where attached and tool images are kept (session/images.py)

    @property
    def id(self) -> str | None:
        return self.recorder.id if self.recorder is not None else None

    @property
    def shell_notice(self) -> str:
        """The one-line start-up notice about the shell sandbox ("" when it is on)."""
        return shell_notice(self.registry)

    @property
    def system_prompt(self) -> str:
        """Stable across rounds (the prompt cache depends on it)."""
        return self.context.system_prompt if self.context is not None else self.fixed_prompt

    async def aclose(self) -> None:
        await self.runtime.close()
        if self.recorder is not None:
            self.recorder.close()


@dataclass
class SessionBuilder:
    """Builds sessions for one workspace. The factories let tests and embedders swap
    the provider or the tools; by default they come from the configuration."""

    workspace: Workspace
    cwd: Path | None = None
    store: SessionStore | None = None
    provider_factory: Callable[[str], LLMProvider] | None = None
    tools_factory: Callable[[], ToolRegistry] | None = None  # default: built-ins, shell from [shell]
    manage_context: bool = True  # False: no context manager (and `fixed_prompt` as the prompt)
    fixed_prompt: str = ""
    extra_allow: list[str] = field(default_factory=list)
    mcp: McpHost | None = None  # the MCP servers; their tools join every session built here
    lsp: LspTools | None = None  # the language servers (tools/lsp); they see every file tool's file
    hooks: list[RuntimeHooks] = field(default_factory=list)  # given to every runtime built
    load_user_hooks: bool = True  # the hooks of config.toml and the project's files
    trust_project_hooks: bool = False  # run untrusted project hooks this time (headless --trust-hooks)
    _user_hooks: UserHooks | None = field(default=None, init=False, repr=False)
    _skills: SkillCatalog | None = field(default=None, init=False, repr=False)

    host_files: HostFiles | None = None  # an editor's files and terminal (ACP), when offered
    host_terminal: HostTerminal | None = None
    subagents: bool | None = None  # the `task` tool; None: when the tools are the built-ins
    max_budget_usd: float | None = None  # `--max-budget-usd`, over `[session] max_budget_usd`
    max_tool_rounds: int | None = None  # `--max-tool-rounds`, over `max_tool_rounds` of the config
    system_prompt_append: str = ""  # after the built system prompt (the Python API)
    cost: Callable[[str, Usage], float | None] | None = None  # USD of a call; default: the catalogue
    _agents: AgentCatalog | None = field(default=None, init=False, repr=False)
    _budgets: dict[str | None, SessionBudget] = field(default_factory=dict, init=False, repr=False)
    _config_watch: ConfigWatch | None = field(default=None, init=False, repr=False)

    @property
    def config_watch(self) -> ConfigWatch:
        """The workspace's config as its files say now, for the settings read when they
        matter (`[web]` allow_private and allow_hosts) rather than at start."""
        if self._config_watch is None:
            from wyckoff_cli.storage.config_watch import ConfigWatch

            self._config_watch = ConfigWatch(self.workspace.root, self.workspace.loaded)
        return self._config_watch

    @property
    def user_hooks(self) -> UserHooks:
        """The workspace's user hooks (read once; `reload_hooks` after a trust answer)."""
        if self._user_hooks is None:
            from wyckoff_cli.runtime.hook_config import HookSet, load_hooks
            from wyckoff_cli.runtime.user_hooks import UserHooks

            root = self.workspace.root
            trusting = self.trust_project_hooks  # --trust-hooks also takes the project's enabledPlugins
            hookset = load_hooks(root, trust_settings=trusting) if self.load_user_hooks else HookSet(root)
            if self.trust_project_hooks:
                hookset.trusted_for_run.update(f.path for f in hookset.files if f.project)
            self._user_hooks = UserHooks(hookset, project_dir=root, cwd=self.cwd)
        return self._user_hooks

    def reload_hooks(self) -> None:
        """Read the hook files and their trust again (after the user trusted them)."""
        from wyckoff_cli.runtime.hook_config import load_hooks

        if self._user_hooks is not None and self.load_user_hooks:
            trusted_for_run = self._user_hooks.hooks.trusted_for_run
            self._user_hooks.hooks = load_hooks(self.workspace.root, trust_settings=self.trust_project_hooks)
            self._user_hooks.hooks.trusted_for_run = trusted_for_run

    @property
    def skills(self) -> SkillCatalog:
        if self._skills is None:
            from wyckoff_cli.context.skills import discover_skills

            self._skills = discover_skills(self.workspace.root, trust_settings=self.trust_project_hooks)
        return self._skills

    @property
    def config(self) -> Config:
        return self.workspace.config

    def sessions(self) -> SessionStore:
        if self.store is None:
            from wyckoff_cli.session.store import build_session_store

            self.store = build_session_store(self.config)
        return self.store

    def open_recorder(self, model: str, loaded: LoadedSession | None = None) -> SessionRecorder:
        """A new session on disk, or `loaded` reopened (its repairs go through the
        conversation, so the runtime sees them)."""
        store = self.sessions()
        return store.reopen(loaded) if loaded is not None else store.create(self.workspace.root, model=model)

    def shell(self) -> ShellSettings:
        """How this workspace's shell commands run (`[shell]`, `--sandbox`); the
        sandbox probe runs once per process."""
        settings = shell_settings(self.config, self.workspace.root, self.workspace.sandbox)
        return replace(settings, extra_workspaces=self.extra_roots())

    def extra_roots(self) -> tuple[Path, ...]:
        """More workspace roots: a trusted `.claude/settings*.json` `additionalDirectories`."""
        from wyckoff_cli.session.claude_settings import extra_roots

        return extra_roots(self.user_hooks.hooks) if self.load_user_hooks else ()

    def shell_notice(self) -> str:
        """The one-line start-up notice about the shell sandbox ("" when it is on, or
        when the session's tools are not the built-ins); hosts show it when they start,
        before any session is built."""
        return self.shell().notice if self.tools_factory is None else ""

    def default_tools(self) -> ToolRegistry:
        """The built-in tools, the shell sandboxed and scrubbed as `[shell]` says."""
        return default_registry(shell=self.shell())

    def agents(self) -> AgentCatalog:
        """The workspace's sub-agents, read once (`problems` lists the files skipped)."""
        if self._agents is None:
            from wyckoff_cli.session.subagents import workspace_agents

            self._agents = workspace_agents(self.workspace.root, trust_settings=self.trust_project_hooks)
        return self._agents

    def call_cost(self) -> Callable[[str, Usage], float | None]:
        """(model, usage) -> USD: `cost`, or the catalogue and `[model_overrides]`."""
        from wyckoff_cli.session.subagents import catalogue_cost

        return self.cost or catalogue_cost(self.config)

    def budget(self, session_id: str | None) -> SessionBudget | None:
        """The session's cost budget (one per session, shared by its sub-agents)."""
        limit = self.max_budget_usd or self.config.session.max_budget_usd
        day_limit = self.config.session.max_day_usd
        if limit is None and day_limit is None:
            return None
        if session_id not in self._budgets:
            from wyckoff_cli.runtime.budget import SessionBudget
            from wyckoff_cli.session.spend import spent_today

            before = spent_today(self.sessions(), self.call_cost()) if day_limit is not None else 0.0
            self._budgets[session_id] = SessionBudget(
                limit, self.call_cost(), day_limit_usd=day_limit, day_spent_before=before
            )
        return self._budgets[session_id]

    def small_routes(self) -> dict[str, SmallModelRoute]:
        """`[routing]`: the small model of each small job that has one (built on use)."""
        from wyckoff_cli.providers.routed import SmallModelRoute

        routes = {}
        for purpose in ("compaction", "memory_flush", "title"):
            model = self.config.routing.model_for(purpose)
            if model:
                routes[purpose] = SmallModelRoute(model, functools.partial(self.provider, model), purpose)
        return routes

    def provider(self, model: str) -> LLMProvider:
        if self.provider_factory is not None:
            return self.provider_factory(model)
        return build_model(model, self.config)

    def build(
        self,
        *,
        model: str,
        mode: str,
        recorder: SessionRecorder | None = None,
        allow: Sequence[str] = (),
        max_tool_rounds: int | None = None,
        provider: LLMProvider | None = None,
    ) -> Session:
        """The parts of one session. `provider` when the host built it already (to fail
        on a missing key before anything else is made)."""
        config = self.config
        policy = build_policy(
            config,
            mode,  # type: ignore[arg-type]
            [*self.extra_allow, *allow],
            self.workspace.ignored_allow(),
        )
        apply_managed(policy, model)  # the admin's policy file wins (storage/managed.py)
        claude = self.user_hooks.hooks.claude_permissions()  # .claude/settings*.json rules, trust applied
        policy.deny += claude.deny
        policy.ask += claude.ask
        policy.allow += claude.allow
        policy.extra_roots = list(self.extra_roots())
        provider = provider or self.provider(model)
        registry = self.tools_factory() if self.tools_factory is not None else self.default_tools()
        if self.tools_factory is None:  # the web tools of `[web]` (tools/web)
            for tool in session_web_tools(config, provider, lambda: self.config_watch.current().web):
                registry.add(tool)
        if self.lsp is not None:  # file tools wrapped; lsp_* tools join once a server runs
            registry = self.lsp.wrap(registry)
        skills = self.skills
        if skills.skills and registry.get("skill") is None:
            from wyckoff_cli.context.skills import skill_tool

            registry.add(skill_tool(skills))
        context = None
        routes = self.small_routes()
        if self.manage_context:
            context = build_context(
                self.workspace,
                provider,
                cwd=self.cwd,
                archive=recorder.archive_replaced if recorder is not None else None,
                session_id=recorder.id if recorder is not None else None,
                routes=routes,
            )
            context.estimator.vendor = vendor_of(provider.name)  # whose rule counts images
            context.prompt_append = self.system_prompt_append
            for tool in context.tools():
                registry.add(tool)
            set_prompt(context, self.workspace.root, registry, skills)
        known = [*session_tool_names(), *registry.names()]  # rules may name tools this session lacks
        check_rule_tools(self.workspace.loaded.files, [*policy.allow, *policy.deny], known)
        policy.protected_roots = protected_roots
        checkpoints = (  # checkpoints of the work tree before rounds that may change files
            checkpoint_hooks(
                self.workspace.root,
                config.checkpoints,
                recorder.id,
                redact=offload_redactor(config),
                commands_ran=ran_a_command(recorder.conversation, lambda name: _kind(registry, name)),
            )
            if recorder is not None
            else []
        )
        user_hooks = self.user_hooks
        user_hooks.session_id = recorder.id if recorder is not None else None
        user_hooks.transcript_path = str(recorder.directory / "chat.jsonl") if recorder is not None else None
        user_hooks.permission_mode = lambda: policy.mode
        user_hooks.judge = provider_judge(provider)  # `prompt` hooks ask the session's model
        user_hooks.agent_judge = agent_judge(provider, lambda: registry, self.workspace.root)
        if context is not None:
            context.before_compact = user_hooks.pre_compact
        hooks: list[RuntimeHooks] = [*self.hooks, *checkpoints, user_hooks]
        if skills.skills:
            from wyckoff_cli.runtime.skill_mentions import SkillMentions

            hooks.append(SkillMentions(skills))
        budget = self.budget(recorder.id if recorder is not None else None)
        hooks += _budget_hooks(budget)
        if self.lsp is not None:
            from wyckoff_cli.session.lsp import RenamePlanning

            hooks.append(RenamePlanning(self.lsp, self.workspace.root))
        if recorder is not None and "title" in routes:
            from wyckoff_cli.session.titles import SessionTitler

            hooks.append(SessionTitler(routes["title"], recorder, lambda: runtime.provider))
        if self.mcp is not None:  # tools appended after the built-ins; sampling on this runtime's model
            self.mcp.attach(
                registry, ModelSampler(lambda: runtime.provider, [model, *config.fallbacks], self.provider)
            )
            self.mcp.follow_root(self.workspace.root)  # roots/list_changed when the workspace is another
        images = image_store(recorder)
        tool_images = images if every_model_takes_images(config, model) else None
        runtime = AgentRuntime(
            provider,
            registry,
            workspace=self.workspace.root,
            policy=policy,
            settings=RuntimeSettings(
                max_tool_rounds=max_tool_rounds or self.max_tool_rounds or config.max_tool_rounds
            ),
            results_dir=recorder.results_dir if recorder is not None else None,
            tool_env=child_environment(),
            context=context,
            redact=offload_redactor(config),
            hooks=[*hooks, ModeTools(policy, registry)],  # only the tools the mode offers
            host_files=self.host_files,
            price=self.call_cost(),
            host_terminal=self.host_terminal,
            images=tool_images,
            attachments=images,
            image_support=image_support(config),
        )
        conversation = recorder.conversation if recorder is not None else Conversation()
        session = Session(
            model,
            provider,
            registry,
            policy,
            runtime,
            conversation,
            context,
            recorder,
            self.fixed_prompt,
            checkpoints=checkpoints[0].commands() if checkpoints else None,
            images=images,
        )
        if self.subagents if self.subagents is not None else self.tools_factory is None:
            from wyckoff_cli.session.subagents import add_task_tool

            add_task_tool(self, session, budget)
            if context is not None:
                set_prompt(context, self.workspace.root, registry, skills)  # it lists `task` too
        return session


def _budget_hooks(budget: SessionBudget | None) -> list[RuntimeHooks]:
    if budget is None:
        return []
    from wyckoff_cli.runtime.subagents import BudgetHook

    return [BudgetHook(budget)]


def _kind(registry: ToolRegistry, name: str) -> str:
    tool = registry.get(name)
    return tool.kind if tool is not None else "other"


def session_web_tools(
    config: Config, provider: LLMProvider, current: Callable[[], WebOptions] | None = None
) -> list[Tool]:
    """web_fetch and, when a search API is configured and the model has no server-side
    search of its own, web_search, from `[web]`; `current` gives the `[web]` of now, for
    the settings read at every fetch (which hosts may be private)."""
    import os

    from wyckoff_cli.providers.server_search import searches_server_side
    from wyckoff_cli.tools.web import web_tools

    return web_tools(
        config.web, os.environ, provider_searches=searches_server_side(provider), current=current
    )


def build_policy(
    config: Config, mode: PermissionMode, extra_allow: list[str], ignored_allow: Sequence[str] = ()
) -> ApprovalPolicy:
    """The session's policy: config rules plus `--allow` rules; a malformed rule is a
    configuration error naming it (never silently ignored). `ignored_allow`: the
    project's allow rules that do not apply because its file is not trusted
    (storage/project_grants.py); deny rules always apply."""
    from wyckoff_cli.tools.permissions.policy import invalid_rules

    problems = invalid_rules([*config.permissions.allow, *config.permissions.deny, *extra_allow])
    if problems:
        raise ConfigError("; ".join(problems))
    return ApprovalPolicy(
        mode=mode,
        allow=[*(r for r in config.permissions.allow if r not in ignored_allow), *extra_allow],
        deny=list(config.permissions.deny),
    )


def apply_managed(policy: ApprovalPolicy, model: str) -> None:
    """The managed policy's deny rules and yolo switch on `policy`; a model it does not
    allow is a `ConfigError` naming the policy file."""
    from wyckoff_cli.storage.managed import load_managed
    from wyckoff_cli.tools.permissions.policy import invalid_rules

    managed = load_managed()
    if managed is None:
        return
    problem = managed.model_problem(model)
    if problem is None and (bad := invalid_rules(list(managed.deny))):
        problem = f"{managed.path}: deny: " + "; ".join(bad)
    if problem is not None:
        raise ConfigError(problem)
    policy.deny += managed.deny
    if managed.disable_yolo:
        policy.yolo_disabled = managed.yolo_note


def offload_redactor(config: Config) -> Callable[[str], str]:
    """Removes every known key (environment, `api_key_env` variables, the credentials
    file) and key-looking values from tool results written to disk."""
    from wyckoff_cli.storage.paths import credentials_file
    from wyckoff_cli.storage.redact import Redactor

    names = [alias.api_key_env for alias in config.models.values() if alias.api_key_env]
    return Redactor.from_environment(key_env_names=names, credentials_file=credentials_file()).secrets


def build_context(
    workspace: Workspace,
    provider: LLMProvider,
    *,
    cwd: Path | None = None,
    archive: ArchiveFn | None = None,
    session_id: SessionId = None,
    routes: Mapping[str, SmallModelRoute] | None = None,
) -> ContextManager:
    """The session's context manager: the model's window and max output from the
    model facts, `[context]` settings, AGENTS.md / WYCKOFF.md from the project root
    down to `cwd` plus the user-level ones in the config dir, the memory database in
    the data dir (when `context.memory` is on). `archive` is
    `SessionRecorder.archive_replaced`. Reads files; opens nothing yet (the database
    opens on use). Its system prompt is set by `set_prompt` once the tools are known."""
    from wyckoff_cli.context.instructions import load_project_instructions
    from wyckoff_cli.context.manager import ContextManager
    from wyckoff_cli.context.memory import MemoryStore
    from wyckoff_cli.models.facts import resolve_model_facts
    from wyckoff_cli.storage.paths import claude_home, config_dir, memory_db_path

    config = workspace.config
    root = workspace.root
    here = (cwd or root).resolve()
    facts = resolve_model_facts(provider.name, config.model_overrides)
    user_dir = config_dir()
    claude = claude_home() if config.compat.claude_home else None  # ~/.claude/CLAUDE.md
    return ContextManager(
        context_window=facts.context_window,
        max_output=facts.max_output,
        reserve_tokens=config.context.reserve_tokens,
        reload_instructions=lambda: load_project_instructions(root, here, user_dir, claude_home=claude),
        memory=MemoryStore(memory_db_path()) if config.context.memory else None,
        project_root=root,
        archive=archive,
        session_id=session_id,
        routes=routes,
    )


def set_prompt(
    context: ContextManager, root: Path, registry: ToolRegistry, skills: SkillCatalog | None = None
) -> None:
    """Give the context manager its system prompt, listing the registry's tools and
    the skills' names and descriptions."""
    from wyckoff_cli.context.prompt import Environment, SystemPromptBuilder
    from wyckoff_cli.context.skills import prompt_section

    environment, names = Environment.detect(root), tuple(registry.names())
    listed = prompt_section(skills, context.context_window) if skills is not None else ""
    reload = context.reload_instructions
    context.prompt = (
        SystemPromptBuilder(environment, names, reload(), skills=listed)
        if reload
        else SystemPromptBuilder(environment, names, skills=listed)
    )
