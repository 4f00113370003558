"""The memory file format (SPEC §2): strict front matter, bounded sizes, round-trips."""

from __future__ import annotations

import pytest

from store.errors import CorruptMemory
from store.files.memory import content_hash, parse_memory, render_memory, split_front_matter

NORMAL = b"""---
id: use-uv-for-python
type: rule
title: Use uv for Python environments
scope: project
tags: [python, tooling]
paths: ["**/*.py"]
roles: [implementer]
always: false
status: active
supersedes: []
created: 2026-11-29T22:00:00Z
updated: 2026-11-29T22:00:00Z
source: save
variants:
  terse: Use uv.
---
Create and sync environments with `uv`.
"""


def parse(data: bytes, file_id: str = "use-uv-for-python", tier: str = "durable"):  # type: ignore[no-untyped-def]
    return parse_memory(data, file_id=file_id, scope="project", tier=tier)


def doc(front: str, body: str = "Body.\n") -> bytes:
    return f"---\n{front}---\n{body}".encode()


def test_a_normal_file_parses_into_its_fields() -> None:
    """Every documented field of a normal memory file is read back."""
    memory = parse(NORMAL)
    assert memory.id == "use-uv-for-python"
    assert memory.type == "rule"
    assert memory.title == "Use uv for Python environments"
    assert list(memory.tags) == ["python", "tooling"]
    assert list(memory.paths) == ["**/*.py"]
    assert list(memory.roles) == ["implementer"]
    assert memory.always is False
    assert memory.active
    assert memory.variants == {"terse": "Use uv."}
    assert memory.body == "Create and sync environments with `uv`.\n"
    assert memory.card == "- [rule] Use uv for Python environments (use-uv-for-python)"
    assert len(memory.hash) == 64


def test_a_file_without_front_matter_is_refused() -> None:
    """A file must start with a '---' line."""
    with pytest.raises(CorruptMemory, match="must start with"):
        parse(b"id: x\ntype: rule\n")


def test_an_unclosed_front_matter_is_refused() -> None:
    """A front matter that never closes is refused."""
    with pytest.raises(CorruptMemory, match="not closed"):
        parse(b"---\nid: use-uv-for-python\ntype: rule\ntitle: T\nbody without closing line\n")


@pytest.mark.parametrize("front", ["- a\n- b\n", "just a string\n", "42\n"])
def test_a_front_matter_that_is_not_a_mapping_is_refused(front: str) -> None:
    """Lists, scalars and strings are not front matter."""
    with pytest.raises(CorruptMemory, match="mapping"):
        parse(doc(front))


def test_a_byte_order_mark_and_crlf_line_ends_are_accepted() -> None:
    """A BOM and Windows line ends parse like the plain file, with the same hash."""
    crlf = b"\xef\xbb\xbf" + NORMAL.replace(b"\n", b"\r\n")
    plain = parse(NORMAL)
    edited = parse(crlf)
    assert edited.meta == plain.meta
    assert edited.body == plain.body
    assert edited.hash == plain.hash


def test_timestamps_and_dates_stay_strings() -> None:
    """YAML's implicit timestamps are off: created and valid_until stay strings."""
    memory = parse(
        doc("id: n1\ntype: note\ntitle: T\ncreated: 2026-11-29T22:00:00Z\nvalid_until: 2099-12-31\n"),
        file_id="n1",
        tier="working",
    )
    assert memory.meta["created"] == "2026-11-29T22:00:00Z"
    assert memory.meta["valid_until"] == "2099-12-31"
    assert memory.valid_until == "2099-12-31"


def test_yaml_aliases_are_refused() -> None:
    """Anchors and aliases (billion-laughs style) are refused before expansion."""
    bomb = (
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        "id: use-uv-for-python\ntype: rule\ntitle: T\n"
    )
    with pytest.raises(CorruptMemory, match="alias"):
        parse(doc(bomb))


def test_a_front_matter_over_64_kib_is_refused() -> None:
    """The front matter is bounded to 64 KiB."""
    front = "id: use-uv-for-python\ntype: rule\ntitle: T\nfiller: " + "x" * (65 * 1024) + "\n"
    with pytest.raises(CorruptMemory, match="64 KiB"):
        parse(doc(front))


def test_a_file_over_1_mib_is_refused() -> None:
    """The whole file is bounded to 1 MiB."""
    data = doc("id: use-uv-for-python\ntype: rule\ntitle: T\n", "x" * (1024 * 1024 + 1))
    with pytest.raises(CorruptMemory, match="1 MiB"):
        parse(data)


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("type: essay\ntitle: T\n", "type 'essay' is not one of"),
        ("title: T\n", "type None is not one of"),
        ("type: note\ntitle: T\n", "type 'note' is not one of"),
        ("type: rule\n", "title must be a non-empty string"),
        ("type: rule\ntitle: '   '\n", "title must be a non-empty string"),
        ("type: rule\ntitle: [a]\n", "title must be a non-empty string"),
        ("type: rule\ntitle: " + "t" * 201 + "\n", "at most 200"),
        ("type: rule\ntitle: T\nstatus: archived\n", "status must be one of"),
        ("type: rule\ntitle: T\ntags: python\n", "tags must be a list of strings"),
        ("type: rule\ntitle: T\ntags: [1, 2]\n", "tags must be a list of strings"),
        ("type: rule\ntitle: T\nalways: yes-please\n", "always must be true or false"),
    ],
)
def test_invalid_type_title_status_or_tags_are_refused_with_a_message(front: str, message: str) -> None:
    """Each invalid field gives a CorruptMemory naming the rule it broke."""
    with pytest.raises(CorruptMemory, match=message) as caught:
        parse(doc(front))
    assert caught.value.code == "ENGRAM_CORRUPT"


def test_a_working_note_must_have_type_note() -> None:
    """The working tier accepts only `type: note`."""
    with pytest.raises(CorruptMemory, match="type 'rule' is not one of: note"):
        parse(doc("type: rule\ntitle: T\n"), file_id="n1", tier="working")


def test_an_id_that_differs_from_the_file_name_is_refused() -> None:
    """The front-matter id must equal the file name."""
    with pytest.raises(CorruptMemory, match="differs from the file name"):
        parse(NORMAL, file_id="some-other-id")


def test_a_file_without_an_id_key_takes_the_file_name() -> None:
    """The file name gives the id when the front matter omits it."""
    assert parse(doc("type: rule\ntitle: T\n"), file_id="from-name").id == "from-name"


def test_unknown_keys_survive_a_render_and_parse_round_trip() -> None:
    """Unknown keys are kept: render then parse gives the same meta and body."""
    memory = parse(NORMAL.replace(b"source: save\n", b"source: save\nx-reviewer: ana\nx-extra: {n: 1}\n"))
    assert memory.meta["x-reviewer"] == "ana"
    again = parse(render_memory(memory.meta, memory.body))
    assert again.meta == memory.meta
    assert again.body == memory.body
    assert again.hash == memory.hash
    assert list(again.meta) == list(memory.meta)


def test_content_hash_ignores_key_order_and_line_endings() -> None:
    """The hash is of the canonical form: sorted keys, LF body."""
    meta = {"id": "a", "type": "rule", "title": "T"}
    reordered = {"title": "T", "id": "a", "type": "rule"}
    assert content_hash(meta, "one\ntwo\n") == content_hash(reordered, "one\r\ntwo\r\n")
    assert content_hash(meta, "one\ntwo\n") != content_hash(meta, "one\ntwo!\n")


def test_a_front_matter_closed_at_end_of_file_has_an_empty_body() -> None:
    """A closing '---' at the very end of the file is accepted with an empty body."""
    meta, body = split_front_matter("---\nid: a\n---")
    assert meta == {"id": "a"}
    assert body == ""


@pytest.mark.parametrize("value", ["!!timestamp nope", "!!int nope", "!!float nope"])
def test_a_typed_value_that_cannot_be_read_is_refused_in_engrams_words(value: str) -> None:
    """`!!timestamp nope` raised AttributeError inside the YAML library, which reached the
    reader as "cannot be parsed (AttributeError)"; it is the same refusal as `!!int nope`."""
    with pytest.raises(CorruptMemory, match="holds a value engram cannot read") as refused:
        parse(f"---\nid: x\ntype: fact\ntitle: T\ncreated: {value}\n---\nBody.\n".encode())
    assert "nope" not in str(refused.value)
