"""YAML for front matter, strict (SPEC §2): no implicit timestamps (dates stay strings), no
aliases (no billion-laughs), no key given twice in one mapping (YAML loaders keep the last value,
so `always: true` could hide after a page of filler). Imported only for a block outside
the one-line form and for writes: a process that reads its indexes (the session hook, a server's
warm start), or a store whose files are all in engram's form, never pays for it.

Two readers: the one-line-per-key form engram writes (and most people do) is read directly,
without YAML (store.front_lines), and every other block by one strict loader on libyaml, which
refuses an alias after composing the document and before constructing anything. There is no
second YAML loader for blocks that hold `&` or `*`: libyaml's scanner and PyYAML's pure-Python
one disagree at the edges (libyaml reads `tags: [why?]`, the other refuses it), so which of
them a file met must not depend on its text. (A PyYAML built without libyaml uses its own
scanner under the same checks.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import yaml

from store.errors import CorruptMemory
from store.files.front_lines import simple as _simple
from store.safety import untrusted

if TYPE_CHECKING or not getattr(yaml, "__with_libyaml__", False):  # noqa: SIM108 - mypy sees one base
    _Safe = yaml.SafeLoader  # PyYAML built without libyaml: its own scanner, the same checks
else:
    _Safe = yaml.CSafeLoader


class _Loader(_Safe):
    """libyaml's safe loader without implicit timestamps, without aliases and without repeated
    keys."""

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None:
            _refuse_aliases(node)
        return node

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """Refuse a mapping that repeats a key. The common case costs one length comparison:
        the keys are looked at one by one only when the mapping came out shorter than its pairs."""
        own = node.value if isinstance(node, yaml.MappingNode) else None
        mapping = super().construct_mapping(node, deep)
        if own is not None and (node.value is not own or len(mapping) != len(own)):
            _refuse_repeats(self, own)  # `node.value is not own`: a `<<` merge happened
        return mapping


def _refuse_aliases(root: Any) -> None:
    """Composing shares the node an alias names (nothing is expanded until construction), so an
    alias is a node met twice in the composed document: refused before anything is built, in
    one pass that stops at the first repeat (a billion-laughs block costs its length)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            raise yaml.composer.ComposerError(None, None, "YAML aliases are not allowed", node.start_mark)
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            todo.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            todo.extend(part for pair in node.value for part in pair)


def _refuse_repeats(constructor: Any, pairs: list[tuple[Any, Any]]) -> None:
    """CorruptMemory naming the repeated key (when it is a plain name: store.safety.untrusted.
    plain_name) and both its lines (1-based in the file: the block starts on the file's second
    line)."""
    first: dict[Any, int] = {}
    for key_node, _ in pairs:
        key = constructor.construct_object(key_node, deep=True)  # cached: no second construction
        line = key_node.start_mark.line
        try:
            if key in first:
                named = untrusted.plain_name(key)
                raise CorruptMemory(
                    f"the front matter repeats {f'the key {named}' if named else 'a key'} (line "
                    f"{line + 2}; first on line {first[key] + 2}); engram cannot tell which value "
                    "is meant, so the file is not loaded: keep one of them"
                )
            first[key] = line
        except TypeError:  # an unhashable key: the constructor has refused it already
            continue


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _load(block: str) -> Any:
    """Parse a front-matter block: the one-line-per-key form directly (store.front_lines),
    anything else with the strict loader."""
    simple = _simple(block)
    if simple is not None:
        return simple
    return yaml.load(block, Loader=_Loader)  # noqa: S506 - the safe loader, stricter still


def parse_block(block: str) -> Any:
    """The front-matter block parsed; CorruptMemory saying what is wrong and where: the line
    and one of engram's own categories (`_category`), never the YAML library's message, which
    quotes the document (a tag's or a key's text would reach the agent unfenced)."""
    try:
        return _load(block)
    except yaml.YAMLError as exc:
        line = _error_line(exc, block)
        where = f" (line {line + 2})" if line is not None else ""  # the block starts on line 2
        raise CorruptMemory(f"the front matter is not valid YAML{where}: {_category(exc)}") from None
    except RecursionError:
        raise CorruptMemory("the front matter is nested too deeply") from None
    except (
        ValueError,
        TypeError,
        OverflowError,
        AttributeError,
    ):  # `!!int x`, `!!timestamp x`: the message quotes the value
        raise CorruptMemory("the front matter holds a value engram cannot read") from None


_OPENED: Final = ("flow sequence", "flow mapping", "quoted scalar", "simple key")
"""Contexts of what a line opens and a later line fails to close: YAML's problem mark is where it
gave up (the next key, the end of the block), its context mark the line to fix."""


def _error_line(exc: yaml.YAMLError, block: str) -> int | None:
    """The 0-based line of the block the error is on."""
    problem, context = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
    said = str(getattr(exc, "context", None) or "")
    if context is not None and any(words in said for words in _OPENED):
        return int(context.line)
    if problem is None:
        return None
    if "document start" in str(getattr(exc, "problem", None) or ""):  # after a `%` directive
        lines = block.splitlines()[: problem.line]
        return next((n for n in range(len(lines) - 1, -1, -1) if lines[n].startswith("%")), problem.line)
    return int(problem.line)


_TAG: Final = "a tag engram does not allow (a `!` before a value)"
_ALIAS: Final = "an anchor or alias (`&name`, `*name`), which engram does not allow"
_CATEGORIES: Final = (
    # (words of the library's context or problem, engram's category): the library's own fixed
    # phrases, libyaml's and PyYAML's; the first that matches wins
    ("constructor for the tag", _TAG),
    ("flow sequence", "an unclosed list (a `[` without its `]`)"),
    ("flow mapping", "an unclosed mapping (a `{` without its `}`)"),
    ("flow node", "an unclosed list or mapping (a `[` or `{` without its end)"),
    ("quoted scalar", "an unclosed quote"),
    ("tag", _TAG),
    ("unhashable key", "a key that is a list or a mapping"),
    ("alias", _ALIAS),
    ("anchor", _ALIAS),
    ("single document", "more than one YAML document"),
    ("document start", "a line YAML reads as a directive (`%`)"),
    ("mapping values are not allowed", "a `: ` inside a value (quote the value)"),
    ("cannot start any token", "a character that cannot start a value (a tab, `@`, `%`: quote the value)"),
    ("expected key", "a line that is not a `key: value` pair (check the indentation)"),
    ("block mapping", "a line that is not a `key: value` pair (check the indentation)"),
)


def _category(exc: yaml.YAMLError) -> str:
    """What is wrong, in engram's words. The library's context and problem are only looked at,
    never shown: PyYAML quotes the document in them (`the tag 'IGNORE ALL PREVIOUS…'`). Text a
    file quotes there can at most pick another of these fixed categories."""
    said = " ".join(
        str(part).lower() for part in (getattr(exc, "context", None), getattr(exc, "problem", None)) if part
    )
    return next((category for words, category in _CATEGORIES if words in said), "a syntax error")


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
