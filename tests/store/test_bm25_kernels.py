"""Which BM25 kernel answers a query (store.search.bm25._plain): a first query of a
10,000-memory store (about 20,000 postings) is scored in plain Python rather than waiting
50–100 ms for numpy; the scores are numpy's either way (test_bm25 pins them bit for bit)."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, sys
from store.search.bm25 import InvertedIndex, UNLOADED_POSTINGS
index = InvertedIndex()
for n in range(1500):
    index.add(n, ["migration", "retry", f"w{n % 97}"] * (1 + n % 3))
query = ["migration", "retry"] * 5  # 15,000 postings: more than SMALL_POSTINGS, far fewer than UNLOADED
scored = index.scores(query, 10)
print(json.dumps({"numpy": "numpy" in sys.modules, "hits": len(scored), "bound": UNLOADED_POSTINGS}))
"""


def test_a_first_query_of_fifteen_thousand_postings_does_not_import_numpy() -> None:
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["hits"] >= 10
    assert report["numpy"] is False
    assert report["bound"] > 15000
