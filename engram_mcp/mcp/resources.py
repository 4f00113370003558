"""Resources: `engram://index` (cards of every active memory) and `engram://memory/{id}`."""

from __future__ import annotations

from typing import Any, Final

from protocol.spec import Resources
from store.errors import StoreError
from store.files.ids import is_valid_id
from store.read.load import single
from store.store import Store

INDEX_URI: Final = "engram://index"
MEMORY_PREFIX: Final = "engram://memory/"
MIME: Final = "text/markdown"
TEMPLATES: Final = (
    {
        "uriTemplate": MEMORY_PREFIX + "{id}",
        "name": "memory",
        "title": "Memory by id",
        "description": "One memory's body, the same text as `engram load --id`; counts as a fetch.",
        "mimeType": MIME,
    },
)


def index_text(store: Store) -> str:
    view = store.view()
    active = sorted((m for m in view.durable.values() if m.active), key=lambda m: m.id)
    lines = [f"# engram index: {len(active)} active memories", ""]
    lines += [m.card for m in active]
    return "\n".join(lines) + "\n"


def resources(store: Store) -> Resources:
    def listing() -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = [
            {
                "uri": INDEX_URI,
                "name": "index",
                "title": "Memory index",
                "description": "One-line cards of every active memory",
                "mimeType": MIME,
            }
        ]
        limit = store.config().resource_limit
        if limit == 0:
            return entries
        usage = store.usage.counts()
        active = [m for m in store.view().durable.values() if m.active]
        active.sort(key=lambda m: (-usage.get(m.id, 0), m.id))
        for memory in active[:limit]:
            entries.append(
                {
                    "uri": MEMORY_PREFIX + memory.id,
                    "name": memory.id,
                    "title": memory.title,
                    "description": f"[{memory.type}] {memory.title}",
                    "mimeType": MIME,
                }
            )
        return entries

    def read(uri: str) -> list[dict[str, Any]] | None:
        if uri == INDEX_URI:
            return [{"uri": uri, "mimeType": MIME, "text": index_text(store)}]
        if not uri.startswith(MEMORY_PREFIX) or not is_valid_id(memory_id := uri[len(MEMORY_PREFIX) :]):
            return None
        try:
            memory = store.fetch(memory_id)
        except StoreError:
            return None
        return [{"uri": uri, "mimeType": MIME, "text": single(memory).text}]

    return Resources(listing=listing, templates=TEMPLATES, read=read)
