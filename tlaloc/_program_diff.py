"""How a new program structure differs from the closest one seen (for tlaloc.explain and
tlaloc.profile): inputs' shapes and dtypes, each operation's primitive and static parameters.
A structure is a plan's key: (device, input avals, (primitive, parameters, operand slots)
per operation, output slots)."""
from __future__ import annotations

import os

_MAX_COMPARED = 256      # structures compared with a new one (the most recent)
_MAX_LISTED = 4          # differences named in a sentence


def _short(where) -> str:
    return f"{os.path.basename(where[0])}:{where[1]}"


def backend_knows(device, key) -> bool:
    """Whether `device`'s backend already holds the structure `key` (cached or seen)."""
    backend = getattr(device, "_backend", None)
    for name in ("_entries", "_seen"):
        known = getattr(backend, name, None)
        if known is not None:
            try:
                return key in known
            except TypeError:
                return False
    return False


def candidates(device, seen) -> list:
    """Structures known on `device` to compare a new one with (most recent first)."""
    keys = list(seen)[-_MAX_COMPARED:]
    backend = getattr(device, "_backend", None)
    for name in ("_entries", "_seen"):
        known = getattr(backend, name, None)
        if known is not None:
            keys += [k for k in list(known)[-_MAX_COMPARED:] if k not in seen]
            break
    return [k for k in reversed(keys) if isinstance(k, tuple) and len(k) == 4]


def _distance(a, b) -> int:
    _, a_in, a_eq, a_out = a
    _, b_in, b_eq, b_out = b
    d = abs(len(a_in) - len(b_in)) + abs(len(a_eq) - len(b_eq)) * 2 + (a_out != b_out)
    d += sum(x != y for x, y in zip(a_in, b_in))
    d += sum(x != y for x, y in zip(a_eq, b_eq)) * 2
    return d


def _fmt(v):
    return repr(v) if isinstance(v, str) else str(v)


def differences(key, plan, known) -> list:
    """How the structure `key` (of `plan`) differs from the closest of `known`, as short
    phrases: "input 2 shape (3,) -> (4,)", "op 7 `reduce_sum` axes (0,) -> (1,)"."""
    if not isinstance(key, tuple) or len(key) != 4 or not known:
        return []
    closest = min(known, key=lambda k: _distance(k, key))
    _, o_in, o_eq, o_out = closest
    _, n_in, n_eq, n_out = key
    nodes = getattr(plan, "nodes", None) or []
    found = []
    if len(o_in) != len(n_in):
        found.append(f"{len(o_in)} inputs -> {len(n_in)}")
    for i, (a, b) in enumerate(zip(o_in, n_in)):
        if a.shape != b.shape:
            found.append(f"input {i} shape {a.shape} -> {b.shape}")
        elif a.dtype != b.dtype:
            found.append(f"input {i} dtype {a.dtype} -> {b.dtype}")
    if len(o_eq) != len(n_eq):
        found.append(f"{len(o_eq)} ops -> {len(n_eq)}")
    for i, (a, b) in enumerate(zip(o_eq, n_eq)):
        if a == b:
            continue
        at = ""
        if i < len(nodes):
            where = getattr(nodes[i], "where", None)
            if where is not None:
                at = f" (at {_short(where)})"
        if a[0] is not b[0]:
            found.append(f"op {i} `{a[0].name}` -> `{b[0].name}`{at}")
        elif a[1] != b[1]:
            old, new = dict(a[1]), dict(b[1])
            for name in new:
                if old.get(name) != new[name]:
                    if b[0].name == "constant" and name == "value":
                        found.append(f"a Python number became a new constant: op {i} "
                                     f"`constant` value {old.get(name)!r} -> {new[name]!r}{at} "
                                     "(pass it as a 0-d array to make it an input)")
                    else:
                        found.append(f"op {i} `{b[0].name}` {name} {_fmt(old.get(name))} -> "
                                     f"{_fmt(new[name])}{at}")
                    break
        else:
            found.append(f"op {i} `{b[0].name}` takes other operands{at}")
        if len(found) > _MAX_LISTED:
            break
    if not found and o_out != n_out:
        found.append("it returns other intermediates (the arrays the code still holds changed)")
    if len(found) > _MAX_LISTED:
        found = found[:_MAX_LISTED] + ["..."]
    return found
