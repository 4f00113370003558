"""YAML for front matter, strict (SPEC §2): no implicit timestamps (dates stay strings), no
aliases (no billion-laughs), no key given twice in one mapping (YAML loaders keep the last value,
so `always: true` could hide after a page of filler; issue 9). Imported only when a memory file
is parsed or written: a process that reads its indexes (the session hook, a server's warm start)
never pays for it.

Two readers, one language: the one-line-per-key form engram writes (and most people do) is
read directly, and every other block by PyYAML's pure-Python loader, which refuses an alias
as it composes the document, before anything is expanded. libyaml is not used: its scanner
and the pure-Python one disagree at the edges (`[a:?]`), so which of them read a file must
not decide whether it loads.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

import yaml

from store.errors import CorruptMemory


class _Loader(yaml.SafeLoader):
    """SafeLoader without implicit timestamps, without aliases and without repeated keys."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(None, None, "YAML aliases are not allowed", event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """Refuse a mapping that repeats a key. The common case costs one length comparison:
        the keys are looked at one by one only when the mapping came out shorter than its pairs."""
        own = node.value if isinstance(node, yaml.MappingNode) else None
        mapping = super().construct_mapping(node, deep)
        if own is not None and (node.value is not own or len(mapping) != len(own)):
            _refuse_repeats(self, own)  # `node.value is not own`: a `<<` merge happened
        return mapping


def _refuse_repeats(constructor: Any, pairs: list[tuple[Any, Any]]) -> None:
    """CorruptMemory naming the repeated key and both its lines (1-based in the file: the
    block starts on the file's second line)."""
    first: dict[Any, int] = {}
    for key_node, _ in pairs:
        key = constructor.construct_object(key_node, deep=True)  # cached: no second construction
        line = key_node.start_mark.line
        try:
            if key in first:
                raise CorruptMemory(
                    f"the front matter repeats the key {str(key)!r} (line {line + 2}; first on line "
                    f"{first[key] + 2}); engram cannot tell which value is meant, so the file is not "
                    "loaded: keep one of them"
                )
            first[key] = line
        except TypeError:  # an unhashable key: the constructor has refused it already
            continue


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _load(block: str) -> Any:
    """Parse a front-matter block: the one-line-per-key form directly, anything else with the
    strict loader."""
    simple = _simple(block)
    if simple is not None:
        return simple
    return yaml.load(block, Loader=_Loader)  # noqa: S506 - the safe loader, stricter still


# --- the one-line-per-key form ----------------------------------------------------------------
# `key: scalar` and `key: [scalar, scalar]` lines, nothing else, each scalar plain or simply
# quoted. Anything outside this form (escapes, block lists, comments, a repeated key, a number
# that is not a plain integer…) returns None and goes to the YAML loader, so the result is
# always what YAML gives; a test compares the two on generated blocks. A fresh 10,000-memory store spent a third of its index
# build constructing these from YAML nodes.
_LINE: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]{0,99}): (\S(?:.*\S)?)")  # YAML keys end by 1,024
_INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@`<=")
_FLOW_FORBIDDEN: Final = frozenset(",[]{}?")  # the pure-Python scanner ends a flow scalar at `?` too


class _Resolver(yaml.resolver.Resolver):
    """The loaders' implicit resolvers (no timestamps), to type a plain scalar as YAML would."""


_Resolver.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers
_RESOLVER: Final[Any] = _Resolver()  # PyYAML is untyped
_STR, _BOOL, _NULL, _INT = (f"tag:yaml.org,2002:{name}" for name in ("str", "bool", "null", "int"))
_PLAIN_INT: Final = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")


_NOT_SIMPLE: Final = object()
"""What `_scalar` answers for a scalar this form leaves to YAML."""


def _simple(block: str) -> dict[str, Any] | None:
    """The block read as the one-line-per-key form, or None when it is not in that form."""
    meta: dict[str, Any] = {}
    for line in block.split("\n")[:-1] if block.endswith("\n") else block.split("\n"):
        match = _LINE.fullmatch(line)
        if match is None:
            return None
        key, value = match.groups()
        if key in meta or _scalar(key, flow=False) != key:
            return None
        if value[0] == "[" and value[-1] == "]":
            inner = value[1:-1]
            items = [_scalar(item, flow=True) for item in inner.split(", ")] if inner else []
            if any(item is _NOT_SIMPLE for item in items):
                return None
            meta[key] = items
        elif (scalar := _scalar(value, flow=False)) is _NOT_SIMPLE:
            return None
        else:
            meta[key] = scalar
    return meta


@lru_cache(maxsize=4096)  # types, statuses, tags and dates recur from file to file
def _scalar(text: str, *, flow: bool) -> Any:
    """A plain or quoted scalar's value as YAML types it; _NOT_SIMPLE for anything this form
    leaves to YAML (a quoted scalar holding its own quote or a backslash, for one)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        inner = text[1:-1]
        if text[0] in inner or "\\" in inner or not inner.isprintable():
            return _NOT_SIMPLE
        return inner
    if (
        not text
        or text[0] in _INDICATORS
        or text[0].isspace()
        or text[-1].isspace()
        or text[-1] == ":"
        or ": " in text
        or " #" in text
        or not text.isprintable()
        or (flow and not _FLOW_FORBIDDEN.isdisjoint(text))
    ):
        return _NOT_SIMPLE
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))
    if tag == _STR:
        return text
    if tag == _BOOL:
        return yaml.constructor.SafeConstructor.bool_values[text.lower()]
    if tag == _NULL:
        return None
    if tag == _INT and _PLAIN_INT.fullmatch(text):
        return int(text)
    return _NOT_SIMPLE


def parse_block(block: str) -> Any:
    """The front-matter block parsed; CorruptMemory saying what is wrong and where."""
    try:
        return _load(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CorruptMemory(f"the front matter is not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise CorruptMemory("the front matter is nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise CorruptMemory(f"the front matter holds a value engram cannot read ({str(exc)[:80]})") from None


class _Dumper(yaml.SafeDumper):
    """Block mappings, flow lists (`tags: [a, b]`), as people write front matter by hand."""


_Dumper.add_representer(
    list, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)
)
_Dumper.add_representer(
    dict,
    lambda dumper, data: dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=False),
)


def dump_block(meta: dict[str, Any]) -> str:
    """Front matter as people write it by hand, keys in the given order."""
    return yaml.dump(meta, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000)
