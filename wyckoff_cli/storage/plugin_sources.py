"""Bringing a marketplace or a plugin onto the machine: a local folder, a git
repository (cloned with the `git` binary) or an archive URL pinned by its SHA-256.

Each fetch writes into a fresh folder the caller gives (a staging folder beside the
final place), so a failure leaves nothing behind but that folder, which the caller
removes. Git never asks for a password here (`GIT_TERMINAL_PROMPT=0`); an archive's
members must stay inside the folder (no absolute paths, `..`, links or devices).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from wyckoff_cli.storage.plugin_manifest import MARKETPLACE, PluginError

GIT_TIMEOUT = 120.0
DOWNLOAD_TIMEOUT = 60.0
MAX_ARCHIVE_BYTES = 200 * 1024 * 1024
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz", ".zip")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_GITHUB_SHORT = re.compile(r"^[\w.-]+/[\w.-]+$")
_GIT_SCHEMES = re.compile(r"^(https?|git|ssh|file)://\S+$")
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:\S+$")


@dataclass(frozen=True)
class MarketSource:
    """Where a marketplace comes from, as recorded: `local` (a folder, read in place),
    `git` (a clone URL) or `archive` (a URL and its SHA-256)."""

    kind: str
    location: str
    sha256: str = ""
    ref: str = ""

    def describe(self) -> str:
        pin = f" (sha256 {self.sha256[:12]}…)" if self.sha256 else ""
        return f"{self.kind} {self.location}{pin}"


def classify(source: str, sha256: str | None = None, cwd: Path | None = None) -> MarketSource:
    """What `wyckoff plugin marketplace add SOURCE` names: an existing folder, an
    archive URL (which needs `--sha256`), a git URL, or GitHub's OWNER/NAME."""
    pin = (sha256 or "").strip().lower()
    if pin and not _SHA256.match(pin):
        raise PluginError(f"--sha256 must be 64 hexadecimal digits, got {sha256!r}")
    folder = Path(source).expanduser()
    if not folder.is_absolute():
        folder = (cwd or Path.cwd()) / folder
    lowered = source.lower().split("?")[0]
    if lowered.startswith(("http://", "https://")) and lowered.endswith(ARCHIVE_SUFFIXES):
        if not pin:
            raise PluginError(f"{source}: an archive URL needs its SHA-256 pin (--sha256 HEX)")
        return MarketSource("archive", source, pin)
    if pin:
        raise PluginError("--sha256 pins an archive URL (.tar.gz, .tgz, .zip); this source is not one")
    if folder.is_dir():
        return MarketSource("local", str(folder.resolve()))
    if re.match(r"^(https?|git|ssh|file)://", source) or re.match(r"^[\w.-]+@[\w.-]+:", source):
        return MarketSource("git", source)
    if _GITHUB_SHORT.match(source) and not source.startswith("."):
        return MarketSource("git", f"https://github.com/{source}.git")
    raise PluginError(
        f"{source}: not a folder, a git URL, GitHub's OWNER/NAME or an archive URL (.tar.gz, .zip)"
    )


def check_git_url(url: str, ref: str = "") -> None:
    """Refuse what would make `git clone` do more than fetch: an option in the URL's
    place (`--upload-pack=…`), a `TRANSPORT::` helper (`ext::sh -c …`), another scheme."""
    if url.startswith("-") or ref.startswith("-"):
        raise PluginError(f"{url}: a git URL or ref may not start with '-'")
    if "::" in url.split("/")[0] or not (_GIT_SCHEMES.match(url) or _SCP_LIKE.match(url)):
        raise PluginError(
            f"{url}: not a git URL Wyckoff clones (https, http, git, ssh, file or user@host:path)"
        )


def git_clone(url: str, target: Path, ref: str = "") -> None:
    """A shallow clone of `url` (at `ref`, a branch or tag) into `target`, without its `.git`."""
    check_git_url(url, ref)
    if shutil.which("git") is None:
        raise PluginError(f"{url}: cloning needs the git program, which is not installed")
    safety = ["-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null"]
    branch = ["--branch", ref] if ref else []
    command = ["git", *safety, "clone", "--quiet", "--depth", "1", *branch, "--", url, str(target)]
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true"}
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=GIT_TIMEOUT, env=env, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise PluginError(f"{url}: git clone did not finish in {GIT_TIMEOUT:g}s") from None
    if done.returncode != 0:
        reason = " ".join((done.stderr or done.stdout).split())[:300] or f"exit {done.returncode}"
        raise PluginError(f"{url}: the repository cannot be cloned ({reason})")
    shutil.rmtree(target / ".git", ignore_errors=True)


def download(url: str, sha256: str) -> bytes:
    """The archive at `url`, refused unless its SHA-256 is `sha256`."""
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as answer:
            data: bytes = answer.read(MAX_ARCHIVE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise PluginError(f"{url}: the server answered {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise PluginError(f"{url}: the marketplace does not answer ({reason})") from None
    if len(data) > MAX_ARCHIVE_BYTES:
        raise PluginError(f"{url}: the archive is larger than {MAX_ARCHIVE_BYTES // 2**20} MB")
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise PluginError(
            f"{url}: the archive's SHA-256 is {actual}, not the pinned {sha256}; nothing was installed"
        )
    return data


def extract(data: bytes, target: Path, url: str) -> None:
    """Unpack a tar or zip archive into `target`, refusing members that leave it."""
    target.mkdir(parents=True, exist_ok=True)
    base = target.resolve()
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.infolist():
                destination = (base / member.filename).resolve()
                if not destination.is_relative_to(base):
                    raise PluginError(f"{url}: the archive member {member.filename!r} leaves its folder")
                mode = (member.external_attr >> 16) & 0o170000
                if mode == 0o120000:
                    raise PluginError(f"{url}: the archive member {member.filename!r} is a link")
            archive.extractall(base)
        return
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for item in archive.getmembers():  # refused, not quietly made relative
                if item.name.startswith("/") or ".." in Path(item.name).parts:
                    raise PluginError(
                        f"{url}: the archive member {item.name!r} is refused (it leaves its folder)"
                    )
            archive.extractall(base, filter="data")
    except tarfile.FilterError as exc:
        raise PluginError(f"{url}: the archive member {exc.tarinfo.name!r} is refused ({exc})") from None
    except (tarfile.TarError, EOFError) as exc:
        raise PluginError(f"{url}: not a tar or zip archive ({exc})") from None


def marketplace_root(folder: Path, where: str) -> Path:
    """The folder holding `.claude-plugin/marketplace.json`: `folder` or its only sub-folder
    (archives of a repository wrap it in one)."""
    if (folder / MARKETPLACE).is_file():
        return folder
    children = [c for c in folder.iterdir() if c.is_dir()] if folder.is_dir() else []
    if len(children) == 1 and (children[0] / MARKETPLACE).is_file():
        return children[0]
    raise PluginError(f"{where}: no {MARKETPLACE} in it; it is not a plugin marketplace")


def fetch_marketplace(source: MarketSource, target: Path) -> None:
    """Bring a `git` or `archive` marketplace into `target` (a `local` one is read in place)."""
    if source.kind == "git":
        git_clone(source.location, target, source.ref)
    elif source.kind == "archive":
        extract(download(source.location, source.sha256), target, source.location)
    else:
        raise PluginError(f"{source.location}: a local marketplace is read in place, not fetched")


def copy_tree(source: Path, target: Path) -> None:
    """Copy a plugin folder (links are copied as links and refused when they point out)."""
    base = source.resolve()
    for item in source.rglob("*"):
        if item.is_symlink() and not item.resolve().is_relative_to(base):
            raise PluginError(f"{item}: a link out of the plugin folder ({os.readlink(item)}) is refused")
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(".git"))
