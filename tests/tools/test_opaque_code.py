"""Deny rules and code the parser cannot see (issue 27): while a deny rule exists for
the shell, a command running code no rule can see could match it, so it asks in every
mode, yolo included, and says why. Without a deny rule nothing changes."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, PermissionMode
from wyckoff_cli.tools.permissions.sandbox import ShellSettings

SANDBOXED = {tool.name: tool for tool in default_registry(shell=ShellSettings(sandbox="workspace-write"))}
UNSANDBOXED = {tool.name: tool for tool in default_registry()}
MODES: list[PermissionMode] = ["default", "auto-edit", "yolo"]


def decide(root: Path, command: str, mode: PermissionMode, *, sandboxed: bool = True, **policy: Any) -> Any:
    tools = SANDBOXED if sandboxed else UNSANDBOXED
    clean = ApprovalPolicy(mode=mode, worktree_dirty=lambda _p: False, **policy)
    return clean.evaluate(tools["run_shell"], {"command": command}, ToolContext(workspace=root))


# Every form the audit found creating the file under deny run_shell(touch*), and more
# wrapped, quoted and nested spellings of each.
OPAQUE_TOUCH = [
    # interpreters with inline code
    "python3 -c 'import os; os.system(\"touch A\")'", "python -c \"__import__('os').system('touch A')\"",
    "python3.12 -c 'import subprocess; subprocess.run([\"touch\", \"A\"])'", "/usr/bin/python3 -c 'x'",
    "env python3 -c 'import os'", "nice -n 5 python3 -c 'import os'", "python3 -Ic 'import os'",
    "bash -c \"python3 -c 'import os'\"", "perl -e 'system(\"touch A\")'", "perl -E 'system q(touch A)'",
    "perl -we 'system(\"touch A\")'", "ruby -e 'system(\"touch A\")'", "node -e \"require('child_process')\"",
    "node --eval 'x'", "php -r 'system(\"touch A\");'", "lua -e 'os.execute(\"touch A\")'",
    # interpreters reading code from their input
    "python3 - <<EOF\nimport os\nEOF", "echo 'import os' | python3", "python3 <<< 'import os'",
    "python3 < s.py", "cat s.py | python3", "perl < s.pl",
    # awk and sed running commands
    "awk 'BEGIN{system(\"touch A\")}'", "gawk 'BEGIN { system(\"touch A\") }'", "awk 'BEGIN{print | \"sh\"}'",
    "echo | awk '{ \"touch A\" | getline }'", "awk -f prog.awk", "sed -n 'e touch A' f.txt",
    "sed 's/.*/touch A/e' f.txt",
    # script files, written then run, sourced
    "echo 'touch A' > s.sh; sh s.sh", "bash s.sh", "zsh s.sh", "dash ./s.sh", "bash -x s.sh", "sh -- s.sh",
    ". s.sh", "source s.sh", "./s.sh", "sh < s.sh", "bash /dev/stdin <<< 'touch A'",
    ". /dev/stdin <<< 'touch A'", "source /dev/stdin <<< 'touch A'", "cat s.sh | sh", "timeout 5 sh s.sh",
    "python3 x.py", "python3 -m http.server", "node x.js", "ruby x.rb", "perl x.pl",
    # a copied or linked binary, a program by path, a program not installed
    "cp /usr/bin/touch t; ./t A", "ln -s /usr/bin/touch t && ./t A", "ln /usr/bin/touch /tmp/t && /tmp/t A",
    "cp $(which touch) t && ./t A", "install /usr/bin/touch bin/t; bin/t A", "~/bin/t A",
    "cp /usr/bin/touch ~/.local/bin/wyckoff-t; wyckoff-t A",
    # wrappers running strings
    "git -c alias.t='!touch X' t", "git -c alias.t=!touch t",
    "git --config-env=alias.t=X t", "git -c core.pager='touch A' log", "git -c core.sshCommand='touch A' fetch",
    "GIT_CONFIG_PARAMETERS=\"'alias.t=!touch A'\" git t", "make -f /dev/stdin <<< $'all:\\n\\ttouch A'",
    "make", "make all", "gmake -f x.mk", "just build", "npm run build", "npx touch A", "yarn run x",
    # aliases, changed PATH, computed names
    "alias t=touch; t A", "shopt -s expand_aliases; alias t=touch\nt A", "PATH=.:$PATH t A",
    "export PATH=.:$PATH; ls", "PATH=/tmp/evil:$PATH; ls", "LD_PRELOAD=./x.so ls", "BASH_ENV=s.sh bash -c ls",
    "x=touch; $x A", "$(echo touch) A", '"$T" A', "`echo touch` A", 'eval "$X"', "eval $(cat cmd.txt)",
    "bash -c \"$X\"", "sh -c \"$(cat s.sh)\"",
    # input turned into commands
    "cat list | xargs -I{} bash {}", "find . -name '*.sh' -exec sh {} \\;",
    "find . -exec bash x.sh \\;", "parallel ::: 'touch A'", "echo A | xargs touch",
    # later or elsewhere, other names, patterns
    "ssh localhost 'touch A'", "tmux new -d 'touch A'", "screen -dm touch A", "at now <<< 'touch A'",
    "systemd-run touch A", "docker run -v $PWD:/w alpine touch /w/A", "chroot / touch A", "unshare -r touch A",
    "hash -p /usr/bin/touch ls; ls A", "enable -f ./t.so t", "/usr/bin/tou?h A", "/usr/bin/t*ch A",
    "awk -v x=1 'BEGIN{system(\"touch A\")}'", "sed -e 'e touch A' f.txt",
    # the project's own code: tests, build scripts, package scripts
    "pytest -q", "python3 -m pytest", "npm install", "npm test", "yarn", "pnpm install", "pip install .",
    "pip3 install -e .", "uv run x", "cargo test", "cargo build", "go test ./...", "go generate ./...", "tox",
    "./gradlew build", "mvn package", "bundle exec rake", "deno task x", "run-parts scripts", "capsh -- -c 'x'",
    # variables naming a program that runs later
    "PAGER='sh -c \"touch A\"' git log", "GIT_PAGER='touch A; cat' git -p log", "EDITOR='touch A' git commit",
    "export GIT_EXTERNAL_DIFF=./d.sh; git diff", "PYTHONPATH=evil git status", "LESSOPEN='|touch A' less f",
    # programs given a program to run
    "vim -es -c '!touch A' -c q", "vim +'!touch A' f", "nvim --cmd '!touch A'", "emacs --batch --eval '(shell-command \"touch A\")'",
    "ed -s f <<< '!touch A'", "man -P 'touch A' ls", "tar -cf /dev/null f --checkpoint=1 --checkpoint-action=exec='touch A'",
    "tar -I 'touch A' -cf x.tar f", "tar --to-command='touch A' -xf x.tar", "rsync -e 'sh -c \"touch A\"' f h:y",
    "ssh -o ProxyCommand='touch A' h", "ssh -oLocalCommand='touch A' h", "scp -S ./t f h:y",
    "split --filter='touch A' f", "sort --compress-program='touch A' f", "zip -q z.zip f -T -TT 'touch A #'",
    "gdb -batch -ex 'shell touch A'", "git rebase -x 'touch A' HEAD~1", "git rebase --exec='touch A' main",
    "git bisect run touch A", "git submodule foreach 'touch A'", "git filter-branch --tree-filter 'touch A'",
    "git grep -O'touch A' x", "git difftool -y", "git mergetool",
]  # fmt: skip

# Spellings the parser follows: the deny rule refuses them outright.
SEEN_THROUGH = [
    "strace -o /dev/null touch A", "strace -f touch A", "ltrace -o x touch A", "script -qc 'touch A' /dev/null",
    "script -c 'touch A'", "script --command 'touch A'", "su -c 'touch A'", "su root -c 'touch A'",
    "su -lc 'touch A'", "runuser -u root -- touch A", "flock /tmp/l touch A", "flock /tmp/l -c 'touch A'",
    "trap 'touch A' EXIT", "unbuffer touch A", "fakeroot touch A", "pkexec touch A", "sg wheel -c 'touch A'",
    "echo A | xargs sh -c 'touch \"$0\"'", "bash -c 'strace -o /dev/null touch A'",
    "cd /tmp && bash <<EOF\ntouch A\nEOF", "ls | sh <<EOF\ntouch A\nEOF", "true && cat <<EOF | sh\ntouch A\nEOF",
]  # fmt: skip


@pytest.mark.parametrize("command", OPAQUE_TOUCH)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sandboxed", [True, False])
def test_code_the_rules_cannot_see_asks_while_a_deny_rule_exists(
    root: Path, command: str, mode: PermissionMode, sandboxed: bool
) -> None:
    result = decide(root, command, mode, sandboxed=sandboxed, allow=["run_shell"], deny=["run_shell(touch*)"])
    assert result.action in ("ask", "deny"), result
    assert result.rule is None, result  # "always" saves nothing
    if result.action == "ask":
        assert (
            "cannot see" in result.reason or "could apply" in result.reason or "only known" in result.reason
        )


@pytest.mark.parametrize("command", SEEN_THROUGH)
@pytest.mark.parametrize("mode", MODES)
def test_wrappers_running_strings_are_seen_through(root: Path, command: str, mode: PermissionMode) -> None:
    assert decide(root, command, mode, deny=["run_shell(touch*)"]).action == "deny"


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("python3 -c 'import os'", "runs code the rules cannot see: python3 -c"),
        ("perl -e 'x'", "runs code the rules cannot see: perl -e"),
        ("sh s.sh", "runs code the rules cannot see: sh s.sh (a script file)"),
        (". s.sh", "runs code the rules cannot see: . s.sh (a script file)"),
        ("./t A", "runs code the rules cannot see: ./t (a program given by its path"),
        ("git -c alias.t='!touch X' t", "runs code the rules cannot see: git -c"),
        ("make -f /dev/stdin", "runs code the rules cannot see: make (runs recipes from a file)"),
        ("PATH=.:$PATH t A", "runs code the rules cannot see: sets PATH"),
    ],
)
def test_the_reason_says_why(root: Path, command: str, why: str) -> None:
    result = decide(root, command, "yolo", deny=["run_shell(touch*)"])
    assert result.action == "ask"
    assert why in result.reason and "run_shell(touch*)" in result.reason


GIT_PUSH_OPAQUE = [
    "x=push; git $x", "git $(echo push)", 'git "$SUB"', "git `echo push`", "sh -c 'git $0' push",
    "python3 -c \"os.system('git push')\"", "python3 -c 'import subprocess; subprocess.run([\"git\", \"push\"])'",
    "git -c alias.p=push p", "alias gp='git push'; gp", "echo push | xargs git", "env git ${X}",
    "bash -c 'x=push; git $x'", "/usr/bin/git $SUB origin",
]  # fmt: skip


@pytest.mark.parametrize("command", GIT_PUSH_OPAQUE)
@pytest.mark.parametrize("mode", MODES)
def test_denied_git_push_through_computed_words(root: Path, command: str, mode: PermissionMode) -> None:
    result = decide(root, command, mode, allow=["run_shell"], deny=["run_shell(git push*)"])
    assert result.action in ("ask", "deny"), result
    assert result.rule is None


@pytest.mark.parametrize(
    "command",
    ["ls -la", "git status", "git log --oneline -5", "echo hi > out.txt", "cat README.md", "grep -rn x .",
     "sort a.txt | uniq -c", "mkdir -p build && cp a.txt build/", "awk '{print $1}' a.txt", "sed 's/a/b/' a.txt",
     "wc -l a.txt", "find . -name '*.py'", "git diff HEAD~1", "GIT_PAGER=cat git log", "PAGER='less -R' git log",
     "tar xzf x.tgz", "tar -tf x.tar", "git rebase main", "git grep -n x", "vim --version", "git submodule update",
     "EDITOR=vim git status", "ssh -V", "tar -cf out.tar src"],
)  # fmt: skip
def test_everyday_commands_still_run_under_a_deny_rule(root: Path, command: str) -> None:
    assert decide(root, command, "yolo", deny=["run_shell(touch*)", "run_shell(git push*)"]).action == "allow"


NOTHING_CHANGES = [
    "python3 -c 'import os; os.system(\"touch A\")'", "perl -e 'print 1'", "awk 'BEGIN{system(\"ls\")}'",
    "sh s.sh", "bash s.sh", ". s.sh", "./t A", "make -f /dev/stdin <<< x", "git -c alias.t='!ls' t",
    "python3 x.py", "npm run build", "alias t=ls; t",
]  # fmt: skip


@pytest.mark.parametrize("command", NOTHING_CHANGES)
def test_without_a_shell_deny_rule_nothing_changes(root: Path, command: str) -> None:
    assert decide(root, command, "yolo").action == "allow"
    assert decide(root, command, "yolo", deny=["read_file(.env)", "web_fetch"]).action == "allow"


def test_plan_mode_still_refuses_rather_than_asks(root: Path) -> None:
    assert decide(root, "python3 -c 'x'", "plan", deny=["run_shell(touch*)"]).action == "deny"


def test_the_tables_cover_every_form_the_audit_named() -> None:
    joined = "\n".join(OPAQUE_TOUCH + SEEN_THROUGH)
    for form in ("python3 -c", "perl -e", "awk 'BEGIN{system", "sh s.sh", "bash s.sh", ". s.sh", "./t A",
                 "script -qc", "git -c alias.t='!touch X' t", "make -f /dev/stdin", "strace -o /dev/null touch",
                 ". /dev/stdin <<<"):  # fmt: skip
        assert form in joined, form
    assert len(OPAQUE_TOUCH) >= 100


@pytest.fixture
def disguised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on PATH holding `touch` under other names: a symlink, a hard link, a copy."""
    folder = tmp_path / "bin"
    folder.mkdir()
    real = os.path.realpath(shutil.which("touch") or "/usr/bin/touch")
    (folder / "wyckoff-linked").symlink_to(real)
    shutil.copy2(real, folder / "wyckoff-copied")
    try:
        os.link(real, folder / "wyckoff-hard")
    except OSError:  # another file system: a copy instead
        shutil.copy2(real, folder / "wyckoff-hard")
    (folder / "wyckoff-other").symlink_to(os.path.realpath(shutil.which("ls") or "/bin/ls"))
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder


@pytest.mark.parametrize("name", ["wyckoff-linked", "wyckoff-copied", "wyckoff-hard"])
@pytest.mark.parametrize("mode", MODES)
def test_a_denied_program_under_another_name_asks(
    root: Path, disguised: Path, name: str, mode: PermissionMode
) -> None:
    for command in (f"{name} A", f"env {name} A", f"bash -c '{name} A'"):
        result = decide(root, command, mode, allow=["run_shell"], deny=["run_shell(touch*)"])
        assert result.action == "ask", (command, result)
        assert "runs touch under another name" in result.reason and result.rule is None


def test_another_program_under_another_name_runs(root: Path, disguised: Path) -> None:
    assert decide(root, "wyckoff-other -la", "yolo", deny=["run_shell(touch*)"]).action == "allow"


@pytest.mark.parametrize(
    "deny", ["Bash(touch:*)", "run_shell(touch)", "run_shell(touch *)", "Bash(git push:*)"]
)
def test_every_spelling_of_a_shell_deny_rule_counts(root: Path, deny: str) -> None:
    result = decide(root, "python3 -c 'import os'", "yolo", allow=["run_shell"], deny=[deny])
    assert result.action == "ask" and deny in result.reason


WRAPPERS = ["env ", "nice ", "timeout 5 ", "command ", "nohup ", "time ", "setsid ", "stdbuf -o0 ", "strace -f ",
            "sudo ", "flock /tmp/l ", "unbuffer ", "ionice -c3 ", "busybox "]  # fmt: skip
STRINGS = ["bash -c {q}", "sh -c {q}", "eval {q}", "su -c {q}", "script -qc {q} /dev/null", "watch {q}",
           "(cd /tmp && {f})", "echo $({f})", "f() {{ {f}; }}; f", "if true; then {f}; fi", "trap {q} EXIT",
           "env -S {q}", "bash <<< {q}", "echo {q} | bash", "cd /tmp && bash <<EOF\n{f}\nEOF"]  # fmt: skip


@pytest.mark.parametrize("outer", WRAPPERS + STRINGS)
def test_every_form_asks_inside_every_wrapper_and_string(root: Path, outer: str) -> None:
    allowed = []
    for form in (f for f in OPAQUE_TOUCH + SEEN_THROUGH if "\n" not in f):
        command = outer + form if outer in WRAPPERS else outer.format(q=shlex.quote(form), f=form)
        if decide(root, command, "yolo", allow=["run_shell"], deny=["run_shell(touch*)"]).action == "allow":
            allowed.append(command)
    assert allowed == []
