"""Instruction-like lines in a working note (SPEC §4.4): found on normalised text.

A note is memory that later sessions read, so a line addressing the agent or overriding its
rules is refused. A plain regex is easy to dodge, so each line is first normalised:

* NFKC (fullwidth and mathematical letters become ASCII, NBSP and other spaces become a space);
* every format character removed (Unicode category Cf: zero-width space and joiners, bidi
  marks, embeddings, overrides and isolates, word joiner, BOM, soft hyphen, tag characters
  U+E0000–U+E007F, …), and the combining grapheme joiner;
* Hangul fillers (U+3164, U+115F, U+1160, U+FFA0), which render as blank, read both ways:
  as a space (`ignore⁠ㅤprevious`) and as nothing (`igㅤnore`); a line is refused if either
  reading matches;
* accents stripped; letters that look like Latin ones folded to them: Cyrillic, Greek,
  Armenian (`օ`, `ս`, `ո`, `հ`), dotless `ı`, and the small capitals (`ɪ`, `ᴀ`, `ʀ`, …);
* lower-cased, runs of white space collapsed to one space.

The patterns then refuse overrides ("ignore previous instructions", "forget everything
above", "pay no attention to the earlier guidance"), addressing the agent ("you must …"),
turn markers at the start of a line (`System:`, `Assistant:`, `Developer:`, `Human:`, `AI:`,
also inside markdown emphasis, headings or quotes: `**System**:`, `__system__:`, `# system:`,
`> **Assistant:**`), prompt-template headings (`### Instruction:`, `### Response:`), and chat
or tool-call markup (`<|im_start|>`, `<|start_header_id|>`, `<|eot_id|>`, `<start_of_turn>`,
`<｜begin▁of▁sentence｜>`, `<invoke name=…>`, `<function_calls>`, `[INST]`, `<<SYS>>`, JSON
tool calls).

`User:` at the start of a line is deliberately *not* a turn marker here: a note quoting a
user ("User: Alice reported the bug") is ordinary, and a `User:` turn addresses nobody but the
agent's own side of the conversation. Only the markers that speak *as* the system, the agent
or the human driving it are refused.

Each line is checked alone and joined with the next one, so a phrase split across two lines
("Ignore all previous" / "instructions") is caught; the refusal names the first of the two.
Text in other scripts is folded only letter by letter, so it cannot match an English phrase
by accident.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

_FILLERS: Final = "\u3164\u115f\u1160\uffa0"
_FILLER_AS_SPACE: Final = str.maketrans(dict.fromkeys(_FILLERS, " "))
_FILLER_AS_NOTHING: Final = str.maketrans(dict.fromkeys(_FILLERS, None))
_LOOK_ALIKES: Final = str.maketrans(
    # Cyrillic
    "аеорсухіјѕԁԛԝһӏвкмнтАВЕКМНОРСТУХІЈЅ"
    # Greek
    "αβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
    # Armenian, dotless i and j, Latin letters that pass for others
    "օսոհցıȷɑɡℓ"
    # small capitals
    "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ",
    "aeopcyxijsdqwhlbkmhtABEKMHOPCTYXIJSabeikvoptuxABEZHIKMNOPTYXounhgijaglabcdefghijklmnoprstuvwyz",
)
_ROLE: Final = r"(system|assistant|developer|human|ai)"
_PATTERNS: Final = tuple(
    re.compile(p)
    for p in (
        # overriding what came before
        r"\b(ignore|disregard|forget|override|discard|bypass|pay no (attention|heed|mind) to)\b.{0,40}"
        r"\b(previous|prior|earlier|above|all|any|your|preceding|system)\b.{0,20}"
        r"\b(instructions?|rules?|prompts?|guidelines|guidance|directions|directives?|context|messages?)\b",
        r"\b(ignore|disregard|forget|discard)\s+(everything|anything|all|whatever)\s+(that\s+)?"
        r"((was|is|you\s+were)\s+)?(said\s+|written\s+|stated\s+|told\s+)?(above|before|earlier|previously|so far)\b",
        r"\b(ignore|disregard|forget|discard)\s+(all\s+(of\s+)?)?the\s+(above|preceding|foregoing)\b",
        r"\b(new|updated|real|actual) (system )?instructions\b",
        # addressing the agent
        r"\byou (must|shall|have to|are required to|should always|should never|will now|are now (a|an|the))\b",
        r"\bfrom now on,? (you|always|never|ignore|respond|answer)\b",
        # a turn marker, also in markdown emphasis, a heading or a quote: `**System**:`, `> AI:`
        rf"^[\s>#*_~`-]*{_ROLE}[\s*_~`]*:",
        r"^#{1,6} ?((instruction|response)s? ?(:|$)|input ?:)",
        r"\bact as\b|\bpretend to be\b",
        # chat and tool-call markup
        r"<\|[a-z0-9_ \u2581-]{1,40}\|>",
        r"</?(start|end)_of_(turn|text)>",
        r"\[/?(inst|sys)\]|<</?sys>>",
        r"</?\s*(antml:)?(system|assistant|developer|tool_calls?|function_calls?|function_results?|tool_use|"
        r"tool_results?|invoke|parameter|instructions?)\b",
        r"\{\s*\"(name|tool|function|tool_name|recipient_name)\"\s*:",
    )
)


def normalise(line: str, *, fillers: str = " ") -> str:
    """The line as the filter reads it (see the module docstring); `fillers` is what a Hangul
    filler reads as: a space or nothing ("")."""
    text = unicodedata.normalize("NFKC", line)
    text = text.translate(_FILLER_AS_SPACE if fillers else _FILLER_AS_NOTHING)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")
    text = unicodedata.normalize("NFC", text).translate(_LOOK_ALIKES).lower()
    return " ".join(text.split())


def instruction_like(line: str) -> bool:
    readings = {normalise(line), normalise(line, fillers="")}
    return any(p.search(folded) for folded in readings for p in _PATTERNS)


def instruction_line(text: str) -> tuple[int, str] | None:
    """The first line that reads like an instruction to the agent, with its 1-based number,
    as it was written (stripped of surrounding white space only). A phrase split across two
    lines is found on the first of them, and both are returned, joined by a newline."""
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if instruction_like(line):
            return number, line.strip()
        after = lines[number] if number < len(lines) else ""
        if after.strip() and not instruction_like(after) and instruction_like(f"{line} {after}"):
            return number, f"{line.strip()}\n{after.strip()}"
    return None
