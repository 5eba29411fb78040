"""The destructive list with the sandbox off (issue 27): writing, truncating, moving or
deleting the home folder's hidden files, the home folder itself, system files; `su`,
`crontab`, `git clean -x`; after a `cd`; scripts no check can see. Through the pure
policy, with a fake HOME in a temporary folder (the real HOME is never touched)."""

from __future__ import annotations

import getpass
import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.permissions.destructive import find_danger
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, PermissionMode
from wyckoff_cli.tools.permissions.sandbox import ShellSettings

UNSANDBOXED = {tool.name: tool for tool in default_registry()}
SANDBOXED = {tool.name: tool for tool in default_registry(shell=ShellSettings(sandbox="workspace-write"))}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake HOME next to the workspace (both under the temporary folder)."""
    folder = Path(os.path.realpath(tmp_path)) / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def ws(tmp_path: Path, home: Path) -> Path:
    folder = Path(os.path.realpath(tmp_path)) / "project"
    folder.mkdir()
    return folder


def decide(
    ws: Path, command: str, mode: PermissionMode = "yolo", *, sandboxed: bool = False, **policy: Any
) -> Any:
    tools = SANDBOXED if sandboxed else UNSANDBOXED
    clean = ApprovalPolicy(mode=mode, worktree_dirty=lambda _p: False, **policy)
    return clean.evaluate(tools["run_shell"], {"command": command}, ToolContext(workspace=ws))


AUDIT = [
    "rm -rf ~root", "rm -rf ~/.ssh", "unlink /etc/passwd", "su -c 'id'", "su - root", "crontab -r",
    "truncate -s 0 ~/.bashrc", "mv ~ /dev/null", "git clean -fdx",
]  # fmt: skip

HOME_FORMS = [
    # truncating and overwriting start-up files, in every spelling of the home folder
    "truncate -s 0 $HOME/.bashrc", 'truncate -s 0 "$HOME/.bashrc"', "truncate -s 0 ${HOME}/.bashrc",
    'truncate -s 0 "${HOME}"/.bashrc', "truncate -s0 {home}/.bashrc", "truncate --size=0 ~/.bashrc",
    "truncate -s 0 ../home/.bashrc", "truncate -s 0 {home}/../home/.bashrc", "truncate -s 0 ~{user}/.bashrc",
    "cp /dev/null ~/.bashrc", "cp /dev/null $HOME/.profile", "cp -f evil ~/.ssh/authorized_keys",
    "cp -t ~/.ssh evil", "cat /dev/null > ~/.bashrc", "echo x >> ~/.bashrc", "echo x > {home}/.profile",
    "echo x | tee ~/.bashrc", "echo x | tee -a ~/.ssh/authorized_keys", "tee ~/.bashrc < /dev/null",
    "dd if=/dev/zero of=~/.bashrc", "dd if=/dev/zero of=$HOME/.bashrc bs=1 count=1",
    "sed -i 's/a/b/' ~/.bashrc", "sed -i.bak 's/a/b/' ~/.bashrc", "sed --in-place=.bak -e 's/a/b/' ~/.profile",
    "sed -ni 'p' ~/.bashrc", "unlink ~/.bashrc", "rm ~/.bashrc", "rm -f ~/.ssh/id_rsa", "rm ~/.*",
    "rm ~/*", "mv ~ /tmp/gone", "mv ~/.bashrc x", "mv evil ~/.bashrc", "ln -sf evil ~/.bashrc",
    "install evil ~/.bashrc", "rsync evil ~/.bashrc", "curl -o ~/.bashrc http://127.0.0.1/x",
    "wget -O ~/.bashrc http://127.0.0.1/x", "rmdir ~/.config", "mv . /tmp/elsewhere",
    # after a cd
    "cd ~ && rm -rf .", "cd ~; truncate -s 0 .bashrc", "cd ..; rm -rf home", "cd .. && rm -rf home",
    "cd ~ && echo x > .bashrc", "cd $HOME; rm .bashrc", "pushd ~; rm -rf .ssh", "cd; rm .profile",
    "cd /etc && rm passwd", "cd ../home && sed -i d .bashrc", "cd $SOMEWHERE && rm -rf build",
    # wrapped, nested, through variables
    "bash -c 'truncate -s 0 ~/.bashrc'", "sh -c 'cp /dev/null ~/.bashrc'", "env truncate -s 0 ~/.bashrc",
    "timeout 5 tee ~/.bashrc", "nice rm ~/.bashrc", "eval 'unlink ~/.bashrc'", "echo $(rm ~/.bashrc)",
    "F=~/.bashrc; truncate -s 0 $F", "export F=$HOME/.bashrc; rm $F", "D=~; rm -rf $D",
    "find ~ -name .bashrc -delete", "echo x | xargs -I{} cp {} ~/.bashrc",
    # system files
    "rm /etc/hosts", "cp x /etc/hosts", "tee /etc/sudoers.d/x", "sed -i s/a/b/ /etc/fstab",
    "mv /usr/bin/ls x", "truncate -s 0 /var/log/syslog", "echo x > /etc/profile.d/x.sh", "unlink /root/.bashrc",
    "crontab evil.txt", "crontab -", "crontab -e", "runuser -u root -- id",
    # extracting into the home folder, inline code writing there
    "tar xf evil.tar -C ~", "tar -xzf evil.tgz --directory=$HOME", "cd ~ && tar xf /tmp/evil.tar",
    "unzip evil.zip -d ~/.config", "python3 -c \"open(os.path.expanduser('~/.bashrc'), 'w')\"",
    "python3 -c \"import pathlib; pathlib.Path.home().joinpath('.bashrc').write_text('')\"",
    "node -e \"require('fs').writeFileSync(require('os').homedir() + '/.bashrc', '')\"",
    "python3 -c \"open('/etc/hosts', 'a')\"", "perl -pi -e 's/a/b/' ~/.bashrc", "perl -i.bak -pe 's/a/b/' ~/.profile",
    "ruby -i -pe 'x' ~/.bashrc", "rm -rf ~+", "cd ~ && rm -rf ~+", "rm -rf ~-", "mv ~/.bashrc{,.bak}",
    "rm -- ~/.bashrc", "tee >(cat > ~/.bashrc)", "exec 3>~/.bashrc", ": > /etc/passwd",
]  # fmt: skip

# Scripts no check can see, with the sandbox off: asked even in yolo and over a rule
# without a pattern ("always" saves the exact command, never a blanket rule).
SCRIPTS = [
    "sh s.sh", "bash s.sh", ". s.sh", "source s.sh", "./s.sh", "bash -x ./s.sh", "zsh scripts/x.sh",
    "echo 'rm -rf ~' > s.sh; sh s.sh", "echo 'rm -rf ~' > s.sh && chmod +x s.sh && ./s.sh", "/tmp/s.sh",
    "sh < s.sh", "timeout 9 bash s.sh", "env bash s.sh", "nohup ./s.sh", "bash -c 'sh s.sh'",
    "cat s.sh | sh", ". ./s.sh", "source ~/s.sh", "bash -- s.sh", "sudo sh s.sh",
]  # fmt: skip


@pytest.mark.parametrize("command", SCRIPTS)
@pytest.mark.parametrize("mode", ["default", "auto-edit", "yolo"])
def test_scripts_ask_with_the_sandbox_off(ws: Path, home: Path, command: str, mode: PermissionMode) -> None:
    result = decide(ws, command, mode, allow=["run_shell"])
    assert result.action == "ask", result
    assert result.rule != "run_shell", result


def _spell(command: str, home: Path) -> str:
    return command.replace("{home}", str(home)).replace("{user}", getpass.getuser())


@pytest.mark.parametrize("command", AUDIT + HOME_FORMS)
@pytest.mark.parametrize("mode", ["default", "auto-edit", "yolo"])
def test_destructive_with_the_sandbox_off_asks_over_allow_all(
    ws: Path, home: Path, command: str, mode: PermissionMode
) -> None:
    result = decide(ws, _spell(command, home), mode, allow=["run_shell"])
    assert result.action == "ask", result
    assert result.rule is None, result


HARMLESS = [
    "rm ~/notes.txt", "cp a.txt ~/Downloads/", "tee log.txt", "sed -i s/a/b/ src/x.py", "mv a b",
    "cd src && rm -rf build", "cd .. && ls", "cd ~ && ls -la", "git clean -fd", "git clean -n -dx",
    "truncate -s 0 log.txt", "cp /dev/null out.txt", "rm *.o", "dd if=/dev/zero of=disk.img count=1",
    "curl -o out.html http://127.0.0.1/x", "echo x > /tmp/y.txt", "python3 x.py", "make", "cat ~/.bashrc",
    "grep -r x ~/.config", "echo x | tee /dev/null", "cp ~/.bashrc backup.txt", "rm -f /tmp/x.txt",
    "crontab -l", "chmod 600 key.pem", "sed 's/a/b/' ~/.bashrc", "ln -s ~/.bashrc link",
    "tar xf vendor.tar", "tar czf out.tgz ~/.config", "unzip a.zip -d build",
    "python3 -c \"print(open(os.path.expanduser('~/.bashrc')).read())\"", "python3 -c \"open('out.txt', 'w')\"",
    "perl -pi -e 's/a/b/' src/x.pl", "perl -ne 'print' ~/.bashrc", "cd src && rm -rf ~+/build",
]  # fmt: skip


@pytest.mark.parametrize("command", HARMLESS)
def test_everyday_commands_still_run_in_yolo_with_the_sandbox_off(ws: Path, home: Path, command: str) -> None:
    result = decide(ws, command, "yolo")
    assert result.action == "allow", result


@pytest.mark.parametrize("command", ["sh s.sh", ". s.sh", "./s.sh", "bash -x ./s.sh"])
def test_scripts_run_in_yolo_inside_the_sandbox(ws: Path, command: str) -> None:
    assert decide(ws, command, "yolo", sandboxed=True).action == "allow"


def test_a_rule_naming_the_script_allows_it_with_the_sandbox_off(ws: Path) -> None:
    assert decide(ws, "./scripts/check.sh --fast", "default", allow=["run_shell"]).action == "ask"
    named = decide(ws, "./scripts/check.sh --fast", "default", allow=["run_shell(./scripts/check.sh)"])
    assert named.action == "allow"
    asked = decide(ws, "./scripts/check.sh --fast", "default")
    assert asked.action == "ask" and asked.rule == "run_shell(./scripts/check.sh --fast)"
    assert "sandbox off" in asked.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("truncate -s 0 ~/.bashrc", "a hidden file in the home folder"),
        ("unlink /etc/passwd", "a system file"),
        ("mv ~ /dev/null", "the home folder"),
        ("cd ..; rm -rf home", "the home folder"),
        ("crontab -r", "crontab"),
        ("git clean -fdx", "ignored files"),
        ("rm -rf ~/.ssh", "in the home folder"),
        ("sh s.sh", "sandbox off"),
    ],
)
def test_the_reason_names_what_would_be_lost(ws: Path, home: Path, command: str, why: str) -> None:
    result = decide(ws, command, "yolo", allow=["run_shell"])
    assert why in result.reason, result


def test_the_home_folder_of_another_user_and_root(ws: Path, home: Path) -> None:
    assert find_danger("rm -rf ~root") is not None
    assert find_danger("rm -rf ~nosuchuser-wyckoff") is None  # bash leaves it as a relative name
    assert find_danger("rm -rf /root") is not None


def test_the_tables_are_as_wide_as_the_audit() -> None:
    assert len(AUDIT + HOME_FORMS + SCRIPTS) >= 100


@pytest.mark.parametrize(
    "command", ["echo x > ~/notes.txt", "echo x >> $HOME/todo.md", "date > {home}/log.txt"]
)
def test_a_redirection_into_a_home_under_the_temp_folder_is_outside(
    ws: Path, home: Path, command: str
) -> None:
    result = decide(ws, _spell(command, home), "yolo", allow=["run_shell"])
    assert result.action == "ask" and result.rule is None, result
    if "$" not in command:
        assert result.outside_paths, result


WRAPPERS = ["env ", "nice ", "timeout 5 ", "command ", "nohup ", "time ", "setsid ", "stdbuf -o0 ", "strace -f ",
            "flock /tmp/l ", "unbuffer ", "ionice -c3 ", "busybox "]  # fmt: skip
STRINGS = ["bash -c {q}", "sh -c {q}", "eval {q}", "script -qc {q} /dev/null", "watch {q}", "(true && {f})",
           "echo $({f})", "f() {{ {f}; }}; f", "if true; then {f}; fi", "trap {q} EXIT", "env -S {q}",
           "bash <<< {q}", "echo {q} | bash", "true && bash <<EOF\n{f}\nEOF"]  # fmt: skip


@pytest.mark.parametrize("outer", WRAPPERS + STRINGS)
def test_every_form_asks_inside_every_wrapper_and_string(ws: Path, home: Path, outer: str) -> None:
    allowed = []
    for form in (_spell(f, home) for f in AUDIT + HOME_FORMS + SCRIPTS):
        if outer == "env " and form.startswith("F="):
            continue  # `env F=x; …` sets nothing in the shell: $F is empty afterwards
        command = outer + form if outer in WRAPPERS else outer.format(q=shlex.quote(form), f=form)
        if decide(ws, command, "yolo", allow=["run_shell"]).action == "allow":
            allowed.append(command)
    assert allowed == []
