"""eval/peers.py: the side-by-side eval's MCP client on the real engram-mcp (a 3-memory set), and
the peers' result shapes mapped back to memory ids on payloads recorded from the real servers
(server-memory 2026.8.31, basic-memory 0.24.1). The peers themselves are not started here."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from eval import peers, peers_servers
from eval.dataset import Query
from eval.peers_client import McpClient, PeerError, clean_env, result_text
from eval.run import peer_row

MEMORIES: list[dict[str, Any]] = [
    {
        "id": "orders-api-port",
        "type": "fact",
        "title": "orders-api listens on port 8081",
        "tags": ["orders", "ports"],
        "body": "`orders-api` serves HTTP on port 8081 inside the container.\n\nHealth check: `GET /healthz`.",
    },
    {
        "id": "accessibility-checks",
        "type": "rule",
        "title": "Pages must pass axe checks",
        "tags": ["web", "accessibility"],
        "body": "Each new page gets a Playwright test that runs axe with no violations of level A or AA.",
    },
    {
        "id": "billing-timeout",
        "type": "gotcha",
        "title": "Billing statement timeout is 30 s",
        "tags": ["billing"],
        "body": "The billing database cancels any statement after 30 seconds; batch jobs split their work.",
    },
]
QUERIES = [
    Query("q1", "keyword", "orders-api port 8081", {"orders-api-port": 2}),
    Query("q2", "keyword", "axe Playwright violations", {"accessibility-checks": 2}),
    Query("q3", "paraphrase", "qzxv wibble frobnicate", {"billing-timeout": 2}),
]


def test_engram_over_the_client_finds_ids_and_scores_them(tmp_path: Path) -> None:
    [row] = peers.measure("three", MEMORIES, QUERIES, tmp_path, engram_vectors=("0",), only=("engram",))

    assert row.failed == ""
    assert row.server == "engram (ENGRAM_VECTORS=0)"
    assert row.ranked["q1"][0] == "orders-api-port"
    assert row.ranked["q2"][0] == "accessibility-checks"
    assert row.ranked["q3"] == []
    assert (row.queries, row.zero_hits) == (3, 1)
    assert row.recall5 == pytest.approx(2 / 3)
    assert row.mrr == pytest.approx(2 / 3)
    assert row.kinds == {"keyword": 1.0, "paraphrase": 0.0}
    assert row.note == "backends: bm25"
    assert row.load_seconds > 0


def test_engram_tokens_are_the_result_text_by_the_one_token_rule(tmp_path: Path) -> None:
    [row] = peers.measure("three", MEMORIES, QUERIES, tmp_path / "a", engram_vectors=("0",), only=("engram",))
    opened = peers_servers.open_engram(MEMORIES, tmp_path / "b", "0")
    try:
        texts = [opened.ask(q.text)[1] for q in QUERIES]
    finally:
        opened.client.close()

    assert "orders-api listens on port 8081" in texts[0]
    assert row.tokens == pytest.approx(sum(math.ceil(len(t) / 4) for t in texts) / 3)


def test_engram_is_loaded_from_files_in_a_git_less_workspace(tmp_path: Path) -> None:
    peers_servers.write_engram_files(
        [{**MEMORIES[0], "scope": "user"}, MEMORIES[1]], tmp_path / "ws", tmp_path / "home"
    )

    assert sorted(p.name for p in (tmp_path / "ws" / ".engram" / "memory").iterdir()) == [
        "accessibility-checks.md"
    ]
    assert (
        (tmp_path / "home" / "memory" / "orders-api-port.md")
        .read_text()
        .startswith("---\nid: orders-api-port\n")
    )
    assert not (tmp_path / "ws" / ".git").exists()


def test_a_server_that_cannot_start_gives_a_row_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(peers_servers, "ENGRAM_BIN", peers_servers.ROOT / ".venv" / "bin" / "no-such-engram")

    [row] = peers.measure("three", MEMORIES, QUERIES, tmp_path, engram_vectors=("0",), only=("engram",))

    assert "no-such-engram is missing" in row.failed
    assert "not measured: .venv/bin/no-such-engram is missing" in peers.table([row])


def test_the_client_reports_a_server_that_exits_before_answering(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "import sys; sys.exit(3)"]
    with (
        McpClient(command, clean_env(), tmp_path, tmp_path / "log") as client,
        pytest.raises(PeerError) as err,
    ):
        client.initialize()

    assert "server exited (code 3) before answering initialize" in str(err.value)


def test_the_client_answers_a_server_request_and_skips_notifications(tmp_path: Path) -> None:
    script = (
        "import sys, json\n"
        "req = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'jsonrpc': '2.0', 'method': 'notifications/message', 'params': {}}), flush=True)\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': 'srv-1', 'method': 'ping'}), flush=True)\n"
        "pong = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'result': {'pong': pong}}), flush=True)\n"
    )
    with McpClient([sys.executable, "-c", script], clean_env(), tmp_path, tmp_path / "log") as client:
        result = client.request("tools/list", {})

    assert result == {"pong": {"jsonrpc": "2.0", "id": "srv-1", "result": {}}}


# Recorded from @modelcontextprotocol/server-memory 2026.8.31 (`search_nodes` {"query": "port"}).
SERVER_MEMORY_SEARCH = {
    "content": [
        {
            "type": "text",
            "text": '{\n  "entities": [\n    {\n      "name": "orders-api-port",\n      "entityType": "fact",\n'
            '      "observations": [\n        "Orders API port",\n        "The orders API listens on port 8081.",\n'
            '        "tags: orders, ports"\n      ]\n    }\n  ],\n  "relations": []\n}',
        }
    ],
    "structuredContent": {
        "entities": [
            {
                "name": "orders-api-port",
                "entityType": "fact",
                "observations": [
                    "Orders API port",
                    "The orders API listens on port 8081.",
                    "tags: orders, ports",
                ],
            }
        ],
        "relations": [],
    },
}
# Recorded from basic-memory 0.24.1 (`write_note` twice, then `search_notes` {"query": "API"}).
BASIC_WRITE = {
    "content": [
        {
            "text": "# Created note\nproject: main\nfile_path: gotcha/Billing API timeout.md\n"
            "permalink: main/gotcha/billing-api-timeout\nchecksum: 14bf865b\n\n## Tags\n- billing\n\n"
            "[Project: 'main' (no project was given, so this used the default project; pass project to target another)]",
            "type": "text",
        }
    ]
}
BASIC_SEARCH = {
    "content": [
        {
            "text": "# Search Results: API\n*project: main*\n\n### Billing API timeout\n"
            "- permalink: main/gotcha/billing-api-timeout\n- external_id: d76ecdbc-54d3-4071-9a3a-58cf767b1bfb\n"
            "- score: -0.0000\n\n### orders-api listens on port 8081\n"
            "- permalink: main/fact/orders-api-listens-on-port-8081\n"
            "- external_id: 63511663-33c0-4e1b-9260-d7e5516af248\n- score: -0.0000\n\n---\n"
            "*2 results | page 1, page_size 10*",
            "type": "text",
        }
    ]
}
BASIC_NONE = {
    "content": [
        {
            "text": "No results found for 'no such words here' in project 'main'. Try broader or different "
            'terms, or call recent_activity(project_id="bba6f1a8-8271-4226-95e2-c667dc1abc39") to orient '
            "\u2014 if the project is empty it will guide creating a first note.",
            "type": "text",
        }
    ]
}


def test_server_memory_ids_are_entity_names_in_returned_order() -> None:
    assert peers_servers.server_memory_ids(SERVER_MEMORY_SEARCH) == ["orders-api-port"]
    text_only = {"content": SERVER_MEMORY_SEARCH["content"]}
    assert peers_servers.server_memory_ids(text_only) == ["orders-api-port"]
    empty = {"content": [{"type": "text", "text": '{"entities": [], "relations": []}'}]}
    assert peers_servers.server_memory_ids(empty) == []


def test_server_memory_entity_holds_title_paragraphs_and_tags() -> None:
    assert peers_servers.entity(MEMORIES[0]) == {
        "name": "orders-api-port",
        "entityType": "fact",
        "observations": [
            "orders-api listens on port 8081",
            "`orders-api` serves HTTP on port 8081 inside the container.",
            "Health check: `GET /healthz`.",
            "tags: orders, ports",
        ],
    }


def test_basic_memory_ids_come_back_through_the_written_permalinks() -> None:
    link = peers_servers.basic_memory_permalink(BASIC_WRITE)
    ids = {link: "billing-timeout", "main/fact/orders-api-listens-on-port-8081": "orders-api-port"}

    assert link == "main/gotcha/billing-api-timeout"
    assert peers_servers.basic_memory_ids(BASIC_SEARCH, ids) == ["billing-timeout", "orders-api-port"]
    assert peers_servers.basic_memory_ids(BASIC_SEARCH, {}) == [
        "main/gotcha/billing-api-timeout",
        "main/fact/orders-api-listens-on-port-8081",
    ]
    assert peers_servers.basic_memory_ids(BASIC_NONE, ids) == []
    with pytest.raises(PeerError):
        peers_servers.basic_memory_permalink(BASIC_NONE)


def test_engram_ids_and_backends_from_its_structured_content() -> None:
    result = {
        "content": [{"type": "text", "text": "1 result for 'orders port' (bm25):"}],
        "structuredContent": {
            "contract_version": 1,
            "ok": True,
            "data": {"entries": [{"id": "orders-api-port", "score": 4.1}], "backends_used": ["bm25"]},
            "diagnostics": [],
        },
    }
    assert peers_servers.engram_ids(result) == ["orders-api-port"]
    assert peers_servers.engram_backends(result) == ["bm25"]
    assert result_text(result) == "1 result for 'orders port' (bm25):"


def test_table_has_a_row_per_server_and_set() -> None:
    rows = [
        peers.PeerRow(
            "engram", "own", "0.1.0", 3, 2 / 3, 0.5, 120.0, 1, 1.5, {"keyword": 1.0}, "backends: bm25"
        ),
        peers.PeerRow("server-memory", "own", failed="Node.js (node and npm) is not installed"),
    ]
    lines = peers.table(rows).splitlines()

    assert lines[1].split()[:8] == ["engram", "own", "3", "0.667", "0.500", "120.0", "1", "1.50"]
    assert lines[2].endswith("not measured: Node.js (node and npm) is not installed")
    assert lines[-1] == "- engram: backends: bm25"


def test_own_queries_take_the_split_when_rows_carry_one(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "kind": "keyword", "query": "x", "labels": {"m": 2}, "split": "tune"},
        {"id": "b", "kind": "paraphrase", "query": "y", "labels": {"m": 2}, "split": "test"},
    ]
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    assert [q.id for q in peers.own_queries("test", tmp_path)] == ["b"]
    assert [q.id for q in peers.own_queries(None, tmp_path)] == ["a", "b"]


def test_the_eval_s_results_hold_each_peer_s_figures_or_its_reason() -> None:
    measured = peers.PeerRow(
        "engram (ENGRAM_VECTORS=1)", "own (test)", "0.1.0", 3, 2 / 3, 0.5, 120.04, 1, 1.456, {"keyword": 1.0}
    )
    failed = peers.PeerRow("basic-memory", "own (test)", failed="uv is not installed")
    rows = json.loads(json.dumps([peer_row(measured), peer_row(failed)]))

    assert rows[0] == {
        "server": "engram (ENGRAM_VECTORS=1)",
        "set": "own (test)",
        "n": 3,
        "recall@5": 0.6667,
        "mrr": 0.5,
        "tokens_per_query": 120.0,
        "zero_hits": 1,
        "load_seconds": 1.46,
        "version": "0.1.0",
        "recall@5_by_kind": {"keyword": 1.0},
        "note": "",
    }
    assert rows[1] == {"server": "basic-memory", "set": "own (test)", "reason": "uv is not installed"}
