"""`/health`: what `engram doctor` and `engram verify` report, each finding with its code, file,
message and fix, and the memories `engram stale` lists.

The same calls the commands make (engram_mcp.hosts.doctor.doctor.doctor, engram_mcp.hosts.doctor.health.findings,
engram_mcp.ops.read_ops.verify, engram_mcp.cli.code_commands.stale_report); doctor reads only.
"""

from __future__ import annotations

import os

from werkzeug.wrappers import Request, Response

from engram_mcp.hosts.doctor import health as store_health
from engram_mcp.hosts.doctor.doctor import doctor
from engram_mcp.hosts.doctor.findings import INFORMATIONAL, Finding
from engram_mcp.ops import read_ops
from engram_mcp.ops.reports import in_workspace, stale_report
from engram_mcp.ui.webapp import Page


def health(page: Page, request: Request) -> Response:
    store = page.store
    here = in_workspace(store)
    linked, findings, steps = doctor(store.workspace, workspace_files=here)
    problems: list[Finding] = list(findings)
    notes: list[Finding] = list(steps)
    for finding in store_health.findings(store.workspace if here else None, os.environ):
        (notes if finding.code in INFORMATIONAL else problems).append(finding)
    verified = read_ops.verify(store)
    return page.render(
        "health.html",
        here=here,
        linked=linked,
        problems=problems,
        notes=notes,
        verify_lines=verified.text.splitlines(),
        verify_ok=verified.data.get("ok") is True,
        stale=stale_report(store) if here else {"stale": [], "review": [], "expired": []},
    )
