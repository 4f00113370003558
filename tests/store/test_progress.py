"""Index builds over a second say how far they are (issue 11); shorter ones say nothing."""

from __future__ import annotations

import logging

import pytest

from store.progress import Progress, one_build


def _run(total: int, seconds_per_step: float, caplog: pytest.LogCaptureFixture) -> list[str]:
    now = [0.0]

    def clock() -> float:
        return now[0]

    caplog.set_level(logging.INFO, logger="engram.progress")
    progress = Progress("indexing", total, clock=clock)
    for done in range(1, total + 1):
        now[0] += seconds_per_step
        progress.step(done)
    progress.finish()
    return [r.getMessage() for r in caplog.records if r.name == "engram.progress"]


def test_a_build_within_a_second_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    assert _run(10_000, 0.00005, caplog) == []


def test_a_longer_build_says_how_far_it_is_about_once_a_second(caplog: pytest.LogCaptureFixture) -> None:
    said = _run(10_000, 0.0003, caplog)  # 3 s in all
    assert said[-1] == "indexing: 10,000 done in 3.0 s"
    assert 2 <= len(said) - 1 <= 3 and all(
        line.startswith("indexing: ") and " of 10,000" in line for line in said[:-1]
    )


def test_phases_of_one_build_count_together(caplog: pytest.LogCaptureFixture) -> None:
    """A listing of 0.6 s then a search index of 0.6 s: each under a second, 1.2 s together,
    so the second phase says how far it is (a fresh store's first search)."""
    now = [0.0]

    def clock() -> float:
        return now[0]

    caplog.set_level(logging.INFO, logger="engram.progress")
    with one_build(clock):
        for what in ("reading .engram/memory", "indexing memories for search"):
            progress = Progress(what, 2048, clock=clock)
            for done in range(1, 2049):
                now[0] += 0.6 / 2048
                progress.step(done)
            progress.finish()
    said = [r.getMessage() for r in caplog.records if r.name == "engram.progress"]
    assert said and all(line.startswith("indexing memories for search: ") for line in said)
