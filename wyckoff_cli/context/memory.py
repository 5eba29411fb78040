"""Durable memories: SQLite with an FTS5 index, scoped to the user or a project.

One database file (in the data dir; the path is passed in) in WAL mode, so the app,
`wyckoff memory` and a second session can use it at once. A memory has `text`,
`kind` (preference, fact, decision, other), `scope` (`user`: true everywhere;
`project`: true of one project root, stored in `project`), created and last-used
times, a use count and the session that saved it.

Search is FTS5 with BM25 relevance times a recency factor (a memory created or used
recently ranks higher; the factor halves towards 0.5 every `RECENCY_HALF_LIFE_DAYS`).
FTS5's default tokenizer would treat a run of Chinese as one word, so the index and
the queries spell CJK text as overlapping character pairs ("上下文" → "上下 下文");
Latin words go through the Porter stemmer. Adding a memory that is a near-duplicate
of one in the same scope (≥ 80% the same content words, or text ≥ 95% alike)
returns the existing one.

Nothing is opened at import; the connection opens on first use.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Literal

from wyckoff_cli.core.errors import WyckoffError
from wyckoff_cli.storage.paths import create_private_file, ensure_private_dir, make_private

KINDS = ("preference", "fact", "decision", "other")
SCOPES = ("user", "project")
Scope = Literal["user", "project"]
MAX_MEMORY_CHARS = 1_000
RECENCY_HALF_LIFE_DAYS = 30.0
SCHEMA_VERSION = 1

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TERMS = re.compile(rf"[{_CJK}]+|[^\W_]+", re.UNICODE)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_STOPWORD_TEXT = (
    "a an and are as at be but by can do does for from has have how i if in into is it its me my "
    "of on or our so than that the their them then there these they this to us was we were what "
    "when where which who why will with you your please over rather instead should also just "
    "very always user users"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('user', 'project')),
    project TEXT,
    created_at REAL NOT NULL,
    used_at REAL,
    use_count INTEGER NOT NULL DEFAULT 0,
    source_session TEXT
);
CREATE INDEX IF NOT EXISTS memories_scope ON memories (scope, project);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    body, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


class InvalidMemory(WyckoffError):
    """Invalid memory input (empty, too long, unknown kind or scope)."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class Memory:
    id: int
    text: str
    kind: str
    scope: str
    project: str | None
    created_at: float
    used_at: float | None
    use_count: int
    source_session: str | None

    @property
    def last_active(self) -> float:
        return max(self.created_at, self.used_at or 0.0)


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    memory: Memory
    relevance: float  # BM25, higher is better
    score: float  # relevance × recency


@dataclass(frozen=True, slots=True)
class AddResult:
    memory: Memory
    created: bool  # False when a near-duplicate already existed (it is returned)


def index_text(text: str) -> str:
    """What goes into the FTS index for `text`: words as they are, CJK runs as
    overlapping character pairs (a lone CJK character stays as it is)."""
    out: list[str] = []
    for term in _TERMS.findall(text):
        if _CJK_RUN.fullmatch(term):
            out.extend(_bigrams(term))
        else:
            out.append(term)
    return " ".join(out)


def query_terms(text: str, limit: int = 32) -> list[str]:
    """Search terms of a query: lower-cased words without stop words, CJK pairs."""
    terms: list[str] = []
    for term in _TERMS.findall(text):
        if _CJK_RUN.fullmatch(term):
            terms.extend(_bigrams(term))
            continue
        word = term.lower()
        if len(word) > 1 and word not in _STOPWORDS:
            terms.append(word)
    return list(dict.fromkeys(terms))[:limit]


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _normalise(text: str) -> str:
    return " ".join(term.lower() for term in _TERMS.findall(text))


def similarity(a: str, b: str) -> float:
    """How alike two memories are, 0..1: the overlap of their content words (Jaccard;
    stop words left out, plural "s" stripped, CJK as character pairs), or their
    character similarity when that is at least 0.95 (typos, punctuation). Character
    similarity alone would call "use tabs" and "use spaces" alike."""
    terms_a, terms_b = _content_terms(a), _content_terms(b)
    union = terms_a | terms_b
    jaccard = len(terms_a & terms_b) / len(union) if union else 1.0
    if jaccard >= 0.95:
        return jaccard
    ratio = SequenceMatcher(None, _normalise(a), _normalise(b), autojunk=False).ratio()
    return max(jaccard, ratio if ratio >= 0.95 else 0.0)


def _content_terms(text: str) -> set[str]:
    return {
        t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t
        for t in query_terms(text, 200)
    }


class MemoryStore:
    """The memory database. Thread-safe; every method is short and synchronous."""

    DUPLICATE_SIMILARITY = 0.8

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    # ----------------------------------------------------------------- plumbing

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            ensure_private_dir(self.path.parent)
            create_private_file(self.path)  # SQLite gives -wal and -shm the database's mode
            conn = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=5000")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            for suffix in ("-wal", "-shm"):  # files left by an older version may be wider
                make_private(self.path.with_name(self.path.name + suffix))
            self._conn = conn
        return self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (taken at once, so concurrent writers queue)."""
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing

    def add(
        self,
        text: str,
        *,
        kind: str = "fact",
        scope: Scope = "project",
        project: Path | str | None = None,
        source_session: str | None = None,
    ) -> AddResult:
        """Save a memory, or return the near-duplicate already saved in that scope."""
        text = " ".join(text.split())
        if not text:
            raise InvalidMemory("a memory needs some text")
        if len(text) > MAX_MEMORY_CHARS:
            raise InvalidMemory(f"a memory is at most {MAX_MEMORY_CHARS} characters (got {len(text)})")
        if kind not in KINDS:
            raise InvalidMemory(f"kind must be one of {', '.join(KINDS)} (got {kind!r})")
        if scope not in SCOPES:
            raise InvalidMemory(f"scope must be user or project (got {scope!r})")
        project_key = _project_key(project) if scope == "project" else None
        if scope == "project" and project_key is None:
            raise InvalidMemory("a project memory needs a project root")
        with self._lock:
            existing = self.find_duplicate(text, scope=scope, project=project_key)
            if existing is not None:
                return AddResult(existing, created=False)
            with self._write() as db:
                cursor = db.execute(
                    "INSERT INTO memories (text, kind, scope, project, created_at, source_session)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (text, kind, scope, project_key, self._clock(), source_session),
                )
                memory_id = int(cursor.lastrowid or 0)
                db.execute(
                    "INSERT INTO memories_fts (rowid, body) VALUES (?, ?)", (memory_id, index_text(text))
                )
            memory = self.get(memory_id)
            assert memory is not None
            return AddResult(memory, created=True)

    def find_duplicate(self, text: str, *, scope: Scope, project: str | None) -> Memory | None:
        """A memory in exactly this scope (and project) that says nearly the same."""
        normalised = _normalise(text)
        where, params = _scope_filter(scope, project)
        with self._lock:
            row = (
                self._db()
                .execute(f"SELECT * FROM memories WHERE {where} AND text = ? LIMIT 1", [*params, text])
                .fetchone()
            )
        if row is not None:
            return _row_to_memory(row)
        candidates = [
            s.memory
            for s in self._search(text, project=project, limit=10, scopes=(scope,))
            if s.memory.scope == scope
        ]
        for memory in candidates:
            if (
                _normalise(memory.text) == normalised
                or similarity(memory.text, text) >= self.DUPLICATE_SIMILARITY
            ):
                return memory
        return None

    def delete(self, ids: Iterable[int]) -> int:
        wanted = [int(i) for i in ids]
        if not wanted:
            return 0
        marks = ",".join("?" * len(wanted))
        with self._write() as db:
            cursor = db.execute(f"DELETE FROM memories WHERE id IN ({marks})", wanted)
            db.execute(f"DELETE FROM memories_fts WHERE rowid IN ({marks})", wanted)
        return cursor.rowcount

    def clear(self, *, scope: Literal["user", "project", "all"], project: Path | str | None = None) -> int:
        """Delete every memory of a scope: `user`, `project` (of `project`), or `all`
        (the user's and this project's)."""
        ids = [m.id for m in self.list_memories(project=project, scope=scope)]
        return self.delete(ids)

    def mark_used(self, ids: Sequence[int]) -> None:
        if not ids:
            return
        marks = ",".join("?" * len(ids))
        with self._write() as db:
            db.execute(
                f"UPDATE memories SET used_at = ?, use_count = use_count + 1 WHERE id IN ({marks})",
                (self._clock(), *ids),
            )

    # ------------------------------------------------------------------ reading

    def get(self, memory_id: int) -> Memory | None:
        with self._lock:
            row = self._db().execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return None if row is None else _row_to_memory(row)

    def list_memories(
        self,
        *,
        project: Path | str | None = None,
        scope: Literal["user", "project", "all", "everywhere"] = "all",
    ) -> list[Memory]:
        """Memories, newest first. `all`: the user's and those of `project`;
        `everywhere`: every memory of every project."""
        where, params = _scope_filter(scope, _project_key(project))
        with self._lock:
            rows = (
                self._db()
                .execute(f"SELECT * FROM memories WHERE {where} ORDER BY created_at DESC, id DESC", params)
                .fetchall()
            )
        return [_row_to_memory(r) for r in rows]

    def search(self, query: str, *, project: Path | str | None = None, limit: int = 10) -> list[ScoredMemory]:
        """The user's and `project`'s memories matching `query`, best first."""
        return self._search(query, project=_project_key(project), limit=limit, scopes=SCOPES)

    def recall(
        self,
        query: str,
        *,
        project: Path | str | None = None,
        limit: int = 5,
        max_chars: int = 2_000,
        exclude: Iterable[int] = (),
        min_relative_score: float = 0.25,
    ) -> list[Memory]:
        """The memories to show with a request: the best matches not in `exclude`, at
        most `limit` of them and `max_chars` of text in total, leaving out weak matches
        (scoring under `min_relative_score` × the best one). Marks them used."""
        excluded = set(exclude)
        chosen: list[Memory] = []
        used = 0
        found = self.search(query, project=project, limit=limit * 3 + len(excluded))
        best = found[0].score if found else 0.0
        for scored in found:
            memory = scored.memory
            if memory.id in excluded or scored.score < best * min_relative_score:
                continue
            if used + len(memory.text) > max_chars:
                continue
            chosen.append(memory)
            used += len(memory.text)
            if len(chosen) >= limit:
                break
        self.mark_used([m.id for m in chosen])
        return chosen

    def _search(
        self, query: str, *, project: str | None, limit: int, scopes: Sequence[str]
    ) -> list[ScoredMemory]:
        terms = query_terms(query)
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        visible: list[str] = []
        params: list[object] = [match]
        if "user" in scopes:
            visible.append("m.scope = 'user'")
        if "project" in scopes and project is not None:
            visible.append("(m.scope = 'project' AND m.project = ?)")
            params.append(project)
        if not visible:
            return []
        sql = (
            "SELECT m.*, bm25(memories_fts) AS rank FROM memories_fts"
            " JOIN memories m ON m.id = memories_fts.rowid"
            f" WHERE memories_fts MATCH ? AND ({' OR '.join(visible)})"
            " ORDER BY rank LIMIT ?"
        )
        params.append(max(limit * 5, 50))
        with self._lock:
            rows = self._db().execute(sql, params).fetchall()
        now = self._clock()
        scored = []
        for row in rows:
            memory = _row_to_memory(row)
            relevance = -float(row["rank"])
            scored.append(ScoredMemory(memory, relevance, relevance * recency_factor(memory, now)))
        scored.sort(key=lambda s: (-s.score, -s.memory.last_active, -s.memory.id))
        return scored[:limit]


def recency_factor(memory: Memory, now: float) -> float:
    """1.0 for a memory created or used just now, falling towards 0.5."""
    age_days = max(0.0, now - memory.last_active) / 86_400
    return 0.5 + 0.5 * math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def format_memories(memories: Sequence[Memory]) -> str:
    """The `<relevant-memories>` block put in front of a user message."""
    lines = [
        "<relevant-memories>",
        "Notes saved in earlier sessions that may bear on this request (they can be out of date;"
        " the request and the files take precedence):",
    ]
    for memory in memories:
        lines.append(f"- [{memory.kind}, {memory.scope}] {memory.text}")
    lines.append("</relevant-memories>")
    return "\n".join(lines)


def _project_key(project: Path | str | None) -> str | None:
    if project is None:
        return None
    return str(Path(project).expanduser().resolve()) if isinstance(project, Path) else project


def _scope_filter(scope: str, project: str | None) -> tuple[str, list[object]]:
    if scope == "everywhere":
        return "1", []
    if scope == "user":
        return "scope = 'user'", []
    if scope == "project":
        return "scope = 'project' AND project = ?", [project]
    if scope == "all":
        if project is None:
            return "scope = 'user'", []
        return "(scope = 'user' OR (scope = 'project' AND project = ?))", [project]
    raise InvalidMemory(f"unknown scope {scope!r}")


def _row_to_memory(row: sqlite3.Row) -> Memory:
    return Memory(
        id=int(row["id"]),
        text=row["text"],
        kind=row["kind"],
        scope=row["scope"],
        project=row["project"],
        created_at=float(row["created_at"]),
        used_at=None if row["used_at"] is None else float(row["used_at"]),
        use_count=int(row["use_count"]),
        source_session=row["source_session"],
    )
