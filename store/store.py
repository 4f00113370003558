"""The store's read path as one object: both scopes, config, search, route, load, status.

Writes go through store.write.transaction; verify and accept are store.review's."""

from __future__ import annotations

import gc
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from store import loading
from store.code import staleness
from store.code.validity import current, in_force
from store.config import CHECKED_NAME, CheckedConfigs, Config, load_config
from store.errors import Next, NotFound, UnsafePath
from store.files.fsutil import clean_stale_temps
from store.files.ids import check_id
from store.files.memory import Memory
from store.files.user_key import Secret, user_secret
from store.files.workspace import (
    ScopeDir,
    check_scope,
    home_problem,
    init_scope,
    project_dir,
    user_dir,
)
from store.finder import Finder, SearchEntry, SearchResult
from store.progress import one_build
from store.read.catalog import Catalog
from store.read.load import LoadResult
from store.read.route import RoutePlan, RoutePool
from store.read.snapshot import memory_key
from store.read.usage import Usage
from store.read.view import View
from store.safety import untrusted

if TYPE_CHECKING:
    pass

NUMPY_STORE: Final = 2000
"""Memories above which a server's warm-up imports numpy: its queries touch enough postings
that numpy's arithmetic beats plain Python (store.search.bm25)."""
FIRST_ANSWER_WAIT: Final = 0.5
"""Seconds a server's warm-up waits for its first search to answer before loading the rest."""
ROUTE_HITS: Final = 200
"""The best search hits a task's routing scores (store.read.route keeps at most 20 of them)."""


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
        self.finder = Finder(
            self.project.root,
            self.project.search_path,
            view=self.view,
            config=self.config,
            keeps=keeps,
            writable=not read_only,
            key=self.key,
            notice=self.notice,
            one_shot=not background,
            env=env,
        )
        self._closing = threading.Event()
        """Set by `close`: the warm-up warms nothing more."""
        self.usage = Usage(self.project, enabled=keeps, key=self.key, notice=self.notice)
        self._view_lock = threading.Lock()
        self._view: View | None = None
        self._by_scope: dict[str, tuple[dict[str, Memory], dict[str, Memory]]] = {}
        self._merged: tuple[dict[str, Memory], dict[str, Memory]] = ({}, {})
        """Durable memories and live notes by id, both scopes merged, kept as changes come."""
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
        with self._view_lock, one_build():
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
                    durable, notes = in_force(snapshot.memories, today)
                    self._by_scope[catalog.scope.scope] = (durable, notes)
                user, project = self._by_scope["user"], self._by_scope["project"]
                self._merged = ({**user[0], **project[0]}, {**user[1], **project[1]})
                merged = self._merged
                self.finder.lexical.sync([*merged[0].values(), *merged[1].values()])
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
                merged = self._merged  # the project's memory shadows the user's of the same id
                user, project = self._by_scope["user"], self._by_scope["project"]
                for _, tier, memory_id in changes:
                    side = 0 if tier == "durable" else 1
                    shown = project[side].get(memory_id) or user[side].get(memory_id)
                    if shown is None:
                        merged[side].pop(memory_id, None)
                    else:
                        merged[side][memory_id] = shown
                updates: dict[tuple[str, str, str], Memory | None] = {}
                for _, tier, memory_id in changes:  # only what is visible is searchable
                    side = 0 if tier == "durable" else 1
                    visible = merged[side].get(memory_id)
                    for scope, tables in self._by_scope.items():
                        own = tables[side].get(memory_id)
                        updates[(scope, tier, memory_id)] = (
                            own if own is not None and own is visible else None
                        )
                self.finder.lexical.update(updates)
            problems = tuple(p for s in snapshots for p in s.problems)
            self._view = View(merged[0].copy(), merged[1].copy(), problems, snapshots, key)  # never changed
            return self._view

    def warm(self) -> None:
        """Read the indexes in now, so the first request does not wait for them; a large
        store also loads BM25's numpy kernels, which its searches then use (store.search.bm25). The
        vector model and embeddings come last, and searches until they are in answer from BM25
        alone (backends `bm25`): a server's first search never waits for a model; the
        ones after fuse both signals. The collector is paused meanwhile and what warming made
        is frozen: it (about ten objects per memory) lives as long as the store, and collecting
        it as it was made, then again at the first search, would slow a large store's start."""
        collecting = gc.isenabled()
        gc.disable()
        self.finder.warming = True
        try:
            view = self.view()
            self.finder.lexical.warm()
            self.finder.answered.wait(FIRST_ANSWER_WAIT)
            if self._closing.is_set():  # a session closed before its first search: nothing more to warm
                return
            if len(view.durable) + len(view.notes) > NUMPY_STORE:
                self.finder.lexical.load_kernels()
            backlog = self.finder.vectors_on() and self.finder.vector_index().warm(
                self.config().vector_model, lambda: self.finder.keyed(view), view.key
            )
        finally:
            self.finder.warming = False
            gc.freeze()  # and never walk them later (a collection right after would, at once)
            if collecting:
                gc.enable()
        if backlog:  # a first build (a fresh store, a new model): embedded here, searches on BM25 meanwhile
            self.finder.vector_index().build()

    def clean_temps(self) -> None:
        """Remove temp files a killed writer left behind (a listing: servers do it off the
        request path, the CLI at start)."""
        if self.read_only:
            return
        for scope in (self.project, self.user):
            for folder in (scope.root, scope.memory_dir, scope.working_dir):
                clean_stale_temps(folder)

    def init(self) -> list[str]:
        return init_scope(self.project)

    def close(self) -> None:
        """Flush what is batched: usage counts, the derived index and the search index. The
        warm-up stops waiting for a first search and warms nothing more."""
        self._closing.set()
        self.finder.answered.set()
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
            self.finder.save()

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

    # --- search ----------------------------------------------------------------------------

    # --- the read surface --------------------------------------------------------------------
    def find(self, query: str, **filters: Any) -> SearchResult:
        """Search (store.finder.Finder.find: `limit`, `types`, `scope`, `include_notes`,
        `include_superseded`), with the backends that took part and why nothing answered."""
        return self.finder.find(query, **filters)

    def search(self, query: str, **filters: Any) -> list[SearchEntry]:
        return self.finder.find(query, **filters).entries

    def route(self, task: str, view: View | None = None) -> RoutePlan:
        return loading.route_task(self, task, view)

    def load(self, query: str = "", **options: Any) -> tuple[LoadResult, str]:
        """(result, task class): store.loading.load (`memory_id`, `budget`, `disclosure`, `full`,
        `objective`, `include_stale`, `words`, `counted`)."""
        return loading.load(self, query, **options)

    def route_pool(self, view: View) -> RoutePool:
        """The active durable memories routing chooses from (kept while the view stands)."""
        if self._pool[0] != view.key:
            self._pool = (view.key, RoutePool.of(m for m in view.durable.values() if m.active))
        return self._pool[1]

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
