"""Agent files in the shapes anthropics/claude-code's marketplace publishes under
plugins/*/agents/ (the structure of each real file; the prose is ours)."""

from __future__ import annotations

# plugin-dev's agent-creator, plugin-validator, skill-reviewer: the description ends with
# `Examples:` and runs on, unindented, over blank lines and <example> blocks with
# Context:/user:/assistant: lines; then model, color and tools as a quoted flow list.
PLUGIN_DEV_SHAPE = """\
---
name: config-checker
description: Use this agent when the user asks to "check my config", "validate settings", or edits a settings file. Examples:

<example>
Context: User changed a settings file
user: "I've updated the settings"
assistant: "Let me check the changes."
<commentary>
Settings changed, check them.
</commentary>
assistant: "I'll use the config-checker agent to check the file."
</example>

<example>
Context: User asks for a check
user: "Check my config before I ship it"
assistant: "I'll use the config-checker agent."
</example>

model: sonnet
color: magenta
tools: ["Write", "Read"]
---

You check configuration files for mistakes.

**Steps**: read the file, list what is wrong.
"""

# pr-review-toolkit's code-simplifier: a one-line description with literal \\n escapes that
# ends by opening an <example>, then unindented Context:/user: lines up to `model: opus`.
CODE_SIMPLIFIER_SHAPE = """\
---
name: tidy-upper
description: Use this agent when code was just written and should be made clearer. It works on recent changes.\\n\\nExamples:\\n\\n<example>
Context: The assistant has just added a feature.
user: "Please add a retry to the client"
assistant: "I've added the retry. Here's the code:"
<function call omitted for brevity>
<commentary>
A chunk of code was written, so tidy it.
</commentary>
assistant: "Now let me use the tidy-upper agent"
</example>
model: opus
---

You make recently changed code clearer without changing what it does.
"""

# pr-review-toolkit's other five: one long plain line holding `: ` and literal \\n escapes.
PR_TOOLKIT_ONE_LINE = """\
---
name: test-gap-finder
description: Use this agent when a pull request needs its tests reviewed. Examples:\\n<example>\\nContext: A PR adds a parser.\\nuser: "Are my tests enough?"\\nassistant: "I'll use the test-gap-finder agent."\\n</example>
model: inherit
color: cyan
---

You find behaviour a change's tests do not cover.
"""

# hookify's conversation-analyzer: examples inline on one line, tools as a quoted flow list.
HOOKIFY_SHAPE = """\
---
name: transcript-reader
description: Use this agent when reading transcripts for habits worth a hook. Examples: <example>Context: User ran the command without arguments user: "/make-rule" assistant: "I'll read the transcript" <commentary>No arguments, so read it.</commentary></example>
model: inherit
color: yellow
tools: ["Read", "Grep"]
---

You read transcripts and name the habits worth preventing.
"""

# feature-dev's agents: tools as a comma string of Claude Code's names.
FEATURE_DEV_SHAPE = """\
---
name: path-tracer
description: Traces how a feature runs through the code, layer by layer, to inform new work
tools: Glob, Grep, LS, Read, NotebookRead, WebFetch, TodoWrite, WebSearch, KillShell, BashOutput
model: sonnet
color: yellow
---

You trace execution paths and report them with file:line references.
"""

# agent-sdk-dev's verifiers: name, description, model only.
AGENT_SDK_SHAPE = """\
---
name: sdk-checker
description: Use this agent to check that an SDK application is set up as the documentation recommends. Invoke it after the app is created or changed.
model: sonnet
---

You check an SDK application's set-up.
"""

PUBLISHED = {
    "config-checker": PLUGIN_DEV_SHAPE,
    "tidy-upper": CODE_SIMPLIFIER_SHAPE,
    "test-gap-finder": PR_TOOLKIT_ONE_LINE,
    "transcript-reader": HOOKIFY_SHAPE,
    "path-tracer": FEATURE_DEV_SHAPE,
    "sdk-checker": AGENT_SDK_SHAPE,
}
