"""Format-preserving JSON/JSONC editing for `engram link` / `engram unlink` (engram_mcp.hosts.formats.jsonc)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engram_mcp.hosts.formats import jsonc
from engram_mcp.hosts.formats.jsonc import JsoncError

ENTRY: dict[str, Any] = {"command": "engram-mcp", "args": []}

CLAUDE_MCP_JSON = """{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_TOKEN": "${GITHUB_TOKEN}" }
    },
    "sqlite": {
      "type": "stdio",
      "command": "uvx",
      "args": ["mcp-server-sqlite", "--db-path", "./data.db"]
    }
  }
}
"""

GEMINI_SETTINGS = """{
  // Look and feel
  "theme": "GitHub",
  /* Authentication, chosen
     on first start */
  "selectedAuthType": "oauth-personal",
  "general": {
    "vimMode": true, // I like vim
    "preferredEditor": "code",
  },
  "tools": { "allowed": ["run_shell_command(git status)"], },
}
"""

VSCODE_MCP_JSON = (
    "{\n"
    '\t"servers": {\n'
    '\t\t"playwright": {\n'
    '\t\t\t"type": "stdio",\n'
    '\t\t\t"command": "npx",\n'
    '\t\t\t"args": ["@playwright/mcp@latest"]\n'
    "\t\t}\n"
    "\t},\n"
    "\t// prompted once, stored in secret storage\n"
    '\t"inputs": [\n'
    "\t\t{\n"
    '\t\t\t"type": "promptString",\n'
    '\t\t\t"id": "api-key",\n'
    '\t\t\t"description": "API key",\n'
    '\t\t\t"password": true\n'
    "\t\t}\n"
    "\t]\n"
    "}\n"
)

OPENCODE_JSONC = """{
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    "context7": {
      "type": "remote",
      "url": "https://mcp.context7.com/mcp",
    },
    "fs": {
      "type": "local",
      "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."],
      "enabled": true
    }, // filesystem access for the agent
  },
}
"""

CURSOR_CRLF = (
    '{\r\n  "mcpServers": {\r\n    "linear": {\r\n      "url": "https://mcp.linear.app/sse"\r\n'
    "    } // remote\r\n  }\r\n}\r\n"
)

WINDSURF_FOUR_SPACES = """{
    "mcpServers": {
        "brave-search": {
            "command": "npx",
            "args": [
                "-y",
                "@modelcontextprotocol/server-brave-search"
            ],
            "env": {
                "BRAVE_API_KEY": "<key>"
            }
        }
    }
}"""

COMMENT_IN_EMPTY_SERVERS = """{
  "mcpServers": {
    // add MCP servers here
  },
  "globalShortcut": "Ctrl+Space"
}
"""

ROOT_WITH_COMMENTS_ONLY = """// Claude Desktop configuration
/* edited by hand */
{}
"""

COMPACT_ONE_LINE = '{"numStartups":3,"mcpServers":{"memory":{"command":"npx","args":["-y","@mcp/memory"]}}}\n'

DESKTOP_NO_SERVERS = """{
  "globalShortcut": "Alt+Space",

  "preferences": {
    "quickEntryDictation": false
  }
}
"""

CLAUDE_JSON_PROJECT = """{
  "numStartups": 12,
  "projects": {
    "/home/me/repo": {
      "allowedTools": [],
      "hasTrustDialogAccepted": true
    }
  }
}
"""

FIXTURES: list[tuple[str, str, tuple[str, ...]]] = [
    ("claude-mcp-json-two-servers", CLAUDE_MCP_JSON, ("mcpServers",)),
    ("gemini-settings-jsonc-without-mcpServers", GEMINI_SETTINGS, ("mcpServers",)),
    ("vscode-mcp-json-tabs-servers-inputs", VSCODE_MCP_JSON, ("servers",)),
    ("opencode-jsonc-trailing-comma-and-comment", OPENCODE_JSONC, ("mcp",)),
    ("cursor-crlf", CURSOR_CRLF, ("mcpServers",)),
    ("windsurf-four-spaces-no-final-newline", WINDSURF_FOUR_SPACES, ("mcpServers",)),
    ("empty-object", "{}", ("mcpServers",)),
    ("empty-object-newline", "{}\n", ("mcpServers",)),
    ("empty-file", "", ("mcpServers",)),
    ("comment-inside-empty-mcpServers", COMMENT_IN_EMPTY_SERVERS, ("mcpServers",)),
    ("root-only-comments-and-empty-object", ROOT_WITH_COMMENTS_ONLY, ("mcpServers",)),
    ("compact-one-line", COMPACT_ONE_LINE, ("mcpServers",)),
    ("claude-desktop-without-mcpServers", DESKTOP_NO_SERVERS, ("mcpServers",)),
    ("claude-json-project-scope", CLAUDE_JSON_PROJECT, ("projects", "/home/me/repo", "mcpServers")),
]
IDS = [name for name, _, _ in FIXTURES]


def _data(text: str) -> Any:
    return {} if not text.strip() else jsonc.loads(text)


def _expected(data: Any, path: tuple[str, ...], key: str, value: Any) -> Any:
    expected = json.loads(json.dumps(data))
    node = expected
    for name in path:
        node = node.setdefault(name, {})
    node[key] = value
    return expected


def _is_subsequence(short: str, long: str) -> bool:
    chars = iter(long)
    return all(ch in chars for ch in short)


@pytest.mark.parametrize(("name", "text", "path"), FIXTURES, ids=IDS)
def test_set_member_adds_the_entry_to_the_parsed_data(name: str, text: str, path: tuple[str, ...]) -> None:
    edited = jsonc.set_member(text, path, "engram", ENTRY)
    assert jsonc.loads(edited) == _expected(_data(text), path, "engram", ENTRY)
    assert jsonc.get(edited, (*path, "engram")) == ENTRY


@pytest.mark.parametrize(("name", "text", "path"), FIXTURES, ids=IDS)
def test_set_member_only_inserts_text(name: str, text: str, path: tuple[str, ...]) -> None:
    edited = jsonc.set_member(text, path, "engram", ENTRY)
    assert _is_subsequence(text, edited)
    assert edited.count("\r\n") == edited.count("\n") or "\r\n" not in text
    if "\r\n" not in text:
        assert "\r" not in edited


@pytest.mark.parametrize(("name", "text", "path"), FIXTURES, ids=IDS)
def test_setting_the_same_value_again_is_byte_identical(name: str, text: str, path: tuple[str, ...]) -> None:
    edited = jsonc.set_member(text, path, "engram", ENTRY)
    assert jsonc.set_member(edited, path, "engram", {"command": "engram-mcp", "args": []}) == edited


@pytest.mark.parametrize(("name", "text", "path"), FIXTURES, ids=IDS)
def test_remove_member_restores_the_original_bytes(name: str, text: str, path: tuple[str, ...]) -> None:
    edited = jsonc.set_member(text, path, "engram", ENTRY)
    restored = jsonc.remove_member(edited, path, "engram")
    if text == "":
        # An empty file and "{}\n" give the same edited text; unlink keeps the valid "{}\n".
        assert restored == "{}\n"
    else:
        assert restored == text


@pytest.mark.parametrize(("name", "text", "path"), FIXTURES, ids=IDS)
def test_remove_member_of_an_absent_key_changes_nothing(name: str, text: str, path: tuple[str, ...]) -> None:
    assert jsonc.remove_member(text, path, "engram") == text


def test_new_entry_follows_the_files_indentation_and_line_endings() -> None:
    tabs = jsonc.set_member(VSCODE_MCP_JSON, ("servers",), "engram", ENTRY)
    assert '\t\t},\n\t\t"engram": {\n\t\t\t"command": "engram-mcp",\n\t\t\t"args": []\n\t\t}\n\t},' in tabs
    four = jsonc.set_member(WINDSURF_FOUR_SPACES, ("mcpServers",), "engram", ENTRY)
    assert '        },\n        "engram": {\n            "command": "engram-mcp",' in four
    assert four.endswith("    }\n}")
    crlf = jsonc.set_member(CURSOR_CRLF, ("mcpServers",), "engram", ENTRY)
    assert '    }, // remote\r\n    "engram": {\r\n      "command": "engram-mcp",\r\n' in crlf


def test_a_trailing_comma_and_comment_on_the_last_member_stay_in_place() -> None:
    edited = jsonc.set_member(OPENCODE_JSONC, ("mcp",), "engram", ENTRY)
    assert '    }, // filesystem access for the agent\n    "engram": {\n' in edited
    assert '      "args": []\n    },\n  },\n}\n' in edited


def test_missing_containers_are_created_after_a_trailing_comma() -> None:
    edited = jsonc.set_member(GEMINI_SETTINGS, ("mcpServers",), "engram", ENTRY)
    assert edited.endswith(
        '  "tools": { "allowed": ["run_shell_command(git status)"], },\n'
        '  "mcpServers": {\n    "engram": {\n      "command": "engram-mcp",\n      "args": []\n    }\n  },\n}\n'
    )


def test_an_empty_object_is_expanded_to_multiple_lines() -> None:
    assert jsonc.set_member("{}\n", ("mcpServers",), "engram", ENTRY) == jsonc.new_document(
        ("mcpServers",), "engram", ENTRY
    )
    assert jsonc.set_member("{}", (), "engram", {"command": "engram-mcp"}) == (
        '{\n  "engram": {\n    "command": "engram-mcp"\n  }\n}'
    )


def test_a_compact_file_stays_on_one_line() -> None:
    edited = jsonc.set_member(COMPACT_ONE_LINE, ("mcpServers",), "engram", ENTRY)
    assert edited == (
        '{"numStartups":3,"mcpServers":{"memory":{"command":"npx","args":["-y","@mcp/memory"]},'
        '"engram":{"command":"engram-mcp","args":[]}}}\n'
    )


def test_new_document_uses_two_spaces_and_a_final_newline() -> None:
    assert jsonc.new_document(("mcpServers",), "engram", ENTRY) == (
        '{\n  "mcpServers": {\n    "engram": {\n      "command": "engram-mcp",\n      "args": []\n    }\n  }\n}\n'
    )


def test_replacing_an_existing_entry_changes_only_its_value_span() -> None:
    original = jsonc.set_member(CLAUDE_MCP_JSON, ("mcpServers",), "engram", ENTRY)
    start = original.index('"engram": ') + len('"engram": ')
    end = original.index("}", start) + 1
    new_value = {"command": "engram-mcp", "args": ["--read-only"], "env": {"ENGRAM_LOG": "debug"}}
    replaced = jsonc.set_member(original, ("mcpServers",), "engram", new_value)
    rendered = (
        '{\n      "command": "engram-mcp",\n      "args": [\n        "--read-only"\n      ],\n'
        '      "env": {\n        "ENGRAM_LOG": "debug"\n      }\n    }'
    )
    assert replaced == original[:start] + rendered + original[end:]
    assert jsonc.get(replaced, ("mcpServers", "engram")) == new_value


def test_replacing_a_value_keeps_the_comments_around_it() -> None:
    text = '{\n  // ours\n  "engram": { "command": "old" }, // keep\n  "other": 1\n}\n'
    edited = jsonc.set_member(text, (), "engram", "x")
    assert edited == '{\n  // ours\n  "engram": "x", // keep\n  "other": 1\n}\n'


def test_a_hand_written_entry_in_the_middle_is_removed_with_its_line_and_comma() -> None:
    text = '{\n  "mcpServers": {\n    "a": {},\n    "engram": { "command": "engram-mcp" },\n    "b": {}\n  }\n}\n'
    assert jsonc.remove_member(text, ("mcpServers",), "engram") == (
        '{\n  "mcpServers": {\n    "a": {},\n    "b": {}\n  }\n}\n'
    )


def test_a_hand_written_first_entry_on_a_shared_line_is_removed_with_its_comma() -> None:
    text = '{"mcpServers": {"engram": {"command": "engram-mcp"}, "b": {}}}'
    assert jsonc.remove_member(text, ("mcpServers",), "engram") == '{"mcpServers": {"b": {}}}'


def test_a_hand_written_last_entry_takes_the_previous_comma_with_it() -> None:
    text = '{\n  "a": 1,\n  "engram": 2 // mine\n}\n'
    removed = jsonc.remove_member(text, (), "engram")
    assert removed == '{\n  "a": 1\n}\n'
    assert jsonc.loads(removed) == {"a": 1}


def test_an_emptied_container_with_a_comment_is_kept() -> None:
    text = '{\n  "mcpServers": {\n    // servers\n    "engram": {}\n  }\n}\n'
    assert (
        jsonc.remove_member(text, ("mcpServers",), "engram")
        == '{\n  "mcpServers": {\n    // servers\n  }\n}\n'
    )


def test_unlink_also_drops_an_empty_container_that_was_there_before() -> None:
    # Cursor's default file; after link + unlink it is the equivalent "{}" (the expanded
    # container cannot be told apart from one that link created).
    text = '{\n  "mcpServers": {}\n}\n'
    edited = jsonc.set_member(text, ("mcpServers",), "engram", ENTRY)
    assert edited == jsonc.new_document(("mcpServers",), "engram", ENTRY)
    assert jsonc.remove_member(edited, ("mcpServers",), "engram") == "{}\n"


def test_duplicate_keys_last_wins_and_removal_removes_all() -> None:
    text = '{"engram": 1, "engram": 2}'
    assert jsonc.loads(text) == {"engram": 2}
    assert jsonc.get(text, ("engram",)) == 2
    assert jsonc.remove_member(text, (), "engram") == "{}"


def test_loads_accepts_comments_and_trailing_commas() -> None:
    assert jsonc.loads(GEMINI_SETTINGS)["general"] == {"vimMode": True, "preferredEditor": "code"}
    assert jsonc.loads("[1, 2.5e3, -0, true, false, null,] // end") == [1, 2500.0, 0, True, False, None]


def test_strings_that_look_like_comments_or_structure_are_plain_strings() -> None:
    text = (
        '{\n  "url": "http://example.com//path", // real comment\n'
        '  "glob": "src/*.py", "quote": "say \\"hi\\" {not: [structure]}",\n'
        '  "slashes": "a\\\\", "end": "*/"\n}\n'
    )
    data = jsonc.loads(text)
    assert data == {
        "url": "http://example.com//path",
        "glob": "src/*.py",
        "quote": 'say "hi" {not: [structure]}',
        "slashes": "a\\",
        "end": "*/",
    }
    edited = jsonc.set_member(text, (), "engram", ENTRY)
    assert jsonc.loads(edited) == {**data, "engram": ENTRY}
    assert jsonc.remove_member(edited, (), "engram") == text


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ('{\n  "a": 1,\n  "b": {\n    "c": 2\n', 5, 1, "expected ',' or '}', found end of input"),
        ('{\n  "a": 1\n  "b": 2\n}', 3, 3, "expected ',' or '}', found '\"b\"'"),
        ('{\n  "a": tru\n}', 2, 8, "unexpected 'tru'"),
        ('{\n  "a": True\n}', 2, 8, "unexpected 'True'"),
        ('{\n  "a": 1\n}\n/* never closed', 4, 1, "unclosed /* comment"),
        ('{"a": "line\nbreak"}', 1, 7, "invalid or unterminated string"),
        ("{'a': 1}", 1, 2, 'unexpected "\'"'),
        ('{"a": 1} {"b": 2}', 1, 10, "expected end of input, found '{'"),
        ("", 1, 1, "expected a value, found end of input"),
    ],
    ids=[
        "unclosed-object",
        "missing-comma",
        "bad-literal",
        "python-literal",
        "unclosed-comment",
        "raw-newline",
        "single-quotes",
        "two-documents",
        "empty",
    ],
)
def test_loads_reports_the_line_and_column_of_broken_input(
    text: str, line: int, column: int, message: str
) -> None:
    with pytest.raises(JsoncError) as caught:
        jsonc.loads(text)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert str(caught.value) == f"line {line}, column {column}: {message}"
    assert isinstance(caught.value, ValueError)


def test_editing_refuses_broken_input_and_non_object_containers() -> None:
    with pytest.raises(JsoncError):
        jsonc.set_member('{"mcpServers": {', ("mcpServers",), "engram", ENTRY)
    with pytest.raises(JsoncError, match="line 2, column 17: mcpServers is not an object"):
        jsonc.set_member('{\n  "mcpServers": [],\n}', ("mcpServers",), "engram", ENTRY)
    with pytest.raises(JsoncError, match="the document root is not an object"):
        jsonc.set_member("[]", ("mcpServers",), "engram", ENTRY)


def test_get_returns_values_at_a_key_path_or_none() -> None:
    assert jsonc.get(CLAUDE_MCP_JSON, ("mcpServers", "sqlite", "command")) == "uvx"
    assert jsonc.get(OPENCODE_JSONC, ("mcp", "fs", "enabled")) is True
    assert jsonc.get(OPENCODE_JSONC, ()) == jsonc.loads(OPENCODE_JSONC)
    assert jsonc.get(GEMINI_SETTINGS, ("mcpServers", "engram")) is None
    assert jsonc.get(CLAUDE_MCP_JSON, ("mcpServers", "github", "args", "x")) is None
    assert jsonc.get("", ("mcpServers",)) is None
    assert jsonc.get("// nothing yet\n", ()) is None
