"""What a hostile marketplace or plugin may try, as tables of attack forms: git options
and transport helpers where a URL goes, paths that leave the plugin or the marketplace
(`..`, absolute, through a link), archive members that land outside the folder. Each is
refused with a clear error, runs nothing and installs nothing."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.plugin_support import PLUGIN, make_marketplace, make_plugin, serve_files, sha256, write
from wyckoff_cli.storage import plugins
from wyckoff_cli.storage.plugin_manifest import PluginError, read_plugin
from wyckoff_cli.storage.plugin_sources import classify


def staging_is_empty() -> bool:
    folder = plugins.plugins_dir() / ".staging"
    return not folder.exists() or not any(folder.iterdir())


GIT_ATTACKS = [
    ("--upload-pack=touch {pwned}", ""),
    ("-u touch {pwned}", ""),
    ("--config=core.sshCommand=touch {pwned}", ""),
    ("ext::sh -c touch% {pwned}", ""),
    ("ext::sh -c 'touch {pwned}'", ""),
    ("fd::17", ""),
    ("https://example.com/x.git", "--upload-pack=touch {pwned}"),
    ("git@-oProxyCommand=touch {pwned}:x", ""),
    ("ssh://-oProxyCommand=touch%20{pwned}/x", ""),
    ("file:///{pwned} ; touch {pwned}", ""),
]


@pytest.mark.parametrize(("url", "ref"), GIT_ATTACKS)
def test_a_plugin_git_source_cannot_run_anything(tmp_path: Path, url: str, ref: str) -> None:
    pwned = tmp_path / "PWNED"
    source = {
        "source": "url",
        "url": url.format(pwned=pwned),
        **({"ref": ref.format(pwned=pwned)} if ref else {}),
    }
    root = make_marketplace(tmp_path / "m", plugins=[{"name": PLUGIN, "source": source}])
    plugins.add_marketplace(classify(str(root)))
    with pytest.raises(PluginError) as raised:
        plugins.stage_plugin(PLUGIN)
    assert raised.value.message  # one clear line, no traceback
    assert not pwned.exists() and staging_is_empty() and not plugins.installed_dir(PLUGIN).exists()


@pytest.mark.parametrize(
    "source", ["ext::sh -c touch% /tmp/x", "--upload-pack=x", "fd::3", "svn://host/repo"]
)
def test_marketplace_add_refuses_what_is_not_a_git_url(tmp_path: Path, source: str) -> None:
    with pytest.raises(PluginError):
        plugins.add_marketplace(classify(source, cwd=tmp_path))
    assert plugins.load_registry().marketplaces == {}


MANIFEST_ESCAPES = [
    ("commands", "../outside"),
    ("commands", "./commands/../../outside"),
    ("commands", ["./commands", "../outside"]),
    ("agents", "/etc"),
    ("skills", "./link-out"),
    ("hooks", "../outside/hooks.json"),
    ("hooks", "./link-out/hooks.json"),
    ("mcpServers", "/etc/hostname"),
    ("mcpServers", "../outside/servers.json"),
]


@pytest.mark.parametrize(("key", "value"), MANIFEST_ESCAPES)
def test_a_manifest_path_that_leaves_the_plugin(tmp_path: Path, key: str, value: object) -> None:
    outside = tmp_path / "outside"
    write(outside / "hooks.json", json.dumps({"hooks": {}}))
    write(outside / "servers.json", json.dumps({"mcpServers": {}}))
    root = make_plugin(tmp_path / "plugin", **{key: value})
    (root / "link-out").symlink_to(outside)
    with pytest.raises(PluginError, match="leaves the folder"):
        read_plugin(root)


MARKET_ESCAPES = ["../outside", "./plugins/../../outside", "/tmp", "./plugins/link-out"]


@pytest.mark.parametrize("source", MARKET_ESCAPES)
def test_a_marketplace_source_that_leaves_the_marketplace(tmp_path: Path, source: str) -> None:
    make_plugin(tmp_path / "outside")
    root = make_marketplace(tmp_path / "m", plugins=[{"name": PLUGIN, "source": source}])
    (root / "plugins").mkdir(exist_ok=True)
    (root / "plugins" / "link-out").symlink_to(tmp_path / "outside")
    plugins.add_marketplace(classify(str(root)))
    with pytest.raises(PluginError, match="leaves the folder"):
        plugins.stage_plugin(PLUGIN)
    assert staging_is_empty() and not plugins.installed_dir(PLUGIN).exists()


def tar_with(member: tarfile.TarInfo, data: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.addfile(member, io.BytesIO(data) if data else None)
    return buffer.getvalue()


def _file(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = 1
    return info


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def _device(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    return info


TAR_ATTACKS = [
    ("a relative escape", lambda: tar_with(_file("../escaped"), b"x")),
    ("a nested relative escape", lambda: tar_with(_file("top/../../escaped"), b"x")),
    ("an absolute path", lambda: tar_with(_file("/tmp/escaped-absolute"), b"x")),
    ("a symlink out", lambda: tar_with(_link("top/passwd", "/etc/passwd", tarfile.SYMTYPE))),
    ("a relative symlink out", lambda: tar_with(_link("top/up", "../../..", tarfile.SYMTYPE))),
    ("a hard link out", lambda: tar_with(_link("top/hard", "/etc/passwd", tarfile.LNKTYPE))),
    ("a device", lambda: tar_with(_device("top/tty"))),
]


@pytest.mark.parametrize(("what", "make"), TAR_ATTACKS, ids=[t[0] for t in TAR_ATTACKS])
def test_a_tar_member_that_leaves_the_folder(tmp_path: Path, what: str, make: object) -> None:
    body = make()  # type: ignore[operator]
    with serve_files({"m.tar.gz": body}) as base, pytest.raises(PluginError) as raised:
        plugins.add_marketplace(classify(f"{base}/m.tar.gz", sha256(body)))
    assert "is refused" in raised.value.message, what
    assert not (plugins.plugins_dir() / "escaped").exists() and not Path("/tmp/escaped-absolute").exists()
    assert staging_is_empty() and plugins.load_registry().marketplaces == {}


def zip_with(name: str, data: bytes = b"x", symlink: bool = False) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo(name)
        if symlink:
            info.external_attr = 0o120777 << 16
        archive.writestr(info, data)
    return buffer.getvalue()


ZIP_ATTACKS = [
    ("a relative escape", zip_with("../escaped"), "leaves its folder"),
    ("a nested relative escape", zip_with("top/../../escaped"), "leaves its folder"),
    ("an absolute path", zip_with("/tmp/escaped-absolute"), "leaves its folder"),
    ("a symlink", zip_with("top/passwd", b"/etc/passwd", symlink=True), "is a link"),
]


@pytest.mark.parametrize(("what", "body", "message"), ZIP_ATTACKS, ids=[t[0] for t in ZIP_ATTACKS])
def test_a_zip_member_that_leaves_the_folder(tmp_path: Path, what: str, body: bytes, message: str) -> None:
    with serve_files({"m.zip": body}) as base, pytest.raises(PluginError, match=message):
        plugins.add_marketplace(classify(f"{base}/m.zip", sha256(body)))
    assert not Path("/tmp/escaped-absolute").exists() and staging_is_empty(), what
