"""Which BM25 kernel answers a query (store.search.bm25._plain): a first query of a
10,000-memory store (about 20,000 postings) is scored in plain Python rather than waiting
50–100 ms for numpy; the scores are numpy's either way (test_bm25 pins them bit for bit)."""

from __future__ import annotations

import json
import subprocess
import sys

from store.search.bm25 import PLAIN_FIRST

SCRIPT = """
import json, sys
from store.search.bm25 import InvertedIndex, UNLOADED_POSTINGS
index = InvertedIndex()
for n in range(1500):
    index.add(n, ["migration", "retry", f"w{n % 97}"] * (1 + n % 3))
query = ["migration", "retry"] * 5  # 15,000 postings: more than SMALL_POSTINGS, far fewer than UNLOADED
scored = index.scores(query, 10)
first = "numpy" in sys.modules
for _ in range(int(sys.argv[1])):
    index.scores(query, 10)
print(json.dumps({"numpy": first, "later": "numpy" in sys.modules, "hits": len(scored), "bound": UNLOADED_POSTINGS}))
"""


def test_a_first_query_of_fifteen_thousand_postings_does_not_import_numpy() -> None:
    report = _run(0)
    assert report["hits"] >= 10
    assert report["numpy"] is False
    assert report["bound"] > 15000


def test_a_process_that_goes_on_asking_loads_the_kernels_once() -> None:
    """A run of proposals (each verdict searches for similar memories) or a server's later
    searches stop paying ~5 ms a query in plain Python once PLAIN_FIRST have been answered."""
    assert _run(PLAIN_FIRST - 1)["later"] is False
    assert _run(PLAIN_FIRST)["later"] is True


def _run(more: int) -> dict[str, object]:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(more)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    report: dict[str, object] = json.loads(run.stdout)
    return report
