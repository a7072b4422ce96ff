"""Parser for configuration strings such as ``cfr(rm=drm(1,1),updates=alternating)``.

Solvers, regret matchers and players are chosen on the command line by a name with an
optional parenthesised argument list, as in the thesis's CFRPlayground configuration
strings ([S] App. A, which wrote ``CFR{rm=RM+,cse=1}``; curly braces are accepted too).
Arguments are positional or ``key=value`` and may themselves be such calls.
"""

import dataclasses
import math
from typing import Any, Callable

from ggp_cr.algorithms.config import number_ranges


@dataclasses.dataclass(frozen=True)
class Call:
  """A parsed ``name(arg, ..., key=value, ...)``; argument values are raw strings."""
  name: str
  args: tuple
  kwargs: dict

  def __str__(self):
    parts = list(self.args) + [f"{k}={v}" for k, v in self.kwargs.items()]
    return f"{self.name}({','.join(parts)})" if parts else self.name


_OPEN = {"(": ")", "{": "}"}


def split_top_level(text, full_text):
  """Splits `text` at commas not nested in brackets."""
  parts, depth, start = [], 0, 0
  for i, char in enumerate(text):
    if char in "({":
      depth += 1
    elif char in ")}":
      depth -= 1
      if depth < 0:
        raise ValueError(f"Unbalanced brackets in {full_text!r}.")
    elif char == "," and depth == 0:
      parts.append(text[start:i].strip())
      start = i + 1
  if depth != 0:
    raise ValueError(f"Unbalanced brackets in {full_text!r}.")
  parts.append(text[start:].strip())
  return parts


def parse_call(text):
  """Parses ``name`` or ``name(args)`` into a Call; the name is lower-cased.

  Raises ValueError on unbalanced brackets, empty arguments, repeated keys, or a
  positional argument after a keyword argument.
  """
  if not isinstance(text, str) or not text.strip():
    raise ValueError(f"Expected a name such as 'cfr' or 'dcfr(1.5,0,2)', got {text!r}.")
  stripped = text.strip()
  bracket = min((stripped.find(b) for b in _OPEN if b in stripped), default=-1)
  if bracket < 0:
    if any(c in stripped for c in ")},="):
      raise ValueError(f"Malformed specification {text!r}.")
    return Call(stripped.lower(), (), {})
  name = stripped[:bracket].strip().lower()
  closing = _OPEN[stripped[bracket]]
  if not name or stripped[-1] != closing:
    raise ValueError(
        f"Malformed specification {text!r}: expected name(arguments).")
  parts = split_top_level(stripped[bracket + 1:-1], text)
  if parts == [""]:
    return Call(name, (), {})
  args, kwargs = [], {}
  for part in parts:
    if not part:
      raise ValueError(f"Empty argument in {text!r}.")
    key, eq, value = part.partition("=")
    if eq and "(" not in key and "{" not in key:
      key = key.strip().lower()
      if not key or not value.strip():
        raise ValueError(f"Malformed argument {part!r} in {text!r}.")
      if key in kwargs:
        raise ValueError(f"Argument {key!r} given twice in {text!r}.")
      kwargs[key] = value.strip()
    else:
      if kwargs:
        raise ValueError(
            f"Positional argument {part!r} after keyword arguments in {text!r}.")
      args.append(part)
  return Call(name, tuple(args), kwargs)


def parse_float(text, what):
  """Parses a float (``inf`` and ``-inf`` allowed, NaN refused) or raises ValueError."""
  try:
    value = float(text)
  except (TypeError, ValueError):
    raise ValueError(f"{what} must be a number, got {text!r}.") from None
  if value != value:
    raise ValueError(f"{what} must be a number, got {text!r}.")
  return value


def parse_int(text, what, minimum=None):
  """Parses an integer >= `minimum` or raises ValueError naming `what`."""
  try:
    value = int(text)
  except (TypeError, ValueError):
    raise ValueError(f"{what} must be an integer, got {text!r}.") from None
  if minimum is not None and value < minimum:
    raise ValueError(f"{what} must be >= {minimum}, got {value}.")
  return value


def parse_bool(text, what):
  """Parses true/false/1/0/yes/no or raises ValueError naming `what`."""
  lowered = str(text).strip().lower()
  if lowered in ("true", "1", "yes"):
    return True
  if lowered in ("false", "0", "no"):
    return False
  raise ValueError(f"{what} must be true or false, got {text!r}.")


# Registries of named things with typed parameters (solvers, players).


class _Required:
  """Default of a parameter that must be given."""

  def __repr__(self):
    return "..."

  __str__ = __repr__


REQUIRED = _Required()


@dataclasses.dataclass(frozen=True)
class Parameter:
  """One parameter: its name, parser (text -> value), default (or REQUIRED), meaning."""
  name: str
  parse: Callable[[str], Any]
  default: Any
  help: str


def int_parameter(name, minimum=None):
  """A parser of integer parameter `name` in [minimum, number_ranges.MAX_COUNT]."""
  def parse(text):
    value = parse_int(text, f"parameter {name!r}", minimum)
    if value > number_ranges.MAX_COUNT:
      raise ValueError(f"parameter {name!r} must be <= {number_ranges.MAX_COUNT}, got "
                       f"{value}.")
    return value
  return parse


def float_parameter(name, minimum=None, maximum=None, allowed=(math.inf, -math.inf)):
  """A parser of real parameter `name` in [minimum, maximum] (number_ranges.check);
  infinities only where `allowed` lists them (by default those not below `minimum`
  nor above `maximum`)."""
  allowed = tuple(a for a in allowed if (minimum is None or a >= minimum) and
                  (maximum is None or a <= maximum))

  def parse(text):
    value = parse_float(text, f"parameter {name!r}")
    return number_ranges.check(value, f"parameter {name!r}", minimum, maximum, allowed)
  return parse


def _real_parameter(name, accept, requirement):
  """A parser of real parameter `name` accepting values with `accept(value)`."""
  def parse(text):
    value = parse_float(text, f"parameter {name!r}")
    if not accept(value):
      raise ValueError(f"parameter {name!r} must be {requirement}, got {value}.")
    return value
  return parse


def probability_parameter(name):
  """A parser of parameter `name` taking a probability in [0, 1]."""
  return _real_parameter(name, lambda value: 0.0 <= value <= 1.0, "in [0, 1]")


def positive_parameter(name):
  """A parser of parameter `name` taking a finite number > 0."""
  return _real_parameter(name, lambda value: 0.0 < value < float("inf"),
                         "a positive number")


def bool_parameter(name):
  """A parser of boolean parameter `name` (true/false/1/0/yes/no)."""
  return lambda text: parse_bool(text, f"parameter {name!r}")


def choice_parameter(name, choices):
  """A parser of parameter `name` taking one of `choices` (case-insensitive)."""
  def parse(text):
    if text.lower() not in choices:
      raise ValueError(
          f"parameter {name!r} must be one of {', '.join(choices)}; got {text!r}.")
    return text.lower()
  return parse


def usage(name, parameters):
  """``name(p1=default,...)``; parameters without a default are shown bare."""
  if not parameters:
    return name
  args = ",".join(p.name if p.default is None or p.default is REQUIRED
                  else f"{p.name}={p.default}" for p in parameters)
  return f"{name}({args})"


class Registry:
  """Named entries (objects with `name`, `summary`, `parameters`, `usage()`).

  `parse(text)` turns a string such as ``name(1,key=value)`` into the entry and its
  parameter values (defaults filled in), with errors that list what is accepted.
  """

  def __init__(self, kind):
    self.kind = kind
    self._entries = {}

  def register(self, entry):
    self._entries[entry.name] = entry
    return entry

  def names(self):
    return sorted(self._entries)

  def describe(self):
    """Multi-line help: every entry with its parameters and defaults."""
    lines = []
    for name in self.names():
      entry = self._entries[name]
      lines.append(f"  {entry.usage()}: {entry.summary}")
      for parameter in entry.parameters:
        lines.append(f"      {parameter.name}: {parameter.help}")
    return "\n".join(lines)

  def parse(self, text):
    """Returns (call, entry, values) for `text`; ValueError on bad input.

    A default given as text is parsed like a given value, so defaults are written
    once, as they would be typed.
    """
    kind = self.kind
    try:
      call = parse_call(text)
    except ValueError as error:
      raise ValueError(f"Malformed {kind} {text!r}: {error}\n"
                       f"Accepted {kind}s:\n{self.describe()}") from None
    entry = self._entries.get(call.name)
    if entry is None:
      raise ValueError(f"Unknown {kind} {call.name!r} in {text!r}. Accepted {kind}s:\n"
                       f"{self.describe()}")
    label = f"{kind.capitalize()} {text!r}"
    accepted = [p.name for p in entry.parameters]
    hint = f"usage: {entry.usage()}"
    if len(call.args) > len(accepted):
      raise ValueError(
          f"{label}: {entry.name} takes at most {len(accepted)} positional "
          f"argument(s), got {len(call.args)}; {hint}.")
    raw = dict(zip(accepted, call.args))
    for key, value in call.kwargs.items():
      if key not in accepted:
        raise ValueError(
            f"{label}: unknown parameter {key!r} for {entry.name}; accepted: "
            f"{', '.join(accepted) or 'none'}; {hint}.")
      if key in raw:
        raise ValueError(f"{label}: parameter {key!r} given twice; {hint}.")
      raw[key] = value
    values = {}
    for parameter in entry.parameters:
      if parameter.name in raw:
        try:
          values[parameter.name] = parameter.parse(raw[parameter.name])
        except ValueError as error:
          raise ValueError(f"{label}: {error} ({hint})") from None
      elif parameter.default is REQUIRED:
        raise ValueError(f"{label}: parameter {parameter.name!r} is required; {hint}.")
      elif isinstance(parameter.default, str):
        values[parameter.name] = parameter.parse(parameter.default)
      else:
        values[parameter.name] = parameter.default
    return call, entry, values
