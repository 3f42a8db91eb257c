"""Forward and reverse mode over the recorded graph.

While a function is being differentiated, `tracing()` keeps computed nodes' inputs (see
_context.trace.retain_graph), so Python code may look at values (an `if` on an array) without
losing the graph. The walks below then capture the part of the graph that depends on the
variables and apply each primitive's jvp or vjp rule; the rules record new primitives, so
derivatives are lazy, fuse with the forward pass, and can be differentiated again.
"""
from __future__ import annotations

import contextlib

from .._context import trace
from .._prims import ad, lax
from .._prims import autodiff as adp
from .._prims.control import Region, group_of


@contextlib.contextmanager
def tracing():
    trace.retain_graph += 1
    try:
        yield
    finally:
        trace.retain_graph -= 1


def is_tracing() -> bool:
    return trace.retain_graph > 0


def variable(node):
    return lax.variable(node)


class Tape:
    """The part of the graph between some variables and some outputs, in topological
    order, captured with each node's inputs (later evaluation may drop them)."""

    def __init__(self, outputs, variables):
        self.variables = set(variables)
        depends = {}
        order = []
        stack = [(o, False) for o in outputs]
        while stack:
            node, expanded = stack.pop()
            if node in depends and not expanded:
                continue
            inputs = node.inputs if node.prim is not None else ()
            # a custom rule's result takes its derivative from the arguments only: the
            # computation of its value (operand 0) is never differentiated, so it stays off
            # the tape (forward mode would otherwise build unused tangents for all of it)
            followed = inputs[1:] if node.prim is adp.custom_call else inputs
            if node in self.variables:
                depends[node] = True
                order.append((node, ()))
                continue
            if expanded:
                d = any(depends.get(i, False) for i in followed)
                depends[node] = d
                if d:
                    order.append((node, inputs))
                continue
            depends.setdefault(node, False)
            stack.append((node, True))
            for i in followed:
                if i not in depends:
                    stack.append((i, False))
        self.order = order
        self.depends = depends

    def backward(self, seeds: dict, observer=None) -> dict:
        """Cotangents of the variables given cotangents of outputs ({node: ct}).
        `observer(node, ct)`, if given, is told each node's total cotangent before its
        rule runs (tlaloc.grad_source uses it to name the backward pass)."""
        cts = dict(seeds)
        waiting = {}   # region ops' result nodes reached so far, by op (see _region_cts)
        for node, inputs in reversed(self.order):
            if node in self.variables:
                continue
            ct = cts.pop(node, None)
            if type(node.prim) is Region:
                self._region_backward(node, inputs, ct, waiting, cts, observer)
                continue
            if ct is None:
                continue
            if observer is not None:
                observer(node, ct)
            rule = node.prim.vjp
            if rule is None:
                raise NotImplementedError(f"no reverse-mode rule for primitive '{node.prim.name}'")
            for inp, c in zip(inputs, rule(ct, *inputs, out=node, **node.params)):
                if c is not None and self.depends.get(inp, False):
                    cts[inp] = ad.add_any(cts.get(inp), c)
        return {v: cts.get(v) for v in self.variables}

    def _region_backward(self, node, inputs, ct, waiting, cts, observer):
        """A result node of a region op (control flow): its rule runs once, with the
        cotangents of all the op's results on the tape, when the last of them is reached
        (the walk reaches each node after all its consumers, so each is complete then)."""
        group = group_of(node)
        got = {node: ct}
        if group is not None:
            live = [n for r in group if (n := r()) is not None and self.depends.get(n, False)]
            # (keyed by identity: a tuple of weakrefs cannot be hashed once one is dead)
            got = waiting.setdefault(id(group), (group, {}))[1]
            got[node] = ct
            if len(got) < len(live):
                return
            del waiting[id(group)]
        got = {n: c for n, c in got.items() if c is not None}
        if not got:
            return
        if observer is not None:
            for n, c in got.items():
                observer(n, c)
        params = {k: v for k, v in node.params.items() if k != "output"}
        rule = node.prim.vjp_all
        if rule is None:
            raise NotImplementedError(f"no reverse-mode rule for primitive '{node.prim.name}'")
        in_cts = rule({n.params["output"]: c for n, c in got.items()}, *inputs, out=node,
                      **params)
        for inp, c in zip(inputs, in_cts):
            if c is not None and self.depends.get(inp, False):
                cts[inp] = ad.add_any(cts.get(inp), c)

    def forward(self, tangents: dict) -> dict:
        """Tangents of every node on the tape given tangents of the variables."""
        tans = dict(tangents)
        region_tangents = {}   # region ops' tangents, once per op for all its result nodes
        for node, inputs in self.order:
            if node in self.variables:
                continue
            ts = tuple(tans.get(i) for i in inputs)
            if all(t is None for t in ts):
                continue
            if type(node.prim) is Region:
                t = self._region_forward(node, inputs, ts, region_tangents)
                if t is not None:
                    tans[node] = t
                continue
            rule = node.prim.jvp
            if rule is None:
                raise NotImplementedError(f"no forward-mode rule for primitive '{node.prim.name}'")
            t = rule(ts, *inputs, out=node, **node.params)
            if t is not None:
                tans[node] = t
        return tans

    def _region_forward(self, node, inputs, ts, region_tangents):
        """The tangent of a region op's result: the op's rule runs once for all of its
        results on the tape."""
        group = group_of(node)
        found = region_tangents.get(id(group))[1] if id(group) in region_tangents else None
        if found is None:
            live = [node] if group is None else [
                n for r in group if (n := r()) is not None and self.depends.get(n, False)]
            params = {k: v for k, v in node.params.items() if k != "output"}
            if node.prim.jvp_all is None:
                raise NotImplementedError(f"no forward-mode rule for primitive '{node.prim.name}'")
            found = node.prim.jvp_all(ts, *inputs, out=node,
                                      wanted=[n.params["output"] for n in live], **params)
            if group is not None:
                region_tangents[id(group)] = (group, found)
        return found.get(node.params["output"])
