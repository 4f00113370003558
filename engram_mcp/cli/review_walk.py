"""`engram pending` at the human's own terminal: every candidate of every waiting proposal shown
in full, then `Save this? [y/N/q]`.

The rest, and why: docs/design.md, `engram_mcp/cli/review_walk.py`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from engram_mcp.ops import agent_shell, previews
from engram_mcp.ops.outcome import Outcome, store_failure
from engram_mcp.ops.shown import Shown, shown
from engram_mcp.ops.wording import cli_wording
from store.errors import InvalidSelection, StoreError, TokenRefused
from store.files.memory import iso
from store.plurals import count
from store.safety import untrusted
from store.store import Store
from store.write import commits, proposals, transaction
from store.write.approvals import Pending
from store.write.commits import CommitReport
from store.write.proposal_entry import ProposalEntry

QUESTION: Final = "Save this? [y/N/q] "
AGAIN: Final = "Answer y (save it), n (decline it) or q (stop here; the rest stays pending)."
HINT: Final = "run `engram pending` in your terminal to review them one by one"
"""What the listing says off a terminal, where nothing is asked (the token went to the agent)."""

Answer = Literal["y", "n", "q"]


def on_terminal() -> bool:
    """A person reads and answers here: stdin and stdout are terminals (off one, `pending` lists)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def refusal(shell: Sequence[str]) -> str:
    """Why the walk refused in an agent's shell (ENGRAM_AGENT_SHELL), and the human's ways."""
    return (
        f"engram pending asks you about each candidate only in your own terminal: this looks like an "
        f"agent's shell ({agent_shell.described(shell)}), and a yes from there would be the agent "
        "approving its own proposal. Nothing was written; every proposal is still pending. Run "
        "`engram pending` yourself in your own terminal, or say yes in your host's own prompt when the "
        "agent asks to commit (`engram pending --json` lists them without asking)."
    )


@dataclass(frozen=True, slots=True)
class Waiting:
    """A proposal still waiting, as `engram pending` numbers it (oldest first)."""

    n: int
    hashed: str
    """Its token's hash: how the pending file knows it (the token itself is never stored)."""
    origin: str
    expires: float
    redactions: int
    entries: tuple[ProposalEntry, ...] | None
    """Its candidates; None when its record cannot be read as candidates."""

    @property
    def ref(self) -> str:
        """What `engram pending` shows and `--cancel` takes (store.write.curate.Proposal.ref)."""
        return self.hashed[:12]


def waiting(store: Store) -> list[Waiting]:
    """Every proposal still waiting, numbered as `engram pending` lists them."""
    found = Pending.read(store.project.pending_path, store.key).open(store.now())
    return [
        Waiting(
            n,
            hashed,
            untrusted.line(record.get("origin") or "a proposal", 40),
            _number(record.get("expires")),
            int(_number(record.get("redactions"))),
            _entries(record),
        )
        for n, (hashed, record) in enumerate(found, 1)
    ]


@dataclass(slots=True)
class Reviewed:
    """What became of one proposal in the walk."""

    proposal: Waiting
    answers: dict[int, Answer] = field(default_factory=dict)
    outcome: str = "pending"
    """committed, declined, pending (left part-answered or unread), gone (closed meanwhile),
    unreadable, or failed."""
    report: CommitReport | None = None
    text: str = ""

    def row(self) -> dict[str, Any]:
        p = self.proposal
        row: dict[str, Any] = {"n": p.n, "ref": p.ref, "outcome": self.outcome}
        row["approved"] = [n for n, a in self.answers.items() if a == "y"]
        row["declined"] = [n for n, a in self.answers.items() if a == "n"]
        if self.report is not None:
            shown = previews.report_outcome(self.report, words=cli_wording).data
            row.update(written=shown["written"], deferred=shown["deferred"], pending=self.report.pending)
        return row


def walk(store: Store) -> Outcome:
    """Ask about every candidate of every waiting proposal; write what the human approves."""
    transaction.check_workspace(store)  # refused before the human is asked anything
    found = waiting(store)
    if not found:
        return Outcome(True, "No proposal is waiting for approval.", {"proposals": []})
    done: list[Reviewed] = []
    failed: StoreError | None = None
    for proposal in found:
        reviewed = Reviewed(proposal)
        done.append(reviewed)
        if proposal.entries is None:
            reviewed.outcome = "unreadable"
            reviewed.text = (
                f"Proposal {proposal.n} ({proposal.ref}) cannot be shown: it holds no candidates this "
                f"engram reads; `engram pending --cancel {proposal.n}` removes it."
            )
            continue
        finished = _ask(store, proposal, len(found), reviewed.answers)
        try:
            _decide(store, reviewed)
        except StoreError as exc:  # the lock was busy, say: this one and the rest stay pending
            reviewed.outcome, failed = "failed", exc
            said = store_failure(exc, writing=True, words=cli_wording).text
            reviewed.text = f"Proposal {proposal.n} ({proposal.ref}): {said}"
            break
        if not finished:
            break  # q or the end of input: what was not answered stays pending
    return _outcome(done, len(found), failed)


def _ask(store: Store, proposal: Waiting, total: int, answers: dict[int, Answer]) -> bool:
    """Show each candidate and ask; False when the human stopped before answering them all."""
    assert proposal.entries is not None
    entries = proposal.entries
    view = shown(entries, proposal.redactions, proposals.targets(store, entries))
    _say(
        f"\nProposal {proposal.n} of {total} ({proposal.ref}, from {proposal.origin}): "
        f"{count(len(entries), 'candidate')}, {count(proposal.redactions, 'redaction')}, "
        f"expires {iso(proposal.expires)}"
    )
    for entry in entries:
        _say("\n" + candidate_text(view, entry))
        answer = _answer()
        if answer == "q":
            return False
        answers[entry.n] = answer
    return True


def candidate_text(view: Shown, entry: ProposalEntry) -> str:
    """One candidate as the preview shows it (its own lines of previews.text), escaped."""
    one = Shown((entry,), view.redactions, view.fields, view.changes)
    lines = previews.text(one).split("\n")[2:]  # the preview's head counts a whole proposal
    return untrusted.block("\n".join(lines).rstrip("\n"))


def _answer() -> Answer:
    """The human's answer from stdin: y, n (Enter too) or q (the end of input too)."""
    while True:
        print(QUESTION, end="", file=sys.stderr, flush=True)
        said = sys.stdin.readline()
        if not said:
            print(file=sys.stderr)
            return "q"
        word = said.strip().lower()
        if word in ("y", "yes"):
            return "y"
        if word in ("", "n", "no"):
            return "n"
        if word in ("q", "quit"):
            return "q"
        _say(AGAIN)


def _decide(store: Store, reviewed: Reviewed) -> None:
    """Decide what the human answered about one proposal: the y's written, the n's declined, the
    rest left pending (store.write.commits.decide, at the terminal: "cli")."""
    proposal = reviewed.proposal
    approved = [n for n, answer in reviewed.answers.items() if answer == "y"]
    declined = [n for n, answer in reviewed.answers.items() if answer == "n"]
    if not approved and not declined:
        return
    head = f"Proposal {proposal.n} ({proposal.ref}): "
    try:
        report = commits.decide(store, proposal.hashed, approve=approved, decline=declined, where="cli")
    except TokenRefused:  # approved, declined, cancelled or expired since it was listed
        reviewed.outcome, reviewed.text = "gone", head + _GONE
        return
    except InvalidSelection:  # some of it was decided elsewhere (engram ui) while it was read
        reviewed.outcome, reviewed.text = "pending", head + _CHANGED
        return
    reviewed.report = report
    said = [] if not (report.written or report.deferred) else [_report_text(report)]
    if report.declined:
        said.append(f"Declined {_numbers(report.declined)}.")
    if report.pending:
        reviewed.outcome = "pending"
        said.append(f"Still waiting: {_numbers(report.pending)}.")
    else:
        reviewed.outcome = "committed" if report.written or report.deferred else "declined"
    if not report.written and not report.deferred:
        said.insert(0, "nothing was saved.")
    reviewed.text = head + "\n".join(said)


def _report_text(report: CommitReport) -> str:
    """What was written and what was not, in the commit's plain words (the lines for declined
    and still pending candidates are the walk's own: the commit's speak of the token)."""
    return previews.report_outcome(replace(report, declined=[], pending=[]), words=cli_wording).text


def _numbers(numbers: Sequence[int]) -> str:
    return f"{'candidate' if len(numbers) == 1 else 'candidates'} {', '.join(map(str, numbers))}"


_GONE: Final = (
    "it is no longer waiting (approved, declined, cancelled or expired while you read it); nothing was "
    "decided here for it."
)
_CHANGED: Final = (
    "some of its candidates were decided elsewhere while you read it (engram ui, say); nothing was "
    "decided here for it: `engram pending` asks about what is left."
)


def _outcome(done: list[Reviewed], total: int, failed: StoreError | None) -> Outcome:
    lines = [r.text for r in done if r.text]
    left = sum(1 for r in done if r.outcome in ("pending", "failed", "unreadable")) + total - len(done)
    if left:
        verb = "is" if left == 1 else "are"
        lines.append(
            f"{count(left, 'proposal')} {verb} still waiting: `engram pending` asks about "
            f"{'it' if left == 1 else 'them'} again."
        )
    elif not lines:
        lines.append("Nothing was saved.")
    data = {"proposals": [r.row() for r in done], "waiting": left}
    if failed is None:
        return Outcome(True, "\n".join(lines), data)
    diagnostics = ((failed.code, failed.text(cli_wording)),)
    return Outcome(False, "\n".join(lines), data, diagnostics)


def _entries(record: dict[str, Any]) -> tuple[ProposalEntry, ...] | None:
    """A record's candidates; None when they do not read (its integrity tag is this user's
    engram's, but maybe of another version)."""
    candidates = record.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        return None
    try:
        return tuple(ProposalEntry.of(c) for c in candidates)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
