"""Every module-level mutable object of ggp_cr, named once (issue 42: state passed, not found).

State is passed: a tree, its keys and a match's budget reach a bot through its
constructor. What a process keeps for itself is listed here, by kind; at most
MAX_CACHES are caches (tests/test_process_state.py finds them in the code and counts).

Kinds: "cache" (memos of work that callers would otherwise redo), "numba" (kernels
loaded once), "workers" (worker pools and a worker's own state), "process" (settings
of the process itself: its allocator, its memory share) and "registry" (names
registered at import). A cache keyed by what it memoises, never the way a value
travels between two callers.
"""

MAX_CACHES = 4

# (module under ggp_cr, name, kind, what it holds).
STATE = (
    ("algorithms.tree.compiled_tree", "PROCESS_TREES", "cache",
     "the last 4 trees compiled in this process, by game string (cached_tree), and "
     "the extractions available_tree refused"),
    ("algorithms.tree.flat_tree", "_DERIVED", "cache",
     "what is derived from a tree object (layouts, state keys, tables), by identity "
     "(per_tree)"),
    ("algorithms.bots.players", "_STRATEGY", "cache",
     "the last strategy a solver or strategy player was built from (a tournament "
     "makes a bot every match)"),
    ("algorithms.tree.perfect_recall", "_CHECKED_GAMES", "cache",
     "game strings whose perfect recall was checked"),
    ("algorithms.resolving.continual_resolving", "_WARM", "numba",
     "which kernels were loaded: the full-width ones (_warm_up_full_width), both "
     "paths' (warm_up_process)"),
    ("algorithms.bots.online_solving", "_WARM", "numba",
     "whether oos's and online solving's kernels were loaded (warm_up_process)"),
    ("algorithms.evaluation.tournament", "_WORKER_CACHE", "workers",
     "a worker's (and the warm-up's) tournament configuration, game and compiled tree"),
    ("algorithms.tree.parallel_extraction", "_pools", "workers",
     "the extraction's worker pools"),
    ("algorithms.tree.parallel_extraction", "_worker_games", "workers",
     "a pool worker's loaded game"),
    ("algorithms.bots.anytime", "_KEPT", "process",
     "whether the allocator keeps freed memory (keep_freed_memory)"),
    ("algorithms.bots.anytime", "_PREFAULTED", "process",
     "the heap bytes faulted in so far (prefault_heap)"),
    ("algorithms.tree.tree_limits", "_share", "process",
     "the share of memory a tree may take (set_memory_share)"),
    ("algorithms.evaluation.matches", "_last_collection", "process",
     "when garbage was last collected between matches"),
    ("algorithms.progress_bars", "_SHOWN", "process",
     "whether progress bars show (--noprogress)"),
    ("algorithms.tree.native_extraction", "_EXTRACTORS", "registry",
     "the per-game numba extractors"),
    ("algorithms.tree.native_extraction", "_STATE_KEYS", "registry",
     "the per-game native state-key walks"),
    ("examples.cli", "_INTEGER_FLAGS", "registry",
     "the examples' integer flags with their ranges (integer_flag), checked by run()"),
)
