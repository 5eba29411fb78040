"""What a final answer says it did: the wording detectors behind the loop guard.

Three questions, each a small set of patterns, in English and Chinese (the two
languages the detectors handle; tests/runtime/test_claims.py holds the table of
phrasings, positive and negative, that they are held to):

- `claims_edit(text)`: the answer says files or code were changed ("Fixed: …",
  "Done — updated calc.py", "I've made the change", "calc.py has been updated",
  "已修复").
- `claims_run(text)`: the answer says a command ran or tests pass ("I ran pytest",
  "The tests now pass", "测试已通过").
- `admits_failure(text)`: the answer says something could not be done ("I could not
  edit …", "the edit was refused", "The hook blocked my command", "Here is the change
  you can apply", "无法修改").
- `reports_refusal(text, refusers)`: the answer names what refused a call ("the hook",
  "the permission rules", "you declined"), for calls that were refused, not run.

Wording alone is never the whole story: the loop guard also looks at what the turn's
tool calls did (see `runtime/expectation.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_FLAGS = re.IGNORECASE | re.MULTILINE

_EDIT_VERBS = (
    r"updated|edited|modified|changed|created|written|wrote|rewritten|rewrote|fixed|added|"
    r"removed|deleted|renamed|refactored|applied|implemented|patched|replaced|corrected|"
    r"inserted|moved|saved|made"
)
# What an edit claim is about: a file, code, or the change itself.
_EDIT_OBJECT = (
    r"(?:`[^`\n]+`|\b[\w\-/]+\.[A-Za-z0-9]{1,6}\b|\b[\w.]+\(\)|\b(?:files?|code|functions?|methods?|"
    r"class(?:es)?|bugs?|fix(?:es)?|changes?|edits?|lines?|modules?|imports?|tests?|typos?|"
    r"implementation|logic|config(?:uration)?|scripts?|patch|update)\b)"
)

_EDIT_CLAIMS = [
    # "I've updated `app.py`", "I have now made the change", "I just fixed the bug"
    re.compile(
        rf"\bI(?:'ve|’ve| have)?\s+(?:now\s+|also\s+|just\s+|successfully\s+|already\s+)*"
        rf"(?:{_EDIT_VERBS})\b[^.\n]{{0,80}}?{_EDIT_OBJECT}",
        _FLAGS,
    ),
    # "Fixed: add() now adds.", "Done — updated calc.py", "**Updated** calc.py"
    re.compile(
        r"^[\s*_#>\-•]*(?:done\b[\s*_]*[—–:,!.\-]+\s*(?:I\s+)?)?(?:fixed|updated|changed|edited|"
        r"modified|patched|implemented|applied|resolved|corrected|refactored|rewrote|created)"
        r"\b[\s*_]*(?:[:!—–]|\s+(?:the\s+|it\b|this\b|that\b)?"
        rf"[^.\n]{{0,60}}?{_EDIT_OBJECT})",
        _FLAGS,
    ),
    re.compile(r"\bdone\b[\s*_]*[—–:,!\-]+\s*(?:I\s+)?(?:" + _EDIT_VERBS + r")\b", _FLAGS),
    # "calc.py has been updated", "the bug is now fixed", "the change was applied"
    re.compile(
        r"\b(?:has|have|had)\s+(?:now\s+|also\s+)?been\s+(?:successfully\s+)?"
        r"(?:updated|fixed|modified|changed|edited|patched|applied|corrected|rewritten|created|"
        r"resolved|saved|made|added|removed|renamed)\b",
        _FLAGS,
    ),
    re.compile(
        r"\b(?:is|are|was|were)\s+(?:now\s+)?(?:successfully\s+)?(?:fixed|patched|corrected|updated|"
        r"applied|resolved)\b(?!\s+(?:by|once|when|if|after)\b)",
        _FLAGS,
    ),
    re.compile(r"\bthe (?:fix|change|edit|patch)(?:es|s)? (?:is|are) (?:now )?in place\b", _FLAGS),
    # Chinese: 已修复 / 已经修改 / 我修改了 / 修改完成
    re.compile(
        r"(?:已经?|我(?:已经?)?)(?:修复|修改|更新|编辑|创建|删除|添加|改好|改正|替换|重写)(?:了|完成|好)?"
    ),
    re.compile(r"(?:修改|修复|更新|编辑)(?:已|已经)?(?:完成|好了)"),
]

_RUN_CLAIMS = [
    re.compile(
        r"\bI(?:'ve|’ve| have)?\s+(?:now\s+|also\s+|just\s+|successfully\s+)*"
        r"(?:ran|run|executed|re-ran|rerun|re-run|tested)\b[^.\n]{0,60}?"
        r"(?:`[^`]+`|\btests?\b|\bcommand\b|\bpytest\b|\bbuild\b|\bscript\b|\bsuite\b|\bit\b)",
        _FLAGS,
    ),
    # "The tests now pass", "All 12 tests pass", "tests are passing", "pytest passes"
    re.compile(
        r"\b(?:all\s+)?(?:the\s+)?(?:\d+\s+)?(?:unit\s+)?(?:tests?|specs?|checks?|pytest|test suite|build)"
        r"\s+(?:now\s+|all\s+)*(?:pass|passes|passed|are passing|is passing|succeed|succeeds|succeeded|"
        r"(?:are|is) (?:now )?green)\b(?:\s+now)?(?!\s+(?:once|when|if|after)\b)",
        _FLAGS,
    ),
    re.compile(r"(?:测试|用例)(?:已经?|现在|都|全部|均)*(?:通过|跑通)"),
    re.compile(r"我(?:已经?)?(?:运行|执行|跑)了"),
]

_FAILURE_ADMISSIONS = [
    re.compile(
        r"\b(?:could\s*n[o']t|couldn’t|can\s*n[o']t|can’t|cannot|was\s+not\s+able|wasn[’']t\s+able|"
        r"were\s+not\s+able|unable|not\s+able|did\s*n[o']t|didn’t|have\s*n[o']t|haven’t|has\s*n[o']t|"
        r"hasn’t|was\s*n[o']t|wasn’t|were\s*n[o']t|weren’t|not\s+permitted|not\s+allowed)\b",
        _FLAGS,
    ),
    re.compile(
        r"\b(?:was|were|got|been|is|are)\s+(?:refused|denied|rejected|blocked|not\s+(?:applied|"
        r"made|saved|run|executed|changed|modified))\b",
        _FLAGS,
    ),
    re.compile(
        r"\b(?:refused|denied|permission|failed|failure|no changes?|nothing (?:was|has been))\b", _FLAGS
    ),
    # Active voice: "The hook blocked my command", "the policy rejected the edit"
    re.compile(r"\b(?:blocked|rejected|prevented|declined|disallowed|forbidden|forbade|vetoed)\b", _FLAGS),
    # After a person said no: "Understood, I won't change it", "I'll leave calc.py as it is."
    re.compile(
        r"\b(?:won[’']t|will\s+not|not\s+going\s+to|unchanged|as\s+it\s+is|as\s+is|"
        r"as\s+you\s+(?:asked|requested|prefer|wish)|understood|plan\s+mode)\b",
        _FLAGS,
    ),
    re.compile(
        r"\b(?:you can apply|you could apply|apply (?:it|this|the change|the patch) yourself|"
        r"apply (?:it|this) manually|manually|yourself|here is the (?:change|patch|diff|fix))\b",
        _FLAGS,
    ),
    re.compile(
        r"无法|未能|不能|没有(?:修改|运行|执行|权限|成功)|未(?:修改|运行|执行)|被拒绝|拒绝了|失败|手动|阻止|拦截"
    ),
]

# What each refuser is called in an answer that reports its refusal.
_REFUSER_NAMES: dict[str, re.Pattern[str]] = {
    "hook": re.compile(r"\bhooks?\b|\bPreToolUse\b|钩子", _FLAGS),
    "policy": re.compile(
        r"\b(?:polic(?:y|ies)|rules?|permissions?|plan mode|read-only|sandbox|not allowed)\b|规则|权限",
        _FLAGS,
    ),
    "user": re.compile(
        r"\b(?:you said no|you chose not|you asked me not|declined|your (?:choice|decision))\b", _FLAGS
    ),
    "no_approver": re.compile(r"\b(?:approval|approve|permission|no one to ask)\b|批准|权限", _FLAGS),
    "guard": re.compile(r"\b(?:loop|repeat(?:ed|ing)?|same (?:call|arguments))\b", _FLAGS),
}


def claims_edit(text: str) -> bool:
    """The answer says a file or code was changed."""
    return any(p.search(text) for p in _EDIT_CLAIMS)


def claims_run(text: str) -> bool:
    """The answer says a command was run, or that tests pass."""
    return any(p.search(text) for p in _RUN_CLAIMS)


def admits_failure(text: str) -> bool:
    """The answer says something could not be done (refused, failed, left to the user)."""
    return any(p.search(text) for p in _FAILURE_ADMISSIONS)


def reports_refusal(text: str, refusers: Iterable[str]) -> bool:
    """The answer names one of `refusers` (runtime/guards.py `Refuser`) as what stopped
    its calls: "The pre-tool hook stops rm here", "plan mode keeps files read-only"."""
    return any(pattern.search(text) for name in refusers if (pattern := _REFUSER_NAMES.get(name)))
