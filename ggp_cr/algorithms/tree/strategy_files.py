"""Strategy files: a behavioural strategy of both players saved with its game.

A file (npz) holds the game string, each information set's player, key
(`information_state_string`) and legal actions, and the probabilities, so it can be
checked against the game when loaded: another game, another information-set
structure, or a damaged file is refused with a message saying what differs. Files are
written atomically (a temporary file renamed over the target), so an interrupted save
never leaves a half-written strategy behind.
"""

import numpy as np

from ggp_cr.algorithms.tree import npz_archives

FORMAT = "ggp_cr-strategy-1"
_FIELDS = ("format", "game_string", "infoset_player", "infoset_num_actions",
           "infoset_actions", "infoset_keys", "probabilities")


def save_strategy(path, tree, slots):
  """Writes the strategy `slots` (slot form on `tree`) to `path` atomically."""
  slots = tree.check_slots(slots)
  keys = "\x00".join(tree.infoset_keys).encode("utf-8")
  npz_archives.write_atomically(
      path, compressed=True, format=np.array(FORMAT),
      game_string=np.array(tree.game_string), infoset_player=tree.infoset_player,
      infoset_num_actions=tree.infoset_num_actions,
      infoset_actions=tree.infoset_actions,
      infoset_keys=np.frombuffer(keys, dtype=np.uint8), probabilities=slots)


def read_game_string(path):
  """The game string stored in a strategy file (to load the game it belongs to)."""
  return _read(path)["game_string"]


def load_strategy(path, tree):
  """Reads a strategy file written for `tree`'s game; returns it in slot form.

  Raises ValueError if the file is unreadable, not a strategy file, for another game,
  its information sets or actions differ from the tree's, or its probabilities are
  not distributions.
  """
  contents = _read(path)
  if contents["game_string"] != tree.game_string:
    raise ValueError(f"Strategy file {path} is for {contents['game_string']}, not "
                     f"{tree.game_string}.")
  players = contents["infoset_player"]
  num_actions = contents["infoset_num_actions"].astype(np.int64)
  keys = contents["infoset_keys"]
  if not (len(players) == len(num_actions) == len(keys)) or \
      num_actions.sum() != len(contents["infoset_actions"]) or \
      len(contents["probabilities"]) != len(contents["infoset_actions"]):
    raise ValueError(f"Strategy file {path} is inconsistent (array lengths differ).")
  if len(keys) != tree.num_infosets:
    raise ValueError(f"Strategy file {path} has {len(keys)} information sets; "
                     f"{tree.game_string} has {tree.num_infosets}.")
  slots = np.empty(tree.num_infoset_actions)
  filled = np.zeros(tree.num_infosets, dtype=bool)
  offsets = np.concatenate(([0], np.cumsum(num_actions)))
  for index, key in enumerate(keys):
    player = int(players[index])
    try:
      infoset = tree.infoset_index(player, key)
    except (KeyError, IndexError):
      raise ValueError(f"Strategy file {path} has player {player}'s information state "
                       f"{key!r}, which {tree.game_string} does not have.") from None
    offset = int(tree.infoset_action_offset[infoset])
    count = int(tree.infoset_num_actions[infoset])
    actions = contents["infoset_actions"][offsets[index]:offsets[index + 1]]
    if not np.array_equal(actions, tree.infoset_actions[offset:offset + count]):
      raise ValueError(f"Strategy file {path}: information state {key!r} has actions "
                       f"{actions.tolist()}, the game has "
                       f"{tree.infoset_actions[offset:offset + count].tolist()}.")
    probabilities = contents["probabilities"][offsets[index]:offsets[index + 1]]
    if not np.all(np.isfinite(probabilities)) or np.any(probabilities < 0) or \
        abs(probabilities.sum() - 1.0) > 1e-6:
      raise ValueError(f"Strategy file {path}: the probabilities of information state "
                       f"{key!r} are not a distribution: {probabilities.tolist()}.")
    slots[offset:offset + count] = probabilities
    filled[infoset] = True
  if not filled.all():
    missing = int(np.flatnonzero(~filled)[0])
    raise ValueError(f"Strategy file {path} lacks information state "
                     f"{tree.infoset_keys[missing]!r}.")
  return slots


def _read(path):
  contents = npz_archives.read(path, "strategy file", required=_FIELDS, names=_FIELDS)
  if str(contents["format"]) != FORMAT:
    raise ValueError(f"Strategy file {path} has format {str(contents['format'])!r}, "
                     f"expected {FORMAT!r}.")
  contents["game_string"] = str(contents["game_string"])
  try:
    blob = contents["infoset_keys"].tobytes().decode("utf-8")
  except UnicodeDecodeError:
    raise ValueError(f"Strategy file {path} has damaged information state keys.") \
        from None
  contents["infoset_keys"] = blob.split("\x00") if len(contents["infoset_player"]) \
      else []
  return contents
