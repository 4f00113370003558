"""The read operations, shared by the MCP tools and the CLI: store calls in, Outcomes out."""

from __future__ import annotations

from typing import Any, Final

from engram_mcp.outcome import Outcome
from store import review
from store.store import Store

MAX_REPORTED_PROBLEMS: Final = 10


def store_diagnostics(
    store: Store, problems: Any = None, *, notices: bool = False
) -> tuple[tuple[str, str], ...]:
    """What every read reports besides its answer: no store yet, config errors, unusable files;
    with `notices` (status, verify) also the untrusted state files this process discarded."""
    found: list[tuple[str, str]] = []
    if not store.project.root.is_dir():
        found.append(
            (
                "ENGRAM_EMPTY",
                "no .engram/ folder in this workspace yet: reads see an empty store; run `engram init`",
            )
        )
    found.extend(store.config().diagnostics)
    problems = store.view().problems if problems is None else problems
    for problem in list(problems)[:MAX_REPORTED_PROBLEMS]:
        found.append((problem.code, f"{problem.file}: {problem.message}"))
    if len(problems) > MAX_REPORTED_PROBLEMS:
        found.append(("ENGRAM_CORRUPT", f"{len(problems) - MAX_REPORTED_PROBLEMS} more unusable files"))
    if notices:
        found.extend(n for n in store.notices() if n not in found)
    return tuple(found)


def search(store: Store, args: dict[str, Any]) -> Outcome:
    query = args["query"]
    result = store.find(
        query,
        limit=args.get("limit", 10),
        types=tuple(args.get("types", ())),
        scope=args.get("scope"),
        include_notes=args.get("include_notes", True),
        include_superseded=args.get("include_superseded", False),
    )
    entries = result.entries
    rows = [
        {
            "id": e.id,
            "type": e.type,
            "scope": e.scope,
            "score": e.score,
            "title": e.title,
            "snippet": e.snippet,
        }
        for e in entries
    ]
    lines = [f"{len(rows)} result(s) for {query!r} ({' + '.join(result.backends)}):"]
    for n, e in enumerate(entries, 1):
        lines.append(f"{n}. [{e.type}] {e.title} ({e.id}) score {e.score:g}, {e.scope}")
        lines.append(f"   {e.snippet}")
    if not rows:
        lines.append("No match. Try other words, or engram_route for a task description.")
    data = {"entries": rows, "backends_used": list(result.backends)}
    return Outcome(True, "\n".join(lines), data, store_diagnostics(store) + result.diagnostics)


def route(store: Store, args: dict[str, Any]) -> Outcome:
    plan = store.route(args["task"])
    rows = [
        {
            "id": e.memory.id,
            "type": e.memory.type,
            "scope": e.memory.scope,
            "score": e.score,
            "tier": e.tier,
            "reason": e.reason,
        }
        for e in plan.entries
    ]
    lines = [f"Task class: {plan.task_class}. {len(rows)} memories in load order:"]
    lines += [f"{n}. {r['id']} [{r['type']}, {r['scope']}] {r['reason']}" for n, r in enumerate(rows, 1)]
    data = {"task_class": plan.task_class, "entries": rows}
    return Outcome(True, "\n".join(lines), data, store_diagnostics(store))


def load(store: Store, args: dict[str, Any]) -> Outcome:
    result, task_class = store.load(
        args.get("query", ""),
        memory_id=args.get("id"),
        budget=args.get("budget_tokens"),
        disclosure=args.get("disclosure", "tiered"),
        full=args.get("full", False),
        objective=args.get("objective"),
    )
    data: dict[str, Any] = {
        "task_class": task_class,
        "selected_keys": result.selected_keys,
        "body_keys": result.body_keys,
        "card_ids": result.card_ids,
        "omitted_ids": result.omitted_ids,
        "tokens": result.tokens,
    }
    text = result.text
    if args.get("explain"):
        data["reasons"] = result.reasons
        text += "\nWhy:\n" + "\n".join(f"- {k}: {v}" for k, v in result.reasons.items())
    return Outcome(True, text, data, store_diagnostics(store))


def verify(store: Store) -> Outcome:
    report = review.verify(store)
    problems = report.pop("problems")
    repaired = report.pop("repaired")
    lines = [
        f"engram verify: {report['checked']} memory files checked, {report['pending']} pending proposals."
    ]
    if report["mismatched"]:
        lines.append("Edited outside engram since last recorded: " + ", ".join(report["mismatched"]))
    if report["missing"]:
        lines.append("Recorded but the file is gone: " + ", ".join(report["missing"]))
    if report["unindexed"]:
        lines.append(f"Not yet recorded by engram (added by hand): {len(report['unindexed'])}")
    for problem in problems:
        lines.append(f"Unusable: {problem.file}: {problem.message}")
    lines += [f"Repaired: {line}" for line in repaired]
    if report["mismatched"] or report["missing"] or report["unindexed"]:
        lines.append("Review the changes, then run `engram verify --accept` to record them as reviewed.")
    if report["ok"]:
        lines.append("OK: every memory file matches what engram recorded.")
    return Outcome(True, "\n".join(lines), report, store_diagnostics(store, problems, notices=True))


def status(store: Store) -> Outcome:
    data = store.status()
    counts = data["counts"]
    lines = [
        f"workspace: {data['workspace']}"
        + ("" if data["initialized"] else " (no .engram/ yet: run `engram init`)"),
        f"memories: {counts['project']} project, {counts['user']} user, {counts['superseded']} superseded, "
        f"{counts['notes']} working notes, {counts['invalid']} unusable files",
        f"role: {data['role']}; rule variant: {data['rule_variant']}; pending proposals: {data['pending_proposals']}",
        f"index: {data['index']['hash']} ({data['index']['memories']} files)"
        + ("; read-only" if data["read_only"] else ""),
    ]
    return Outcome(True, "\n".join(lines), data, store_diagnostics(store, notices=True))
