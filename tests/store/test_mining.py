"""save-session candidates from a human's words (SPEC §7; issue 12 "save-session makes poor
candidates from a real transcript"): labels and chat noise out, word-boundary titles and ids,
"don't save that" honoured, the type read from the line, secrets redacted and counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram_mcp.cli.main import main
from store.files.ids import MAX_ID_LENGTH, slugify
from store.propose import mining
from store.store import Store
from store.write import proposals

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "R8s2kLmN4pQ7tV9wX1yZ3aB5cD7eF9gH1jK3"


@pytest.mark.parametrize(
    ("line", "title"),
    [
        (
            "User: ok. Remember that the nightly build runs at 02:00 UTC.",
            "The nightly build runs at 02:00 UTC",
        ),
        (
            "[10:32] me: thanks! btw note that staging resets every Sunday at 03:00.",
            "Staging resets every Sunday at 03:00",
        ),
        ("> yeah, so, FYI: the billing API caps pages at 200 rows", "The billing API caps pages at 200 rows"),
        (
            "Human: Okay cool. We decided to ship the CLI as a single static binary.",
            "We decided to ship the CLI as a single static binary",
        ),
    ],
)
def test_speaker_labels_and_chat_noise_are_stripped(line: str, title: str) -> None:
    """Issue 12: `User: ok. Remember that…` was proposed with its label; now the fact itself."""
    [candidate] = mining.extract_candidates(line)
    assert candidate["title"] == title


def test_lines_the_assistant_said_are_not_mined() -> None:
    text = "assistant: I will always run the tests before pushing.\nClaude: We must never skip CI."
    assert mining.extract_candidates(text) == []


def test_a_long_title_is_cut_at_a_word_boundary() -> None:
    """Issue 12: titles were cut at 80 characters mid-word."""
    line = (
        "Never call the payment provider's refund endpoint from inside the nightly settlement "
        "transaction because it holds row locks"
    )
    [candidate] = mining.extract_candidates(line)
    title = candidate["title"]
    assert len(title) <= 80 and title.endswith("…")
    words = title.removesuffix("…").split()
    assert words == line.split()[: len(words)], "every word of the title is a whole word of the line"
    assert candidate["body"] == line


def test_a_long_id_is_cut_at_a_word_boundary(tmp_path: Path) -> None:
    """Issue 12: ids were cut mid-word at 64 characters."""
    title = "Always regenerate the protobuf bindings after editing any schema under proto/billing"
    slug = slugify(title)
    assert len(slug) <= MAX_ID_LENGTH
    assert set(slug.split("-")) <= set(title.lower().replace("/", " ").split())
    store = Store(tmp_path / "ws")
    store.init()
    [entry], _ = proposals.draft(store, mining.extract_candidates(title))
    assert entry.verdict.id == slug


@pytest.mark.parametrize(
    "text",
    [
        f"my AWS key is {AWS_KEY} and password=hunter2 don't save that",
        "Remember that the INVOICE_V2 flag is forced on in staging, but don't remember this",
        "off the record: we always deploy on Fridays",
    ],
)
def test_a_line_that_asks_not_to_be_saved_is_skipped_and_counted(text: str) -> None:
    """Issue 12: "… password=hunter2 don't save that" was proposed as a rule, password visible."""
    found, note = mining.mine(text)
    assert found == [] and "hunter2" not in json.dumps(found)
    assert note == "skipped 1 line you asked not to save"


def test_dont_save_that_on_its_own_line_drops_the_line_before() -> None:
    text = "Remember that the staging bucket is shared with the data team.\nactually don't save that\n"
    assert mining.mine(text) == ([], "skipped 1 line you asked not to save")


@pytest.mark.parametrize(
    "line",
    [
        GITHUB_TOKEN,
        f"sandbox token if you need it: {GITHUB_TOKEN}",
        "the staging db password: Zq9xT7!pW2 until friday",
    ],
)
def test_a_line_holding_only_a_secret_is_counted_not_dropped_silently(line: str) -> None:
    """Issue 12: lines holding only a secret vanished without a word."""
    found, note = mining.mine(f"We decided to use Postgres 16 for the ledger.\n{line}\n")
    assert [c["type"] for c in found] == ["decision"]
    assert note == "skipped 1 line holding a secret"
    assert "Zq9x" not in json.dumps(found) and GITHUB_TOKEN not in json.dumps(found)


def test_a_knowledge_line_with_a_secret_is_kept_redacted() -> None:
    [candidate] = mining.extract_candidates(
        f"Remember that the deploy bot signs in with key {AWS_KEY} on staging"
    )
    assert AWS_KEY not in json.dumps(candidate) and candidate["redacted"] == 1


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("We decided to keep all amounts in integer cents.", "decision"),
        ("Let's go with SQLite for the local cache.", "decision"),
        ("Heads up: the tax service times out if an invoice has more than 50 lines.", "gotcha"),
        ("boto3 silently falls back to us-east-1 when AWS_REGION is unset.", "gotcha"),
        ("Never construct money amounts from floats.", "rule"),
        ("Please always run ruff format before committing.", "rule"),
        ("I'd rather see the diff before you commit anything.", "preference"),
        ("Prefer small focused pull requests over big ones.", "preference"),
        ("Migrations go in db/migrations and are named by timestamp.", "convention"),
        ("We name feature branches type/short-description.", "convention"),
        ("To cut a release, run make release and push the tag.", "procedure"),
        ("FYI the export bucket is in eu-west-1, not us-east-1.", "fact"),
    ],
)
def test_the_type_is_read_from_what_the_line_says(line: str, kind: str) -> None:
    [candidate] = mining.extract_candidates(line)
    assert candidate["type"] == kind


@pytest.mark.parametrize(
    "line",
    [
        "it must be the fixture, the numbers look off",
        "I never liked that module anyway, it is a mess",
        "can you always show the full traceback when it fails",
        "Could we deploy this on Friday afternoon?",
        "```\nassert total == Decimal('10.00')  # must always match\n```",
    ],
)
def test_guesses_requests_questions_and_code_are_not_knowledge(line: str) -> None:
    assert mining.extract_candidates(line) == []


def test_the_cli_preview_counts_what_it_skipped(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.chdir(workspace)
    session = tmp_path / "session.txt"
    session.write_text(
        f"We decided to use Postgres 16 for the ledger.\n{GITHUB_TOKEN}\nfoo password=hunter2 don't save that\n"
    )
    assert main(["save-session", "--text", str(session)]) == 0
    out = capsys.readouterr().out
    assert "skipped 1 line holding a secret; skipped 1 line you asked not to save" in out
    assert main(["save-session", "--text", str(session), "--force"]) == 0
    out = capsys.readouterr().out
    assert "skipped 1 line holding a secret" in out and "hunter2" not in out
