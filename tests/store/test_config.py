"""Configuration (SPEC §9): workspace over user over defaults, validated, never fatal."""

from __future__ import annotations

from pathlib import Path

import orjson

from store.config import Config, load_config
from store.store import Store


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(data))


def test_defaults_apply_without_any_file(tmp_path: Path) -> None:
    """No config file: the documented defaults."""
    config = load_config(tmp_path / "user.json", tmp_path / "project.json")
    assert config == Config()
    assert (config.budget_tokens, config.full_cap_tokens, config.working_ttl_days) == (2000, 20000, 7)
    assert config.resource_limit == 20
    assert (config.dedup_duplicate, config.dedup_related) == (0.9, 0.6)
    assert config.role == "default"
    assert config.rule_variant == {"mode": "base"}
    assert config.diagnostics == ()


def test_the_workspace_overrides_the_user_file(empty_workspace: Path, engram_home: Path) -> None:
    """A key set in both comes from the workspace; a key set only by the user is kept."""
    _write(
        engram_home / "config.json",
        {"load": {"budget_tokens": 3000, "full_cap_tokens": 5000}, "role": "reviewer"},
    )
    _write(empty_workspace / ".engram" / "config.json", {"load": {"budget_tokens": 1500}})
    config = Store(empty_workspace).config()
    assert config.budget_tokens == 1500
    assert config.full_cap_tokens == 5000
    assert config.role == "reviewer"
    assert config.diagnostics == ()


def test_an_out_of_range_value_names_the_key_and_range_and_defaults_are_used(empty_workspace: Path) -> None:
    """budget_tokens 5 gives a diagnostic naming load.budget_tokens and 100 to 32000."""
    _write(empty_workspace / ".engram" / "config.json", {"load": {"budget_tokens": 5}})
    config = Store(empty_workspace).config()
    assert config.budget_tokens == 2000
    assert len(config.diagnostics) == 1
    code, message = config.diagnostics[0]
    assert code == "ENGRAM_CONFIG"
    assert "load.budget_tokens" in message
    assert "100 to 32000" in message
    assert str(empty_workspace) not in message


def test_an_unknown_key_is_refused(empty_workspace: Path) -> None:
    """An unknown key invalidates the file with a diagnostic naming it."""
    _write(empty_workspace / ".engram" / "config.json", {"load": {"budget_tokens": 900}, "colour": "blue"})
    config = Store(empty_workspace).config()
    assert config.budget_tokens == 2000
    assert len(config.diagnostics) == 1
    assert "colour" in config.diagnostics[0][1]


def test_invalid_json_gives_a_diagnostic(empty_workspace: Path) -> None:
    """A file that is not JSON is reported and defaults are used."""
    path = empty_workspace / ".engram" / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text("{ load: nope", encoding="utf-8")
    config = Store(empty_workspace).config()
    assert config.budget_tokens == 2000
    assert len(config.diagnostics) == 1
    assert "not valid JSON" in config.diagnostics[0][1]


def test_a_changed_config_file_is_read_again(empty_workspace: Path) -> None:
    """The same Store sees a config change without restart."""
    path = empty_workspace / ".engram" / "config.json"
    _write(path, {"load": {"budget_tokens": 1500}})
    store = Store(empty_workspace)
    assert store.config().budget_tokens == 1500
    _write(path, {"load": {"budget_tokens": 12345}})
    assert store.config().budget_tokens == 12345


def test_the_config_budget_is_the_load_default(workspace: Path) -> None:
    """load() without a budget uses load.budget_tokens."""
    _write(workspace / ".engram" / "config.json", {"load": {"budget_tokens": 400}})
    result, _ = Store(workspace).load("fix the crash")
    assert "budget 400 tokens" in result.text


def _imports_jsonschema(workspace: Path) -> tuple[bool, int]:
    """(whether reading the workspace's config imported jsonschema, its budget) in a fresh process."""
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path; from store.store import Store; "
        f"c = Store(Path({str(workspace)!r})).config(); print('jsonschema' in sys.modules, c.budget_tokens)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imported, budget = done.stdout.split()
    return imported == "True", int(budget)


def test_a_config_that_passed_is_not_checked_again_and_a_changed_one_is(
    empty_workspace: Path, engram_home: Path
) -> None:
    """The digest of a file that passed is kept in $ENGRAM_HOME: the next process reads the
    unchanged file without jsonschema; the same file made invalid is checked and refused."""
    engram_home.mkdir(parents=True)
    config = empty_workspace / ".engram" / "config.json"
    _write(config, {"load": {"budget_tokens": 1500}})
    assert _imports_jsonschema(empty_workspace) == (True, 1500)  # checked, and remembered
    assert len(orjson.loads((engram_home / "config-checked.json").read_bytes())) == 1
    assert _imports_jsonschema(empty_workspace) == (False, 1500)
    _write(config, {"load": {"budget_tokens": 5}})
    found = Store(empty_workspace).config()
    assert found.budget_tokens == 2000
    assert any("budget_tokens" in message for _, message in found.diagnostics)
    assert len(orjson.loads((engram_home / "config-checked.json").read_bytes())) == 1  # not kept


def test_a_read_only_store_remembers_no_config(empty_workspace: Path, engram_home: Path) -> None:
    engram_home.mkdir(parents=True)
    _write(empty_workspace / ".engram" / "config.json", {"load": {"budget_tokens": 1500}})
    assert Store(empty_workspace, read_only=True).config().budget_tokens == 1500
    assert not (engram_home / "config-checked.json").exists()
