"""The trace of the bot's next turns below a resolver's game ([S] ch. 2, §3.4.1).

A resolver traces every pair (r, s) of a next turn s of the bot in a different subgame
and the root r closest above s, and maps the information states at s to sets of roots,
merging sets that intersect (union-find); see docs/algorithms/resolving.md.
"""

import time

from ggp_cr.algorithms.resolving import recall


class OutOfTime(Exception):
  """A deadline passed during a trace."""


class DeferredChild:
  """A history of the bot's next information set that OwnTrace._replay found, made
  only when used: its parent's state and the action, the bot to act, and both
  players' information state strings (from the game state's
  `information_states_after`); any other call makes the pyspiel state, once. It
  stands for the state in a trace's roots and found histories, a gadget's roots
  (gadget_game.Subgame clones it where the solver enters a root) and the next
  OwnTrace's starts."""

  __slots__ = ("_parent", "_action", "_player", "_infos", "_state")

  def __init__(self, parent, action, player, infos):
    self._parent, self._action, self._player = parent, action, player
    self._infos, self._state = infos, None

  def history(self):
    return self._parent.history() + [self._action]

  def current_player(self):
    return self._player

  def is_terminal(self):
    return False

  def is_chance_node(self):
    return False

  def information_state_string(self, player=None):
    return self._infos[self._player if player is None else player]

  def state(self):
    """The pyspiel state (made on the first call, then kept: not to be changed)."""
    if self._state is None:
      self._state = self._parent.child(self._action)
    return self._state

  def clone(self):
    return self.state().clone()

  def child(self, action):
    """A new state below this one (one copy: this one is not made for it)."""
    if self._state is not None:
      return self._state.child(action)
    state = self._parent.child(self._action)
    state.apply_action(action)
    return state

  def __getattr__(self, name):
    if name.startswith("_"):  # (copy and pickle probe these before __init__ runs)
      raise AttributeError(name)
    return getattr(self.state(), name)


# --- Tracing the next turns -----------------------------------------------------------


class SubgameMap:
  """Union-find over next roots and the bot's and opponent's information states."""

  def __init__(self):
    self._parent = {}
    self._size = {}  # items below each representative (1 where absent)
    self._own_roots = {}
    self._groups = None

  def _find(self, item):
    parent = self._parent.setdefault(item, item)
    while parent != item:
      grandparent = self._parent[parent]
      self._parent[item] = grandparent
      item, parent = parent, grandparent
    return item

  def _union(self, a, b):
    """Joins the sets of `a` and `b`, the smaller below the larger (one set with a
    new opponent key a root: a chain a link longer each time otherwise)."""
    a, b = self._find(a), self._find(b)
    if a != b:
      size_a, size_b = self._size.get(a, 1), self._size.get(b, 1)
      if size_a > size_b:
        a, b = b, a
      self._parent[a] = b
      self._size[b] = size_a + size_b

  def add(self, root_id, own_key, opponent_key):
    """Records a pair (root, next turn s) by the information states at s."""
    root = ("root", root_id)
    own = self._find(("own", own_key))
    if root in self._parent:
      self._union(root, own)
    else:  # (a new root: its own set, joined directly)
      self._parent[root] = own
      self._size[own] = self._size.get(own, 1) + 1
    self._union(own, ("opponent", opponent_key))
    self._own_roots.setdefault(own_key, set()).add(root_id)
    self._groups = None

  def __contains__(self, own_key):
    return own_key in self._own_roots

  def own_keys(self):
    return list(self._own_roots)

  def roots(self, own_key):
    """The merged root set (sorted root ids) of the bot's information state."""
    if self._groups is None:
      self._groups = {}
      for item in list(self._parent):
        if item[0] == "root":
          self._groups.setdefault(self._find(item), []).append(item[1])
    return sorted(self._groups[self._find(("own", own_key))])

  def own_roots(self, own_key):
    """The roots of the pairs whose next turn is in the bot's information state."""
    return sorted(self._own_roots[own_key])


class Trace:
  """The bot's next turns in other subgames below the solved game's roots ([S] ch. 2).

  Walks the solved game's histories (live states) from its root until each path
  reaches the bot's next turn in a different subgame (or ends). Per next root r (id):
  its root j, the actions from root j to r, the decisions on the way (player, key,
  action index, number of actions) and the chance probability, the opponent's
  information state at r, and r's node in `tree` if one is given. If `deadline`
  (time.perf_counter()) passes first, the trace is abandoned: it records no next
  roots and an empty map (`complete` is False), so the bot stays in this subgame.

  It keeps r's state (`root_state` copies it rather than replaying r) and, per
  information state of the bot at its next turns, the histories s found there with
  their paths (`found`, {key: [(state, root id, j, actions, steps, chance)]}): the
  starts of an OwnTrace at the bot's next decision (`starts_below`). `made`
  ({node of `tree`: the solved game's state there}, subgame_tree's leaf_states)
  gives histories already made: the walk takes them instead of making them.
  """

  _made = None

  def __init__(self, problem, tree=None, deadline=None, made=None):
    self.problem = problem
    self.tree = tree
    self._made = made
    self.deadline = deadline
    self.complete = True
    self.current_root_nodes = {}
    self.histories_walked = 0
    self._clear()
    self.seconds = 0.0
    self._run()
    self._made = None  # (those not taken: a cut walk's)
    if tree is not None and problem.prefix == 0:
      self.current_root_nodes[0] = 0

  def _run(self):
    """Walks (_walk_all) until done or the deadline; adds its time to `seconds`."""
    start = time.perf_counter()
    self.complete = True
    try:
      self._walk_all()
    except OutOfTime:
      self.complete = False
      self._abandon()
    self.seconds += time.perf_counter() - start

  def _abandon(self):
    """After the deadline: nothing found is kept."""
    self._clear()

  def _walk_all(self):
    root = self.problem.game.new_initial_state()
    if not root.is_terminal():
      self._walk(root, 0, self.problem.initial_track(), None, 0, (), (), 1.0, 0)

  def _original_state(self, state):
    """The original game's state of a walked history at or below a root."""
    return self.problem.original_state(state)

  def _clear(self):
    self.root_ids = {}
    self.root_of = []
    self.actions = []
    self.steps = []
    self.chance = []
    self.nodes = []
    self.opponent_keys = []
    self.states = []
    self.found = {}
    self.histories = []  # per next root: its history from the original game's root
    self.subgame_map = self._new_map()

  def _new_map(self):
    """The empty map of the next turns' information states to root sets."""
    return SubgameMap()

  def _register(self, root, base=None):
    """The id of next root `root` (as _child's), registered if new; `base`, if
    given, is the history of its root j."""
    j, actions, steps, chance, node, state = root
    if base is None:
      base = tuple(self.problem.root_histories[j])
    history = base + actions
    root_id = self.root_ids.get(history)
    if root_id is None:
      root_id = len(self.root_of)
      self.root_ids[history] = root_id
      self.root_of.append(j)
      self.actions.append(actions)
      self.steps.append(steps)
      self.chance.append(chance)
      self.nodes.append(node)
      self.opponent_keys.append(state.information_state_string(self.problem.opponent))
      self.states.append(state)
      self.histories.append(history)
    return root_id

  def _walk(self, state, depth, track, root, j, actions, steps, chance, node):
    visit = self._visit(state, depth, track, root, j, actions, steps, chance)
    if visit is None:
      return
    acting, key, branches, moves = visit
    first_child = int(self.tree.node_first_child[node]) if self.tree is not None else 0
    for index, (action, probability) in enumerate(branches):
      if probability is not None and probability <= 0:
        continue
      if moves is not None and action not in moves:
        continue
      below = self._child(state, depth, track, root, j, actions, steps, chance,
                          acting, key, len(branches), index, action, probability,
                          first_child + index if self.tree is not None else -1)
      if below is not None:
        self._walk(*below)

  def _visit(self, state, depth, track, root, j, actions, steps, chance, moves=True):
    """A history walked: (acting player, its key (None at chance or above the
    roots), branches [(action, probability or None)], the actions walked (None:
    all; not asked without `moves`)), or None if the walk does not enter it."""
    problem = self.problem
    player = problem.player
    self.histories_walked += 1
    if self.deadline is not None and time.perf_counter() > self.deadline:
      raise OutOfTime()
    acting = state.current_player()
    key = None
    if state.is_chance_node():
      branches = [(a, p) for a, p in state.chance_outcomes()]
    else:
      branches = [(a, None) for a in state.legal_actions()]
      if depth >= problem.prefix:
        key = (self._own_key(state, (j, actions)) if acting == player else
               state.information_state_string(acting))
      if not self._enters(acting, key, track,
                          (state, track, root, j, actions, steps, chance)):
        return None
    return (acting, key, branches,
            self._moves(state, acting, key, (j, actions)) if moves else None)

  def _child(self, state, depth, track, root, j, actions, steps, chance, acting, key,
             num_branches, index, action, probability, child_node, own_key=None):
    """The child of a walked history by its `index`-th branch: the arguments of
    its _walk, or None where the walk stops (a terminal, or a next turn: mapped if
    a target). `own_key`, if given, is the bot's key at the child, known (from the
    native walk) to be a decision of the bot's: then, where the game state answers
    `information_states_after`, the child is a DeferredChild."""
    problem = self.problem
    player = problem.player
    after = (None if own_key is None else
             getattr(type(state), "information_states_after", None))
    if after is not None:
      child = DeferredChild(state, action, player, after(state, action))
    elif self._made and child_node in self._made:
      child = self._made.pop(child_node)
    else:
      child = state.child(action)
    if child.is_terminal():
      return None
    child_track, is_root = recall.advance(track, acting, child.current_player(), player)
    child_depth = depth + 1
    child_j, child_actions, child_steps, child_chance = j, actions, steps, chance
    if child_depth == problem.prefix:
      child_j = problem.root_index(child)
      child_actions, child_steps, child_chance = (), (), 1.0
      self.current_root_nodes[child_j] = child_node
    elif child_depth > problem.prefix:
      child_actions = actions + (action,)
      if probability is None:
        child_steps = steps + ((acting, key, index, num_branches),)
      else:
        child_chance = chance * probability
    child_root = root
    if is_root and child_depth > problem.prefix and track in (recall.CURRENT,
                                                              recall.AFTER_ROOT):
      child_root = (child_j, child_actions, child_steps, child_chance, child_node,
                    self._original_state(child))
    if child_track == recall.END:
      original = self._original_state(child)
      if own_key is None:
        own_key = self._own_key(original, (child_j, child_actions))
      if self._passes(own_key):
        # A next turn the bot played on in this subgame (a refused subgame): its
        # own decision there, as at a subgame's first.
        child_track, child_root = recall.CURRENT, None
      else:
        if self._is_target(own_key):
          self._map_next_turn(own_key, original, child_root, child_j, child_actions,
                              child_steps, child_chance)
        return None
    return (child, child_depth, child_track, child_root, child_j, child_actions,
            child_steps, child_chance, child_node)

  def _map_next_turn(self, own_key, state, root, j, actions, steps, chance,
                     base=None):
    """Maps a next turn of the bot at `own_key` (its history `state`, below the
    next root `root`, as _walk's): registers the root (`base` as _register's), adds
    the pair to the map and records the turn as found."""
    root_id = self._register(root, base)
    self.subgame_map.add(root_id, own_key, self.opponent_keys[root_id])
    self.found.setdefault(own_key, []).append(
        (state, root_id, j, actions, steps, chance))

  # Hooks of OwnTrace (a full trace keeps every branch and every next turn).

  def _own_key(self, state, node):
    """The bot's information state at `state` (a history of the original game; its
    `node` (j, actions) below the solved game's root j)."""
    del node
    return state.information_state_string(self.problem.player)

  def _enters(self, acting, key, track, at):
    """Whether the walk goes on below a decision node of the solved game (`at`:
    the node's state, track, pending root, root j, actions, steps, chance)."""
    del acting, key, track, at
    return True

  def _moves(self, state, acting, key, node):
    """The actions walked at `state` (`node`, as in _own_key), where `acting` acts
    (None: all of them)."""
    del state, acting, key, node

  def _is_target(self, own_key):
    """Whether a next turn with the bot's information state `own_key` is mapped."""
    del own_key
    return True

  def _passes(self, own_key):
    """Whether the walk goes on below a next turn (`own_key` the bot's there)."""
    del own_key
    return False

  @property
  def num_roots(self):
    return len(self.root_of)

  def root_state(self, root_id, copy=True):
    """The original game's state of next root `root_id` (copy=False: the trace's
    own, not to be changed)."""
    state = self.states[root_id]
    return state.clone() if copy else state

  def starts_below(self, own_key, problem=None):
    """The histories of the bot's information state `own_key` at its next turn
    (found here), as OwnTrace starts: in this trace's problem (the bot stays
    in it: each walked from the bot's decision, as a refused next turn), or in
    `problem`, the gadget of the next subgame over this trace's roots (each
    from the root above it, by history). None if `own_key` was not found."""
    found = self.found.get(own_key)
    if not found:
      return None
    if problem is None:
      return [(state, recall.CURRENT, None, j, actions, steps, chance)
              for state, _, j, actions, steps, chance in found]
    index = {tuple(history): j for j, history in enumerate(problem.root_histories)}
    histories = self.histories
    starts = []
    for state, root_id, _, actions, steps, chance in found:
      above = self.actions[root_id]
      new_j = index.get(histories[root_id])
      if new_j is None:
        return None
      root_chance = self.chance[root_id]
      starts.append((state, recall.CURRENT, None, new_j, actions[len(above):],
                     steps[len(self.steps[root_id]):],
                     chance / root_chance if root_chance > 0 else 0.0))
    return starts
