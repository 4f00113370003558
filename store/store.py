"""The store's read path as one object: both scopes, config, search, route, load, status.

Writes go through store.write.transaction; verify and accept are store.review's."""

from __future__ import annotations

import gc
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from store.code import staleness
from store.code.validity import current
from store.config import CHECKED_NAME, CheckedConfigs, Config, load_config
from store.errors import Next, NotFound, Problem, UnsafePath, Words
from store.files.fsutil import clean_stale_temps
from store.files.git import repository
from store.files.ids import check_id
from store.files.memory import Memory, as_embedded
from store.files.workspace import (
    STATE_FILES,
    ScopeDir,
    check_scope,
    home_problem,
    init_scope,
    project_dir,
    state_file_problem,
    user_dir,
)
from store.read.catalog import Broken, Catalog, Snapshot, memory_key
from store.read.load import LoadResult, Selected, Why, plain_words, single, tiered
from store.read.route import RouteEntry, RoutePlan, RoutePool, route, task_classes, unrouted
from store.read.session import (
    WorkingTree,
    cards_fit,
    routed_why,
    session_route,
    whole_store,
    whole_why,
    working_tree,
)
from store.read.usage import Usage
from store.read.variants import variant_text
from store.safety import untrusted
from store.safety.user_key import Secret, user_secret
from store.search.confidence import WORDS_FIRST, Judged, lines, meaning
from store.search.fusion import fuse, model_weight
from store.search.lexical import Hit, Key, SearchIndex, key_of, snippet
from store.search.vector_extra import available, disabled_by_env, missing
from store.write.approvals import Pending
from store.write.verdicts import MEANING_BANDS, POOL, Pool

if TYPE_CHECKING:
    from store.search.vectors import VectorIndex
    from store.write.verdicts import Candidate

NUMPY_STORE: Final = 2000
"""Memories above which a server's warm-up imports numpy: its queries touch enough postings
that numpy's arithmetic beats plain Python (store.search.bm25)."""
FIRST_ANSWER_WAIT: Final = 0.5
"""Seconds a server's warm-up waits for its first search to answer before loading the rest."""
ROUTE_HITS: Final = 200
"""The best search hits a task's routing scores (store.read.route keeps at most 20 of them)."""


@dataclass(frozen=True, slots=True)
class View:
    """What reads see at one instant: durable memories by id (project shadows user), live notes."""

    durable: dict[str, Memory]
    notes: dict[str, Memory]
    problems: tuple[Problem, ...]
    snapshots: tuple[Snapshot, ...]
    key: tuple[Any, ...]
    """Catalog versions and the day: equal keys mean equal views."""

    def everything(self) -> list[Memory]:
        return [*self.durable.values(), *self.notes.values()]

    @property
    def broken(self) -> list[Broken]:
        """The memory files of both scopes that engram could not use, project first."""
        return [b for s in self.snapshots for b in s.broken]

    def broken_file(self, memory_id: str) -> Broken | None:
        """The unusable file with that id, when no memory has it (project first, durable first)."""
        found = [b for b in self.broken if b.id == memory_id]
        return min(found, key=lambda b: b.tier != "durable", default=None)


@dataclass(frozen=True, slots=True)
class SearchEntry:
    id: str
    type: str
    scope: str
    score: float
    title: str
    snippet: str


@dataclass(frozen=True, slots=True)
class SearchResult:
    entries: list[SearchEntry]
    backends: tuple[str, ...]
    """The signals that took part: `bm25`, and `vectors:<model>` when the vector signal did."""
    diagnostics: tuple[tuple[str, str], ...] = ()
    no_match: str = ""
    """Why no memory answers the query, when none does (store.search.confidence)."""


class Store:
    def __init__(
        self,
        workspace: Path,
        *,
        env: Mapping[str, str] = os.environ,
        read_only: bool = False,
        today: Callable[[], date] | None = None,
        clock: Callable[[], float] | None = None,
        background: bool = True,
    ) -> None:
        """`background`: find hand edits of a large store off the request path (a server);
        a one-shot command (the CLI, the session hook) reads once and passes False."""
        self.workspace = workspace
        self._background = background
        self.project: ScopeDir = project_dir(workspace)
        self.user: ScopeDir = user_dir(env)
        self.read_only = read_only
        self.home_problem = home_problem(self.user.root)
        """Why `$ENGRAM_HOME` cannot be used, or None. When set, this store reads the project
        alone, keeps no derived file (its secret cannot be kept, so nothing it tags could be
        trusted later), refuses writes (`home_refusal`) and says so once in its notices."""
        keeps = self._keeps
        self.objective = env.get("ENGRAM_SESSION_OBJECTIVE", "")
        fixed = _fixed_clock(env.get("ENGRAM_NOW", ""))
        self.now: Callable[[], float] = clock or fixed or time.time
        self._today = today or (lambda: datetime.fromtimestamp(self.now(), UTC).date())
        self._secret: Secret | None = None
        self._notices: dict[str, tuple[str, str]] = {}
        self._catalogs = tuple(
            Catalog(
                scope,
                persist=keeps,
                key=self.key,
                notice=self.notice,
                background=background,
                readable=scope is self.project or self.home_problem is None,
            )
            for scope in (self.project, self.user)
        )
        self._search = SearchIndex(self.project.search_path, writable=keeps, key=self.key, notice=self.notice)
        self._vectors: VectorIndex | None = None
        """Made on first use: the server's handshake never imports the vector module."""
        self._vectors_env = {"ENGRAM_VECTORS": env.get("ENGRAM_VECTORS", "")}
        self._answered = threading.Event()
        """Set once a search has answered (or by `close`): `warm` loads what the first search
        can do without (numpy's kernels, the vector model) after it, not while it competes for
        the GIL."""
        self._closing = threading.Event()
        """Set by `close`: the warm-up warms nothing more."""
        self._vectors_warming = False
        """True while `warm` has yet to load the vector model and embeddings: a search meanwhile
        answers from BM25 alone (and says so in its backends) instead of waiting for them."""
        self._by_key: tuple[tuple[Any, ...], dict[Key, Memory]] = ((), {})
        self.usage = Usage(self.project, enabled=keeps, key=self.key, notice=self.notice)
        self._view_lock = threading.Lock()
        self._view: View | None = None
        self._by_scope: dict[str, tuple[dict[str, Memory], dict[str, Memory]]] = {}
        self._index_hash: tuple[tuple[Any, ...], str] = ((), "")
        self._pool: tuple[tuple[Any, ...], RoutePool] = ((), RoutePool.of(()))
        self.agent_shell = False
        """Set by the CLI when it runs in an agent's shell (SPEC §7): what it writes is sealed as
        made there (store.read.index_file.SHELL_MARK), and verify lists it for the human's review."""
        self.recovered = 0
        """Files rewritten by `transaction.recover` from an interrupted commit's journal (verify
        reports it)."""
        self._config_lock = threading.Lock()
        self._config_key: tuple[Any, ...] = ()
        self._config = Config()
        self._checked = CheckedConfigs(self.user.root / CHECKED_NAME, writable=keeps)
        if self.home_problem is not None:
            self.notice("ENGRAM_UNSAFE_PATH", self.home_refusal(", so engram reads this project alone"))

    # --- the per-user secret and what it found (SPEC §2) ------------------------------------
    def key(self) -> bytes:
        """The per-user secret (created on first need; a read-only store never creates it)."""
        if self._secret is None:
            self._secret = user_secret(self.user.root, create=self._keeps)
            if self._secret.notice:
                self.notice("ENGRAM_UNTRUSTED", self._secret.notice)
        return self._secret.key

    @property
    def _keeps(self) -> bool:
        """Whether this store may make and keep files of its own: its secret, derived files, usage."""
        return not self.read_only and self.home_problem is None

    def home_refusal(self, what: str) -> str:
        """What an unusable `$ENGRAM_HOME` means (`what`: for this use) and its fix."""
        return (
            f"$ENGRAM_HOME ({untrusted.line(self.user.root, 1000)}) {self.home_problem}: your user-scope "
            f"memories, your config and the secret that tags engram's files cannot be used{what}. "
            "Fix: make it a folder you own, or point ENGRAM_HOME at one"
        )

    @property
    def catalogs(self) -> tuple[Catalog, ...]:
        """Each scope's file cache, project first: the writer takes in and seals its own writes."""
        return self._catalogs

    def notice(self, code: str, message: str) -> None:
        """Remember something engram discarded or repaired, for status and verify to report."""
        self._notices.setdefault(f"{code}:{message}", (code, message))

    def notices(self) -> tuple[tuple[str, str], ...]:
        """(code, message) of every untrusted or unusable state file met by this process."""
        return tuple(self._notices.values())

    # --- state -----------------------------------------------------------------------------
    def config(self) -> Config:
        key = tuple(_stamp(p) for p in (self.user.config_path, self.project.config_path))
        with self._config_lock:
            if key != self._config_key:
                user = self.user.config_path if self.home_problem is None else None
                self._config = load_config(user, self.project.config_path, self._checked)
                self._config_key = key
            return self._config

    def view(self, *, recent_ok: bool = False, sweep: bool = False) -> View:
        """What reads see now; rebuilt only when a catalog changed (or the day did).
        `sweep`: re-stat every known file whatever the store's size (the write path)."""
        with self._view_lock:
            snapshots = tuple(c.refresh(recent_ok=recent_ok, force=sweep) for c in self._catalogs)
            today = self._today().isoformat()
            key = (*(s.version for s in snapshots), today)
            if self._view is not None and self._view.key == key:
                return self._view
            drained = [(catalog.scope.scope, catalog.drain_changes()) for catalog in self._catalogs]
            if self._view is None or sum(len(d) for _, d in drained) > 5000 or self._view.key[-1] != today:
                del drained  # rebuilt from the snapshots: the changes (100,000 at a start) go first
                self._by_scope = {}
                for catalog, snapshot in zip(self._catalogs, snapshots, strict=True):
                    durable = {
                        m.id: m for m in snapshot.memories if m.tier == "durable" and current(m, today)
                    }
                    notes = {m.id: m for m in snapshot.memories if m.tier == "working" and current(m, today)}
                    self._by_scope[catalog.scope.scope] = (durable, notes)
                user, project = self._by_scope["user"], self._by_scope["project"]
                merged = ({**user[0], **project[0]}, {**user[1], **project[1]})
                self._search.sync([*merged[0].values(), *merged[1].values()])
            else:
                changes = {
                    (scope, *name.split("/", 1)): memory
                    for scope, part in drained
                    for name, memory in part.items()
                }
                for (scope, tier, memory_id), memory in changes.items():
                    durable, notes = self._by_scope[scope]
                    target = durable if tier == "durable" else notes
                    if memory is None or not current(memory, today):  # store.code.validity
                        target.pop(memory_id, None)
                    else:
                        target[memory_id] = memory
                user, project = self._by_scope["user"], self._by_scope["project"]
                merged = ({**user[0], **project[0]}, {**user[1], **project[1]})
                updates: dict[tuple[str, str, str], Memory | None] = {}
                for _, tier, memory_id in changes:  # only what is visible is searchable
                    side = 0 if tier == "durable" else 1
                    visible = merged[side].get(memory_id)
                    for scope, tables in self._by_scope.items():
                        own = tables[side].get(memory_id)
                        updates[(scope, tier, memory_id)] = (
                            own if own is not None and own is visible else None
                        )
                self._search.update(updates)
            problems = tuple(p for s in snapshots for p in s.problems)
            self._view = View(merged[0], merged[1], problems, snapshots, key)  # fresh dicts, never changed
            return self._view

    def warm(self) -> None:
        """Read the indexes in now, so the first request does not wait for them; a large
        store also loads BM25's numpy kernels, which its searches then use (store.search.bm25). The
        vector model and embeddings come last, and searches until they are in answer from BM25
        alone (backends `bm25`): a server's first search never waits ~200 ms for a model; the
        ones after fuse both signals. The collector is paused meanwhile and what warming made
        is frozen: it (about ten objects per memory) lives as long as the store, and collecting
        it as it was made, then again at the first search, cost ~100 ms of a 10,000-memory
        start."""
        collecting = gc.isenabled()
        gc.disable()
        self._vectors_warming = True
        try:
            view = self.view()
            self._search.warm()
            self._answered.wait(FIRST_ANSWER_WAIT)
            if self._closing.is_set():  # a session closed before its first search: nothing more to warm
                return
            if len(view.durable) + len(view.notes) > NUMPY_STORE:
                self._search.load_kernels()
            backlog = self._vectors_on() and self._vector_index().warm(
                self.config().vector_model, lambda: self._keyed(view), view.key
            )
        finally:
            self._vectors_warming = False
            gc.freeze()  # and never walk them later (a collection right after would, at once)
            if collecting:
                gc.enable()
        if backlog:  # a first build (a fresh store, a new model): embedded here, searches on BM25 meanwhile
            self._vector_index().build()

    def clean_temps(self) -> None:
        """Remove temp files a killed writer left behind (a listing: servers do it off the
        request path, the CLI at start)."""
        if self.read_only:
            return
        for scope in (self.project, self.user):
            for folder in (scope.root, scope.memory_dir, scope.working_dir):
                clean_stale_temps(folder)

    def similar_pool(self, candidate: Candidate, view: View | None = None) -> Pool:
        """The active durable memories a verdict compares `candidate` with: the POOL best BM25
        matches of its text, then up to POOL memories that hold every word of it (shortest
        first), so an exact or containing duplicate is seen whatever BM25 ranks above it, then,
        where the vector signal takes part with a model verdicts have bands for, up to POOL
        nearest by meaning, each with its cosine (one embedding of the text, store.write.verdicts)."""
        view = view or self.view()

        def eligible(memory: Memory) -> bool:
            return memory.tier == "durable" and memory.active and view.durable.get(memory.id) is memory

        text = candidate.text()
        ranked = [h.memory for h in self._search.search(text, 100) if eligible(h.memory)][:POOL]
        holding = [m for m in self._search.containing(text) if eligible(m)][:POOL]
        pool = {(m.scope, m.id): m for m in [*ranked, *holding]}
        if not self._meaning_ready():
            return Pool(list(pool.values()))
        scored = self._vector_index().scores(
            as_embedded(candidate.title, candidate.tags, candidate.body),
            self.config().vector_model,
            lambda: self._keyed(view),
            view.key,
            want=[key_of(m) for m in pool.values()],
            top=2 * POOL,
        )
        if scored is None or scored.building is not None or scored.model not in MEANING_BANDS:
            return Pool(list(pool.values()))
        by_key = self._keyed(view)
        near = sorted(
            ((v, k) for k, v in scored.scores.items() if k in by_key and eligible(by_key[k])),
            key=lambda row: (-row[0], row[1]),
        )
        cosines = {(k[0], k[2]): v for v, k in near}
        for _, k in near[:POOL]:
            pool.setdefault((k[0], k[2]), by_key[k])
        return Pool(list(pool.values()), scored.model, {k: cosines[k] for k in pool if k in cosines})

    def meaning_neighbours(
        self, view: View | None = None, *, top: int
    ) -> tuple[str, list[tuple[Memory, Memory, float]]] | None:
        """Each active durable memory's `top` nearest of its own scope by meaning, with their
        cosine (store.search.vectors.VectorIndex.neighbours), for the near-duplicates page; None
        while the vector signal is off, loading or building, or has a model verdicts have no
        bands for."""
        view = view or self.view()
        if not self._meaning_ready():
            return None
        by_key = self._keyed(view)
        groups: dict[str, list[Key]] = {}
        for memory in view.durable.values():
            if memory.active:
                groups.setdefault(memory.scope, []).append(key_of(memory))
        found = self._vector_index().neighbours(
            self.config().vector_model, lambda: by_key, view.key, groups.values(), top
        )
        if found is None or found[0] not in MEANING_BANDS:
            return None
        return found[0], [(by_key[a], by_key[b], cosine) for a, b, cosine in found[1]]

    def init(self) -> list[str]:
        return init_scope(self.project)

    def close(self) -> None:
        """Flush what is batched: usage counts, the derived index and the search index. The
        warm-up stops waiting for a first search and warms nothing more."""
        self._closing.set()
        self._answered.set()
        self.usage.flush()
        for catalog in self._catalogs:
            catalog.close()
        if not self.read_only:
            for catalog in self._catalogs:
                catalog.flush()
            try:
                check_scope(self.project)  # derived data is never written through a link
            except UnsafePath:
                return
            self._search.save()
            if self._vectors is not None:
                self._vectors.stop()  # a build under way ends after its batch, its progress saved
                self._vectors.save()

    # --- lookups ---------------------------------------------------------------------------
    def get(self, memory_id: object, view: View | None = None) -> Memory:
        """The memory with that id (durable first, then a live note); InvalidId / NotFound, or
        CorruptMemory naming the problem when its file is there but unusable."""
        wanted = check_id(memory_id)
        view = view or self.view()
        found = view.durable.get(wanted) or view.notes.get(wanted)
        if found is None:
            if (broken := view.broken_file(wanted)) is not None:
                raise broken.error()  # there, but unusable: the problem, not "no memory"
            raise NotFound(f"no memory with id {wanted!r}: ", Next("find_ids"))
        return found

    def fetch(self, memory_id: object) -> Memory:
        """`get` that counts as a fetch in usage.json."""
        memory = self.get(memory_id)
        self.usage.record(memory.id)
        return memory

    def _scores(self, view: View, *, fused: bool = True) -> Callable[[str], dict[str, float]]:
        """A task's scores for routing: search's own (BM25, fused with the vector signal where
        it takes part and `fused`), over the active durable memories. A session start routes by
        git's words (branch, commit subjects: names, not meaning) with BM25 alone, so the hook
        never waits for a model to load."""

        def scores(query: str) -> dict[str, float]:
            durable = view.durable

            def wanted(memory: Memory) -> bool:
                return memory.active and durable.get(memory.id) is memory

            if not fused:
                return {m.id: score for m, score in self._search.scored(query, ROUTE_HITS) if wanted(m)}
            hits, _, _ = self._fused(query, self._search.search(query, ROUTE_HITS), view, ROUTE_HITS, wanted)
            return {h.memory.id: h.score for h in hits}

        return scores

    @staticmethod
    def _visible(view: View, memory: Memory) -> bool:
        """Not shadowed by a project memory of the same id, and (notes) not expired."""
        table = view.durable if memory.tier == "durable" else view.notes
        return table.get(memory.id) is memory

    # --- search ----------------------------------------------------------------------------
    def _vectors_on(self) -> bool:
        """The vector signal takes part: extra installed, not off by ENGRAM_VECTORS or config."""
        config = self.config()
        return config.vectors and not disabled_by_env(self._vectors_env) and available(config.vector_model)

    def _meaning_ready(self) -> bool:
        """The vector signal is on and `warm` is not still loading it (searches meanwhile answer
        from BM25 alone)."""
        return not self._vectors_warming and self._vectors_on()

    def _vector_index(self) -> VectorIndex:
        with self._config_lock:  # the warm-up thread and a first search may both get here
            if self._vectors is None:
                from store.search.vectors import VectorIndex  # seam: numpy, tokenizers, safetensors

                self._vectors = VectorIndex(
                    self.project.root / "vectors.bin",
                    writable=not self.read_only,
                    key=self.key,
                    notice=self.notice,
                    one_shot=not self._background,
                )
            return self._vectors

    def _keyed(self, view: View) -> dict[Key, Memory]:
        if self._by_key[0] != view.key:
            self._by_key = (view.key, {key_of(m): m for m in view.everything()})
        return self._by_key[1]

    def _fused(
        self, query: str, hits: list[Hit], view: View, top: int | None, wanted: Callable[[Memory], bool]
    ) -> tuple[list[Hit], list[str], Judged]:
        """The BM25 hits that search may return (`wanted`), fused with the vector signal when it
        is on and `warm` is not still loading it (store.search.fusion), less those that do not
        answer the query (store.search.confidence); the backends used, and the best of each
        confidence scale (why nothing answered, when nothing did). Both signals are
        standardised over wanted memories only: a superseded or filtered-out memory never
        shapes the scale."""
        hits = [h for h in hits if wanted(h.memory)]
        coverage = self._search.coverage(query, [key_of(h.memory) for h in hits])
        best = max(coverage.values(), default=0.0)
        scored = None
        config = self.config()
        bm25 = {key_of(h.memory): h.score for h in hits}
        if self._meaning_ready():
            scored = self._vector_index().scores(
                query, config.vector_model, lambda: self._keyed(view), view.key, want=bm25, top=top
            )
        if scored is None or scored.building is not None:  # off, no model, or its first build runs on
            held_to = lines(None)
            opened = any(held_to.opens(value, None) for value in coverage.values())
            kept = [h for h in hits if opened and held_to.keeps(coverage[key_of(h.memory)], None)]
            return kept, ["bm25"], Judged(best)
        by_key = self._keyed(view)
        vectors = {k: v for k, v in scored.scores.items() if k in by_key and wanted(by_key[k])}
        meant = {k: meaning(v, scored.anchor) for k, v in vectors.items()}
        held_to = lines(scored.model, scored.spread)
        judged = Judged(best, max(meant.values(), default=0.0), held_to)
        fused_scores = fuse(bm25, vectors, model_weight(scored.model, config.bm25_weight), scored.anchor)
        if not any(held_to.opens(coverage.get(k, 0.0), meant.get(k)) for k in fused_scores):
            return [], ["bm25", f"vectors:{scored.model}"], judged
        fused = [
            Hit(by_key[k], round(v, 4))
            for k, v in fused_scores.items()
            if held_to.keeps(coverage.get(k, 0.0), meant.get(k))
        ]
        every_word = self._search.holding_every_word(query, [key_of(h.memory) for h in fused])
        by_words = sorted(
            (k for k in (key_of(h.memory) for h in fused) if coverage.get(k, 0.0) >= held_to.coverage),
            key=lambda k: -bm25[k],
        )
        words_first = set(by_words[:WORDS_FIRST])  # what the words found keeps its place
        fused.sort(
            key=lambda h: (
                key_of(h.memory) not in every_word,
                key_of(h.memory) not in words_first,
                -h.score,
                h.memory.id,
                h.memory.tier,
                h.memory.scope,
            )
        )
        return fused, ["bm25", f"vectors:{scored.model}"], judged

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        types: Sequence[str] = (),
        scope: str | None = None,
        include_notes: bool = True,
        include_superseded: bool = False,
    ) -> list[SearchEntry]:
        return self.find(
            query,
            limit=limit,
            types=types,
            scope=scope,
            include_notes=include_notes,
            include_superseded=include_superseded,
        ).entries

    def find(
        self,
        query: str,
        *,
        limit: int = 10,
        types: Sequence[str] = (),
        scope: str | None = None,
        include_notes: bool = True,
        include_superseded: bool = False,
    ) -> SearchResult:
        """`search` with the backends that took part and what stopped the vector signal."""
        view = self.view()

        def wanted(memory: Memory) -> bool:
            return (
                self._visible(view, memory)
                and (include_notes or memory.tier != "working")
                and (include_superseded or memory.active)
                and (not types or memory.type in types)
                and (not scope or memory.scope == scope)
            )

        top: int | None = max(4 * limit, 100)
        while True:
            found = self._search.search(query, top)
            hits, backends, judged = self._fused(query, found, view, top, wanted)
            chosen = hits[:limit]
            if len(chosen) == limit or top is None or len(found) < top:
                break
            top = None  # filters removed too many of the best: look at every hit
        entries = [
            SearchEntry(
                h.memory.id,
                h.memory.type,
                h.memory.scope,
                h.score,
                h.memory.title,
                snippet(h.memory.body, query),
            )
            for h in chosen
        ]
        self._answered.set()
        no_match = "" if entries else judged.why_none()
        return SearchResult(entries, tuple(backends), self._vector_diagnostics(), no_match)

    def _vector_diagnostics(self) -> tuple[tuple[str, str], ...]:
        """Why the vector signal did not take part although it is on: a bad or missing model
        (a named model whose extra is not installed), or its first build still running."""
        config = self.config()
        if not config.vectors or disabled_by_env(self._vectors_env):
            return ()
        if (lacking := missing(config.vector_model)) is not None:
            return (("ENGRAM_CONFIG", f"{lacking}; search uses BM25 alone"),)
        if self._vectors is None or not available(config.vector_model):
            return ()
        if (problem := self._vectors.problem()) is not None:
            code = "ENGRAM_CONFIG" if config.vector_model else "ENGRAM_VECTORS_UNAVAILABLE"
            return ((code, f"{problem}; search uses BM25 alone"),)
        if (building := self._vectors.progress()) is not None:
            return (
                (
                    "ENGRAM_VECTORS_BUILDING",
                    f"{building}; search uses BM25 alone until then (`engram index` builds the rest now)",
                ),
            )
        return ()

    def vector_state(self) -> dict[str, Any]:
        """The vector signal for status: `state` off (also without any model's extra, which
        status then does not mention), unavailable, loading, building or ready, with the model
        and how many memories have their vectors. Loads the model when it is on (the CLI's
        status), which starts a first build if one is due."""
        config = self.config()
        if not config.vectors or disabled_by_env(self._vectors_env):
            return {"state": "off"}
        if (lacking := missing(config.vector_model)) is not None:
            return {"state": "unavailable", "problem": lacking}
        if not available(config.vector_model):
            return {"state": "off"}
        view = self.view()
        index = self._vector_index()
        if not self._vectors_warming:  # the warm-up has the lock while it loads: never wait for it
            index.scores("", config.vector_model, lambda: self._keyed(view), view.key, top=0)
        if (problem := index.problem()) is not None:
            return {"state": "unavailable", "problem": problem}
        state = index.state()
        if state is None:
            return {"state": "loading"}
        model, embedded, total = state
        building = index.progress() is not None
        return {
            "state": "building" if building else "ready",
            "model": model,
            "embedded": embedded,
            "memories": total,
        }

    def build_vectors(self, told: Callable[[int, int], None]) -> dict[str, Any]:
        """Embed every memory still waiting for its vectors, on this thread (`engram index`),
        `told(done, total)` as it goes; the vector state after (`vector_state`)."""
        if self.vector_state()["state"] == "building":
            self._vector_index().build(told)
        return self.vector_state()

    # --- route and load --------------------------------------------------------------------
    def route(self, task: str, view: View | None = None) -> RoutePlan:
        view = view or self.view()
        config = self.config()
        return route(
            task,
            self._route_pool(view),
            role=config.role,
            classes=task_classes(config.routes),
            scores=self._scores(view),
        )

    def _route_pool(self, view: View) -> RoutePool:
        if self._pool[0] != view.key:
            self._pool = (view.key, RoutePool.of(m for m in view.durable.values() if m.active))
        return self._pool[1]

    def load(
        self,
        query: str = "",
        *,
        memory_id: str | None = None,
        budget: int | None = None,
        disclosure: str = "tiered",
        full: bool = False,
        objective: str | None = None,
        include_stale: bool = False,
        words: Words = plain_words,
        counted: Words | None = None,
    ) -> tuple[LoadResult, str]:
        """(result, task class). `memory_id` loads that body only and counts as a fetch.
        A stale memory (store.code.staleness) is a card with its reason unless `include_stale`;
        the next steps the answer names are in the caller's `words`, counted against the
        budget in `counted` (store.read.load.tiered)."""
        config = self.config()
        objective = (objective if objective is not None else self.objective).strip()
        if memory_id is not None:
            memory = self.fetch(memory_id)
            text, why = variant_text(memory, config.rule_variant, objective)
            result = single(memory, text, self.marks([memory]).get(staleness.key(memory), ()))
            if why:
                result.reasons[memory.id] += f"; {why}"
            return result, "by-id"
        view = self.view()
        session = not query.strip() and not full  # a session start: what the working tree says
        tree = working_tree(self.workspace) if session else WorkingTree()
        pool = self._route_pool(view)
        if session:
            plan = session_route(
                objective or tree.words,
                tree.paths,
                pool,
                role=config.role,
                classes=task_classes(config.routes),
                scores=self._scores(view, fused=False),
                quote=untrusted.line,
            )
        else:
            plan = self.route(query or objective, view)

        def chosen(entries: Iterable[RouteEntry], reason: str = "") -> list[Selected]:
            shown = []
            for entry in entries:  # thousands for a class
                text, why = None, ""
                if entry.memory.has_variants:
                    text, why = variant_text(entry.memory, config.rule_variant, objective)
                said = (reason or entry.reason) + (f"; {why}" if why else "")
                shown.append(Selected(entry.memory, said, text))
            return shown

        selected = chosen(plan.entries)
        if full:
            taken = {s.memory.id for s in selected}
            rest = sorted((m for m in pool.memories if m.id not in taken), key=lambda m: m.id)
            selected += chosen((RouteEntry(m, 0.0, "full", "") for m in rest), "full: every active memory")
            budget, disclosure = config.full_cap_tokens, "bodies"
        budget = budget or config.budget_tokens
        left = 0  # what the task does not route to: shown after it when the store fits, else counted
        cards_from: int | None = None
        if not full and not session and cards_fit(pool.memories, budget):
            others = unrouted(plan, pool)  # what answers the task (a score) first, then cards of the rest
            selected += chosen(others)
            cards_from = len(selected) - sum(1 for entry in others if not entry.score)
        elif not full:
            left = len(pool.memories) - len(plan.entries)
        wanted = " ".join(objective.lower().split())
        notes = [n for n in view.notes.values() if wanted and " ".join(n.objective.lower().split()) == wanted]

        def load(
            selected: list[Selected], why: Why | None, left: int = 0, cards_from: int | None = None
        ) -> LoadResult:
            return tiered(
                selected,
                budget=budget,
                disclosure=disclosure,
                title=f"task class {plan.task_class}, budget {budget} tokens",
                note_cards=notes,
                mark=self.marker(s.memory for s in selected[:64]),  # store.code.staleness: what shows
                show_stale=include_stale,
                words=words,
                counted=counted,
                why=why,
                unrouted=left,
                cards_from=cards_from,
            )

        if session and pool.memories and disclosure == "tiered" and cards_fit(pool.memories, budget):
            whole = whole_store(pool, plan, role=config.role)  # a small store: all of it, if it fits
            result = load(chosen(whole), whole_why(len(whole)))
            if not result.omitted_ids:
                return result, plan.task_class
        routed = routed_why(tree, objective, len(pool.memories)) if session else None
        return load(selected, routed, left, cards_from), plan.task_class

    def marks(self, memories: Iterable[Memory]) -> dict[str, tuple[staleness.Mark, ...]]:
        """store.code.staleness marks of these memories now, by display key (those with any)."""
        return staleness.checker(self.workspace).many(memories, self._today().isoformat())

    def marker(self, likely: Iterable[Memory] = ()) -> Callable[[Memory], tuple[staleness.Mark, ...]]:
        """A memory's store.code.staleness marks now, one look per cited file per call of the
        returned function's life (git asked once for the `likely` ones)."""
        return staleness.checker(self.workspace).marker(likely, self._today().isoformat())

    # --- health ----------------------------------------------------------------------------
    def index_hash(self, view: View | None = None) -> str:
        """sha256 over every parsed file's scope, key and content hash (the proof line's index)."""
        view = view or self.view()
        if self._index_hash[0] != view.key:
            lines = sorted(f"{m.scope}/{memory_key(m)}:{m.hash}" for s in view.snapshots for m in s.memories)
            self._index_hash = (view.key, hashlib.sha256("\n".join(lines).encode()).hexdigest())
        return self._index_hash[1]

    def pending_count(self) -> int:
        """Proposals still waiting for approval (not used, declined or expired)."""
        return Pending.read(self.project.pending_path, self.key).open_count(self.now())

    def note_state_files(self) -> None:
        """Notice every state file whose path holds something else (a folder, FIFO or link): reads
        treat it as absent, writes are refused until it is removed (`workspace.check_scope`)."""
        for scope in (self.project, self.user):
            for name in STATE_FILES:
                reason = state_file_problem(scope, name)
                if reason is not None:
                    self.notice("ENGRAM_UNSAFE_PATH", reason + " (writes are refused until then)")

    def status(self) -> dict[str, Any]:
        """What status reports: the workspace (and whether git holds it), the user scope, the
        counts, the files that cannot be used by id, pending proposals, the vector signal."""
        self.note_state_files()
        view = self.view()
        config = self.config()
        durable = list(view.durable.values())
        return {
            "workspace": untrusted.line(self.workspace, 1000),  # a folder name a clone may choose
            "git": repository(self.workspace) is not None,
            "user_scope": untrusted.line(self.user.root, 1000),
            "user_scope_exists": self.user.root.is_dir(),
            "user_scope_problem": self.home_problem,
            "initialized": self.project.root.is_dir(),
            "counts": {
                "project": sum(1 for m in durable if m.scope == "project" and m.active),
                "user": sum(1 for m in durable if m.scope == "user" and m.active),
                "superseded": sum(1 for m in durable if m.status == "superseded"),
                "retired": sum(1 for m in durable if m.status == "retired"),
                "notes": len(view.notes),
                "invalid": len(view.problems),
            },
            "role": config.role,
            "rule_variant": config.rule_variant.get("mode", "base"),
            "pending_proposals": self.pending_count(),
            "broken": [
                {
                    "id": b.id,
                    "scope": b.scope,
                    "tier": b.tier,
                    "file": b.problem.file,
                    "code": b.problem.code,
                    "verdict": b.verdict,
                }
                for b in view.broken
            ],
            "index": {  # the proof line's hash (status shows it only when there are memories)
                "hash": self.index_hash(view)[:12],
                "memories": sum(len(s.memories) for s in view.snapshots),
            },
            "read_only": self.read_only,
            **({"vectors": vectors} if (vectors := self.vector_state())["state"] != "off" else {}),
        }


def _live(note: Memory, today: str) -> bool:
    """A note is live through its valid_until day; one without a valid date has expired."""
    return note.valid_until[:10] >= today


def _fixed_clock(value: str) -> Callable[[], float] | None:
    """ENGRAM_NOW (epoch seconds or ISO 8601) fixes engram's clock, for tests and replays."""
    if not value:
        return None
    try:
        moment = float(value)
    except ValueError:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    return lambda: moment


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size
