"""The proposal fields beyond the seed ones — `refs`, `valid_until`, `review_after` — from input to file.

One place for what a candidate carries beyond the seed fields, so store.propose.candidates and
store.proposals call it in a line each (a pending proposal keeps them as `ProposalEntry` fields,
store.write.proposal_entry):

* `code_fields(n, item)`: validated, redacted values from tool or CLI input (`refs` given,
  even empty, is kept as given; absent, it is extracted at proposal time by `with_refs`);
* `with_refs(workspace, candidates)`: the extracted references (store.code.refs.extract);
* `with_code_meta(meta, candidate)`: into the front matter written (`code_values`: the set
  ones, as the front matter and a pending entry, store.write.proposal_entry, hold them);
* `shown_code_fields(meta)`: into the fields the preview shows and the commit re-checks (only
  the ones present, so a proposal without them looks as it always did).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from store.code.refs import MAX_REFS, extract, invalid_refs, listing
from store.code.validity import is_date
from store.errors import InvalidCandidate
from store.propose.verdicts import Candidate
from store.safety.redact import redact_all


def code_fields(n: int, item: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """(Candidate keyword arguments, redactions) for candidate `n`; InvalidCandidate names
    a bad value."""
    out: dict[str, Any] = {}
    redactions = 0
    if item.get("refs") is not None:
        raw = item["refs"]
        if not isinstance(raw, list | tuple) or not all(isinstance(r, str) for r in raw):
            raise InvalidCandidate(f"candidate {n}: refs must be a list of paths, path#symbol or globs")
        refs, redactions = redact_all([r.strip() for r in raw])
        bad = invalid_refs(refs)
        if bad:
            raise InvalidCandidate(
                f"candidate {n}: ref {bad[0][:80]!r} is not a path inside the workspace (write it relative to "
                "the workspace root, without '..')"
            )
        if len(refs) > MAX_REFS:
            raise InvalidCandidate(f"candidate {n}: at most {MAX_REFS} refs")
        out["refs"] = tuple(dict.fromkeys(refs))
    for name in ("valid_until", "review_after"):
        value = item.get(name)
        if value is None or value == "":
            continue
        if not is_date(value):
            raise InvalidCandidate(
                f"candidate {n}: {name} must be a date written YYYY-MM-DD, not {str(value)[:40]!r}"
            )
        out[name] = str(value)[:10]
    return out, redactions


def with_refs(workspace: Path, candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates whose refs were not given get the ones their title and body name."""
    if all(c.refs is not None for c in candidates):
        return list(candidates)
    files, git = listing(workspace)
    out = []
    for c in candidates:
        if c.refs is None:
            found, _ = redact_all(extract(workspace, c.title, c.body, files, git=git))
            c = replace(c, refs=tuple(found))
        out.append(c)
    return out


def with_code_meta(meta: dict[str, Any], candidate: Candidate) -> dict[str, Any]:
    """The front matter with the candidate's refs and dates (an UPDATE keeps the target's
    when the candidate brings none)."""
    meta.update(code_values(candidate.refs or (), candidate.valid_until, candidate.review_after))
    return meta


def code_values(refs: Sequence[str], valid_until: str, review_after: str) -> dict[str, Any]:
    """The ones that are set, as front matter and a pending proposal's entry hold them."""
    found: dict[str, Any] = {}
    if refs:
        found["refs"] = list(refs)
    if valid_until:
        found["valid_until"] = valid_until
    if review_after:
        found["review_after"] = review_after
    return found


def shown_code_fields(meta: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    refs = meta.get("refs")
    if isinstance(refs, list) and refs:
        found["refs"] = [str(r) for r in refs]
    for name in ("valid_until", "review_after"):
        if isinstance(meta.get(name), str) and meta[name]:
            found[name] = meta[name]
    return found
