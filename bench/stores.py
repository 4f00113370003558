"""Synthetic but realistic memory stores for the benchmark (deterministic per size)."""

from __future__ import annotations

import itertools
import os
import random
import shutil
import subprocess
from pathlib import Path

TYPES = ["rule", "decision", "convention", "fact", "procedure", "gotcha", "preference"]
TAGS = [
    "python",
    "typescript",
    "database",
    "api",
    "frontend",
    "testing",
    "ci",
    "deploy",
    "release",
    "docs",
    "security",
    "tooling",
    "style",
    "debugging",
    "performance",
    "auth",
    "billing",
    "search",
    "infra",
    "review",
]
TERMS = [
    "migration",
    "alembic",
    "postgres",
    "index",
    "query",
    "cache",
    "redis",
    "worker",
    "queue",
    "retry",
    "timeout",
    "invoice",
    "tax",
    "currency",
    "rounding",
    "webhook",
    "stripe",
    "token",
    "session",
    "login",
    "react",
    "component",
    "hook",
    "state",
    "vite",
    "pytest",
    "fixture",
    "flaky",
    "coverage",
    "lint",
    "docker",
    "image",
    "layer",
    "kubernetes",
    "helm",
    "rollback",
    "release",
    "changelog",
    "semver",
    "tag",
    "logging",
    "metrics",
    "tracing",
    "latency",
    "budget",
    "schema",
    "pydantic",
    "openapi",
    "client",
    "server",
]


def _vocabulary() -> list[str]:
    """A fixed 6,000-word vocabulary (project terms first), used with Zipf-like frequencies."""
    rng = random.Random(0)
    consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
    words = list(TERMS)
    while len(words) < 6000:
        word = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(2, 4)))
        if word not in words:
            words.append(word)
    return words


VOCABULARY = _vocabulary()
_CUMULATIVE = list(itertools.accumulate(1 / (rank + 10) for rank in range(len(VOCABULARY))))


def _words(rng: random.Random, count: int) -> list[str]:
    return rng.choices(VOCABULARY, cum_weights=_CUMULATIVE, k=count)


def _memory(n: int, rng: random.Random, scope: str) -> tuple[str, str]:
    title = " ".join(_words(rng, rng.randint(4, 8))).capitalize()
    memory_id = f"m{n:06d}-" + "-".join(title.lower().split()[:3])
    tags = sorted(set(rng.sample(TAGS, rng.randint(1, 3))))
    body_lines = []
    for _ in range(rng.randint(2, 8)):
        body_lines.append(" ".join(_words(rng, rng.randint(8, 16))) + ".")
    always = "true" if n % 500 == 7 else "false"
    refs = ""
    if scope == "project":  # every project memory cites code: a symbol, and a second file
        module, other = n % MODULES, (n * 7 + 3) % MODULES
        refs = f"refs: [src/app/mod_{module:02d}.py#fn_{module:02d}_{n % SYMBOLS:02d}, src/app/mod_{other:02d}.py]\n"
    text = (
        f"---\nid: {memory_id}\ntype: {rng.choice(TYPES)}\ntitle: {title}\nscope: {scope}\n"
        f"tags: [{', '.join(tags)}]\nalways: {always}\nstatus: active\nsupersedes: []\n{refs}"
        f"created: 2026-10-01T10:00:00Z\nupdated: 2026-10-01T10:00:00Z\nsource: save\n---\n"
        + "\n".join(body_lines)
        + "\n"
    )
    return memory_id, text


MODULES = 50
SYMBOLS = 20


def _source_tree(workspace: Path) -> None:
    """The code the memories cite: a git repository with MODULES modules of SYMBOLS functions."""
    src = workspace / "src" / "app"
    src.mkdir(parents=True)
    for module in range(MODULES):
        body = "".join(f"def fn_{module:02d}_{k:02d}(x):\n    return x + {k}\n\n\n" for k in range(SYMBOLS))
        (src / f"mod_{module:02d}.py").write_text(body, encoding="utf-8")
    env = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "bench"}
    env |= {"GIT_COMMITTER_EMAIL": "b@example.invalid", "HOME": str(workspace), "PATH": os.environ["PATH"]}
    for args in (["init", "-q"], ["add", "src"], ["commit", "-q", "-m", "code"]):
        subprocess.run(["git", *args], cwd=workspace, env=env, check=True)


def build(root: Path, size: int) -> Path:
    """A workspace with `size` memories (10% user scope; every project memory cites code in a
    git repository) under root/ws3-<size>; reused when present."""
    workspace = root / f"ws3-{size}"
    done = workspace / ".bench-complete"
    if done.exists():
        return workspace
    shutil.rmtree(workspace, ignore_errors=True)
    _source_tree(workspace)
    rng = random.Random(size)
    project = workspace / ".engram" / "memory"
    user = workspace / "home" / "memory"
    project.mkdir(parents=True)
    user.mkdir(parents=True)
    for n in range(size):
        scope = "user" if n % 10 == 9 else "project"
        memory_id, text = _memory(n, rng, scope)
        folder = user if scope == "user" else project
        (folder / f"{memory_id}.md").write_text(text, encoding="utf-8")
    done.write_text("ok\n")
    return workspace


def queries(count: int = 20) -> list[str]:
    rng = random.Random(7)
    return [" ".join(rng.sample(TERMS, 2)) for _ in range(count)]
