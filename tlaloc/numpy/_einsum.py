"""`einsum` with NumPy's subscripts, over the standard's contractions.

`einsum("ij,jk->ik", a, b)`, implicit output (`"ij,jk"`: the labels seen once, sorted),
ellipsis (`"...ij,...jk->...ik"`, broadcast), repeated labels within an operand (a diagonal:
`"ii->i"`, `"ii"`), and NumPy's sublist form (`einsum(a, [0, 1], b, [1, 2], [0, 2])`).

Each operand first loses its repeated labels (diagonals, tlaloc.linalg.diagonal) and the
labels no other operand and not the output uses (sums). Then the operands are contracted
left to right, each pair by one `matmul` over (shared kept labels as batch, own labels, the
labels summed at that step), and the last result is permuted into the output's order.
"""
from __future__ import annotations

import builtins
import math
import string

import tlaloc as _xp
from tlaloc._api.array_methods import store

from ._convert import as_array

_LETTERS = string.ascii_letters


def _parse_sublists(operands):
    """NumPy's sublist form to the subscripts string and the arrays."""
    arrays, terms = [], []
    rest = list(operands)
    while len(rest) >= 2:
        arrays.append(rest.pop(0))
        terms.append(_sublist_term(rest.pop(0)))
    out = "->" + _sublist_term(rest.pop(0)) if rest else ""
    return ",".join(terms) + out, arrays


def _sublist_term(sub):
    term = ""
    for s in sub:
        if s is Ellipsis:
            term += "..."
        elif isinstance(s, int) and 0 <= s < len(_LETTERS):
            term += _LETTERS[s]
        else:
            raise ValueError(f"einsum: sublist labels are ints in [0, 52) or Ellipsis, got {s!r}")
    return term


def _split_term(term, ndim, which):
    """The labels of one operand, with '...' expanded into private labels (digits and
    punctuation cannot appear in subscripts, so '0', '1', ... name the broadcast axes)."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ValueError(f"einsum: operand {which}'s subscripts {term!r} have a misplaced '.'")
    bad = [c for c in term.replace("...", "") if c not in _LETTERS]
    if bad:
        raise ValueError(f"einsum: invalid subscript {bad[0]!r} in {term!r} (letters only)")
    if "..." not in term:
        if len(term) != ndim:
            raise ValueError(f"einsum: operand {which} has {ndim} axes but subscripts {term!r}")
        return list(term), 0
    head, tail = term.split("...")
    n_ell = ndim - len(head) - len(tail)
    if n_ell < 0:
        raise ValueError(f"einsum: operand {which} has {ndim} axes, fewer than {term!r} names")
    return list(head) + [str(i) for i in range(n_ell - 1, -1, -1)] + list(tail), n_ell


def _parse(subscripts, arrays):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, rhs = subscripts.split("->", 1)
        if "->" in rhs:
            raise ValueError(f"einsum: {subscripts!r} has more than one '->'")
    else:
        lhs, rhs = subscripts, None
    terms = lhs.split(",")
    if len(terms) != len(arrays):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(arrays)} operands")
    labels, n_ell = [], 0
    for i, (term, a) in enumerate(zip(terms, arrays)):
        lab, n = _split_term(term, a.ndim, i)
        labels.append(lab)
        n_ell = builtins.max(n_ell, n)
    ellipsis = [str(i) for i in range(n_ell - 1, -1, -1)]
    if rhs is None:
        counts = {}
        for lab in labels:
            for c in lab:
                counts[c] = counts.get(c, 0) + 1
        output = ellipsis + sorted(c for c, k in counts.items() if k == 1 and c in _LETTERS)
    else:
        if "..." not in rhs and n_ell:
            raise ValueError(f"einsum: the operands have '...' axes, the output {rhs!r} has none")
        output, _ = _split_term(rhs, len(rhs.replace("...", "")) + n_ell, "out")
        if len(set(output)) != len(output):
            raise ValueError(f"einsum: the output {rhs!r} repeats a label")
        seen = {c for lab in labels for c in lab}
        missing = [c for c in output if c not in seen]
        if missing:
            raise ValueError(f"einsum: output label {missing[0]!r} appears in no operand")
    return labels, output


def _sizes(labels, arrays):
    """The size of every label (broadcast axes of size 1 give way to larger ones)."""
    sizes = {}
    for lab, a in zip(labels, arrays):
        for c, n in zip(lab, a.shape):
            if c in sizes and sizes[c] != n:
                if c in _LETTERS or builtins.min(sizes[c], n) != 1:
                    raise ValueError(f"einsum: label {c if c in _LETTERS else '...'!r} has "
                                     f"sizes {sizes[c]} and {n}")
                n = builtins.max(sizes[c], n)
            sizes[c] = n
    return sizes


def _take_diagonals(a, lab):
    """Repeated labels of one operand become one axis (its diagonal)."""
    while len(set(lab)) != len(lab):
        c = next(c for c in lab if lab.count(c) > 1)
        i = lab.index(c)
        j = lab.index(c, i + 1)
        a = _xp.linalg.diagonal(_xp.moveaxis(a, (i, j), (-2, -1)))
        lab = [x for k, x in enumerate(lab) if k not in (i, j)] + [c]
    return a, lab


def _sum_out(a, lab, keep):
    axes = tuple(i for i, c in enumerate(lab) if c not in keep)
    if not axes:
        return a, lab
    return _xp.sum(a, axis=axes), [c for c in lab if c in keep]


def _permuted(a, lab, order):
    perm = tuple(lab.index(c) for c in order)
    return a if perm == tuple(range(len(perm))) else _xp.permute_dims(a, perm)


def _contract(a, la, b, lb, keep):
    """a and b contracted over their shared labels not in `keep`, by one matmul (shared
    kept labels are its batch axes, which broadcast where '...' axes have size 1)."""
    shared = [c for c in la if c in lb]
    batch = [c for c in shared if c in keep]
    summed = [c for c in shared if c not in keep]
    free_a = [c for c in la if c not in lb]
    free_b = [c for c in lb if c not in la]
    a = _permuted(a, la, batch + free_a + summed)
    b = _permuted(b, lb, batch + summed + free_b)
    nb = len(batch)
    own_a, own_b = a.shape[nb:nb + len(free_a)], b.shape[nb + len(summed):]
    k = math.prod(a.shape[nb + len(free_a):])
    product = _xp.reshape(a, a.shape[:nb] + (math.prod(own_a), k)) @ \
        _xp.reshape(b, b.shape[:nb] + (k, math.prod(own_b)))
    return _xp.reshape(product, product.shape[:nb] + own_a + own_b), batch + free_a + free_b


def einsum(*operands, dtype=None, out=None, optimize=False, casting="safe", order="K"):
    """NumPy's `np.einsum(subscripts, *operands)`: a sum of products over the labelled axes.
    `optimize` is accepted and ignored (pairs contract left to right); `out=` writes the
    result into `out`."""
    if not operands:
        raise TypeError("einsum: missing the subscripts")
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], list(operands[1:])
    else:
        subscripts, arrays = _parse_sublists(operands)
    if not arrays:
        raise ValueError("einsum: no operands")
    arrays = [as_array(a) for a in arrays]
    if dtype is not None:
        arrays = [_xp.astype(a, dtype) for a in arrays]
    labels, output = _parse(subscripts, arrays)
    sizes = _sizes(labels, arrays)

    ops = []
    for i, (a, lab) in enumerate(zip(arrays, labels)):
        a, lab = _take_diagonals(a, lab)
        elsewhere = set(output).union(*(set(l) for j, l in enumerate(labels) if j != i))
        ops.append(_sum_out(a, lab, elsewhere))
    a, la = ops[0]
    for i in range(1, len(ops)):
        b, lb = ops[i]
        keep = set(output).union(*(set(l) for _, l in ops[i + 1:]))
        a, la = _contract(a, la, b, lb, keep)
    a, la = _sum_out(a, la, set(output))
    result = _permuted(a, la, output)
    target = tuple(sizes[c] for c in output)
    if result.shape != target:             # broadcast '...' axes of a single operand
        result = _xp.broadcast_to(result, target)
    return store(result, out, "einsum")
