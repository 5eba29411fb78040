"""Plugins and marketplaces on disk: Claude Code's files read and checked, marketplaces
from a folder, a git repository (file:// and `git daemon` on 127.0.0.1) and a pinned
archive over HTTP on 127.0.0.1, installs staged and moved into place in one rename."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.plugin_support import (
    MARKET,
    PLUGIN,
    bare_repository,
    commit_all,
    git_daemon,
    make_marketplace,
    make_plugin,
    serve_files,
    sha256,
    tar_gz,
    write,
)
from wyckoff_cli.storage import managed, plugins
from wyckoff_cli.storage.plugin_manifest import PluginError, read_marketplace, read_plugin
from wyckoff_cli.storage.plugin_sources import MarketSource, classify
from wyckoff_cli.storage.trust import TrustStore, canonical_hash


def staging_is_empty() -> bool:
    folder = plugins.plugins_dir() / ".staging"
    return not folder.exists() or not any(folder.iterdir())


def install(spec: str = PLUGIN, trust: bool = True) -> plugins.InstalledPlugin:
    return plugins.install_staged(plugins.stage_plugin(spec), trust=trust)


def test_the_manifest_and_its_parts_are_read(tmp_path: Path) -> None:
    manifest = read_plugin(make_plugin(tmp_path / "p"))
    assert (manifest.name, manifest.version) == (PLUGIN, "1.2.0")
    assert manifest.author == "Platform Team <platform@example.com>"
    assert manifest.command_paths == (tmp_path / "p" / "commands",)
    assert manifest.hooks_file == tmp_path / "p" / "hooks" / "hooks.json"
    assert list(manifest.hooks) == ["PreToolUse"]
    assert list(manifest.mcp_servers) == ["demo"]


def test_custom_component_paths_add_to_the_default_folders(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "p", commands=["./extra/deploy.md"], agents="./more-agents")
    write(root / "extra" / "deploy.md", "Deploy it")
    write(root / "more-agents" / "x.md", "---\nname: x\ndescription: d\n---\nbody")
    manifest = read_plugin(root)
    assert manifest.command_paths == (root / "commands", (root / "extra" / "deploy.md").resolve())
    assert manifest.agent_paths == (root / "agents", (root / "more-agents").resolve())


def test_inline_hooks_and_servers_in_plugin_json(tmp_path: Path) -> None:
    hooks = {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "true"}]}]}
    root = tmp_path / "p"
    write(
        root / ".claude-plugin" / "plugin.json",
        json.dumps({"name": "inline", "hooks": {"hooks": hooks}, "mcpServers": {"s": {"command": "x"}}}),
    )
    manifest = read_plugin(root)
    assert manifest.hooks == hooks and manifest.hooks_file == root / ".claude-plugin" / "plugin.json"
    assert manifest.mcp_servers == {"s": {"command": "x"}}


BAD_MANIFESTS: list[tuple[Any, str]] = [
    (None, "no plugin manifest (.claude-plugin/plugin.json) here"),
    ("{ not json", "is not valid JSON"),
    ([1, 2], "must be a JSON object"),
    ({"version": "1"}, "`name` must be a kebab-case name"),
    ({"name": "Has Spaces"}, "`name` must be a kebab-case name"),
    ({"name": "ok", "version": 2}, "`version` must be a string"),
    ({"name": "ok", "commands": 5}, "`commands` must be a path or a list of paths"),
    ({"name": "ok", "commands": "./missing"}, "names './missing', which does not exist"),
    ({"name": "ok", "agents": "../../outside"}, "leaves the folder"),
    ({"name": "ok", "agents": "/etc"}, "leaves the folder"),
    ({"name": "ok", "hooks": 3}, "`hooks` must be a path to a hooks file or an object"),
    ({"name": "ok", "hooks": "./nope.json"}, "names './nope.json', which does not exist"),
    ({"name": "ok", "mcpServers": ["a"]}, "`mcpServers` must be a path or an object"),
]


@pytest.mark.parametrize(("content", "message"), BAD_MANIFESTS)
def test_a_bad_manifest_is_a_clear_error(tmp_path: Path, content: Any, message: str) -> None:
    root = tmp_path / "p"
    root.mkdir()
    if content is not None:
        text = content if isinstance(content, str) else json.dumps(content)
        write(root / ".claude-plugin" / "plugin.json", text)
    with pytest.raises(PluginError) as raised:
        read_plugin(root)
    assert message in raised.value.message and "plugin.json" in raised.value.message


BAD_MARKETS: list[tuple[Any, str]] = [
    ({"owner": {"name": "o"}, "plugins": []}, "`name` must be a kebab-case name"),
    ({"name": "m", "plugins": []}, "`owner` must be an object with a `name`"),
    ({"name": "m", "owner": {"name": "o"}}, "`plugins` must be a list"),
    ({"name": "m", "owner": "o", "plugins": []}, "`owner` must be an object with a `name`"),
]


@pytest.mark.parametrize(("content", "message"), BAD_MARKETS)
def test_a_bad_marketplace_file_is_a_clear_error(tmp_path: Path, content: Any, message: str) -> None:
    write(tmp_path / ".claude-plugin" / "marketplace.json", json.dumps(content))
    with pytest.raises(PluginError) as raised:
        read_marketplace(tmp_path)
    assert message in raised.value.message


BAD_ENTRIES: list[tuple[Any, str]] = [
    ({"name": "a"}, "`source` must be a relative path"),
    ({"name": "a", "source": {"source": "github"}}, "a github source needs `repo` as OWNER/NAME"),
    ({"name": "a", "source": {"source": "svn"}}, "source.source must be 'github', 'url' or 'git'"),
    ({"name": "Explanatory Output Style", "source": "./x"}, "`name` must be a kebab-case name"),
    ({"name": "a", "source": "./a", "strict": "no"}, "`strict` must be true or false"),
    ({"name": "good", "source": "./b"}, "the plugin name 'good' is listed twice"),
    ("just a string", "must be an object"),
]


@pytest.mark.parametrize(("entry", "message"), BAD_ENTRIES)
def test_a_bad_entry_is_skipped_naming_why_and_the_others_stay(
    tmp_path: Path, entry: Any, message: str
) -> None:
    data = {"name": "m", "owner": {"name": "o"}, "plugins": [{"name": "good", "source": "./good"}, entry]}
    write(tmp_path / ".claude-plugin" / "marketplace.json", json.dumps(data))
    market = read_marketplace(tmp_path)
    assert [p.name for p in market.plugins] == ["good"]
    (problem,) = market.problems
    assert message in problem and "plugins[1]" in problem and "skipped" in problem


def test_marketplace_sources_in_claude_codes_forms(tmp_path: Path) -> None:
    entries = [
        {"name": "a", "source": "./plugins/a"},
        {"name": "b", "source": {"source": "github", "repo": "acme/b-plugin", "ref": "v2"}},
        {"name": "c", "source": {"source": "url", "url": "https://git.example.com/c.git"}},
        {"name": "d", "source": "d"},
    ]
    data = {"name": "m", "owner": {"name": "o"}, "metadata": {"pluginRoot": "./plugins"}, "plugins": entries}
    write(tmp_path / ".claude-plugin" / "marketplace.json", json.dumps(data))
    sources = [(e.source.kind, e.source.location, e.source.ref) for e in read_marketplace(tmp_path).plugins]
    assert sources == [
        ("path", "./plugins/a", ""),
        ("git", "https://github.com/acme/b-plugin.git", "v2"),
        ("git", "https://git.example.com/c.git", ""),
        ("path", "plugins/d", ""),
    ]


def test_what_marketplace_add_names(tmp_path: Path) -> None:
    assert classify(str(tmp_path)).kind == "local"
    assert classify("acme/tools") == MarketSource("git", "https://github.com/acme/tools.git")
    assert classify("file:///srv/m.git").kind == "git"
    assert classify("git@github.com:acme/tools.git").kind == "git"
    assert classify("https://h/m.tar.gz", "a" * 64) == MarketSource("archive", "https://h/m.tar.gz", "a" * 64)
    for source, pin, message in [
        ("https://h/m.tar.gz", None, "needs its SHA-256 pin"),
        ("https://h/m.zip", "xyz", "64 hexadecimal digits"),
        ("file:///srv/m.git", "a" * 64, "pins an archive URL"),
        ("./no/such/folder", None, "not a folder, a git URL"),
    ]:
        with pytest.raises(PluginError, match=message):
            classify(source, pin, cwd=tmp_path)


def test_install_from_a_local_marketplace(tmp_path: Path) -> None:
    market = plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "market"))))
    assert (market.name, [p.name for p in market.plugins]) == (MARKET, [PLUGIN])
    plugin = install()
    assert plugin.key == f"{PLUGIN}@{MARKET}" and plugin.version == "1.2.0" and plugin.enabled
    assert (plugins.installed_dir(PLUGIN) / ".claude-plugin" / "plugin.json").is_file()
    assert plugins.installed_dir(PLUGIN) == plugins.plugins_dir() / "installed" / PLUGIN
    assert [m.name for m in plugins.active_plugins(tmp_path)] == [PLUGIN]
    assert staging_is_empty()


def test_install_records_the_trust_of_hooks_and_servers_only_when_asked(tmp_path: Path) -> None:
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "market"))))
    install(trust=False)
    (manifest,) = plugins.active_plugins(tmp_path)
    store = TrustStore()
    assert plugins.mcp_state(manifest) == "untrusted"
    assert store.state(manifest.hooks_file or Path(), "hooks", canonical_hash(manifest.hooks)) == "untrusted"
    plugins.trust_plugin(manifest)
    assert plugins.mcp_state(manifest) == "trusted"
    assert store.state(manifest.hooks_file or Path(), "hooks", canonical_hash(manifest.hooks)) == "trusted"


def test_a_marketplace_from_git_over_file_url_and_git_daemon(tmp_path: Path) -> None:
    source = make_marketplace(tmp_path / "src")
    bare = bare_repository(source, tmp_path / "served" / "market.git")
    plugins.add_marketplace(classify(bare.as_uri()))
    install()
    assert not (plugins.installed_dir(PLUGIN) / ".git").exists()
    plugins.remove_plugin(PLUGIN)
    plugins.remove_marketplace(MARKET)
    with git_daemon(tmp_path / "served") as base:
        market = plugins.add_marketplace(classify(f"{base}/market.git"))
        assert market.name == MARKET
        install()
    assert plugins.load_registry().marketplaces[MARKET].kind == "git"


def test_a_plugin_whose_source_is_a_git_url(tmp_path: Path) -> None:
    bare = bare_repository(make_plugin(tmp_path / "plugin-src"), tmp_path / "plugin.git")
    entry = {"name": PLUGIN, "source": {"source": "url", "url": bare.as_uri()}}
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "m", plugins=[entry]))))
    assert install().version == "1.2.0"


def test_update_fetches_a_git_marketplace_again(tmp_path: Path) -> None:
    source = make_marketplace(tmp_path / "src")
    bare = bare_repository(source, tmp_path / "market.git")
    plugins.add_marketplace(classify(bare.as_uri()))
    install()
    manifest = source / "plugins" / PLUGIN / ".claude-plugin" / "plugin.json"
    manifest.write_text(manifest.read_text().replace('"1.2.0"', '"1.3.0"'))
    commit_all(source, bare, "1.3.0")
    plugins.refresh_marketplace(MARKET)
    plugin = plugins.install_staged(plugins.stage_plugin(PLUGIN, updating=True), trust=True)
    assert plugin.version == "1.3.0"
    assert read_plugin(plugins.installed_dir(PLUGIN)).version == "1.3.0"
    assert staging_is_empty()


def test_an_archive_marketplace_with_the_right_pin(tmp_path: Path) -> None:
    archive = tar_gz(make_marketplace(tmp_path / "src"))
    with serve_files({"market.tar.gz": archive}) as base:
        plugins.add_marketplace(classify(f"{base}/market.tar.gz", sha256(archive)))
    install()
    assert plugins.load_registry().marketplaces[MARKET].sha256 == sha256(archive)


def test_a_wrong_pin_is_refused_and_nothing_is_added(tmp_path: Path) -> None:
    archive = tar_gz(make_marketplace(tmp_path / "src"))
    with serve_files({"market.tar.gz": archive}) as base, pytest.raises(PluginError) as raised:
        plugins.add_marketplace(classify(f"{base}/market.tar.gz", "0" * 64))
    assert f"SHA-256 is {sha256(archive)}, not the pinned {'0' * 64}" in raised.value.message
    assert plugins.load_registry().marketplaces == {}
    assert not plugins.market_dir(MARKET).exists() and staging_is_empty()


def test_an_archive_member_that_leaves_its_folder_is_refused(tmp_path: Path) -> None:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = b"x"
        info = tarfile.TarInfo("../escaped.txt")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    body = buffer.getvalue()
    with serve_files({"evil.tgz": body}) as base, pytest.raises(PluginError, match="is refused"):
        plugins.add_marketplace(classify(f"{base}/evil.tgz", sha256(body)))
    assert not (plugins.plugins_dir() / ".staging" / "escaped.txt").exists() and staging_is_empty()


UNREACHABLE = [
    ("http", "the marketplace does not answer"),
    ("404", "the server answered 404"),
    ("git", "the repository cannot be cloned"),
]


@pytest.mark.parametrize(("kind", "message"), UNREACHABLE)
def test_a_marketplace_that_does_not_answer(tmp_path: Path, kind: str, message: str) -> None:
    from tests.plugin_support import free_port

    if kind == "http":
        source = classify(f"http://127.0.0.1:{free_port()}/m.tar.gz", "a" * 64)
        with pytest.raises(PluginError, match=message):
            plugins.add_marketplace(source)
    elif kind == "404":
        with serve_files({}) as base, pytest.raises(PluginError, match=message):
            plugins.add_marketplace(classify(f"{base}/m.tar.gz", "a" * 64))
    else:
        with pytest.raises(PluginError, match=message):
            plugins.add_marketplace(classify(f"git://127.0.0.1:{free_port()}/m.git"))
    assert plugins.load_registry().marketplaces == {} and staging_is_empty()


def test_a_folder_that_is_not_a_marketplace(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(PluginError, match="it is not a plugin marketplace"):
        plugins.add_marketplace(classify(str(tmp_path / "empty")))


def test_name_clashes_are_refused(tmp_path: Path) -> None:
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "one"))))
    with pytest.raises(PluginError, match="a marketplace named 'team-tools' is already known"):
        plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "copy"))))
    install()
    with pytest.raises(PluginError, match="is already installed; `wyckoff plugin update guard-rails`"):
        plugins.stage_plugin(PLUGIN)
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "other", name="other-tools"))))
    with pytest.raises(PluginError, match="already installed from 'team-tools'"):
        plugins.stage_plugin(f"{PLUGIN}@other-tools")
    plugins.remove_plugin(PLUGIN)
    with pytest.raises(PluginError, match="is in several marketplaces; name one"):
        plugins.stage_plugin(PLUGIN)
    assert staging_is_empty()


def test_a_plugin_whose_name_differs_from_its_entry(tmp_path: Path) -> None:
    make_plugin(tmp_path / "m" / "plugins" / "x", name="something-else")
    entry = {"name": PLUGIN, "source": "./plugins/x"}
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "m", plugins=[entry]))))
    with pytest.raises(PluginError, match="holds a plugin named 'something-else'"):
        plugins.stage_plugin(PLUGIN)
    assert not plugins.installed_dir(PLUGIN).exists() and staging_is_empty()


def test_an_invalid_plugin_installs_nothing(tmp_path: Path) -> None:
    root = make_marketplace(tmp_path / "m")
    (root / "plugins" / PLUGIN / ".claude-plugin" / "plugin.json").write_text("{ broken")
    plugins.add_marketplace(classify(str(root)))
    with pytest.raises(PluginError, match="is not valid JSON"):
        plugins.stage_plugin(PLUGIN)
    assert plugins.load_registry().plugins == {} and not plugins.installed_dir(PLUGIN).exists()
    assert staging_is_empty()


def test_a_source_that_leaves_the_marketplace_is_refused(tmp_path: Path) -> None:
    make_plugin(tmp_path / "outside")
    entry = {"name": PLUGIN, "source": "../outside"}
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "m", plugins=[entry]))))
    with pytest.raises(PluginError, match="leaves the folder"):
        plugins.stage_plugin(PLUGIN)


def test_a_link_out_of_the_plugin_is_refused(tmp_path: Path) -> None:
    root = make_marketplace(tmp_path / "m")
    (tmp_path / "secret").write_text("s")
    (root / "plugins" / PLUGIN / "commands" / "leak.md").symlink_to(tmp_path / "secret")
    plugins.add_marketplace(classify(str(root)))
    with pytest.raises(PluginError, match="a link out of the plugin folder"):
        plugins.stage_plugin(PLUGIN)
    assert staging_is_empty()


@pytest.mark.parametrize("strict", [True, False])
def test_without_plugin_json_the_entry_stands_in(tmp_path: Path, strict: bool) -> None:
    folder = tmp_path / "m" / "plugins" / "bare"  # as anthropics/claude-code's plugin-dev is published
    write(folder / "commands" / "hello.md", "Say hello")
    entry = {
        "name": "bare",
        "source": "./plugins/bare",
        "strict": strict,
        "version": "0.1.0",
        "description": "d",
    }
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "m", plugins=[entry]))))
    assert install("bare").version == "0.1.0"
    assert [m.name for m in plugins.active_plugins(tmp_path)] == ["bare"]


def test_a_folder_with_neither_manifest_nor_parts_is_not_a_plugin(tmp_path: Path) -> None:
    write(tmp_path / "m" / "plugins" / "empty" / "README.md", "nothing here")
    entry = {"name": "empty", "source": "./plugins/empty"}
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "m", plugins=[entry]))))
    with pytest.raises(PluginError) as raised:
        plugins.stage_plugin("empty")
    assert (
        "no plugin manifest (.claude-plugin/plugin.json) and none of commands, agents" in raised.value.message
    )
    assert raised.value.message.endswith("this folder is not a plugin")
    assert staging_is_empty() and plugins.load_registry().plugins == {}


def test_enable_disable_remove(tmp_path: Path) -> None:
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "m"))))
    install()
    plugins.set_enabled(PLUGIN, False)
    assert plugins.active_plugins(tmp_path) == []
    plugins.set_enabled(PLUGIN, True)
    assert len(plugins.active_plugins(tmp_path)) == 1
    with pytest.raises(PluginError, match="plugins installed from 'team-tools' remain"):
        plugins.remove_marketplace(MARKET)
    plugins.remove_plugin(PLUGIN)
    assert not plugins.installed_dir(PLUGIN).exists() and plugins.active_plugins(tmp_path) == []
    assert TrustStore().records() == []  # its trust records went with it
    with pytest.raises(PluginError, match="no installed plugin named 'guard-rails'"):
        plugins.set_enabled(PLUGIN, True)
    plugins.remove_marketplace(MARKET)
    with pytest.raises(PluginError, match="no marketplace named 'team-tools'"):
        plugins.remove_marketplace(MARKET)


def test_enabled_plugins_in_claude_settings(tmp_path: Path, workspace: Path) -> None:
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "m"))))
    install()
    key = f"{PLUGIN}@{MARKET}"
    user_settings = plugins.paths.claude_home() / "settings.json"
    write(user_settings, json.dumps({"enabledPlugins": {key: False}}))
    assert plugins.active_plugins(workspace) == []  # the user's own file: honoured
    plugins.set_enabled(PLUGIN, False)
    user_settings.unlink()
    project = write(workspace / ".claude" / "settings.json", json.dumps({"enabledPlugins": {key: True}}))
    assert plugins.active_plugins(workspace) == []  # a project's `true` waits for trust
    _, notes = plugins.settings_choices(workspace)
    assert notes == [f"{project}: enabledPlugins {key} waits for trust (`wyckoff hooks trust`)"]
    TrustStore().trust(project, plugins.SETTINGS_KIND, canonical_hash({key: True}))
    assert [m.name for m in plugins.active_plugins(workspace)] == [PLUGIN]
    plugins.set_enabled(PLUGIN, True)
    write(workspace / ".claude" / "settings.local.json", json.dumps({"enabledPlugins": {key: False}}))
    assert plugins.active_plugins(workspace) == []  # a project's `false` narrows: always applies


def test_allow_plugins_false_turns_every_plugin_off(tmp_path: Path) -> None:
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "m"))))
    install()
    path = managed.MANAGED_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("allow_plugins = false\n")
    assert plugins.active_plugins(tmp_path) == []
    with pytest.raises(PluginError) as raised:
        plugins.stage_plugin(PLUGIN)
    assert (
        raised.value.message == f"plugins are turned off by the managed policy {path} (allow_plugins = false)"
    )
    path.write_text("allow_plugins = true\n")
    assert len(plugins.active_plugins(tmp_path)) == 1


def test_an_installed_copy_replaced_in_one_rename(tmp_path: Path) -> None:
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "m"))))
    install()
    staged = plugins.stage_plugin(PLUGIN, updating=True)
    shutil.rmtree(staged.stage / PLUGIN)  # the new copy vanished before the swap
    with pytest.raises(OSError):
        plugins.install_staged(staged, trust=True)
    assert read_plugin(plugins.installed_dir(PLUGIN)).version == "1.2.0"  # the old copy is back
    assert staging_is_empty()


def zip_of(folder: Path, top: str = "market-main") -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for item in sorted(folder.rglob("*")):
            if item.is_file():
                archive.write(item, f"{top}/{item.relative_to(folder)}")
    return buffer.getvalue()


def test_a_zip_marketplace_with_its_pin(tmp_path: Path) -> None:
    archive = zip_of(make_marketplace(tmp_path / "src"))
    with serve_files({"market.zip": archive}) as base:
        plugins.add_marketplace(classify(f"{base}/market.zip", sha256(archive)))
    assert install().version == "1.2.0"


@pytest.mark.parametrize("member", ["../escaped.txt", "/tmp/absolute.txt"])
def test_a_zip_member_that_leaves_its_folder_is_refused(tmp_path: Path, member: str) -> None:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(member, "x")
    body = buffer.getvalue()
    with serve_files({"evil.zip": body}) as base, pytest.raises(PluginError, match="leaves its folder"):
        plugins.add_marketplace(classify(f"{base}/evil.zip", sha256(body)))
    assert staging_is_empty() and plugins.load_registry().marketplaces == {}
