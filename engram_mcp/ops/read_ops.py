"""The read operations, shared by the MCP tools and the CLI: store calls in, Outcomes out."""

from __future__ import annotations

from typing import Any, Final

from engram_mcp.ops import marks
from engram_mcp.ops.outcome import Outcome
from engram_mcp.ops.wording import tool_wording
from store import status as store_status
from store.code.staleness import key
from store.errors import Next, Words
from store.plurals import count
from store.read import arrivals
from store.store import Store
from store.write import review

MAX_REPORTED_PROBLEMS: Final = 10
WITHOUT_TERMINAL: Final = (
    "without you at a terminal (an agent's shell, a script, or a review page other processes could reach)"
)
"""All engram knows of a write `verify` lists as not the human's; `verify --accept` says the same."""


def store_diagnostics(
    store: Store, problems: Any = None, *, notices: bool = False
) -> tuple[tuple[str, str], ...]:
    """What every read reports besides its answer: no store yet, config errors, unusable files;
    with `notices` (status, verify) also the untrusted state files this process discarded."""
    found: list[tuple[str, str]] = []
    view = store.view(recent_ok=True)  # the call's own read has just looked: no second sweep
    if not store.project.root.is_dir():
        found.append(
            (
                "ENGRAM_EMPTY",
                "no .engram/ folder in this workspace yet: reads see an empty store; run `engram init`",
            )
        )
    elif not view.durable and not view.notes:
        found.append(
            ("ENGRAM_EMPTY", "the store holds no memories yet: reads find nothing until one is saved")
        )
    found.extend(store.config().diagnostics)
    problems = view.problems if problems is None else problems
    for problem in list(problems)[:MAX_REPORTED_PROBLEMS]:
        found.append((problem.code, f"{problem.file}: {problem.message}"))
    if len(problems) > MAX_REPORTED_PROBLEMS:
        found.append(("ENGRAM_CORRUPT", f"{len(problems) - MAX_REPORTED_PROBLEMS} more unusable files"))
    if notices:
        found.extend(n for n in store.notices() if n not in found)
    return tuple(found)


def search(store: Store, args: dict[str, Any], words: Words = tool_wording) -> Outcome:
    """Search's answer; after no match, the next step in the surface's `words`."""
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
    flagged = [marks.annotate(r, m) for r, m in zip(rows, marks.of_entries(store, entries), strict=True)]
    lines = [f"{count(len(rows), 'result')} for {query!r} ({' + '.join(result.backends)}):"]
    for n, e in enumerate(entries, 1):
        lines.append(f"{n}. [{e.type}] {e.title} ({e.id}) score {e.score:g}, {e.scope}{flagged[n - 1]}")
        lines.append(f"   {e.snippet}")
    data: dict[str, Any] = {"entries": rows, "backends_used": list(result.backends)}
    if not rows:  # why nothing answers (store.search.confidence): the agent need not guess
        lines.append(f"No match: {result.no_match}. Try other words, {words(Next('route_task'))}.")
        data["no_match"] = result.no_match
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
    found = store.marks(e.memory for e in plan.entries)  # store.code.staleness
    flagged = [
        marks.annotate(r, found.get(key(e.memory), ())) for r, e in zip(rows, plan.entries, strict=True)
    ]
    lines = [f"Task class: {plan.task_class}. {len(rows)} memories in load order:"]
    lines += [
        f"{n}. {r['id']} [{r['type']}, {r['scope']}] {r['reason']}{flagged[n - 1]}"
        for n, r in enumerate(rows, 1)
    ]
    data = {"task_class": plan.task_class, "entries": rows}
    return Outcome(True, "\n".join(lines), data, store_diagnostics(store))


def load(store: Store, args: dict[str, Any], words: Words = tool_wording) -> Outcome:
    """The tiered load; the next steps it names in the surface's `words`, counted against the
    budget in the tools' (every surface shows the same memories, and the same `tokens`)."""
    result, task_class = store.load(
        args.get("query", ""),
        memory_id=args.get("id"),
        budget=args.get("budget_tokens"),
        disclosure=args.get("disclosure", "tiered"),
        full=args.get("full", False),
        objective=args.get("objective"),
        include_stale=args.get("include_stale", False),
        words=words,
        counted=tool_wording,
    )
    data: dict[str, Any] = {
        "task_class": task_class,
        "selected_keys": result.selected_keys,
        "body_keys": result.body_keys,
        "card_ids": result.card_ids,
        "omitted_ids": result.omitted_ids,
        "tokens": result.tokens,
        "memories": result.memories,
    }
    if result.marks:  # store.code.staleness
        data["marks"] = result.marks
    text = result.text
    if args.get("explain"):
        data["reasons"] = result.reasons
        text += "\nWhy:\n" + "\n".join(f"- {k}: {v}" for k, v in result.reasons.items())
    return Outcome(True, text, data, store_diagnostics(store))


def verify(store: Store) -> Outcome:
    """The review: what changed since engram last recorded each file. A file that is there but
    does not parse says so, with its problem, and is never reported as gone."""
    report = review.verify(store)
    problems = report.pop("problems")
    repaired = report.pop("repaired")
    broken = {b.problem: b for b in store.view(recent_ok=True).broken}
    unusable = f" ({count(len(report['unparsed']), 'more file')} unusable)" if report["unparsed"] else ""
    lines = [
        f"engram verify: {count(report['checked'], 'memory file')} checked{unusable}, "
        f"{count(report['pending'], 'pending proposal')}."
    ]
    pulled = from_git(store, report)  # store.read.arrivals: arrived through a pull, listed once
    if pulled["new"] or pulled["changed"]:
        report["from_git"] = pulled
        lines.append(
            "Arrived through git since the last review: "
            + "; ".join(f"{kind}: {', '.join(ids)}" for kind, ids in pulled.items() if ids)
        )
    mismatched = [i for i in report["mismatched"] if i not in pulled["changed"]]
    unindexed = [i for i in report["unindexed"] if i not in pulled["new"]]
    if mismatched:
        lines.append("Edited outside engram since last recorded: " + ", ".join(mismatched))
    if report["missing"]:
        lines.append("Recorded but the file is gone: " + ", ".join(report["missing"]))
    if unindexed:
        lines.append("Not yet recorded by engram (added by hand): " + ", ".join(unindexed))
    if report.get("agent_shell"):
        lines.append(f"Written {WITHOUT_TERMINAL}: " + ", ".join(report["agent_shell"]))
    for problem in problems:
        found = broken.get(problem)
        verdict = found.verdict.capitalize() if found is not None else "Unusable"
        lines.append(f"{verdict}: {problem.file}: {problem.message}")
    lines += [f"Repaired: {line}" for line in repaired]
    if report["mismatched"] or report["missing"] or report["unindexed"] or report.get("agent_shell"):
        lines.append(
            "Review the changes, then run `engram verify --accept` in your own terminal to record them"
            " as reviewed."
        )
    if report["unparsed"]:
        lines.append(
            "Fix each file that cannot be used by hand: nothing of it is loaded, and its last recorded"
            " version stands (accepting records nothing for it) until it parses again."
        )
    if report["ok"]:
        lines.append("OK: every memory file matches what engram recorded.")
    return Outcome(True, "\n".join(lines), report, store_diagnostics(store, problems, notices=True))


def from_git(store: Store, report: dict[str, Any]) -> dict[str, list[str]]:
    """The project memories verify reports that arrived through git (new, changed)."""
    came = arrivals.arrived(
        store.workspace, store.project.memory_dir, [*report["unindexed"], *report["mismatched"]]
    )
    return {
        "new": [i for i in report["unindexed"] if i in came],
        "changed": [i for i in report["mismatched"] if i in came],
    }


def _vector_line(state: dict[str, Any]) -> str:
    """Status's line on the vector signal: loading, its problem, or its progress."""
    if "model" not in state:
        return f"vectors: {state['state']}" + (f" ({state['problem']})" if "problem" in state else "")
    counts = f"{state['embedded']:,} of {count(state['memories'], 'memory')} embedded"
    if state["state"] == "building":
        return (
            f"vectors: {state['model']}, building: {counts} (search uses BM25 alone until then; "
            "`engram index` builds the rest now)"
        )
    return f"vectors: {state['model']}, ready ({counts})"


def _home_state(data: dict[str, Any]) -> str:
    """After the user scope's path: nothing when it is a folder, why it cannot be used (with the
    fix), or "not created yet" when there is nothing at that path at all."""
    if data["user_scope_problem"] is not None:
        return (
            f" ({data['user_scope_problem']}: user-scope memories, config and the secret cannot be used, "
            "so engram reads this project alone and writes nothing; make it a folder you own, or point "
            "ENGRAM_HOME at one)"
        )
    return "" if data["user_scope_exists"] else " (not created yet)"


STATUS_BROKEN: Final = 10
"""Files that cannot be used status names (the rest are counted; `verify` lists them all)."""


def status(store: Store) -> Outcome:
    """What a person asks first: which workspace (in git or not), the user scope, the counts,
    what cannot be used, pending proposals, the index hash the session hook's proof line names
    (only when there are files: the hash of nothing told a person nothing) and the
    vector signal."""
    data = store_status.report(store)
    counts = data["counts"]
    if not data["initialized"]:
        where = " (no .engram/ yet: run `engram init`)"
    elif data["git"]:
        where = " (a git repository)"
    else:
        where = " (not in a git repository: its memories cannot be shared or reviewed through git)"
    lines = [
        f"workspace: {data['workspace']}{where}",  # escaped by store.status.report
        f"user scope ($ENGRAM_HOME): {data['user_scope']}" + _home_state(data),
        f"memories: {counts['project']} project, {counts['user']} user, {counts['superseded']} superseded, "
        f"{counts['retired']} retired, {count(counts['notes'], 'working note')}",
    ]
    broken = data["broken"]
    if broken:
        named = ", ".join(f"{b['id']} ({b['file']})" for b in broken[:STATUS_BROKEN])
        more = f", and {len(broken) - STATUS_BROKEN} more" if len(broken) > STATUS_BROKEN else ""
        lines.append(f"{count(len(broken), 'file')} cannot be used (fix by hand): {named}{more}")
    elif counts["invalid"]:
        lines.append(f"{count(counts['invalid'], 'file')} under the memory folders cannot be used")
    lines.append(
        f"role: {data['role']}; rule variant: {data['rule_variant']}; "
        f"{count(data['pending_proposals'], 'pending proposal')}"
    )
    if data["read_only"]:
        lines.append("read-only: writes are refused")
    index = data["index"]
    if index["memories"]:  # the hash the session hook's proof line names; of nothing, it says nothing
        lines.append(
            f"index: {index['hash']} (the hook's proof line names the same when it loaded this store)"
        )
    if "vectors" in data:  # the signal is on (status says nothing of it when it is off)
        lines.append(_vector_line(data["vectors"]))
    return Outcome(True, "\n".join(lines), data, store_diagnostics(store, notices=True))
