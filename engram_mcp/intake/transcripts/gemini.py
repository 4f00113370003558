"""Gemini CLI's sessions of a workspace (see claude_codex for where and what): the chat
files replayed as Gemini CLI replays them, and what was typed at its prompt (`logs.json`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from engram_mcp.intake.transcripts.bounded import Skips, contained, json_document, jsonl, listing
from engram_mcp.intake.transcripts.claude_codex import Context, Session, host_dir, kept


def _sha256(path: str) -> str:
    return hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()


def gemini_folders(ctx: Context, skips: Skips) -> tuple[Path, list[Path], list[Path]]:
    """(root, project folders, what was looked at)."""
    root = host_dir(ctx.env, "GEMINI_CLI_HOME", ctx.home) / ".gemini"
    registry = (
        json_document(root / "projects.json", skips, 4 << 20) if (root / "projects.json").exists() else None
    )
    projects = registry.get("projects") if isinstance(registry, dict) else None
    ids = [
        slug
        for path in ctx.paths
        if isinstance(projects, dict)
        and isinstance(slug := projects.get(path), str)
        and re.fullmatch(r"[a-z0-9][a-z0-9-]{0,127}", slug)
    ]
    folders = [root / "tmp" / ident for ident in dict.fromkeys(ids + [_sha256(p) for p in ctx.paths])]
    looked = [root / "projects.json"] if not ids else []
    return root, folders, looked + [folder / "chats" for folder in folders[: len(ids) or 1]]


def gemini_sessions(ctx: Context, skips: Skips) -> tuple[list[Session], list[Path]]:
    root, folders, looked = gemini_folders(ctx, skips)
    found = [
        Session("gemini", mtime, shown, real)
        for folder in folders
        for mtime, shown, real in listing(
            folder / "chats", root, prefix="session-", suffixes=(".jsonl", ".json")
        )
    ]
    return found, looked


def _records(path: Path, skips: Skips) -> Iterable[dict[str, Any]]:
    if path.suffix == ".json":
        document = json_document(path, skips)
        return [document] if isinstance(document, dict) else []
    return jsonl(path, skips)


def _gemini_history(path: Path, skips: Skips) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The header fields and the live messages by id, as Gemini CLI itself replays the file."""
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}

    def take(batch: Any) -> None:
        for message in batch if isinstance(batch, list) else []:
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                messages[message["id"]] = message

    for record in _records(path, skips):
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else 0
            for ident in ids[cut:]:
                del messages[ident]
        elif isinstance(record.get("id"), str):
            messages[record["id"]] = record
        elif isinstance(record.get("$set"), dict):
            if isinstance(record["$set"].get("messages"), list):
                messages.clear()
                take(record["$set"]["messages"])
            meta.update(record["$set"])
        elif isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
            meta.update(record)
            take(record.get("messages"))
    return meta, messages


def _gemini_parts(message: Mapping[str, Any]) -> list[str]:
    display = message.get("displayContent")
    content = display if display else message.get("content")
    parts = content if isinstance(content, list) else [content]
    if any(isinstance(p, dict) and ("functionResponse" in p or "functionCall" in p) for p in parts):
        return []  # a tool's result, recorded as a user turn
    texts = [p for p in parts if isinstance(p, str)] + [
        p["text"]
        for p in parts
        if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    ]
    return ["".join(texts)] if texts else []


def _gemini_typed(text: str) -> bool:
    return not text.lstrip().startswith(("/", "?"))  # slash commands and help, as Gemini CLI skips them


def _gemini_logs(folder: Path, root: Path, skips: Skips) -> dict[str, list[str]]:
    real = contained(folder / "logs.json", root)
    entries = json_document(real, skips) if real is not None else None
    by_session: dict[str, list[str]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("type") != "user":
            continue
        if isinstance(entry.get("message"), str) and isinstance(entry.get("sessionId"), str):
            by_session.setdefault(entry["sessionId"], []).append(entry["message"])
    return by_session


def gemini_said(session: Session, ctx: Context, skips: Skips) -> list[str] | None:
    meta, messages = _gemini_history(session.real, skips)
    if meta.get("projectHash") not in {_sha256(p) for p in ctx.paths} or meta.get("kind") == "subagent":
        return None
    root = host_dir(ctx.env, "GEMINI_CLI_HOME", ctx.home) / ".gemini"
    folder = session.shown.parent.parent
    if folder not in ctx.logs:
        ctx.logs[folder] = _gemini_logs(folder, root, skips)
    logged = ctx.logs[folder].get(str(meta.get("sessionId")))
    if logged:
        return kept(t for t in logged if _gemini_typed(t))
    texts = [t for m in messages.values() if m.get("type") == "user" for t in _gemini_parts(m)]
    return kept(t for t in texts if _gemini_typed(t))
