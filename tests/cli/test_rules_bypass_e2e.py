"""Issue 27, part B end to end: `wyckoff run` with the scripted provider, checking on disk.

- a deny rule holds against code the rules cannot see (every mode, sandbox on and off);
- the destructive list protects a fake HOME with the sandbox off (yolo + allow-all);
- a hard link to a file outside the workspace is neither read nor edited.

Every command here really does what it says when run unguarded (the HOME attacks hit
only a fake HOME in the test's temporary folder, never the real one)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_shell_safety_e2e import run
from wyckoff_cli.tools.permissions.sandbox import probe

SANDBOX = ["workspace-write", "off"] if probe() is None else ["off"]
MODES = ["default", "auto-edit", "yolo"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = Path(os.path.realpath(tmp_path)) / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def asked_reasons(tmp_path: Path) -> list[str]:
    """The reasons of the approval requests of the last run (`run` keeps its output)."""
    result = json.loads((tmp_path / "out.json").read_text().splitlines()[-1])
    return [e["preview"].get("reason", "") for e in result["events"] if e["type"] == "approval_request"]


# Each of these creates the file A when run unguarded (checked by
# test_the_forms_really_create_the_file).
DENIED_TOUCH = [
    "python3 -c 'import os; os.system(\"touch A\")'", "perl -e 'system(\"touch A\")'",
    "awk 'BEGIN{system(\"touch A\")}'", "echo 'touch A' > s.sh; sh s.sh", "echo 'touch A' > s2.sh; bash s2.sh",
    "echo 'touch A' > s3.sh; . ./s3.sh", "cp /usr/bin/touch t && ./t A", "ln -s /usr/bin/touch t2 && ./t2 A",
    "script -qc 'touch A' /dev/null", "git -c alias.t='!touch A' t", "make -f /dev/stdin <<< $'all:\\n\\ttouch A'",
    "strace -o /dev/null touch A", ". /dev/stdin <<< 'touch A'", "python3 - <<EOF\nimport os\nos.system('touch A')\nEOF",
    "x=touch; $x A", "echo 'import os; os.system(\"touch A\")' > p.py; python3 < p.py",
    "echo A | xargs -I{} sh -c 'touch {}'", "trap 'touch A' EXIT", "bash -c \"perl -e 'system(q(touch A))'\"",
    "echo x > f; tar -cf /dev/null f --checkpoint=1 --checkpoint-action=exec='touch A'",
    "echo x > f2; split --filter='touch A' f2", "echo x > f3; ed -s f3 <<< '!touch A'",
    "vim -es -c '!touch A' -c q", "echo x > f4; zip -q z.zip f4 -T -TT 'touch A #'",
    "cd . && bash <<EOF\ntouch A\nEOF",
    "mkdir -p rp && printf '#!/bin/sh\\ntouch A\\n' > rp/x && chmod +x rp/x && run-parts rp",
]  # fmt: skip


OPTIONAL = ("perl", "strace", "script", "make", "vim", "ed", "zip", "run-parts", "split", "awk")


def test_the_forms_really_create_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    for command in DENIED_TOUCH:
        if any(
            re.search(rf"(^|[ ;&|(]){name}\b", command) and shutil.which(name) is None for name in OPTIONAL
        ):
            continue  # a program this machine does not have
        (folder / "A").unlink(missing_ok=True)
        subprocess.run(["bash", "-c", command], cwd=folder, capture_output=True, timeout=60, check=False)
        assert (folder / "A").exists(), command


@pytest.mark.parametrize("sandbox", SANDBOX)
@pytest.mark.parametrize("mode", MODES)
def test_a_deny_rule_holds_against_code_it_cannot_see(
    tmp_path: Path, ws: Path, mode: str, sandbox: str
) -> None:
    (ws / ".wyckoff").mkdir()
    (ws / ".wyckoff" / "config.toml").write_text('[permissions]\ndeny = ["run_shell(touch*)"]\n')
    calls = [("run_shell", {"command": c}) for c in DENIED_TOUCH]
    _, results = run(
        tmp_path, ws, calls, "--permission-mode", mode, "--allow", "run_shell", "--sandbox", sandbox
    )
    assert not (ws / "A").exists()
    assert all("not run" in r.lower() for r in results[:-1]), results
    asked = [r for r in asked_reasons(tmp_path) if "runs code the rules cannot see" in r]
    assert len(asked) >= 10, asked  # the approval request says why
    result = json.loads((tmp_path / "out.json").read_text().splitlines()[-1])
    previews = [e["preview"] for e in result["events"] if e["type"] == "approval_request"]
    assert all("rule" not in p for p in previews), previews  # "always" offers nothing to save


PLANTED = {".bashrc": "keep", ".profile": "keep", ".ssh/authorized_keys": "keep", ".ssh/id_rsa": "keep",
           ".config/app/settings.toml": "keep"}  # fmt: skip

HOME_ATTACKS = [
    "truncate -s 0 ~/.bashrc", "truncate -s 0 $HOME/.profile", 'truncate -s 0 "$HOME/.bashrc"',
    "truncate -s 0 ${HOME}/.bashrc", "truncate -s 0 {home}/.bashrc", "truncate -s 0 ../home/.bashrc",
    "cp /dev/null ~/.bashrc", "cat /dev/null > ~/.bashrc", "echo x > ~/.profile", "echo x >> ~/.bashrc",
    "echo x | tee ~/.bashrc", "echo x | tee -a ~/.ssh/authorized_keys", "dd if=/dev/zero of=$HOME/.bashrc count=1",
    "sed -i 's/keep/gone/' ~/.bashrc", "sed -i.bak 's/keep/gone/' ~/.profile", "unlink ~/.bashrc",
    "rm ~/.ssh/id_rsa", "rm -f ~/.bashrc", "rm ~/.*", "mv ~/.bashrc moved.txt", "mv ~ moved-home",
    "cd ..; rm -rf home", "cd .. && rm -rf home", "cd ~ && rm -rf .", "cd ~ && rm -rf .ssh",
    "cd ~; truncate -s 0 .bashrc", "cd ~ && echo x > .bashrc", "rm -rf ~", "rm -rf ~/.ssh",
    "rm -rf $HOME/.config", "F=~/.bashrc; truncate -s 0 $F", "export F=$HOME/.profile; rm $F",
    "bash -c 'truncate -s 0 ~/.bashrc'", "env truncate -s 0 ~/.bashrc", "echo 'rm -rf ~' > s.sh; sh s.sh",
    "echo 'truncate -s 0 ~/.bashrc' > s.sh && chmod +x s.sh && ./s.sh", "printf 'rm -rf ~\\n' > s4.sh; . ./s4.sh",
    "ln -sf /dev/null ~/.bashrc", "echo evil > evil.txt; cp evil.txt ~/.ssh/authorized_keys",
    "find ~ -name .bashrc -delete", "git clean -fdx", "tar xf evil.tar -C ~", "cd ~ && tar xf {ws}/evil.tar",
    "/usr/bin/python3 -c \"import os; open(os.path.expanduser('~/.bashrc'), 'w')\"",
]  # fmt: skip


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = Path(os.path.realpath(tmp_path)) / "home"
    for name, text in PLANTED.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.mark.parametrize("mode", MODES)
def test_the_home_folder_survives_with_the_sandbox_off(
    tmp_path: Path, ws: Path, home: Path, mode: str
) -> None:
    (ws / ".gitignore").write_text("secret.env\n")
    (ws / "secret.env").write_text("KEY=1\n")
    (tmp_path / "payload").mkdir()
    (tmp_path / "payload" / ".bashrc").write_text("gone")
    subprocess.run(
        ["tar", "cf", str(ws / "evil.tar"), "-C", str(tmp_path / "payload"), ".bashrc"], check=True
    )
    spelled = [c.replace("{home}", str(home)).replace("{ws}", str(ws)) for c in HOME_ATTACKS]
    calls = [("run_shell", {"command": c}) for c in spelled]
    _, results = run(
        tmp_path, ws, calls, "--permission-mode", mode, "--allow", "run_shell", "--sandbox", "off"
    )
    for name, text in PLANTED.items():
        assert (home / name).read_text() == text, (name, results)
    assert (ws / "secret.env").exists()
    assert not (ws / "moved-home").exists()
    assert all("not run" in r.lower() for r in results[:-1]), results


@pytest.fixture
def secret(tmp_path: Path, ws: Path) -> Path:
    outside = Path(os.path.realpath(tmp_path)) / "elsewhere"
    outside.mkdir()
    target = outside / "secret.txt"
    target.write_text("top secret\n")
    os.link(target, ws / "link.txt")
    return target


@pytest.mark.parametrize("mode", MODES)
def test_a_hard_link_is_neither_read_nor_edited(tmp_path: Path, ws: Path, secret: Path, mode: str) -> None:
    calls = [
        ("read_file", {"path": "link.txt"}),
        ("grep", {"pattern": "secret"}),
        ("grep", {"pattern": "secret", "path": "link.txt"}),
        ("edit_file", {"path": "link.txt", "old": "top", "new": "no"}),
        ("write_file", {"path": "link.txt", "content": "overwritten\n"}),
    ]
    _, results = run(tmp_path, ws, calls, "--permission-mode", mode, "--allow", "Edit(**)")
    assert secret.read_text() == "top secret\n"
    assert (ws / "link.txt").read_text() == "top secret\n"
    assert not any("top secret" in r for r in results), results
    assert any("left out 1 hard-linked file" in r for r in results), results  # the workspace search
    reasons = asked_reasons(tmp_path)
    assert len(reasons) == 4 and all("a hard link" in r for r in reasons), reasons


@pytest.mark.parametrize("sandbox", SANDBOX)
@pytest.mark.parametrize("mode", MODES)
def test_a_denied_program_copied_under_another_name_is_not_run(
    tmp_path: Path, ws: Path, mode: str, sandbox: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = Path(os.path.realpath(tmp_path)) / "bin"
    folder.mkdir()
    real = os.path.realpath(shutil.which("touch") or "/usr/bin/touch")
    shutil.copy2(real, folder / "wyckoff-t")
    (folder / "wyckoff-l").symlink_to(real)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    (ws / ".wyckoff").mkdir()
    (ws / ".wyckoff" / "config.toml").write_text('[permissions]\ndeny = ["run_shell(touch*)"]\n')
    calls = [("run_shell", {"command": c}) for c in ("wyckoff-t A", "wyckoff-l A", "env wyckoff-t A")]
    _, results = run(
        tmp_path, ws, calls, "--permission-mode", mode, "--allow", "run_shell", "--sandbox", sandbox
    )
    assert not (ws / "A").exists()
    assert all("not run" in r.lower() for r in results[:-1]), results
    assert all("under another name" in r for r in asked_reasons(tmp_path)), asked_reasons(tmp_path)


@pytest.fixture
def remote(tmp_path: Path, ws: Path) -> Path:
    """A bare repository next to the workspace, its `origin`, and one commit to push."""
    bare = Path(os.path.realpath(tmp_path)) / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}  # fmt: skip
    (ws / "a.txt").write_text("a\n")
    for args in (["add", "a.txt"], ["commit", "-qm", "a"], ["remote", "add", "origin", str(bare)]):
        subprocess.run(["git", "-C", str(ws), *args], check=True, env=env)
    return bare


PUSHES = [
    "x=push; git $x origin HEAD:refs/heads/x1", "git $(echo push) origin HEAD:refs/heads/x2",
    "python3 -c \"import os; os.system('git push origin HEAD:refs/heads/x3')\"",
    "git -c alias.p=push p origin HEAD:refs/heads/x4", "sh -c 'git $0 origin HEAD:refs/heads/x5' push",
]  # fmt: skip


def test_the_push_forms_really_push(tmp_path: Path, ws: Path, remote: Path) -> None:
    for command in PUSHES:
        subprocess.run(["bash", "-c", command], cwd=ws, capture_output=True, timeout=60, check=False)
    refs = subprocess.run(
        ["git", "-C", str(remote), "for-each-ref"], capture_output=True, text=True, check=True
    )
    assert refs.stdout.count("refs/heads/x") == len(PUSHES), refs.stdout


@pytest.mark.parametrize("mode", MODES)
def test_a_denied_git_push_is_not_run_through_computed_words(
    tmp_path: Path, ws: Path, remote: Path, mode: str
) -> None:
    (ws / ".wyckoff").mkdir()
    (ws / ".wyckoff" / "config.toml").write_text('[permissions]\ndeny = ["run_shell(git push*)"]\n')
    calls = [("run_shell", {"command": c}) for c in PUSHES]
    _, results = run(
        tmp_path, ws, calls, "--permission-mode", mode, "--allow", "run_shell", "--sandbox", "off"
    )
    refs = subprocess.run(
        ["git", "-C", str(remote), "for-each-ref"], capture_output=True, text=True, check=True
    )
    assert refs.stdout == ""
    assert all("not run" in r.lower() for r in results[:-1]), results
