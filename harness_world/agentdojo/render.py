"""A tool result shown as AgentDojo shows it to a model, and its tool-call argument rewrite.

AgentDojo's tool executor turns a result into text: a record (a Pydantic model) is dumped to
YAML; a list is dumped to YAML with each record as a map and each text or integer as its text;
anything else (a number, a text, a plain dict) is Python's ``str`` of it. Our tools return the
same values as plain data, so a plain dict is told from a record by the tool that returned it
(`render` takes the set of tools whose results are records). Before a call runs, AgentDojo's
executor replaces every text argument that Python reads as a list literal with that list
(`executor_arguments`).
"""

from __future__ import annotations

import ast
import datetime
import typing
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from harness_world.agentdojo.data import _yaml


def render(
    tool: str,
    result: Any,
    record_tools: Collection[str] = (),
    orders: Mapping[str, Sequence[str]] | None = None,
    datetimes: Collection[str] = (),
) -> str:
    """The text AgentDojo shows for ``result`` of ``tool``.

    Args:
        tool: The tool that returned it.
        result: The result, as plain data.
        record_tools: Tools whose dict results are records (dumped as YAML).
        orders: Per tool, the order of the keys of a plain dict it returns (our results are
            stored with sorted keys; Python's ``str`` of a dict shows them in insertion order).
        datetimes: Fields of a record whose text is a date-time (shown as YAML shows one).
    """
    yaml = _yaml()
    order = (orders or {}).get(tool)
    if isinstance(result, dict) and order:
        rank = {name: i for i, name in enumerate(order)}
        result = dict(sorted(result.items(), key=lambda item: rank.get(item[0], len(rank))))
    result = _timed(result, frozenset(datetimes), {}) if datetimes else result
    if isinstance(result, dict) and tool in record_tools:
        return str(yaml.safe_dump(result)).strip()
    if isinstance(result, list):
        items = [str(item) if type(item) in (str, int) else item for item in result]
        return str(yaml.safe_dump(items)).strip()
    return str(result)


def _timed(value: Any, datetimes: frozenset[str], seen: dict[str, dict[str, Any]]) -> Any:
    """``value`` with the date-time texts of its records, at any depth, as date-times.

    A record shown twice in one result with every field equal (an event attached to several
    e-mails) is one object in AgentDojo, so its date-times are the same objects wherever it
    shows, and YAML writes the repeats as aliases (``&id001`` ... ``*id001``): each repeat is
    given the date-times of its first showing.
    """
    if isinstance(value, list):
        return [_timed(item, datetimes, seen) for item in value]
    if not isinstance(value, dict):
        return value
    out = {
        k: _datetime(v) if k in datetimes else _timed(v, datetimes, seen) for k, v in value.items()
    }
    timed = {k: out[k] for k in datetimes & out.keys() if isinstance(out[k], datetime.datetime)}
    if timed:
        out.update(seen.setdefault(repr(sorted(value.items(), key=lambda kv: kv[0])), timed))
    return out


def _datetime(value: Any) -> Any:
    """A date-time text as a date-time; anything else unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return datetime.datetime.fromisoformat(value)
    except ValueError:
        return value


_BOOLS = {
    **dict.fromkeys(("true", "t", "yes", "y", "on", "1"), True),
    **dict.fromkeys(("false", "f", "no", "n", "off", "0"), False),
}


def lax(value: Any, kind: type) -> Any:
    """``value`` as Pydantic's lax mode reads it for a parameter of ``kind`` (else unchanged).

    An integral float or a text of digits for an integer; an integer or a numeric text for a
    float. AgentDojo validates every call's arguments this way before the tool runs.
    """
    if kind is int and not isinstance(value, bool):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
    if kind is bool and isinstance(value, str) and value.lower() in _BOOLS:
        return _BOOLS[value.lower()]
    if kind is float and not isinstance(value, bool):
        if isinstance(value, int):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                return value
    return value


def _scalar(hint: Any) -> type | None:
    """The int or float a parameter's type names (through ``X | None``), else None."""
    if hint in (int, float, bool):
        return hint  # type: ignore[no-any-return]
    members = [a for a in typing.get_args(hint) if a is not type(None)]
    return members[0] if len(members) == 1 and members[0] in (int, float, bool) else None


def executor_arguments(args: Any, params: type | None = None) -> Any:
    """The arguments as AgentDojo's executor passes them on.

    Text that Python reads as a list literal becomes that list; with the tool's ``params``
    struct, numbers are read as Pydantic's lax mode reads them (`lax`).
    """
    if not isinstance(args, dict):
        return args
    hints = typing.get_type_hints(params) if params is not None else {}
    out: dict[str, Any] = {}
    for name, given in args.items():
        value = _listed(given) if isinstance(given, str) else given
        kind = _scalar(hints.get(name))
        out[name] = value if kind is None else lax(value, kind)
    return out


def _listed(text: str) -> Any:
    """``text`` as the list it reads as in Python, else the text itself."""
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return parsed if isinstance(parsed, list) else text
