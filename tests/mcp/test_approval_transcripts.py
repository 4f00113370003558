"""Golden transcripts of the approval flow, in both eras, replayed in-process through the real
stdio layer (tests/support/wire.py: the server's reader thread, worker pool and elicitation
round trips over two OS pipes).

`fixtures/transcripts/approval/*.in.jsonl` is what the client sends, one message a line; each
is sent once the server has answered the one before (or asked its question). A client cannot
know ahead what the server mints, so `$token`, `$state` and `$key` in a line stand for the last
approval token, requestState and inputRequests key the server sent, and `$request` for the id
of its last request. `*.out.jsonl` is every message the server sent, with those values
and the temp paths written as `<token-1>`, `<state-1>`, `<workspace>`…: the rest is exact,
the clock fixed by ENGRAM_NOW. Regenerate after an intended change with `ENGRAM_REGOLD=1` and
review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.support.wire import WireSession

TRANSCRIPTS = FIXTURES / "transcripts" / "approval"
NOW = "2026-11-29T10:00:00Z"


class _Replay:
    """What the server minted so far, to fill the script's `$…` and to name in the golden."""

    def __init__(self, paths: dict[str, Path]) -> None:
        self.last: dict[str, str] = {}
        self.names: dict[str, str] = {str(path): f"<{name}>" for name, path in paths.items()}
        self._counts: dict[str, int] = {}

    def _learn(self, kind: str, value: str) -> None:
        self.last[kind] = value
        if value not in self.names:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            self.names[value] = f"<{kind}-{self._counts[kind]}>"

    def saw(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.last["request"] = json.dumps(message["id"])
        result = message.get("result") or {}
        if isinstance(state := result.get("requestState"), str):
            self._learn("state", state)
        for key in result.get("inputRequests") or {}:
            self.last["key"] = key
        data = (result.get("structuredContent") or {}).get("data") or {}
        if isinstance(token := data.get("approval_token"), str):
            self._learn("token", token)

    def filled(self, line: str) -> str:
        if "request" in self.last:  # an id is a JSON value: the quotes go too
            line = line.replace('"$request"', self.last["request"])
        for kind in ("token", "state", "key"):
            if kind in self.last:
                line = line.replace(f"${kind}", json.dumps(self.last[kind])[1:-1])
        return line

    def named(self, line: str) -> str:
        for value in sorted(self.names, key=len, reverse=True):  # a path before its prefix
            line = line.replace(value, self.names[value])
        return line


def _replay(case: Path, workspace: Path, home: Path) -> list[str]:
    """Every message the server sent while `case` was sent, one JSON line each, named."""
    replay = _Replay({"workspace": workspace, "home": home})
    sent: list[str] = []
    with WireSession(workspace, env={"ENGRAM_NOW": NOW}) as session:
        waiting: Any = None
        for line in case.read_text("utf-8").splitlines():
            message = json.loads(replay.filled(line))
            session.send(message)
            if "method" in message and "id" in message:
                waiting = message["id"]
            elif "method" in message:  # a notification: the server answers nothing
                continue
            while True:  # until the answer to `waiting`, or a question of the server's
                reply = session.recv()
                replay.saw(reply)
                sent.append(json.dumps(reply, sort_keys=True, ensure_ascii=False))
                if "method" not in reply and reply.get("id") == waiting:
                    break
                if "method" in reply and "id" in reply:
                    break
        assert session.quiet()
    return [replay.named(line) for line in sent]


@pytest.mark.parametrize("case", sorted(TRANSCRIPTS.glob("*.in.jsonl")), ids=lambda p: p.name.split(".")[0])
def test_the_approval_flow_replays_to_its_golden_messages(
    case: Path, workspace: Path, engram_home: Path
) -> None:
    """engram's own choice: save → preview → commit (the token flow) and the dialog's accept and
    decline are pinned message for message in both eras, the texts shown included."""
    got = _replay(case, workspace, engram_home)
    golden = case.with_name(case.name.replace(".in.", ".out."))
    if os.environ.get("ENGRAM_REGOLD"):
        golden.write_text("".join(line + "\n" for line in got), "utf-8")
    want = golden.read_text("utf-8").splitlines()
    assert [json.loads(line) for line in got] == [json.loads(line) for line in want]
