"""Rule parsing and matching, compound-command splitting, the destructive list."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wyckoff_cli.tools.permissions.destructive import find_danger
from wyckoff_cli.tools.permissions.rules import RuleError, command_matches, command_prefix, parse_rule
from wyckoff_cli.tools.permissions.shellparse import normalize, parse_command


@pytest.mark.parametrize(
    ("text", "tool", "pattern"),
    [
        ("run_shell", "run_shell", None),
        ("  edit_file  ", "edit_file", None),
        ("run_shell(pytest*)", "run_shell", "pytest*"),
        ("run_shell(echo $(date))", "run_shell", "echo $(date)"),
        ("edit_file( src/** )", "edit_file", "src/**"),
        ("mcp.server-x(a)", "mcp.server-x", "a"),
    ],
)
def test_parse_rule(text: str, tool: str, pattern: str | None) -> None:
    rule = parse_rule(text)
    assert (rule.tool, rule.pattern) == (tool, pattern)


@pytest.mark.parametrize("text", ["", "run shell", "run_shell(", "run_shell()", "(x)", "9tool", "a(b)c"])
def test_parse_rule_rejects(text: str) -> None:
    with pytest.raises(RuleError):
        parse_rule(text)


@pytest.mark.parametrize(
    ("command", "parts", "complete"),
    [
        ("git status", ["git status"], True),
        ("a && b || c; d | e & f", ["a", "b", "c", "d", "e", "f"], True),
        ("a\nb", ["a", "b"], True),
        ('echo "a; b && c" && ls', ["echo a; b && c", "ls"], True),
        ("echo 'a | b'", ["echo a | b"], True),
        ("echo a\\;b", ["echo a;b"], True),
        ("echo $(rm -rf x)", ["echo $(rm -rf x)", "rm -rf x"], True),
        ('echo "$(whoami)"', ['echo "$(whoami)"', "whoami"], True),
        ("echo `date`", ["echo `date`", "date"], True),
        ("diff <(ls a) <(ls b)", ["diff <(ls a) <(ls b)", "ls a", "ls b"], True),
        ("(cd src && make)", ["cd src", "make"], True),
        ("{ a; b; }", ["a", "b"], True),
        ("cmd 2>&1 | tee log", ["cmd", "tee log"], True),
        ("cmd &> out", ["cmd"], True),
        ("if true; then ls; fi", ["true", "ls"], True),
        ("echo $((1 + 2))", ["echo $((1 + 2))"], True),
        ("ls # rm -rf /", ["ls"], True),
        ("f() { ls; }", ["ls"], True),
        ("echo 'open", None, False),
        ('echo "open', None, False),
        ("echo $(ls", None, False),
        ("a )", None, False),
    ],
)
def test_parse_command_parts(command: str, parts: list[str] | None, complete: bool) -> None:
    parsed = parse_command(command)
    if parts is not None:
        assert list(parsed.parts) == parts
    assert parsed.complete is complete


@given(st.text(max_size=80))
def test_parse_and_normalize_never_fail(text: str) -> None:
    parsed = parse_command(text)
    assert all(isinstance(part, str) for part in parsed.parts)
    once = normalize(text)
    assert normalize(once) == once


@pytest.mark.parametrize(
    ("pattern", "command", "expected"),
    [
        ("git status", "git status", True),
        ("git status", "git status --short", True),
        ("git status", "git statusx", False),
        ("git  status", "git status -s", True),
        ("pytest*", "pytest", True),
        ("pytest*", "pytest -q tests", True),
        ("pytest*", "pytest-watch", True),
        ("pytest *", "pytest", False),
        ("npm run test:*", "npm run test", True),
        ("npm run test:*", "npm run test --watch", True),
        ("npm run test:*", "npm run testing", False),
        ("git log -?", "git log -p", True),
        ("git [sd]iff", "git diff", True),
        ("ls \\*.py", "ls *.py", True),
        ("ls \\*.py", "ls a.py", False),
        ("make", "make test", True),
        ("make", "cmake", False),
    ],
)
def test_command_matches(pattern: str, command: str, expected: bool) -> None:
    assert command_matches(pattern, command) is expected


@pytest.mark.parametrize(
    ("part", "prefix"),
    [
        ("git status --short", "git status"),
        ("git commit -m 'x'", "git commit"),
        ("cargo test --release", "cargo test"),
        ("npm run build", "npm run build"),
        ("make", "make"),
        ("pytest -q", "pytest"),
        ("cat README.md", "cat"),
        ("python script.py", "python script.py"),
        ("bash -c 'ls'", "ls"),
        ("rm -f a.o", "rm -f a.o"),
        ("./run.sh x", "./run.sh x"),
        ("FOO=1 pytest", "pytest"),
        ("find . -name x", "find . -name x"),
        ("python3 -c 'print(1)'", "python3 -c 'print(1)'"),
        ("rm *.o", "rm \\*.o"),
    ],
)
def test_command_prefix(part: str, prefix: str) -> None:
    (command,) = parse_command(part).commands
    assert command_prefix(command) == prefix


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "rm -rf /*",
        "rm -fr ~",
        "rm -r -f $HOME",
        "rm --recursive --force /etc",
        "rm -rf .",
        "rm -rf *",
        "rm --no-preserve-root -rf /",
        "sudo rm -rf /var",
        "env X=1 nice -n 5 rm -rf ~/",
        "git push --force origin main",
        "git push -f origin master",
        "git push -f origin feature/login",
        "git push --force-with-lease origin my-branch",
        "git push --force-with-lease origin release/2.0",
        "git push origin +main",
        "git push origin +feature:main",
        "git push --force",
        "git -C repo push -fu origin develop",
        "git push --mirror",
        "git push origin --delete main",
        "git push origin :master",
        "mkfs.ext4 /dev/sdb1",
        "mkfs -t xfs /dev/nvme0n1",
        "wipefs -a /dev/sda",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        "cat image > /dev/sdb",
        ":(){ :|:& };:",
        "bomb(){ bomb|bomb& };bomb",
        "chmod -R 777 /",
        "chown -R me /usr",
        "shutdown -h now",
        "sudo reboot",
        "systemctl poweroff",
        "ls && rm -rf /",
        "echo $(rm -rf ~)",
        "bash -c 'rm -rf /'",
        'sh -c "git push -f origin main"',
    ],
)
def test_destructive(command: str) -> None:
    assert find_danger(command) is not None


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "rm -rf ./dist node_modules",
        "rm -f /tmp/x.txt",
        "rm ~/notes.txt",
        "rm -rf /tmp/wyckoff-test",
        "git push origin main",
        "git push -u origin topic",
        "git push origin --delete feature/old",
        "dd if=/dev/zero of=disk.img bs=1M count=1",
        "echo hi > /dev/null",
        "chmod -R u+w build",
        "chmod 777 /",
        "echo shutdown",
        "grep -r 'rm -rf /' docs",
        "pytest -q",
    ],
)
def test_not_destructive(command: str) -> None:
    assert find_danger(command) is None


@pytest.mark.parametrize(
    "text", ["{\U000ee563", "{\U000771a8", "{\U000f0000", "echo {\U0001f600} && {\U000771a8"]
)
def test_characters_beyond_the_bmp_never_crash_the_parser(text: str) -> None:
    """tree-sitter-bash 0.25's scanner crashed the process (SIGSEGV) on `{` then some
    four-byte characters; the parse runs in a child so a crash fails this test, not the run."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom wyckoff_cli.tools.permissions.shellparse import parse_command\n"
        "p = parse_command(sys.argv[1])\nprint(' '.join(w.text for c in p.commands for w in c.words))"
    )
    done = subprocess.run([sys.executable, "-c", code, text], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert all(ch in text for ch in done.stdout.strip().replace(" ", ""))  # the words keep their text


def test_a_word_beyond_the_bmp_is_read_as_written() -> None:
    parsed = parse_command("echo \U0001f600 && rm -rf \U000771a8x")
    assert [[w.text for w in c.words] for c in parsed.commands] == [
        ["echo", "\U0001f600"],
        ["rm", "-rf", "\U000771a8x"],
    ]
