"""The destructive list, single files: commands that write, truncate, move or delete a
file where that is destructive (danger_paths.file_danger: the home folder's hidden
files, the home folder itself, system files; moving or deleting the workspace).

Each program's operands are read the way it reads them: `cp`/`ln`/`install` write their
last operand (or `-t DIR`), `mv` moves every operand away, `rm`/`unlink`/`truncate`/
`tee`/`sed -i`/`perl -i` act on every file operand, `dd` on `of=`, `curl -o`/`wget -O` on
the output file, `rsync` and `scp` on a local destination, `tar -x` and `unzip` on the
folder they extract into. `crontab` other than `-l`
replaces or removes the user's crontab. Redirections are checked against every folder
the command `cd`s into.
"""

from __future__ import annotations

from collections.abc import Iterable

from wyckoff_cli.tools.permissions.danger_paths import DangerContext, file_danger
from wyckoff_cli.tools.permissions.shellcommand import ParsedCommand, SimpleCommand, Word, basename

# program → its options that take a value (the other words are options or operands)
_VALUES: dict[str, frozenset[str]] = {
    "rm": frozenset(),
    "unlink": frozenset(),
    "rmdir": frozenset(),
    "truncate": frozenset({"-s", "--size", "-r", "--reference"}),
    "tee": frozenset({"--output-error"}),
    "cp": frozenset({"-t", "--target-directory", "-S", "--suffix"}),
    "mv": frozenset({"-t", "--target-directory", "-S", "--suffix"}),
    "ln": frozenset({"-t", "--target-directory", "-S", "--suffix"}),
    "install": frozenset(
        {"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"}
    ),  # fmt: skip
    "sed": frozenset({"-e", "--expression", "-f", "--file", "-l", "--line-length"}),
    "rsync": frozenset(
        {
            "-e",
            "--rsh",
            "--exclude",
            "--include",
            "--filter",
            "-f",
            "--files-from",
            "--log-file",
            "--password-file",
            "--backup-dir",
            "-T",
            "--temp-dir",
        }
    ),  # fmt: skip
    "scp": frozenset({"-F", "-i", "-l", "-o", "-P", "-c", "-J", "-S"}),
}
_REMOVES = frozenset({"rm", "unlink", "rmdir", "mv"})
_VERBS = {"rm": "deletes", "unlink": "deletes", "rmdir": "deletes", "truncate": "truncates", "tee": "overwrites",
          "cp": "overwrites", "mv": "moves away", "ln": "replaces", "install": "overwrites", "sed": "rewrites",
          "rsync": "overwrites",
          "scp": "overwrites", "dd": "overwrites", "curl": "overwrites", "wget": "overwrites"}  # fmt: skip


def _split(words: Iterable[Word], values: frozenset[str]) -> tuple[list[Word], dict[str, Word]]:
    """(operands, option → value) of a command's arguments, `--` ending the options."""
    operands: list[Word] = []
    options: dict[str, Word] = {}
    items = list(words)
    i = 0
    ended = False
    while i < len(items):
        word = items[i]
        text = word.text
        if ended or not word.literal or not text.startswith("-") or text == "-":
            operands.append(word)
        elif text == "--":
            ended = True
        elif "=" in text and text.startswith("--"):
            name, value = text.split("=", 1)
            options[name] = Word(value)
        elif text in values:
            if i + 1 < len(items):
                options[text] = items[i + 1]
            i += 1
        else:
            options[text] = Word("")
        i += 1
    return operands, options


def _targets(prog: str, command: SimpleCommand) -> list[Word]:
    """The files `command` writes or removes."""
    words = command.words[1:]
    if prog == "dd":
        return [Word(w.text[3:], w.literal) for w in words if w.text.startswith("of=")]
    if prog in ("curl", "wget"):
        flags = ("-o", "--output") if prog == "curl" else ("-O", "--output-document")
        return [words[i + 1] for i in range(len(words) - 1) if words[i].text in flags]
    operands, options = _split(words, _VALUES[prog])
    target = options.get("-t") or options.get("--target-directory")
    if prog in ("cp", "ln", "install", "rsync", "scp"):
        if target is not None:
            return [target]
        dest = operands[-1:] if len(operands) >= 2 else []
        return [w for w in dest if prog not in ("rsync", "scp") or ":" not in w.text.split("/", 1)[0]]
    if prog == "mv":
        return operands + ([target] if target is not None else [])
    if prog == "sed":
        if not any(_sed_in_place(o) for o in options):
            return []
        scripted = any(o in options for o in ("-e", "--expression", "-f", "--file"))
        return operands if scripted else operands[1:]
    return operands


def _extract_folder(prog: str, command: SimpleCommand) -> Word | None:
    """Where `tar -x` (`tar xf`, `--extract`) or `unzip` writes: `-C`/`--directory`
    (`-d` for unzip), else the current folder; None when it does not extract."""
    words = list(command.words[1:])
    texts = [w.text for w in words]
    flag = "-d" if prog == "unzip" else "-C"
    if prog != "unzip":
        first = texts[0] if texts else ""
        old_style = bool(first) and not first.startswith("-") and "x" in first
        short = any(t.startswith("-") and not t.startswith("--") and "x" in t for t in texts)
        if not (old_style or short or "--extract" in texts or "--get" in texts):
            return None
    for i, text in enumerate(texts):
        if text == flag and i + 1 < len(words):
            return words[i + 1]
        if text.startswith("--directory="):
            return Word(text.split("=", 1)[1], words[i].literal)
        if text == "--directory" and i + 1 < len(words):
            return words[i + 1]
    return Word(".")


def _in_place_danger(prog: str, command: SimpleCommand, ctx: DangerContext) -> str | None:
    """`perl -pi -e CODE FILE…`, `ruby -i -pe CODE FILE…`: the files are rewritten."""
    words = command.words[1:]
    in_place = any(
        w.literal
        and w.text.startswith("-")
        and not w.text.startswith("--")
        and "i" in w.text[1:].split("e")[0]
        for w in words
    )
    if not in_place:
        return None
    for word in words:
        if (word.literal and word.text.startswith("-")) or word.text == command.inline_code:
            continue
        why = file_danger(word, ctx, deletes=False)
        if why:
            return f"`{prog} -i` rewrites {why}"
    return None


def _sed_in_place(option: str) -> bool:
    """`-i`, `-i.bak`, `-ni`, `-Ei`, `--in-place[=SUFFIX]` (in a cluster, `e`, `f` and
    `l` take the rest as their value)."""
    if option.startswith("--"):
        return option == "--in-place"
    for char in option[1:]:
        if char == "i":
            return True
        if char in "efl":
            return False
    return False


def file_write_danger(command: SimpleCommand, ctx: DangerContext) -> str | None:
    """Why `command` writes or removes a file where that is destructive, or None."""
    if not command.words or not command.words[0].literal:
        return None
    prog = basename(command.name)
    if prog == "crontab":
        texts = [w.text for w in command.words[1:]]
        if "-l" in texts or "--list" in texts:
            return None
        return "`crontab` replaces or removes the user's crontab (which runs commands later)"
    if prog in ("tar", "bsdtar", "unzip"):
        folder = _extract_folder(prog, command)
        why = file_danger(folder, ctx, deletes=False) if folder is not None else None
        return f"`{prog}` extracts into {why}" if why else None
    if prog in ("perl", "ruby") and command.inline_code is not None:
        return _in_place_danger(prog, command, ctx)
    if prog not in _VALUES and prog not in ("dd", "curl", "wget"):
        return None
    deletes = prog in _REMOVES
    for word in _targets(prog, command):
        why = file_danger(word, ctx, deletes=deletes)
        if why:
            return f"`{prog}` {_VERBS.get(prog, 'writes')} {why}"
    return None


def redirect_danger(parsed: ParsedCommand, places: list[DangerContext]) -> str | None:
    """Why an output redirection of `parsed` writes a file where that is destructive,
    resolving relative targets against every folder the command `cd`s into."""
    for redirect in parsed.writes:
        for ctx in places:
            why = file_danger(redirect.target, ctx, deletes=False)
            if why:
                return f"a redirection overwrites {why}"
    return None
