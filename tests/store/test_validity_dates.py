"""Valid-time dates are calendar dates (SPEC §2 `valid_until` / `review_after`)."""

from __future__ import annotations

import pytest

from store.code.validity import is_date


@pytest.mark.parametrize("value", ["2026-12-01", "2028-02-29", "2026-12-01T09:00:00Z"])
def test_a_calendar_date_is_a_date(value: str) -> None:
    assert is_date(value)


@pytest.mark.parametrize("value", ["2026-13-01", "2026-02-30", "2027-02-29", "2026-1-1", "soon", ""])
def test_a_date_that_is_not_on_the_calendar_is_refused(value: str) -> None:
    assert not is_date(value)
