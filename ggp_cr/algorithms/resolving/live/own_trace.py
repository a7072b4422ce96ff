"""The trace of the bot's next turns below its own moves only: OwnTrace, a Trace that
walks natively to its new information set's histories, replays only their paths and
samples them down to what the move pays for (docs/algorithms/resolving.md)."""

import time

import numpy as np
import pyspiel

from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.tree import flat_tree
from ggp_cr.algorithms.tree import native_next_decisions


_CHANCE = int(pyspiel.PlayerId.CHANCE)


# The rates OwnTrace's walks are priced at (what each was set from:
# docs/algorithms/resolving.md, "`live/live_path`, `live/own_trace`: the live path's
# shares and rates"). The native walk (native_next_decisions): seconds a history it
# finds ...
NATIVE_SECONDS_PER_HISTORY = 5e-7
# ... and the most histories it finds.
_NATIVE_MOST_HISTORIES = 1 << 22
# The walk on pyspiel states: seconds a history it passes (OwnTrace._target_rate).
NATIVE_SECONDS_PER_TARGET = 2e-5
# A sample (OwnTrace's `sample`): seconds a history of `target`, walk and build.
SAMPLED_SECONDS_PER_TARGET = 1e-4


def _group_rows(*columns):
  """np.unique(np.stack(columns, axis=1), axis=0, return_index=True,
  return_inverse=True)[1:] of integer columns: the same groups in the same
  (lexicographic) order, by one int64 key of the columns' ranks rather than a sort
  of rows (docs/algorithms/resolving.md)."""
  key = np.zeros(len(columns[0]), np.int64)
  first = np.zeros(min(1, len(key)), np.int64)
  for column in columns:
    distinct, _, rank = flat_tree.unique_ids(column)
    # (the key so far is ranked, below len(key): the product fits in int64)
    _, first, key = flat_tree.unique_ids(key * max(1, len(distinct)) + rank)
  return first, key



class TargetMap:
  """SubgameMap of a trace that maps the next turns at one information state of the
  bot's only (OwnTrace's `target`): every root is joined through it, so its roots are
  one set, kept without union-find."""

  def __init__(self):
    self._key = None
    self._roots = set()  # the root ids of the pairs added

  def add(self, root_id, own_key, opponent_key):
    """Records a pair (root, next turn s); `own_key` is always the one mapped."""
    del opponent_key
    if self._key is None:
      self._key = own_key
    elif own_key != self._key:
      raise ValueError(f"TargetMap maps {self._key!r} only, got {own_key!r}.")
    self._roots.add(root_id)

  def __contains__(self, own_key):
    return self._key is not None and own_key == self._key

  def own_keys(self):
    return [] if self._key is None else [self._key]

  def roots(self, own_key):
    """The root set (sorted root ids) of `own_key` (KeyError if not mapped)."""
    if own_key not in self:
      raise KeyError(own_key)
    return sorted(self._roots)

  own_roots = roots  # (one own key: the pairs' roots are the set)




class OwnTrace(live_trace.Trace):
  """The next turns below the bot's own decisions in this subgame: the fallback of a
  Trace that did not end in time (docs/algorithms/resolving.md, "When the next turns
  cannot be traced").

  Walks only below the roots and decision nodes where the bot's information state is
  one it decided at in this subgame, and only its moves there (`own_moves`,
  {information state: actions}; any history of a later information state of the bot
  passes through them, perfect recall) and maps only the next turns
  whose bot information state is `target`: one group, the roots closest above the
  histories of the bot's information set at its new turn. `own_roots` (histories),
  if given, are the only roots walked: those above the bot's information set at the
  turn it entered the subgame (all its later histories are below them). Next turns
  where the bot
  decided (it stayed in this subgame after a refused one) are walked through as a
  subgame's first turn. If the bot's `target` turn is still in this subgame,
  `in_current` is True and nothing is mapped (its histories there are kept as
  `current_starts`). A deadline passing leaves it incomplete as Trace.

  `starts` (Trace.starts_below: the histories of the bot's information set at its
  last decision, with their paths from the roots), if given, are walked instead
  of the roots: the same next turns are found (perfect recall) without walking
  down to that decision again.

  `sample` (rng, time.perf_counter() end, seconds a history: None for
  SAMPLED_SECONDS_PER_TARGET), if given, with the native walk: when the histories
  of `target` found would take more than the time to the end (and the deadline)
  pays for at the seconds a history given, a uniform random subset of
  them that it pays for is walked, and `sampled` is (kept, found). `starts` are
  then walked in a random order; once one has been walked, the walk ends (and is
  complete) when the deadline passes, or the next subgame's build over the roots
  found would not end by the end: `sampled` is (the histories of `target` walked,
  those found) with the native walk, else (starts walked, the last possibly in
  part, starts). The next subgame is then built over the roots of a sample of the
  bot's information set, an approximation the bot records as such
  (docs/algorithms/resolving.md, "Sampled roots"). Otherwise `sampled` is None.

  With `native` (default), in a game native_next_decisions walks (python_ii_goofspiel,
  python_leduc, python_princess_monster, python_latent_ttt) and from `starts` or the
  whole game's root, the walk first finds natively the paths from each start to the
  histories of `target` and walks only those (`native_paths`, the number found): the
  same result as the walk of every branch (tests/resolving/live/test_native_own_trace.py).
  """

  def __init__(self, problem, own_moves, target, deadline=None, own_roots=None,
               starts=None, native=True, sample=None):
    self.native = native
    self.sample = sample
    self.sampled = None
    # {node (j, actions): actions walked there}, from native_next_decisions; None: all.
    self._allowed = None
    # {node (j, actions): the bot's information state there}, known from the native
    # walk's groups (the starts' and `target`'s histories).
    self._known_keys = {}
    self.native_paths = None
    self._native_found = None  # (histories of `target` the native walk found)
    # Per start, the paths (action tuples) to the histories of `target` below it,
    # when the native walk found them all below the starts' own decisions (no turn
    # the bot played passed): the walk replays only these (_replay).
    self._start_paths = None
    self._start_visit = None  # (_replay: what _visit answers at every start)
    # Seconds of the native walk (before the sample is drawn: not a root's cost).
    self.native_seconds = 0.0
    self.own_moves = dict(own_moves)
    self.own_keys = frozenset(own_moves)
    self.own_roots = own_roots
    self.starts = starts
    self.target = target
    self.in_current = False
    self.current_starts = []
    # The next start to walk, and the lengths of what it may add to, when it began.
    self._next_start = 0
    self._marks = (0, 0)
    super().__init__(problem, None, deadline)
    if self.in_current and self.complete:
      self._clear()

  @property
  def progress(self):
    """The share of `starts` walked to their end (None for a walk from the roots)."""
    if self.starts is None:
      return None
    return self._next_start / len(self.starts) if self.starts else 1.0

  def resume(self, deadline):
    """Walks on from `starts` after a deadline passed (the start it was in is walked
    again), until done or `deadline`; returns whether it is complete. A walk from
    the roots is not resumed."""
    if self.complete or self.starts is None:
      return self.complete
    found, current = self._marks
    if self.target in self.found:
      del self.found[self.target][found:]
    del self.current_starts[current:]
    self.deadline = deadline
    self._run()
    if self.in_current and self.complete:
      self._clear()
    return self.complete

  def _abandon(self):
    """A walk from `starts` keeps what the starts done so far found (`resume`)."""
    if self.starts is None:
      self._clear()

  def _walk_all(self):
    """From `starts` if given; else below a gadget, from the original game's root
    states (a gadget state's copy costs several of the original's): only the roots
    where the bot does not act or acts at one of `own_keys`, each at the tracking
    state the gadget's prefix gives it."""
    problem = self.problem
    if self.native and self.native_paths is None and self._allowed is None:
      begin = time.perf_counter()
      try:
        self._find_native_paths()
      finally:
        self.native_seconds += time.perf_counter() - begin
    if self.starts is not None:
      # A sample walks the starts in a random order and ends at the first that
      # time does not pay for (_sample_cut).
      sampling = self.sample is not None
      if sampling and self._next_start == 0:
        order = self.sample[0].permutation(len(self.starts))
        self.starts = [self.starts[k] for k in order]
        if self._start_paths is not None:
          self._start_paths = [self._start_paths[k] for k in order]
      for k in range(self._next_start, len(self.starts)):
        self._next_start = k
        self._marks = (len(self.found.get(self.target, ())), len(self.current_starts))
        if sampling and self._sample_cut(k, k > 0 and (
            time.perf_counter() + self.num_roots * self._sample_rate() >
            self.sample[1])):
          return
        if self.deadline is not None and time.perf_counter() > self.deadline:
          if sampling and self._sample_cut(k, k > 0):
            return
          raise live_trace.OutOfTime()
        state, track, root, j, actions, steps, chance = self.starts[k]
        try:
          if self._start_paths is not None:
            self._replay(k)
          else:
            self._walk(state, problem.prefix + len(actions), track, root, j, actions,
                       steps, chance, -1)
        except live_trace.OutOfTime:
          if sampling and self._sample_cut(k + 1, k > 0):
            return
          raise
      self._next_start = len(self.starts)
      return
    if problem.gadget is None:
      super()._walk_all()
      return
    player = problem.player
    prefix_players = {"resolve": [_CHANCE, problem.opponent],
                      "max_margin": [problem.opponent, _CHANCE],
                      "unsafe": [_CHANCE]}[problem.gadget.variant]
    for j, state in enumerate(problem.root_states):
      if self.deadline is not None and time.perf_counter() > self.deadline:
        raise live_trace.OutOfTime()
      if self.own_roots is not None and problem.root_histories[j] not in \
          self.own_roots:
        continue
      track = problem.initial_track()
      acting = state.current_player()
      for k, parent in enumerate(prefix_players):
        child = prefix_players[k + 1] if k + 1 < len(prefix_players) else acting
        track, _ = recall.advance(track, parent, child, player)
      # (the bot's key at a root is tested by _enters; _walk copies no state)
      self._walk(state, problem.prefix, track, None, j, (), (), 1.0, -1)

  def _find_native_paths(self):
    """Sets `_allowed` from the native walk (native_next_decisions) from `starts`,
    or from the whole game's root; leaves it None where there is none (the roots
    of a gadget). The histories where the bot acts
    next are grouped by its information state at the start, its move there and
    what it saw since (one information state each) and one of each group is
    replayed on pyspiel states: a group at `target` is walked; one at a turn the
    bot played on (`own_keys`: the walk passes through it) is walked on natively
    from its histories with the bot's moves there. Raises OutOfTime past the
    deadline, past NATIVE_SECONDS_PER_HISTORY a history found in the time left, or
    NATIVE_SECONDS_PER_TARGET a history the walk on pyspiel states will pass (a
    start, a turn the bot played, a history of `target`)."""
    problem = self.problem
    if self.starts is not None:
      states = [start[0] for start in self.starts]
      nodes = [(start[3], tuple(start[4])) for start in self.starts]
    elif problem.gadget is None:
      states, nodes = [problem.game.new_initial_state()], [(0, ())]
    else:
      return
    if not states or not native_next_decisions.supports(problem.original):
      return
    player = problem.player
    histories = [state.history() for state in states]
    rows, lengths = native_next_decisions.history_rows(histories)
    origin, base = np.arange(len(states)), lengths.copy()  # per row: its start
    first_key = None  # (starts: one information state)
    if states[0].current_player() == player:
      first_key = states[0].information_state_string(player)
    classes = [first_key]  # the bot's information state at each row's start
    row_class = np.zeros(len(states), np.int64)
    # per level: (rows, lengths, bases, origins, histories found, paths, lengths)
    targets = []
    walked = 0  # histories the walk on pyspiel states will pass: starts, own turns
    levels = 0
    while len(rows):
      levels += 1
      walked += len(rows)
      limit = _NATIVE_MOST_HISTORIES
      if self.deadline is not None:
        left = self.deadline - time.perf_counter()
        # (the first level from starts may be replayed: a later one is not)
        if left <= walked * self._target_rate(
            levels == 1 and self.starts is not None and first_key is not None and
            first_key != self.target):
          raise live_trace.OutOfTime()  # (each costs the walk on pyspiel states more)
        limit = min(limit, int(left / NATIVE_SECONDS_PER_HISTORY))
      own = [sorted(self.own_moves.get(key, ())) for key in classes]
      own_table = np.full((len(classes), max(1, max(map(len, own)))), -1, np.int64)
      for c, actions in enumerate(own):
        own_table[c, :len(actions)] = actions
      found = native_next_decisions.next_decisions(
          problem.original, player, rows, lengths, own_table[row_class], limit)
      if found is None:
        if self.deadline is not None:
          raise live_trace.OutOfTime()
        return  # (no deadline: the walk of every branch)
      starts, path_lengths, seen, paths = found
      start_class = row_class[starts]
      first = np.where(own_table[start_class, 0] >= 0, paths[:, 0], -1)
      representatives, inverse = _group_rows(start_class, first, seen)
      order = np.argsort(inverse.reshape(-1), kind="stable")  # (grouped, in order)
      bounds = np.searchsorted(inverse.reshape(-1)[order],
                               np.arange(len(representatives) + 1))
      passing, passing_class, classes, at_target = [], [], [], []
      for g, f in enumerate(representatives):
        r = starts[f]
        state = states[origin[r]].clone()
        for action in (rows[r, base[r]:lengths[r]].tolist() +
                       paths[f, :path_lengths[f]].tolist()):
          state.apply_action(action)
        key = state.information_state_string(player)
        members = order[bounds[g]:bounds[g + 1]]
        if key == self.target:
          at_target.append(members)
        elif key in self.own_keys:
          passing.append(members)
          passing_class.append(np.full(len(members), len(classes)))
          classes.append(key)
      if at_target:
        found = np.concatenate(at_target)
        targets.append((rows, lengths, base, origin, starts[found], paths[found],
                        path_lengths[found]))
      which = np.concatenate(passing) if passing else np.zeros(0, np.int64)
      origin, base = origin[starts[which]], base[starts[which]]
      row_class = np.concatenate(passing_class) if passing else which
      rows, lengths = native_next_decisions.extended_rows(rows, lengths, which, starts,
                                                          paths, path_lengths)
    num_paths = sum(len(level[4]) for level in targets)
    self._native_found = num_paths
    # Every history of `target` lies below a start's own decision, before any other
    # turn of the bot's: the walk replays their paths only (_replay), and passes a
    # start with none at no cost, so only the starts above them count as walked.
    replays = (self.starts is not None and levels == 1 and first_key is not None and
               first_key != self.target)
    if replays:
      walked = sum(len(np.unique(level[3][level[4]])) for level in targets)
    if self.sample is not None:
      targets, num_paths = self._sampled_targets(targets, num_paths, walked, replays)
    # (a sample is cut to what fits the deadline: checked again, the microseconds
    # since would refuse the largest sample that fits)
    if self.deadline is not None and self.sampled is None and time.perf_counter() + (
        (walked + num_paths) * self._target_rate(replays)) > self.deadline:
      raise live_trace.OutOfTime()
    if replays:
      self._start_paths = self._paths_by_start(targets, len(states))
      self._known_keys = dict.fromkeys(nodes, first_key)
      self._allowed = {}  # (not read by _replay)
      self.native_paths = num_paths
      return
    allowed, known = {}, {}
    for (level_rows, level_lengths, level_base, level_origin, found, level_paths,
         found_lengths) in targets:
      above = {}  # {row: (j, the actions to its end)}, its own actions allowed once
      paths_found = level_paths.tolist()
      for n, (r, length) in enumerate(zip(found.tolist(), found_lengths.tolist())):
        if n % 1024 == 0 and self.deadline is not None and \
            time.perf_counter() > self.deadline:
          raise live_trace.OutOfTime()
        node = above.get(r)
        if node is None:
          j, actions = nodes[level_origin[r]]
          for action in level_rows[r, level_base[r]:level_lengths[r]].tolist():
            allowed.setdefault((j, actions), set()).add(action)
            actions += (action,)
          node = above[r] = (j, actions)
        j, actions = node
        for action in paths_found[n][:length]:
          allowed.setdefault((j, actions), set()).add(action)
          actions += (action,)
        known[(j, actions)] = self.target
    if first_key is not None:
      known.update(dict.fromkeys(nodes, first_key))
    self._allowed, self._known_keys = allowed, known
    self.native_paths = num_paths

  def _paths_by_start(self, targets, num_starts):
    """Per start, the paths (action tuples) of the histories of `target` below it
    (`targets`: the native walk's one level, as in _find_native_paths), in the
    order found (depth first by the game's actions, as _walk visits them)."""
    paths = [[] for _ in range(num_starts)]
    for _, _, _, level_origin, found, level_paths, found_lengths in targets:
      rows = level_paths.tolist()
      for n, (r, length) in enumerate(zip(level_origin[found].tolist(),
                                          found_lengths.tolist())):
        if n % 1024 == 0 and self.deadline is not None and \
            time.perf_counter() > self.deadline:
          raise live_trace.OutOfTime()
        paths[r].append(rows[n][:length])
    return paths

  def _replay(self, k):
    """Walks below start `k` only its paths to the histories of `target`
    (`_start_paths`): the histories, in the order, that _walk passes there with the
    native walk's allowed actions, each branch by _child, without searching the
    branches of every history walked."""
    if not self._start_paths[k]:  # (_walk would find nothing below it)
      self.histories_walked += 1
      return
    state, track, root, j, actions, steps, chance = self.starts[k]
    top = (state, self.problem.prefix + len(actions), track, root, j, actions, steps,
           chance)
    # Every start is a history of the bot's one information set (first_key): the
    # same player, key, legal actions (perfect recall) and entry, so its visit is
    # made once, without making a deferred start's state.
    visit = self._start_visit
    if visit is None:
      visit = self._start_visit = self._visit(*top, moves=False)
    else:
      self.histories_walked += 1
      if self.deadline is not None and time.perf_counter() > self.deadline:
        raise live_trace.OutOfTime()
    if visit is None:
      return
    stack = [[top, visit, None]]  # (history, its visit, its _target_plan)
    taken = []  # the actions from the start to the history at stack[-1]
    for path in self._start_paths[k]:
      keep, most = 0, min(len(taken), len(path) - 1)
      while keep < most and taken[keep] == path[keep]:
        keep += 1
      del stack[keep + 1:]
      del taken[keep:]
      for i in range(keep, len(path)):
        entry = stack[-1]
        at, (acting, key, branches, _) = entry[0], entry[1]
        action = path[i]
        last = i + 1 == len(path)
        if last:
          if entry[2] is None:
            entry[2] = self._target_plan(at, entry[1])
          if entry[2]:
            self._target_child(at, entry[2], action)
            break
        index = next(n for n, branch in enumerate(branches) if branch[0] == action)
        below = self._child(*at, acting, key, len(branches), index, action,
                            branches[index][1], -1,
                            own_key=self.target if last else None)
        if below is None:
          break
        if last:  # (`target` in the current subgame: _enters keeps it)
          self._visit(*below[:-1], moves=False)
          break
        visit = self._visit(*below[:-1], moves=False)
        if visit is None:
          break
        stack.append([below[:-1], visit, None])
        taken.append(action)

  def _target_plan(self, at, visit):
    """What _child does alike for every history of `target` below the history `at`
    (its _walk arguments but the node; `visit` its _visit): (the action indices, the
    game state's `information_states_after`, whether each child is a new root, the
    root history above) when each is a next turn mapped at `target` with a deferred
    state (then _target_child makes it); False where _child must (a game without
    `information_states_after`, a target the walk passes, at or above the roots)."""
    state, depth, track, _, j, _, _, _ = at
    acting, _, branches, _ = visit
    problem = self.problem
    after = getattr(type(state), "information_states_after", None)
    child_track, is_root = recall.advance(track, acting, problem.player,
                                          problem.player)
    if (after is None or child_track != recall.END or depth + 1 <= problem.prefix or
        self._passes(self.target) or not self._is_target(self.target)):
      return False
    return ({branch[0]: n for n, branch in enumerate(branches)}, after,
            is_root and track in (recall.CURRENT, recall.AFTER_ROOT),
            tuple(problem.root_histories[j]), visit)

  def _target_child(self, at, plan, action):
    """_child's work at a history of `target` (a next turn, mapped) below `at`, by
    `plan` (_target_plan): its deferred state, root, registration and found entry,
    without what is the same for every child of `at`."""
    state, _, _, root, j, actions, steps, chance = at
    index_of, after, new_root, base, (acting, key, branches, _) = plan
    player = self.problem.player
    index = index_of[action]
    probability = branches[index][1]
    child = live_trace.DeferredChild(state, action, player, after(state, action))
    child_actions = actions + (action,)
    if probability is None:
      child_steps = steps + ((acting, key, index, len(branches)),)
      child_chance = chance
    else:
      child_steps, child_chance = steps, chance * probability
    if new_root:
      root = (j, child_actions, child_steps, child_chance, -1, child)
    self._map_next_turn(self.target, child, root, j, child_actions, child_steps,
                        child_chance, base)

  def _target_rate(self, replays):
    """The seconds a history the walk on pyspiel states passes is assumed to take
    (a start, a turn the bot played, a history of `target`): NATIVE_SECONDS_PER_TARGET,
    or, where the walk `replays` the native walk's paths, a sample's measured pace
    where lower (that pace, of replayed roots, holds a root's trace and next gadget
    build, with live_path.PACE_MARGIN; the walk of every branch through a turn the
    bot played costs more a history)."""
    rate = None if self.sample is None or not replays else self.sample[2]
    return (NATIVE_SECONDS_PER_TARGET if rate is None else
            min(rate, NATIVE_SECONDS_PER_TARGET))

  def _sample_rate(self):
    """The seconds a history of `target` (or root found) that `sample` assumes."""
    rate = self.sample[2]
    return SAMPLED_SECONDS_PER_TARGET if rate is None else rate

  def _sample_cut(self, walked, cut):
    """Ends a sampled walk from `starts` if `cut` and it found something
    (`walked` starts walked, the last possibly in part); sets `sampled` and
    returns whether it ended."""
    if not cut or not (self.found or self.current_starts):
      return False
    if self._allowed is None:
      self.sampled = (walked, len(self.starts))
    else:  # (the histories of `target` walked, of those the native walk found)
      self.sampled = (len(self.found.get(self.target, ())) or
                      len(self.current_starts), self._native_found)
    self._next_start = len(self.starts)
    return True

  def _sampled_targets(self, targets, num_paths, walked, replays=False):
    """`targets` (per level, as in _find_native_paths) cut to a uniform random
    subset of their histories that the time left pays for (`sample`), if they
    would not fit; sets `sampled`. Raises OutOfTime if not even one fits. With
    `replays`, the walked starts are not paid apart before the sample's end: a
    root's pace (live_path's, without the native walk) holds its start's visit;
    before the deadline, only the starts above the kept histories are."""
    rng, end, _ = self.sample
    now = time.perf_counter()
    rate = self._target_rate(replays)
    left = end - now - (0 if replays else walked) * rate
    most = int(left / self._sample_rate())
    if self.deadline is not None:
      paid = int((self.deadline - now) / rate)
      # (replayed, a kept history passes at most one start not passed before: k of
      # them pass at most min(k, walked) starts)
      most = min(most, max(paid - walked, min(walked, paid // 2)) if replays else
                 paid - walked)
    if num_paths <= most:
      return targets, num_paths
    if most < 1:
      raise live_trace.OutOfTime()
    kept = np.zeros(num_paths, bool)
    kept[rng.choice(num_paths, size=most, replace=False)] = True
    cut, offset = [], 0
    for level in targets:
      size = len(level[4])
      keep = kept[offset:offset + size]
      offset += size
      if keep.any():
        cut.append(level[:4] + (level[4][keep], level[5][keep], level[6][keep]))
    self.sampled = (most, num_paths)
    return cut, most

  def _original_state(self, state):
    return state

  def _new_map(self):
    return TargetMap()

  def _own_key(self, state, node):
    key = self._known_keys.get(node) if self._known_keys else None
    return key if key is not None else super()._own_key(state, node)

  def _is_target(self, own_key):
    return own_key == self.target

  def _moves(self, state, acting, key, node):
    moves = None
    if acting == self.problem.player and key is not None:
      moves = self.own_moves[key]
    if self._allowed is None:
      return moves
    allowed = self._allowed.get(node, frozenset())
    return allowed if moves is None else moves & allowed

  def _passes(self, own_key):
    return own_key in self.own_keys

  def _enters(self, acting, key, track, at):
    if acting != self.problem.player or key is None:
      return True
    if key == self.target and track != recall.END:
      self.in_current = True
      state, _, root, j, actions, steps, chance = at
      self.current_starts.append((state, track, root, j, actions, steps, chance))
    return key in self.own_keys
