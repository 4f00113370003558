"""Explicit knowledge lines in session text → candidate memories (SPEC §7 save-session).

The rest, and why: docs/design.md, `store/propose/mining.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from store.plurals import count
from store.safety.invisible import without_invisible
from store.safety.redact import MARK, redact

MAX_CANDIDATES: Final = 20
MIN_WORDS: Final = 4
MAX_LINE: Final = 600
MAX_TITLE: Final = 80

HOST_TAGS: Final = (
    # Claude Code: reminders, slash-command wrappers and their output, `!` shell mode, hooks
    *("system-reminder", "command-name", "command-message", "command-args", "command-contents"),
    *("local-command-stdout", "local-command-stderr", "local-command-caveat"),
    *("bash-input", "bash-stdout", "bash-stderr", "user-prompt-submit-hook", "task-notification"),
    # Codex: injected context, AGENTS.md, the human's own shell commands, aborted turns
    *("environment_context", "user_instructions", "INSTRUCTIONS", "user_shell_command", "turn_aborted"),
    *("subagent_notification", "skills_instructions", "codex_internal_context"),
    # Gemini CLI: session context, hook context, the compression snapshot
    *("session_context", "hook_context", "state_snapshot"),
)
"""Tags whose blocks a host adds to a user message; nothing inside one is the human's."""
_HOST_BLOCK: Final = re.compile(
    r"<(" + "|".join(map(re.escape, HOST_TAGS)) + r")(?=[\s>/])[^<>]{0,400}>.*?(?:</\1\s*>|\Z)", re.I | re.S
)

_MARKER: Final = re.compile(r"^\s*(?:[-*•>]+|\d+[.)])\s+")
_TIME: Final = re.compile(r"^\s*\[?\d{1,2}:\d{2}(?::\d{2})?\]?\s*")
_SPEAKER: Final = re.compile(r"^\s*\**(user|human|me|you|dev|developer|q)\**\s*[:>]\s*", re.I)
_OTHER_SPEAKER: Final = re.compile(
    r"^\s*\**(assistant|claude|codex|gemini|copilot|cursor|ai|bot|agent|model|system|tool|a)\**\s*[:>]\s",
    re.I,
)
_NOISE: Final = re.compile(
    r"^(?:(?:ok(?:ay)?|k|yes|yep|yeah|yup|no|nope|sure|cool|great|nice|perfect|thanks|thank you|thx|ty|"
    r"lgtm|hmm+|ah+|oh|right|alright|got it|sounds good|good|also|and|so|btw|by the way|anyway|one more thing|"
    r"oh and|hey|hi|well|wait|actually|sorry|oops)\b[\s.,!:;-]*)+",
    re.I,
)
_LEAD: Final = re.compile(
    r"^(?:please,?\s+)?(?:(?:(?:remember|note|keep in mind|don'?t forget|never forget|be aware)(?: that)?|"
    r"for the record|just so you know|fyi|important|decision|rule|gotcha|convention|preference|"
    r"procedure|fact|naming|heads up|tip)\b\s*[:,-]?\s*)?",
    re.I,
)
_DO_NOT_SAVE: Final = re.compile(
    r"\b(?:(?:don'?t|do not|never|please don'?t|no need to)\s+(?:save|remember|store|record|memori[sz]e|keep|note)"
    r"(?:\s+(?:that|this|it|those|these|any of (?:that|this)))?\b|off the record|not for (?:the )?(?:memory|engram)|"
    r"forget (?:that|this|i said that)\b)",
    re.I,
)
_REQUEST: Final = re.compile(
    r"^(?:can|could|would|will)\s+(?:you|we)\b|^(?:please\s+)?(?:let'?s|lets)\s+(?!(?:always|never|go with|use)\b)|"
    r"^(?:please\s+)?(?:look|check|fix|run|try|add|update|show|open|read|write|make|create|rename|refactor|"
    r"delete|remove|explain|help|tell|give|find|search|review|revert|commit|push|continue|go ahead|do)\b(?!.*\b(?:always|never|every time|from now on)\b)",
    re.I,
)
_CODE: Final = re.compile(
    r"^\s*(?:\$ |>>> |#!|Traceback |File \"|at [\w.$]+\(|[{}\[\]();]+$|(?:def|class|import|from|return|const|let|var|"
    r"function|if|for|while)\b.*[:{(;]$)|[;{]\s*$|^\s*[\w.]+\(.*\)\s*$"
)
_SENTENCE: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")
_KINDS: Final = (
    (
        "decision",
        re.compile(
            r"\b(we(?:'ve| have)? decided|decided to|decision\s*:|we chose|we(?:'re| are) going with|we went with|"
            r"we will use|we'll use|let'?s go with|we agreed|going forward we|from now on we (?:use|go with))\b",
            re.I,
        ),
    ),
    (
        "gotcha",
        re.compile(
            r"\b(gotcha|beware|watch out|careful|pitfall|caveat|heads up|trap|breaks (?:when|if)|fails (?:when|if)|"
            r"(?:does not|doesn't|won't|will not) work (?:when|if|with|on)|silently|is flaky|times out (?:when|if)|"
            r"(?:breaks|fails|hangs|deadlocks|crashes)\b.*\b(?:when|if|unless|because))\b",
            re.I,
        ),
    ),
    (
        "procedure",
        re.compile(
            r"(\bto (?:release|deploy|run|build|reset|rotate|migrate|regenerate|update|install|publish|bump|seed|"
            r"refresh|rebuild|restore|debug|cut)\b.*\b(?:run|use|do|call|type|go to)\b|\bsteps?\s*:|\bprocedure\s*:|"
            r"\bthe way to \w+.*\bis\b|\bfirst\b.*\bthen\b)",
            re.I,
        ),
    ),
    (
        "convention",
        re.compile(
            r"\b(convention|by convention|we name|naming|is named|are named|(?:is|are) prefixed|prefix(?:ed)? with|"
            r"(?:lives?|belongs?|goes|go) (?:in|under)|snake_case|camelCase|kebab-case|PascalCase|"
            r"our style|in this repo we)\b",
            re.I,
        ),
    ),
    (
        "preference",
        re.compile(
            r"\b(i prefer|i'd prefer|we prefer|prefer\b|i like|i'd rather|i would rather|preference\s*:)",
            re.I,
        ),
    ),
    (
        "rule",
        re.compile(
            # "I never liked it" is about the speaker, "it must be the cache" a guess: not rules
            r"(\b(?<!\bI )(?<!\bI've )(?<!\bI have )(always|never)\b|"
            r"\bmust(?! be (?:the|a|an|something|it|that|this|because|why|from|in|on|my|our)\b)(?! have\b)\b|"
            r"\b(must not|mustn't|every time|from now on|make sure (?:to|you|that)|"
            r"is not allowed|are not allowed|only ever|rule\s*:)\b|^(?:please\s+)?(?:don'?t|do not|avoid)\b|"
            r"\b(?:we|you) (?:should|shouldn't|should not)\b)",
            re.I,
        ),
    ),
    (
        "fact",
        re.compile(r"\b(remember(?: that)?|note that|fyi|fact\s*:|for the record|keep in mind)\b", re.I),
    ),
)
_DANGLING: Final = re.compile(
    r"[\s,;:(-]+(?:and|or|but|the|a|an|to|of|with|for|in|on|at|by|is|are|that)?$", re.I
)


@dataclass(slots=True)
class Mined:
    """Candidates, and what was left out on purpose (shown in the preview)."""

    candidates: list[dict[str, Any]] = field(default_factory=list)
    secret_lines: int = 0
    """Lines that held a secret and were not mined: the secret was (nearly) all of them."""
    unsaved_lines: int = 0
    """Lines the human asked not to be saved ("don't save that")."""

    def note(self) -> str:
        parts = []
        if self.secret_lines:
            parts.append(f"skipped {count(self.secret_lines, 'line')} holding a secret")
        if self.unsaved_lines:
            parts.append(f"skipped {count(self.unsaved_lines, 'line')} you asked not to save")
        return "; ".join(parts)


def without_host_blocks(text: str) -> str:
    """`text` less every host block (`HOST_TAGS`); an unclosed one runs to the end."""
    return _HOST_BLOCK.sub("", text) if "<" in text else text


def knowledge_kind(sentence: str) -> str | None:
    for kind, pattern in _KINDS:
        if pattern.search(sentence):
            return kind
    return None


def _strip(line: str) -> str | None:
    """The human's words of one line without labels and noise, or None for a line not theirs."""
    line = _TIME.sub("", _MARKER.sub("", line)).strip()
    if _OTHER_SPEAKER.match(line):
        return None
    line = _SPEAKER.sub("", line, count=1)
    line = _MARKER.sub("", _NOISE.sub("", line)).strip()
    return line


def title_of(statement: str) -> str:
    """The statement's first sentence, cut at a word boundary to at most 80 characters."""
    first = _SENTENCE.split(statement, maxsplit=1)[0].strip()
    title = first.rstrip(".!;: ")
    if len(title) <= MAX_TITLE:
        return title
    cut = title[: MAX_TITLE - 1]
    if " " in cut and not title[MAX_TITLE - 1].isspace():
        cut = cut.rsplit(" ", 1)[0]
    cut = _DANGLING.sub("", cut.rstrip()) or cut
    return cut.rstrip(" ,;:-") + "…"


def _secret_only(text: str) -> bool:
    """After its secrets are out, too little of the line is left to be worth a memory."""
    rest = re.sub(r"[\w.-]*\s*[=:]\s*" + re.escape(MARK), " ", text).replace(MARK, " ")
    words = re.findall(r"[A-Za-z]{2,}", rest)
    return len(words) < MIN_WORDS or knowledge_kind(rest) is None


def mine_text(text: str) -> Mined:
    """Candidate dicts (type, title, body) for each explicit knowledge sentence, de-duplicated."""
    mined = Mined()
    seen: set[str] = set()
    text, _ = redact(without_host_blocks(without_invisible(text)))
    fenced = False
    last_line = -2
    for number, raw in enumerate(text.splitlines()):
        if raw.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or _CODE.search(raw):
            continue
        line = _strip(raw)
        if not line:
            continue
        redacted = line.count(MARK)
        if _DO_NOT_SAVE.search(line):
            mined.unsaved_lines += 1
            rest = _DO_NOT_SAVE.sub("", line).strip(" .,!;:-")
            if len(rest.split()) < MIN_WORDS and last_line == number - 1 and mined.candidates:
                mined.candidates.pop()  # "don't save that" about the line just before
            continue
        taken = False
        for sentence in _SENTENCE.split(line):
            sentence = _NOISE.sub("", sentence).strip()
            if len(sentence.split()) < MIN_WORDS or len(sentence) > MAX_LINE or sentence.endswith("?"):
                continue
            if _REQUEST.match(sentence) or (MARK in sentence and _secret_only(sentence)):
                continue
            statement = _LEAD.sub("", sentence).strip()
            kind = knowledge_kind(sentence)
            if kind is None or len(statement.split()) < MIN_WORDS - 1:
                continue
            key = " ".join(re.findall(r"\w+", statement.lower()))
            taken = True
            if key in seen:
                continue
            seen.add(key)
            if statement.split()[0].isalpha():  # `boto3 …` and `uv …` keep their case
                statement = statement[:1].upper() + statement[1:]
            candidate: dict[str, Any] = {"type": kind, "title": title_of(statement), "body": statement}
            if (n := statement.count(MARK)) > 0:
                candidate["redacted"] = n
            mined.candidates.append(candidate)
            last_line = number
            if len(mined.candidates) == MAX_CANDIDATES:
                return mined
        if redacted and not taken:
            mined.secret_lines += 1
    return mined


def extract_candidates(text: str) -> list[dict[str, Any]]:
    """Candidate dicts (type, title, body) for each explicit knowledge sentence, de-duplicated."""
    return mine_text(text).candidates


def mine(text: str) -> tuple[list[dict[str, Any]], str]:
    """(candidates, note for the preview naming what was skipped on purpose)."""
    mined = mine_text(text)
    return mined.candidates, mined.note()
