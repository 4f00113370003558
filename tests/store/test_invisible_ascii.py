"""`first_invisible` answers ASCII text without a loop and looks only at non-ASCII characters:
the answer must be the one the character-by-character scan gives, on every ASCII code point
and on generated text mixing ASCII with invisible characters, joiners and visible letters."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from store.safety import invisible


def _scan(text: str) -> str | None:
    """The definition: the first character that is invisible and not a kept joiner."""
    for i, ch in enumerate(text):
        if invisible.is_invisible(ch) and not invisible._joining(text, i):
            return ch
    return None


def _kept(text: str) -> str:
    return "".join(
        ch for i, ch in enumerate(text) if not invisible.is_invisible(ch) or invisible._joining(text, i)
    )


def test_no_ascii_code_point_is_invisible() -> None:
    every = "".join(map(chr, range(128)))
    assert not any(invisible.is_invisible(ch) for ch in every)
    for ch in every:
        assert invisible.first_invisible(ch) is None
        assert invisible.first_invisible(f"a{ch}b") is None
        assert invisible.without_invisible(f"a{ch}b") == f"a{ch}b"
    assert invisible.first_invisible(every) is None


def test_non_ascii_text_is_still_refused_where_it_hides() -> None:
    assert invisible.first_invisible("plain \u202e text") == "\u202e"
    assert invisible.first_invisible("a\u200db") is None  # a joiner between two letters
    assert invisible.first_invisible("a \u200db") == "\u200d"
    assert invisible.first_invisible("\u200dab") == "\u200d"
    assert invisible.first_invisible("ab\u200c") == "\u200c"
    assert invisible.first_invisible("é\u200b") == "\u200b"
    assert invisible.first_invisible("tag \U000e0041") == "\U000e0041"


ALPHABET = "ab \t\n\x00\x1f\x7f-é文\u200b\u200c\u200d\u202e\u00ad\u3164\u034f\ufeff\U000e0041\U0001f600"


@settings(max_examples=max(300, int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "300"))), deadline=None)
@given(st.text(alphabet=st.sampled_from(ALPHABET), max_size=40) | st.text(max_size=40))
def test_the_answer_is_the_scan_s_answer(text: str) -> None:
    assert invisible.first_invisible(text) == _scan(text)
    assert invisible.without_invisible(text) == _kept(text)
