"""The `propose` prompt: how an agent proposes knowledge and waits for the human."""

from __future__ import annotations

from typing import Any

from protocol.spec import Prompt, PromptArgument

_STEPS = """\
Propose durable project knowledge to engram{topic}:
1. Gather what this session established that future work needs: rules, decisions (with the \
reason), conventions, gotchas, procedures. One idea per candidate; skip what the code shows.
2. Search first (engram_search) so you do not propose what is already known.
3. Call engram_save with the candidates (type, title, body, tags). It writes nothing: it returns \
a numbered preview with a verdict per candidate and an approval_token.
4. Show the human the preview exactly as returned, and ask which numbers to keep.
5. Only after the human explicitly approves, call engram_commit with the approval_token and \
approve: "all" or the approved numbers. Never commit on your own.
"""


def _render(arguments: dict[str, str]) -> list[dict[str, Any]]:
    topic = arguments.get("topic", "").strip()
    text = _STEPS.format(topic=f" about: {topic}" if topic else "")
    return [{"role": "user", "content": {"type": "text", "text": text}}]


PROPOSE = Prompt(
    name="propose",
    title="Propose memory",
    description="The proposal protocol: gather, engram_save, show the preview, wait for the human, engram_commit.",
    arguments=(PromptArgument("topic", "What the knowledge is about (optional)"),),
    render=_render,
)
PROMPTS = (PROPOSE,)
