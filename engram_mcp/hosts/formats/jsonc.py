"""Format-preserving JSON / JSONC editing: read with comments, add or remove one object member.

A small tokenizer records character offsets, a parser records the span of every object member
(key, value, following comma), and edits are textual splices, so every byte outside the
edited span stays as it was. `remove_member` is the exact inverse of an inserting
`set_member`, including containers that `set_member` had to create.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from engram_mcp.hosts.errors import JsoncError

__all__ = [
    "JsoncError",
    "append_item",
    "get",
    "loads",
    "new_document",
    "remove_item",
    "remove_member",
    "set_member",
]

_TOKEN = re.compile(
    r"""(?P<ws>[ \t\r\n]+)
    |(?P<comment>//[^\r\n]*|/\*.*?\*/)
    |(?P<str>"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")
    |(?P<num>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
    |(?P<lit>(?:true|false|null)(?![A-Za-z0-9_$]))
    |(?P<punct>[{}\[\]:,])""",
    re.VERBOSE | re.DOTALL,
)
_WORD = re.compile(r"[A-Za-z0-9_$.+-]+")
_SAME_LINE_COMMENT = re.compile(r"[ \t]*(?://[^\r\n]*|/\*(?:(?!\*/)[^\r\n])*\*/)")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


@dataclass
class _Node:
    start: int
    end: int
    value: Any
    members: list[_Member] | None = None  # set for objects only
    elements: list[_Member] | None = None  # set for arrays only (key "" , key span = value start)


@dataclass
class _Member:
    key: str
    key_start: int
    key_end: int
    value: _Node
    comma: int | None = None


@dataclass
class _Doc:
    text: str
    root: _Node | None
    comments: list[tuple[int, int]] = field(default_factory=list)
    firsts: list[str] = field(default_factory=list)  # leading whitespace of lines starting with a token


def _tokenize(text: str) -> tuple[list[tuple[str, int, int]], list[tuple[int, int]]]:
    tokens: list[tuple[str, int, int]] = []
    comments: list[tuple[int, int]] = []
    pos = 1 if text.startswith("\ufeff") else 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            if text.startswith("/*", pos):
                raise JsoncError.at(text, pos, "unclosed /* comment")
            if text[pos] == '"':
                raise JsoncError.at(text, pos, "invalid or unterminated string")
            word = _WORD.match(text, pos)
            shown = word.group() if word else text[pos]
            raise JsoncError.at(text, pos, f"unexpected {shown!r}")
        kind = m.lastgroup or ""
        if kind == "comment":
            comments.append((m.start(), m.end()))
        elif kind != "ws":
            tokens.append((m.group() if kind == "punct" else kind, m.start(), m.end()))
        pos = m.end()
    return tokens, comments


MAX_DEPTH: Final = 100
"""How deep objects and arrays may nest: a host config needs a few levels, and a clone's file of
a thousand `[` must be a parse error, not a RecursionError."""


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens, self.comments = _tokenize(text)
        self.i = 0
        self.depth = 0

    def _peek(self) -> tuple[str, int, int]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("eof", len(self.text), len(self.text))

    def _fail(self, expected: str) -> JsoncError:
        kind, start, end = self._peek()
        found = "end of input" if kind == "eof" else repr(self.text[start:end])
        return JsoncError.at(self.text, start, f"expected {expected}, found {found}")

    def document(self) -> _Doc:
        root = self._value() if self.tokens else None
        if self.i < len(self.tokens):
            raise self._fail("end of input")
        leads = (self.text[self.text.rfind("\n", 0, start) + 1 : start] for _, start, _ in self.tokens)
        return _Doc(self.text, root, self.comments, [x for x in leads if x and not x.strip(" \t")])

    def _value(self) -> _Node:
        kind, start, end = self._peek()
        if kind in ("{", "["):
            return self._container(kind == "{")
        if kind not in ("str", "num", "lit"):
            raise self._fail("a value")
        self.i += 1
        raw = self.text[start:end]
        return _Node(start, end, _LITERALS[raw] if kind == "lit" else json.loads(raw))

    def _container(self, is_object: bool) -> _Node:
        start, close = self._peek()[1], "}" if is_object else "]"
        if self.depth >= MAX_DEPTH:
            raise JsoncError.at(self.text, start, f"nested more than {MAX_DEPTH} levels deep")
        self.depth += 1
        node = self._members(start, close, is_object)
        self.depth -= 1
        return node

    def _members(self, start: int, close: str, is_object: bool) -> _Node:
        self.i += 1
        members: list[_Member] = []
        items: list[Any] = []
        while (token := self._peek())[0] != close:
            if is_object:
                if token[0] != "str":
                    raise self._fail(f"a string key or '{close}'")
                self.i += 1
                if self._peek()[0] != ":":
                    raise self._fail("':'")
                self.i += 1
                key = json.loads(self.text[token[1] : token[2]])
                members.append(_Member(key, token[1], token[2], self._value()))
            else:
                node = self._value()
                items.append(node.value)
                members.append(_Member("", node.start, node.start, node))
            if self._peek()[0] == ",":
                if members:
                    members[-1].comma = self._peek()[1]
                self.i += 1
            elif self._peek()[0] != close:
                raise self._fail(f"',' or '{close}'")
        self.i += 1
        end = self.tokens[self.i - 1][2]
        if is_object:
            return _Node(start, end, {m.key: m.value.value for m in members}, members)
        return _Node(start, end, items, elements=members)


def _parse(text: str) -> _Doc:
    return _Parser(text).document()


def loads(text: str) -> Any:
    """Parse JSON with // and /* */ comments and trailing commas (duplicate keys: last wins)."""
    doc = _parse(text)
    if doc.root is None:
        raise JsoncError.at(text, len(text), "expected a value, found end of input")
    return doc.root.value


def _lookup(node: _Node, key: str) -> _Member | None:
    found = [m for m in node.members or [] if m.key == key]
    return found[-1] if found else None


def _walk(doc: _Doc, path: Sequence[str]) -> _Node | None:
    node = doc.root
    for key in path:
        member = _lookup(node, key) if node is not None else None
        node = member.value if member is not None else None
    return node


def get(text: str, path: Sequence[str]) -> Any | None:
    """The value at an object-key path, or None when absent (or the document is empty)."""
    node = _walk(_parse(text), path)
    return None if node is None else node.value


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def _own_line_break(text: str, pos: int) -> int | None:
    """Offset of the line break that starts `pos`'s line when only blanks precede `pos` on it."""
    i = pos
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    if i == 0 or text[i - 1] != "\n":
        return None
    return i - 2 if i >= 2 and text[i - 2] == "\r" else i - 1


def _line_tail(text: str, pos: int) -> int:
    """Skip comments that follow `pos` on the same line."""
    while (m := _SAME_LINE_COMMENT.match(text, pos)) is not None:
        pos = m.end()
    return pos


class _Style:
    def __init__(self, doc: _Doc) -> None:
        text = doc.text
        self.nl = "\r\n" if "\r\n" in text else "\n"
        spaces = [len(lead) for lead in doc.firsts if lead[0] == " "]
        if any(lead[0] == "\t" for lead in doc.firsts):
            self.unit = "\t"
        else:
            self.unit = " " * min(min(spaces, default=2), 8)
        root = doc.root
        self.one_line = root is not None and "\n" not in text[root.start : root.end]

    def render(self, value: Any, indent: str) -> str:
        body = json.dumps(value, indent=self.unit, ensure_ascii=False)
        return body.replace("\n", self.nl + indent)


def _compact(text: str, obj: _Node) -> tuple[str, str]:
    """Separators (after a comma, after a colon) used inside a single-line object."""
    members = obj.members or []
    colon = ":"
    if members and text[members[0].key_end : members[0].value.start].strip() == ":":
        colon += text[members[0].key_end : members[0].value.start].split(":", 1)[1]
    for before, after in itertools.pairwise(members):
        gap = text[before.comma + 1 if before.comma is not None else 0 : after.key_start]
        return (gap if not gap.strip() else ""), colon
    return (" " if colon != ":" else ""), colon


def _array_gap(text: str, elements: list[_Member]) -> str:
    """The blank after a comma in a single-line array: as between its first two items, else one space."""
    for before, after in itertools.pairwise(elements):
        if before.comma is not None:
            gap = text[before.comma + 1 : after.key_start]
            return gap if not gap.strip() else " "
    return " "


def _dumps_compact(value: Any, sep: str, colon: str) -> str:
    return json.dumps(value, ensure_ascii=False, separators=("," + sep, colon))


def _insert(doc: _Doc, obj: _Node, key: str | None, value: Any) -> str:
    """Add a member to an object, or (key None) an element to the end of an array."""
    text, style = doc.text, _Style(doc)
    members = (obj.members if key is not None else obj.elements) or []
    if (members and "\n" not in text[obj.start : obj.end]) or (
        not members and style.one_line and obj is not doc.root
    ):
        if key is None and members:
            sep, colon = _array_gap(text, members), ":"
        else:
            sep, colon = _compact(text, obj if members and key is not None else doc.root or obj)
        member = _prefix(key, colon) + _dumps_compact(value, sep, colon)
        if not members:
            return text[: obj.start + 1] + member + text[obj.start + 1 :]
        last = members[-1]
        if last.comma is not None:
            return text[: last.comma + 1] + sep + member + "," + text[last.comma + 1 :]
        return text[: last.value.end] + "," + sep + member + text[last.value.end :]
    if not members:
        outer = _line_indent(text, obj.start)
        indent = outer + style.unit
        member = _prefix(key, ": ") + style.render(value, indent)
        inside = [c for c in doc.comments if obj.start < c[0] < obj.end]
        if obj.end - obj.start == 2:
            return text[: obj.start + 1] + style.nl + indent + member + style.nl + outer + text[obj.end - 1 :]
        at = inside[-1][1] if inside else obj.start + 1
        return text[:at] + style.nl + indent + member + text[at:]
    last = members[-1]
    own = _own_line_break(text, last.key_start) is not None
    indent = _line_indent(text, last.key_start) if own else _line_indent(text, obj.start) + style.unit
    member = _prefix(key, ": ") + style.render(value, indent)
    if last.comma is not None:
        at = _line_tail(text, last.comma + 1)
        return text[:at] + style.nl + indent + member + "," + text[at:]
    at = _line_tail(text, last.value.end)
    end = last.value.end
    return text[:end] + "," + text[end:at] + style.nl + indent + member + text[at:]


def _prefix(key: str | None, colon: str) -> str:
    return "" if key is None else json.dumps(key, ensure_ascii=False) + colon


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _nest(path: Sequence[str], key: str, value: Any) -> Any:
    nested: Any = {key: value}
    for name in reversed(path):
        nested = {name: nested}
    return nested


def set_member(text: str, path: Sequence[str], key: str, value: Any) -> str:
    """Put `key: value` into the object at `path`, creating missing containers; other bytes stay."""
    doc = _parse(text)
    style = _Style(doc)
    if doc.root is None:
        body = style.render(_nest(path, key, value), "")
        prefix = text if not text or text.endswith("\n") else text + style.nl
        return prefix + body + style.nl
    node = doc.root
    for depth, name in enumerate((*path, key)):
        if node.members is None:
            where = ".".join(path[:depth]) or "the document root"
            raise JsoncError.at(text, node.start, f"{where} is not an object")
        member = _lookup(node, name)
        if member is None:
            rest = path[depth + 1 :]
            return _insert(doc, node, name, _nest(rest, key, value) if depth < len(path) else value)
        if depth == len(path):
            if _same(member.value.value, value):
                return text
            if "\n" not in text[node.start : node.end]:
                rendered = _dumps_compact(value, *_compact(text, node))
            else:
                rendered = style.render(value, _line_indent(text, member.key_start))
            return text[: member.value.start] + rendered + text[member.value.end :]
        node = member.value
    raise AssertionError("unreachable")  # pragma: no cover


def _cut(text: str, obj: _Node, member: _Member) -> str:
    """Remove one member (or array element) with its separating comma (and its own line)."""
    members = obj.members if obj.members is not None else obj.elements or []
    index = next(i for i, m in enumerate(members) if m is member)
    prev = members[index - 1] if index > 0 else None
    brk = _own_line_break(text, member.key_start)
    if index + 1 < len(members):
        nxt = members[index + 1]
        assert member.comma is not None
        tail = _line_tail(text, member.comma + 1)
        rest = text[tail:].lstrip(" \t")
        if brk is not None and rest.startswith(("\n", "\r\n")):
            line_start = text.rfind("\n", 0, member.key_start) + 1
            return text[:line_start] + rest[rest.index("\n") + 1 :]
        return text[: member.key_start] + text[nxt.key_start :]
    end = member.comma + 1 if member.comma is not None else member.value.end
    if brk is not None:
        end = _line_tail(text, end)
        if prev is not None and member.comma is None and prev.comma is not None:
            return text[: prev.comma] + text[prev.comma + 1 : brk] + text[end:]
        return text[:brk] + text[end:]
    if prev is not None and prev.comma is not None:
        start = prev.comma + 1 if member.comma is not None else prev.comma
        return text[:start] + text[end:]
    return text[: obj.start + 1] + text[end:]


def remove_member(text: str, path: Sequence[str], key: str, *, prune: bool = True) -> str:
    """Remove `key` from the object at `path`; with `prune`, drop containers left empty (and
    comment-free), the inverse of a `set_member` that created them."""
    doc = _parse(text)
    obj = _walk(doc, path)
    if obj is None or obj.members is None or _lookup(obj, key) is None:
        return text
    while obj is not None and (member := _lookup(obj, key)) is not None:
        text = _cut(text, obj, member)
        doc = _parse(text)
        obj = _walk(doc, path)
    if not prune or obj is None or obj.members or any(obj.start < c[0] < obj.end for c in doc.comments):
        if prune or obj is None or obj.members or "\n" not in text[obj.start : obj.end]:
            return text
        if not text[obj.start + 1 : obj.end - 1].strip():
            return text[: obj.start] + "{}" + text[obj.end :]  # set_member expanded a "{}"
        return text
    if path:
        return remove_member(text, path[:-1], path[-1])
    if not text[obj.start + 1 : obj.end - 1].strip():
        return text[: obj.start] + "{}" + text[obj.end :]
    return text


def _array(text: str, path: Sequence[str]) -> tuple[_Doc, _Node]:
    doc = _parse(text)
    node = _walk(doc, path)
    if node is None or node.elements is None:
        raise JsoncError.at(text, 0 if node is None else node.start, f"{'.'.join(path)} is not an array")
    return doc, node


def append_item(text: str, path: Sequence[str], value: Any) -> str:
    """Add `value` at the end of the array at `path`; other bytes stay."""
    doc, node = _array(text, path)
    return _insert(doc, node, None, value)


def remove_item(text: str, path: Sequence[str], index: int) -> str:
    """Remove element `index` of the array at `path`: the exact inverse of `append_item`."""
    _, node = _array(text, path)
    assert node.elements is not None
    text = _cut(text, node, node.elements[index])
    _, node = _array(text, path)
    if not node.elements and not text[node.start + 1 : node.end - 1].strip():
        return text[: node.start] + "[]" + text[node.end :]  # append_item expanded an empty []
    return text


def new_document(path: Sequence[str], key: str, value: Any) -> str:
    """Text for a config file that did not exist: 2-space indent, "\\n" line endings."""
    return json.dumps(_nest(path, key, value), indent=2, ensure_ascii=False) + "\n"
