"""Instruction-like lines in a working note (SPEC §4.4): found on normalised text.

A note is memory that later sessions read, so a line addressing the agent or overriding its
rules is refused. A plain regex is easy to dodge, so each line is first normalised:

* NFKC (fullwidth and mathematical letters become ASCII, NBSP and other spaces become a space);
* zero-width and other invisible format characters removed (U+200B–U+200F, U+2060–U+2064,
  U+FEFF, soft hyphen, Mongolian vowel separator);
* accents stripped; Cyrillic and Greek letters that look like Latin ones folded to them;
* lower-cased, runs of white space collapsed to one space.

The patterns then refuse overrides ("ignore previous instructions", "forget everything
above"), addressing the agent ("you must …", "system:"), and chat or tool-call markup
(`<|im_start|>`, `<invoke name=…>`, `<function_calls>`, `[INST]`, `<<SYS>>`, JSON tool calls).
Text in other scripts is folded only letter by letter, so it cannot match an English phrase
by accident.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

_INVISIBLE: Final = dict.fromkeys(
    [0x00AD, 0x180E, *range(0x200B, 0x2010), *range(0x2060, 0x2065), 0xFEFF, 0x034F], None
)
_LOOK_ALIKES: Final = str.maketrans(
    # Cyrillic
    "аеорсухіјѕԁԛԝһӏвкмнтАВЕКМНОРСТУХІЈЅ"
    # Greek
    "αβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdqwhlbkmhtABEKMHOPCTYXIJSabeikvoptuxABEZHIKMNOPTYX",
)
_PATTERNS: Final = tuple(
    re.compile(p)
    for p in (
        # overriding what came before
        r"\b(ignore|disregard|forget|override|discard|bypass)\b.{0,40}\b(previous|prior|earlier|above|all|any|your|"
        r"preceding|system)\b.{0,20}\b(instructions?|rules?|prompts?|guidelines|directions|context|messages?)\b",
        r"\b(ignore|disregard|forget|discard)\s+(everything|anything|all|whatever)\s+(that\s+)?"
        r"((was|is|you\s+were)\s+)?(said\s+|written\s+|stated\s+|told\s+)?(above|before|earlier|previously|so far)\b",
        r"\b(ignore|disregard|forget|discard)\s+(all\s+(of\s+)?)?the\s+(above|preceding|foregoing)\b",
        r"\b(new|updated|real|actual) (system )?instructions\b",
        # addressing the agent
        r"\byou (must|shall|have to|are required to|should always|should never|will now|are now (a|an|the))\b",
        r"\bfrom now on,? (you|always|never|ignore|respond|answer)\b",
        r"^\s*(system|assistant|developer)\s*:",
        r"\bact as\b|\bpretend to be\b",
        # chat and tool-call markup
        r"<\|[a-z0-9_ ]{1,40}\|>",
        r"\[/?(inst|sys)\]|<</?sys>>",
        r"</?\s*(antml:)?(system|assistant|developer|tool_calls?|function_calls?|function_results?|tool_use|"
        r"tool_results?|invoke|parameter|instructions?)\b",
        r"\{\s*\"(name|tool|function|tool_name|recipient_name)\"\s*:",
    )
)


def normalise(line: str) -> str:
    """The line as the filter reads it (see the module docstring)."""
    text = unicodedata.normalize("NFKC", line).translate(_INVISIBLE)
    text = "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")
    text = unicodedata.normalize("NFC", text).translate(_LOOK_ALIKES).lower()
    return " ".join(text.split())


def instruction_like(line: str) -> bool:
    folded = normalise(line)
    return any(p.search(folded) for p in _PATTERNS)


def instruction_line(text: str) -> tuple[int, str] | None:
    """The first line that reads like an instruction to the agent, with its 1-based number,
    as it was written (stripped of surrounding white space only)."""
    for number, line in enumerate(text.splitlines(), 1):
        if instruction_like(line):
            return number, line.strip()
    return None
