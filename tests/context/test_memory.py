"""The memory store: round trip, ranking, scoping, dedup, CJK search, recall."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from wyckoff_cli.context.memory import (
    InvalidMemory,
    MemoryStore,
    format_memories,
    index_text,
    query_terms,
    similarity,
)

DAY = 86_400.0


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> MemoryStore:
    with MemoryStore(tmp_path / "data" / "memory.db", clock=clock) as opened:
        yield opened


PROJECT = Path("/work/project-a")
OTHER = Path("/work/project-b")


def test_nothing_is_created_until_first_use(tmp_path: Path) -> None:
    MemoryStore(tmp_path / "data" / "memory.db")
    assert not (tmp_path / "data").exists()


def test_round_trip_keeps_every_field(store: MemoryStore, clock: Clock) -> None:
    result = store.add(
        "  The integration   tests need Postgres running. ",
        kind="fact",
        scope="project",
        project=PROJECT,
        source_session="s-123",
    )
    assert result.created
    memory = store.get(result.memory.id)
    assert memory is not None
    assert memory.text == "The integration tests need Postgres running."
    assert (memory.kind, memory.scope, memory.project) == ("fact", "project", str(PROJECT.resolve()))
    assert (memory.created_at, memory.used_at, memory.use_count) == (clock.now, None, 0)
    assert memory.source_session == "s-123"


def test_the_database_is_in_wal_mode_and_a_second_connection_sees_writes(
    store: MemoryStore, tmp_path: Path
) -> None:
    store.add("Prefers tabs for indentation", kind="preference", scope="user")
    other = MemoryStore(store.path)
    assert [m.text for m in other.list_memories()] == ["Prefers tabs for indentation"]
    other.add("Deploys need a VPN", scope="user")
    assert len(store.list_memories()) == 2
    other.close()
    mode = sqlite3.connect(store.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_invalid_memories_are_refused(store: MemoryStore) -> None:
    with pytest.raises(InvalidMemory):
        store.add("   ", scope="user")
    with pytest.raises(InvalidMemory):
        store.add("x" * 1001, scope="user")
    with pytest.raises(InvalidMemory):
        store.add("fine", kind="rumour", scope="user")
    with pytest.raises(InvalidMemory):
        store.add("fine", scope="project")  # no project root


def test_scoping_user_memories_everywhere_project_memories_only_there(store: MemoryStore) -> None:
    store.add("Always run the linter before committing", scope="user")
    store.add("This project lints with ruff", scope="project", project=PROJECT)
    store.add("That project lints with flake8", scope="project", project=OTHER)
    here = [m.text for s in store.search("lint linter", project=PROJECT) for m in [s.memory]]
    assert sorted(here) == ["Always run the linter before committing", "This project lints with ruff"]
    there = [s.memory.text for s in store.search("lints", project=OTHER)]
    assert "That project lints with flake8" in there and "This project lints with ruff" not in there
    assert [s.memory.text for s in store.search("lints")] == []  # no project: user memories only
    assert len(store.list_memories(project=PROJECT)) == 2
    assert len(store.list_memories(project=PROJECT, scope="project")) == 1
    assert len(store.list_memories(scope="user")) == 1
    assert len(store.list_memories(scope="everywhere")) == 3


def test_ranking_prefers_relevance_then_recency(store: MemoryStore, clock: Clock) -> None:
    old_exact = store.add("Database migrations run with alembic upgrade head", scope="user").memory
    clock.now += 400 * DAY
    loose = store.add("The staging database is read-only on weekends", scope="user").memory
    unrelated = store.add("Prefers dark terminal themes", scope="user").memory
    ranked = [s.memory.id for s in store.search("how do I run database migrations with alembic?")]
    assert ranked[0] == old_exact.id  # more matching terms beat a year of age
    assert loose.id in ranked and unrelated.id not in ranked

    # two equally relevant memories: the recent one wins
    a = store.add("Use pnpm for the frontend packages", scope="user").memory
    clock.now += 200 * DAY
    b = store.add("Use pnpm workspaces for the frontend", scope="user").memory
    ranked = [s.memory.id for s in store.search("pnpm frontend")]
    assert ranked.index(b.id) < ranked.index(a.id)


def test_chinese_text_is_searchable(store: MemoryStore) -> None:
    zh = store.add("用户希望回答使用简体中文", kind="preference", scope="user").memory
    store.add("测试数据库在每周一早上重置", scope="user")
    assert [s.memory.id for s in store.search("请用简体中文回答")][0] == zh.id
    assert index_text("上下文") == "上下 下文"
    assert query_terms("the 上下文 window") == ["上下", "下文", "window"]


def test_near_duplicates_are_not_added_again(store: MemoryStore) -> None:
    first = store.add("The user prefers pytest over unittest.", kind="preference", scope="user")
    again = store.add("the user prefers pytest over unittest", kind="preference", scope="user")
    reworded = store.add("User prefers pytest rather than unittest", kind="preference", scope="user")
    assert first.created and not again.created and not reworded.created
    assert again.memory.id == first.memory.id == reworded.memory.id
    # different content, or a different scope, is a new memory
    assert store.add("Use tabs for indentation", scope="user").created
    assert store.add("Use spaces for indentation", scope="user").created
    assert store.add("Do not use mocks in tests", scope="user").created
    assert store.add("Use mocks in tests", scope="user").created
    assert store.add("The user prefers pytest over unittest", scope="project", project=PROJECT).created
    assert len(store.list_memories(project=PROJECT)) == 6


def test_similarity_measure() -> None:
    assert similarity("Use tabs", "Use tabs.") == 1.0
    assert similarity("Use tabs for indentation", "Use spaces for indentation") < 0.8
    assert similarity("项目使用 uv 管理依赖", "项目使用 poetry 管理依赖") < 0.8


def test_recall_caps_count_and_characters_skips_shown_and_marks_used(
    store: MemoryStore, clock: Clock
) -> None:
    ids = [
        store.add(f"Service {name} logs to the central logging cluster {detail}", scope="user").memory.id
        for name, detail in [("alpha", "a" * 10), ("beta", "b" * 600), ("gamma", "c"), ("delta", "d")]
    ]
    clock.now += 10
    recalled = store.recall("where do service logs go", limit=2, max_chars=300)
    assert len(recalled) == 2
    assert ids[1] not in [m.id for m in recalled]  # too long for the character cap
    assert sum(len(m.text) for m in recalled) <= 300
    for memory in recalled:
        refreshed = store.get(memory.id)
        assert refreshed is not None and refreshed.used_at == clock.now and refreshed.use_count == 1
    again = store.recall("where do service logs go", limit=2, max_chars=300, exclude=[m.id for m in recalled])
    assert not {m.id for m in again} & {m.id for m in recalled}


def test_recall_leaves_out_weak_matches(store: MemoryStore) -> None:
    strong = store.add("Run the integration tests with make itest after docker compose up", scope="user")
    store.add("Unit tests are fast", scope="user")
    for i in range(6):
        store.add(f"Unrelated note number {i} about coffee", scope="user")
    recalled = store.recall("how to run the integration tests with docker compose")
    assert recalled[0].id == strong.memory.id
    assert all("coffee" not in m.text for m in recalled)


def test_delete_and_clear(store: MemoryStore) -> None:
    a = store.add("one fact here", scope="user").memory
    store.add("project fact here", scope="project", project=PROJECT)
    store.add("other project fact", scope="project", project=OTHER)
    assert store.delete([a.id, 999]) == 1
    assert store.search("one fact") == []  # gone from the index too
    assert store.clear(scope="project", project=PROJECT) == 1
    assert [m.project for m in store.list_memories(scope="everywhere")] == [str(OTHER.resolve())]


def test_format_memories_block(store: MemoryStore) -> None:
    memory = store.add("Prefers short answers", kind="preference", scope="user").memory
    block = format_memories([memory])
    assert block.startswith("<relevant-memories>\n") and block.endswith("\n</relevant-memories>")
    assert "- [preference, user] Prefers short answers" in block
