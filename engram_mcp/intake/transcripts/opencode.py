"""opencode's sessions of a workspace, from its SQLite store (see claude_codex for the tables),
read as hostile input.

The database is opened read-only by URI (`mode=ro`): nothing is created or changed, a locked
database gives up after a second. Its schema is not trusted either: `session`, `message` and
`part` must be plain tables (a view would run the file's own SQL), `trusted_schema` is off,
every row's JSON is bounded in the query, and a progress handler stops any statement that runs
past a fixed budget of SQLite steps. Any failure (not a database, another schema, a malformed
row) is counted as skipped, never raised.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, Final

import orjson

from engram_mcp.intake.transcripts.bounded import MAX_LINE, Skips, contained
from engram_mcp.intake.transcripts.claude_codex import Context, Session, host_dir, kept

MAX_ROWS: Final = 50_000
"""Messages or parts read from opencode's database for one session."""
STEPS: Final = 50_000_000
"""SQLite virtual-machine steps one connection may run before it is stopped."""
_TABLES: Final = ("message", "part", "session")


def _connect(database: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(database.as_uri() + "?mode=ro", uri=True, timeout=1.0)
    steps = [0]

    def budget() -> int:
        steps[0] += 10_000
        return 1 if steps[0] > STEPS else 0  # non-zero interrupts the statement

    conn.set_progress_handler(budget, 10_000)
    conn.execute("PRAGMA trusted_schema = OFF")
    conn.execute("PRAGMA query_only = ON")
    names = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (?, ?, ?)", _TABLES
        )
    }
    if names != set(_TABLES):
        conn.close()
        raise sqlite3.DatabaseError("not opencode's session tables")
    return conn


def main_sessions(
    database: Path, paths: tuple[str, ...], count: int, skips: Skips
) -> list[tuple[str, float]]:
    """(id, last update in seconds) of the `count` newest top-level sessions run in `paths`."""
    marks = ", ".join("?" for _ in paths)
    try:
        with closing(_connect(database)) as conn:
            rows = conn.execute(
                "SELECT id, time_updated FROM session WHERE directory IN (" + marks + ") "
                "AND parent_id IS NULL AND typeof(id) = 'text' AND length(id) <= 200 "
                "ORDER BY time_updated DESC, id LIMIT ?",
                (*paths, count),
            ).fetchall()
    except (sqlite3.Error, OverflowError, ValueError):
        skips.lines += 1
        return []
    return [(str(ident), _seconds(updated)) for ident, updated in rows]


def _seconds(value: Any) -> float:
    return value / 1000 if isinstance(value, int | float) and 0 <= value < 1e15 else 0.0


def user_parts(database: Path, session: str, limit: int, skips: Skips) -> Iterator[dict[str, Any]]:
    """The parts of the user messages of `session`, in the order they were written."""
    try:
        with closing(_connect(database)) as conn:
            rows = conn.execute(
                "SELECT m.data, p.data FROM message AS m JOIN part AS p ON p.message_id = m.id "
                "WHERE m.session_id = ? AND p.session_id = ? "
                "AND length(m.data) <= ? AND length(p.data) <= ? "
                "ORDER BY m.time_created, m.id, p.id LIMIT ?",
                (session, session, MAX_LINE, MAX_LINE, limit),
            ).fetchall()
    except (sqlite3.Error, OverflowError, ValueError):
        skips.lines += 1
        return
    for message, part in rows:
        try:
            info, data = orjson.loads(message), orjson.loads(part)
        except (orjson.JSONDecodeError, TypeError):
            skips.lines += 1
            continue
        if isinstance(info, dict) and info.get("role") == "user" and isinstance(data, dict):
            yield data


def opencode_database(ctx: Context) -> tuple[Path, Path]:
    """(opencode's data folder, its database file)."""
    data = host_dir(ctx.env, "XDG_DATA_HOME", ctx.home / ".local" / "share") / "opencode"
    name = ctx.env.get("OPENCODE_DB", "")
    database = Path(name) if name and os.path.isabs(name) else data / (name or "opencode.db")
    return (database.parent if os.path.isabs(name) else data), database


def opencode_sessions(ctx: Context, count: int, skips: Skips) -> tuple[list[Session], list[Path]]:
    root, database = opencode_database(ctx)
    real = contained(database, root)
    if real is None or not real.is_file():
        return [], [database]
    rows = main_sessions(real, ctx.paths, count, skips)
    return [Session("opencode", updated, database, real, ident) for ident, updated in rows], [database]


def opencode_said(session: Session, ctx: Context, skips: Skips) -> list[str] | None:
    texts: list[str] = []
    for part in user_parts(session.real, session.key, MAX_ROWS, skips):
        if part.get("type") != "text" or part.get("synthetic") or part.get("ignored"):
            continue  # synthetic: file contents, shell runs, notes opencode adds; ignored: UI only
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
    return kept(texts)
