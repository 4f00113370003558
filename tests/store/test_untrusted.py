"""The one escaping path (store.safety.untrusted): what it escapes, and that it cannot drift from
Unicode's own list of invisible characters."""

from __future__ import annotations

import sys
import unicodedata

from store.safety import untrusted
from store.safety.invisible import IGNORABLE_MARKS

JOINERS = "\u200c\u200d"


def test_every_format_character_and_control_is_escaped_in_a_line() -> None:
    """Every Unicode format character (tag characters, bidi controls, zero-width…), every
    control and line separator, and the Hangul fillers come out as escapes."""
    unsafe = [
        chr(cp)
        for cp in range(sys.maxunicode + 1)
        if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Zl", "Zp") and chr(cp) not in JOINERS
    ]
    unsafe += list("\u115f\u1160\u3164\uffa0") + sorted(IGNORABLE_MARKS)
    for ch in unsafe:
        shown = untrusted.line(f"a{ch}b")
        assert ch not in shown and shown.startswith("a\\") and shown.endswith("b"), hex(ord(ch))


def test_a_joiner_is_kept_only_between_two_visible_characters() -> None:
    family = "\U0001f468\u200d\U0001f4bb"
    assert untrusted.line(family) == family
    assert untrusted.line("a \u200db") == "a \\u200db"
    assert untrusted.line("\u200cedge") == "\\u200cedge"


def test_a_block_keeps_lines_and_tabs_and_escapes_the_rest() -> None:
    body = "one\n\ttwo\x1b]52;c;ZXZpbA==\x07\r\nthree\u2028four\u202eevil\U000e0041"
    shown = untrusted.block(body)
    assert shown.splitlines() == [
        "one",
        "\ttwo\\x1b]52;c;ZXZpbA==\\x07\\r",
        "three\\u2028four\\u202eevil\\U000e0041",
    ]


def test_escaping_twice_changes_nothing() -> None:
    text = "a\nb\u2028c\x1b\u202e\U000e0041 \u200dd"
    once = untrusted.line(text, 1000)
    assert untrusted.line(once, 1000) == once
    assert untrusted.block(untrusted.block(text)) == untrusted.block(text)


def test_json_text_escapes_what_json_leaves_raw() -> None:
    raw = '{"a": "x\u2028y\u0085z\u2029"}'.encode()
    assert untrusted.json_text(raw) == b'{"a": "x\\u2028y\\u0085z\\u2029"}'


def test_a_token_split_by_a_khmer_inherent_vowel_is_redacted_and_refused() -> None:
    """U+17B4 and U+17B5 render as nothing and are not format characters: a token split by one
    passed both the invisible-character check and redaction (a review finding)."""
    from store.safety.invisible import first_invisible
    from store.safety.redact import redact

    for mark in sorted(IGNORABLE_MARKS):
        token = "ghp_a1B2c3D4e5F6g7H8i9" + mark + "J0k1L2m3N4o5P6q7R8"
        assert redact(f"The CI token is {token} for the bot")[0] == "The CI token is [REDACTED] for the bot"
        assert first_invisible(f"a{mark}b") == mark
