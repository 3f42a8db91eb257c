"""Dynamic axes: tlaloc.jit(f, dynamic={"batch": (1, 64)}) and tlaloc.export(f, dynamic=...).

A dynamic axis is a named axis whose size may change between calls within a declared range.
A call maps each dynamic axis' size to a bucket (the smallest bucket at least as large; by
default the powers of two, and the range's top), pads its arguments along the dynamic axes
to the bucket with zeros, and runs the bucket's program, which takes the true sizes as 0-d
int32 inputs (one per name: its *length*). So a bucket is traced and compiled once, whatever
sizes fall in it. The program is the function's graph rewritten by the primitives' padding
rules (`padding=` of each declaration, _prims/padding.py): along a padded axis reductions
see their identity, contractions zeros, sorts put the padding last, indexing stays inside
the true length, and a primitive that cannot honour padding raises PaddingError at trace
time. Results are sliced back to the true sizes, so a call returns what the unpadded
computation returns.

An axis is padded exactly when its name is a dynamic name: names live in the abstract value
and every primitive's names rule carries them (docs/dynamic-shapes.md).
"""
from __future__ import annotations

import functools
import itertools
import struct
import threading

import numpy as np

from . import _export, _jit, _tree
from . import _dtypes as dt
from ._api._core import wrap
from ._array import Array
from ._context import trace
from ._graph import Aval, Node, leaf
from ._prims import lax
from ._prims import padding as pd
from .autodiff.engine import is_tracing

# Exports with more bucket combinations than this ask for explicit buckets.
MAX_EXPORTED_PROGRAMS = 64


# ----------------------------------------------------------------------------- declarations

class Axis:
    """One dynamic axis: its name, range [low, high] and buckets (increasing; the last is
    at least `high`)."""

    __slots__ = ("name", "low", "high", "buckets")

    def __init__(self, name, low, high, buckets):
        self.name, self.low, self.high, self.buckets = name, low, high, buckets

    def bucket(self, size) -> int:
        for b in self.buckets:
            if b >= size:
                return b
        raise AssertionError("unreachable: the last bucket covers the range")

    def __repr__(self):
        return f"Axis({self.name!r}, [{self.low}, {self.high}], buckets={list(self.buckets)})"


def axes_of(where, dynamic, buckets) -> dict:
    """{name: Axis} from `dynamic` ({name: (low, high)}) and `buckets` (None: powers of two;
    a list for every axis; or {name: list}); TypeError / ValueError naming `where`."""
    if not isinstance(dynamic, dict) or not dynamic:
        raise TypeError(f"{where}: dynamic must be a non-empty dict {{axis name: (min, max)}}, "
                        f"got {dynamic!r}")
    if buckets is not None and not isinstance(buckets, (dict, list, tuple)):
        raise TypeError(f"{where}: buckets must be a list of sizes or a dict {{axis name: "
                        f"list}}, got {buckets!r}")
    if isinstance(buckets, dict):
        unknown = sorted(set(buckets) - set(dynamic), key=str)
        if unknown:
            raise ValueError(f"{where}: buckets names {unknown}, which dynamic does not declare")
    out = {}
    for name, bounds in dynamic.items():
        if not isinstance(name, str):
            raise TypeError(f"{where}: dynamic axis names are str, got {name!r}")
        if (not isinstance(bounds, (tuple, list)) or len(bounds) != 2
                or not all(_is_int(b) for b in bounds)):
            raise TypeError(f"{where}: dynamic[{name!r}] must be a (min, max) pair of ints, "
                            f"got {bounds!r}")
        low, high = (int(b) for b in bounds)
        if low < 0:
            raise ValueError(f"{where}: dynamic[{name!r}] = {tuple(bounds)}: min must be >= 0")
        if low > high:
            raise ValueError(f"{where}: dynamic[{name!r}] = {tuple(bounds)}: min > max")
        given = buckets.get(name) if isinstance(buckets, dict) else buckets
        out[name] = Axis(name, low, high, _buckets(where, name, low, high, given))
    return out


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _buckets(where, name, low, high, given) -> tuple:
    if given is None:       # powers of two from the first one that holds `low`, then `high`
        sizes, b = [], 1
        while b < high:
            if b >= low:
                sizes.append(b)
            b *= 2
        return tuple(sizes) + (max(high, 1),)
    if not isinstance(given, (list, tuple)) or not given or not all(_is_int(b) for b in given):
        raise TypeError(f"{where}: buckets for {name!r} must be a non-empty list of ints, "
                        f"got {given!r}")
    sizes = tuple(int(b) for b in given)
    if any(b <= 0 for b in sizes) or any(a >= b for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"{where}: buckets for {name!r} must be positive and increasing, "
                         f"got {list(sizes)}")
    if sizes[-1] < high:
        raise ValueError(f"{where}: the largest bucket for {name!r} is {sizes[-1]}, below the "
                         f"range's max {high}; add a bucket of at least {high}")
    return tuple(b for b in sizes if b >= low) or sizes[-1:]


# ----------------------------------------------------------------------------- a call

class _Call(threading.local):
    """The call in progress on this thread: its sizes and buckets (for the compile log), the
    padded axes of the results the last trace made (`layout`) and of the program that ran
    (`ran`)."""
    sizes: dict = {}
    buckets: dict = {}
    layout: list = None
    ran: list = None


_call = _Call()


def sizes_of(where, axes, leaves) -> dict:
    """{name: size} of the dynamic axes of the array leaves; ValueError for a size outside
    its range, a name that no argument has, or two arguments that disagree on a size."""
    sizes, first = {}, {}
    for i, x in enumerate(leaves):
        if not isinstance(x, Array) or x._names is None:
            continue
        for axis, name in enumerate(x._names):
            if name not in axes:
                continue
            n, a = x.shape[axis], axes[name]
            if not a.low <= n <= a.high:
                raise ValueError(f"{where}: argument leaf #{i} has size {n} along dynamic axis "
                                 f"{name!r}, outside its declared range [{a.low}, {a.high}]")
            if name in sizes and sizes[name] != n:
                raise ValueError(f"{where}: arguments disagree on the size of dynamic axis "
                                 f"{name!r}: leaf #{first[name]} has {sizes[name]}, leaf #{i} "
                                 f"has {n}; one name is one size in a call")
            sizes[name], first[name] = n, i
    missing = [n for n in axes if n not in sizes]
    if missing:
        named = sorted({n for x in leaves if isinstance(x, Array) and x._names
                        for n in x._names if n is not None})
        raise ValueError(f"{where}: no argument has an axis named {missing[0]!r} (declared "
                         f"dynamic); the arguments' axis names are {named or 'none'}; name "
                         "the axis (tlaloc.rename, or names= at creation)")
    return sizes


def padded(x, sizes: dict):
    """Array `x` zero-padded at the end of its dynamic axes to `sizes` ({name: bucket});
    anything else unchanged."""
    if not isinstance(x, Array) or x._names is None:
        return x
    names = x._names
    shape = x.shape
    new = tuple(sizes.get(n, s) if n is not None else s for n, s in zip(names, shape))
    if new == shape:
        return x
    node = x._node
    if isinstance(node.value, np.ndarray):    # on the host: pad there, no program
        out = np.zeros(new, node.value.dtype)
        out[tuple(slice(0, s) for s in shape)] = node.value
        return Array._from_node(leaf(out, Aval(new, node.aval.dtype, names), node.device))
    zero = lax.constant(shape=(), dtype=node.aval.dtype, value=0, device=node.device)
    high = tuple(b - s for b, s in zip(new, shape))
    return Array._from_node(lax.pad(node, zero, low=(0,) * len(shape), high=high,
                                    interior=(0,) * len(shape)))


def unpadded(x, padded_as, sizes: dict):
    """A result `x` sliced to the true sizes ({name: size}) of its padded axes (`padded_as`:
    the dynamic axis' name or None per axis, or None)."""
    if not isinstance(x, Array) or padded_as is None:
        return x
    shape = x.shape
    limit = tuple(sizes[n] if n is not None else s for n, s in zip(padded_as, shape))
    if limit == shape:
        return x
    node = x._node
    value = node.value
    if value is not None and not isinstance(value, np.ndarray) and node.device.platform == "cpu":
        value = node.device.backend.to_numpy(value)   # host memory already: no program per size
    if isinstance(value, np.ndarray):
        value = value[tuple(slice(0, s) for s in limit)]
        return Array._from_node(leaf(value, Aval(limit, node.aval.dtype, node.aval.names), node.device))
    # elsewhere a slice program per size, recorded: it fuses with what reads the result
    return Array._from_node(lax.slice(node, start=(0,) * len(shape), limit=limit,
                                      strides=(1,) * len(shape)))


def lengths_for(sizes: dict, names, device) -> tuple:
    """The true sizes as 0-d int32 arrays, in the order of `names` (program inputs)."""
    return tuple(Array._from_node(leaf(np.asarray(sizes[n], np.int32), Aval((), dt.int32), device))
                 for n in names)


def padded_program(fun, axes):
    """`fun` as the padded program traces it: g(*args, *lengths, **kwargs) runs `fun` with
    the dynamic axes' lengths set (tlaloc.dim_size, mean, var read them) and returns its
    results rewritten by the padding rules. Which axes of its results are padded (what the
    caller slices back) it leaves in `_call.layout`: per result leaf, the dynamic axis' name
    or None per axis, or None."""
    names = tuple(axes)
    ranges = {n: (a.low, a.high) for n, a in axes.items()}

    def g(*args, **kwargs):
        # the lengths come last, so the arguments keep their numbers in messages
        args, lengths = args[:-len(names)], args[-len(names):]
        saved = pd.current.ranges, pd.current.lengths
        pd.current.ranges = ranges
        pd.current.lengths = {n: x._node for n, x in zip(names, lengths)}
        pd.current.regions = {}
        try:
            result = fun(*args, **kwargs)
            leaves, structure = _tree.flatten(result)
            env, layout = pd.rewrite([x._node for x in leaves if isinstance(x, Array)])
            out = [Array._from_node(env.get(x._node, x._node)) if isinstance(x, Array) else x
                   for x in leaves]
            _call.layout = [_padded_as(layout(x._node)) if isinstance(x, Array) else None
                            for x in out]
        finally:
            pd.current.ranges, pd.current.lengths = saved
            pd.current.regions = {}
        return _tree.unflatten(structure, out)

    g.__name__ = getattr(fun, "__name__", "function")
    g.__qualname__ = getattr(fun, "__qualname__", g.__name__)
    return g


def _padded_as(lengths):
    """Padded axes as names: the dynamic axis' name or None per axis, or None."""
    return None if lengths is None else tuple(None if n is None else pd.name_of(n) for n in lengths)


def _described(buckets) -> str:
    return ", ".join(f"{n}={b}" for n, b in buckets.items())


class _BucketJitted(_jit.Jitted):
    """The padded program's jit: one trace and one compile per bucket; its compile log
    records say which bucket and why."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._buckets_seen = set()

    def _cause(self, old, new):
        key = tuple(_call.buckets.items())
        sizes = ", ".join(f"{n}={s}" for n, s in _call.sizes.items())
        if key not in self._buckets_seen:
            self._buckets_seen.add(key)
            first = "first call: " if old is None else ""
            return f"{first}new bucket {_described(_call.buckets)} (sizes {sizes})"
        # a bucket traced before, for another signature: what else changed
        return f"{_jit._difference(old, new, ())} (bucket {_described(_call.buckets)})"

    def _compile_details(self):
        return {"bucket": dict(_call.buckets), "sizes": dict(_call.sizes)}

    def _trace_once(self, *how, **options):
        traced = super()._trace_once(*how, **options)
        traced.layout = _call.layout          # which result axes are padded
        return traced

    def _run(self, traced, *rest):
        _call.ran = traced.layout
        return super()._run(traced, *rest)


class DynamicJitted:
    """tlaloc.jit(f, dynamic=..., buckets=...): pads each call to its bucket and runs the
    bucket's program (see the module docstring)."""

    def __init__(self, fun, dynamic, buckets=None, static_argnums=(), static_argnames=(),
                 donate_argnums=()):
        if not callable(fun):
            raise TypeError(f"jit: expected a function, got {type(fun).__name__}")
        self.axes = axes_of("jit", dynamic, buckets)
        self.fun = fun
        functools.update_wrapper(self, fun)
        # the padded program takes the lengths after the arguments
        k = len(self.axes)
        shift = lambda nums: tuple(i if i >= 0 else i - k for i in _jit._argnums("", nums))  # noqa: E731
        self.static_argnums = _jit._argnums("static_argnums", static_argnums)
        self._static = {i for i in self.static_argnums}
        self._padded = _BucketJitted(padded_program(fun, self.axes), shift(static_argnums),
                                     static_argnames, shift(donate_argnums))
        self.calls_by_bucket = {}     # {((name, bucket), ...): number of calls}
        self._lengths = {}            # (name, size, device) -> its length input

    def __repr__(self):
        return f"<tlaloc.jit of {getattr(self.fun, '__qualname__', self.fun)}, dynamic {list(self.axes)}>"

    def __call__(self, *args, **kwargs):
        if is_tracing() or trace.jit_depth:
            return self.fun(*args, **kwargs)    # inside grad or another trace: no padding
        flat = not kwargs and not self._static and all(type(a) is Array for a in args)
        if flat:          # the common call: arrays only, no tree to walk
            leaves = args
        else:
            n = len(args)
            static = {i % n for i in self._static if -n <= i < n}
            dynamic_args = [a for i, a in enumerate(args) if i not in static]
            leaves, structure = _tree.flatten((dynamic_args, kwargs))
        sizes = sizes_of("jit", self.axes, leaves)
        buckets = {name: self.axes[name].bucket(s) for name, s in sizes.items()}
        device = next((x.device for x in leaves if isinstance(x, Array)), None)
        if flat:
            args = [padded(x, buckets) for x in args]
        else:
            dynamic_args, kwargs = _tree.unflatten(structure, [padded(x, buckets) for x in leaves])
            it = iter(dynamic_args)
            args = [a if i in static else next(it) for i, a in enumerate(args)]
        key = tuple(buckets.items())
        self.calls_by_bucket[key] = self.calls_by_bucket.get(key, 0) + 1
        lengths = tuple(self._length(name, sizes[name], device) for name in self.axes)
        _call.sizes, _call.buckets, _call.ran, _call.layout = sizes, buckets, None, None
        try:
            result = self._padded(*args, *lengths, **kwargs)
            layout = _call.ran if _call.ran is not None else _call.layout   # (g run inline)
        finally:
            _call.sizes, _call.buckets = {}, {}
        if isinstance(result, Array):
            return unpadded(result, layout[0], sizes)
        leaves, structure = _tree.flatten(result)
        return _tree.unflatten(structure, [unpadded(x, p, sizes) for x, p in zip(leaves, layout)])

    def _length(self, name, size, device):
        """The 0-d int32 array of a true size, made once per size and device (an input
        whose buffer the device keeps)."""
        key = (name, size, device)
        found = self._lengths.get(key)
        if found is None:
            found = self._lengths[key] = lengths_for({name: size}, (name,), device)[0]
        return found

    def traces(self) -> int:
        """How many programs (one per bucket and signature) have been traced."""
        return len(self._padded._cache)


# ----------------------------------------------------------------------------- export

_MAGIC = b"tlaloc-dynamic\0"


class DynamicExported:
    """An exported program with dynamic axes: one exported program per bucket combination,
    so it serves every size in the declared ranges (docs/dynamic-shapes.md)."""

    def __init__(self, axes, programs, layouts):
        self.axes = axes              # {name: Axis}
        self.programs = programs      # {(bucket per name, in axes order): Exported}
        self.layouts = layouts        # the same keys: per result leaf, its padded axes' names

    def __repr__(self):
        ranges = ", ".join(f"{n} in [{a.low}, {a.high}]" for n, a in self.axes.items())
        return f"<tlaloc.Exported with dynamic axes {ranges}: {len(self.programs)} program(s)>"

    def call(self, *args):
        leaves, _ = _tree.flatten(args)
        sizes = sizes_of("Exported.call", self.axes, leaves)
        buckets = {n: self.axes[n].bucket(s) for n, s in sizes.items()}
        key = tuple(buckets[n] for n in self.axes)
        device = next((x.device for x in leaves if isinstance(x, Array)), None)
        args = _tree.tree_map(lambda x: padded(x, buckets), args)
        result = self.programs[key].call(*args, *lengths_for(sizes, self.axes, device))
        leaves, structure = _tree.flatten(result)
        return _tree.unflatten(structure, [unpadded(x, p, sizes)
                                           for x, p in zip(leaves, self.layouts[key])])

    __call__ = call

    def serialize(self) -> bytes:
        head = {"axes": {n: [a.low, a.high, list(a.buckets)] for n, a in self.axes.items()},
                "programs": []}
        blobs = []
        for key, program in self.programs.items():
            blob = program.serialize()
            head["programs"].append({"buckets": list(key), "nbytes": len(blob),
                                     "layout": [None if p is None else list(p)
                                                for p in self.layouts[key]]})
            blobs.append(blob)
        import json   # here, not at import (tlaloc/_export.py says why)
        text = json.dumps(head, separators=(",", ":")).encode("utf-8")
        return _MAGIC + struct.pack("<Q", len(text)) + text + b"".join(blobs)

    @classmethod
    def from_bytes(cls, blob):
        import json
        try:
            start = len(_MAGIC) + 8
            (size,) = struct.unpack("<Q", blob[len(_MAGIC):start])
            head = json.loads(blob[start:start + size].decode("utf-8"))
            axes = {n: Axis(n, int(lo), int(hi), tuple(int(b) for b in bs))
                    for n, (lo, hi, bs) in head["axes"].items()}
            offset, programs, layouts = start + size, {}, {}
            for entry in head["programs"]:
                n, key = int(entry["nbytes"]), tuple(int(b) for b in entry["buckets"])
                programs[key] = _export.deserialize(blob[offset:offset + n])
                layouts[key] = [None if p is None else tuple(None if a is None else str(a) for a in p)
                                for p in entry["layout"]]
                if any(a is not None and a not in axes for p in layouts[key] for a in p or ()):
                    raise ValueError("a result's padded axis is not a dynamic axis")
                offset += n
        except (KeyError, TypeError, ValueError, struct.error, RecursionError) as e:
            raise ValueError(f"tlaloc.deserialize: corrupt exported program with dynamic axes "
                             f"({type(e).__name__}: {e})") from None
        missing = [k for k in itertools.product(*(a.buckets for a in axes.values()))
                   if k not in programs]
        if missing:
            raise ValueError(f"tlaloc.deserialize: corrupt exported program with dynamic axes "
                             f"(no program for buckets {missing[0]})")
        return cls(axes, programs, layouts)


def _export_dynamic(fun, axes, args):
    """DynamicExported for `fun`: one program per bucket combination, traced on abstract
    arguments shaped as `args` with their dynamic axes at each bucket."""
    leaves, _ = _tree.flatten(args)
    sizes_of("tlaloc.export", axes, leaves)      # the example arguments' names and sizes
    combos = list(itertools.product(*(a.buckets for a in axes.values())))
    if len(combos) > MAX_EXPORTED_PROGRAMS:
        raise ValueError(f"tlaloc.export: the dynamic axes' buckets make {len(combos)} programs "
                         f"(more than {MAX_EXPORTED_PROGRAMS}); give fewer buckets (buckets=)")
    g = padded_program(fun, axes)
    programs, layouts = {}, {}
    for combo in combos:
        buckets = dict(zip(axes, combo))
        abstract = _tree.tree_map(lambda x: _abstract(x, buckets) if isinstance(x, Array) else x, args)
        device = next((x.device for x in leaves if isinstance(x, Array)), None)
        lengths = tuple(Array._from_node(Node(None, (), None, Aval((), dt.int32), device))
                        for _ in axes)
        programs[combo] = _export._trace(g, tuple(abstract) + lengths)
        layouts[combo] = _call.layout
    return DynamicExported(axes, programs, layouts)


def _abstract(x, buckets):
    """An array without a value shaped as `x` with its dynamic axes at `buckets`."""
    names = x._names
    shape = tuple(buckets.get(n, s) if n is not None else s for n, s in zip(names or (), x.shape)) \
        if names else x.shape
    return Array._from_node(Node(None, (), None, Aval(shape, x.dtype, names), x.device))


# ----------------------------------------------------------------------------- public

def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), dynamic=None,
        buckets=None):
    """Capture `fun`: trace once per signature and replay the compiled program.

    Usable as `jit(f, ...)` or as a decorator `@jit` / `@jit(static_argnums=...)`. With
    `dynamic={"batch": (1, 64), ...}`, the arguments' axes of those names may take any size
    in the range: a call pads them to a bucket (`buckets=`: a list of sizes, or {name: list};
    default the powers of two) and one program per bucket serves every size in it
    (docs/dynamic-shapes.md)."""
    if dynamic is None:
        if buckets is not None:
            raise TypeError("jit: buckets= needs dynamic= (the axes whose sizes it buckets)")
        return _jit.jit(fun, static_argnums=static_argnums, static_argnames=static_argnames,
                        donate_argnums=donate_argnums)
    if fun is None:
        axes_of("jit", dynamic, buckets)    # bad options fail here, not at decoration
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums,
                                 dynamic=dynamic, buckets=buckets)
    return DynamicJitted(fun, dynamic, buckets, static_argnums, static_argnames, donate_argnums)


def export(fun, *, dynamic=None, buckets=None):
    """`export(f)(*args)`: the `Exported` program of `f` for the shapes, dtypes and axis
    names of `args` (docs/export.md). With `dynamic=` (as for tlaloc.jit; a jit with dynamic
    axes brings its own), the program serves every size of those axes in their ranges: it
    holds one program per bucket, and `args` only show the axes' names and the other sizes."""
    if isinstance(fun, DynamicJitted):
        if fun.static_argnums or fun._padded.static_argnames or fun._padded.donate_argnums:
            raise ValueError("tlaloc.export: export the function itself; static and donated "
                             "arguments of a tlaloc.jit do not carry over")
        if dynamic is None:
            dynamic = {n: (a.low, a.high) for n, a in fun.axes.items()}
            buckets = {n: list(a.buckets) for n, a in fun.axes.items()}
        fun = fun.fun
    if dynamic is None:
        if buckets is not None:
            raise TypeError("tlaloc.export: buckets= needs dynamic=")
        return _export.export(fun)
    if isinstance(fun, _jit.Jitted):
        if fun.static_argnums or fun.static_argnames or fun.donate_argnums:
            raise ValueError("tlaloc.export: export the function itself; static and donated "
                             "arguments of a tlaloc.jit do not carry over")
        fun = fun.fun
    if not callable(fun):
        raise TypeError(f"tlaloc.export: expected a function, got {type(fun).__name__}")
    axes = axes_of("tlaloc.export", dynamic, buckets)

    def trace_all(*args):
        return _export_dynamic(fun, axes, args)
    return functools.wraps(fun)(trace_all)


def deserialize(blob):
    """The exported program `serialize` wrote (`Exported`, or one with dynamic axes)."""
    if isinstance(blob, (bytes, bytearray, memoryview)) and bytes(blob[:len(_MAGIC)]) == _MAGIC:
        return DynamicExported.from_bytes(bytes(blob))
    return _export.deserialize(blob)


def dim_size(x, name):
    """The size of `x`'s axis named `name` as a 0-d int32 array: inside tlaloc.jit with that
    axis dynamic, its true size in this call (a traced value); otherwise the static size."""
    if not isinstance(x, Array):
        raise TypeError(f"dim_size: expected a tlaloc array, got {type(x).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"dim_size: the axis is given by its name (a str), got {name!r}")
    names = x._names or ()
    if name not in names:
        raise ValueError(f"dim_size: the array has no axis named {name!r} (names "
                         f"{x._names or (None,) * x.ndim})")
    length = pd.current.lengths.get(name)
    if length is not None:
        return wrap(length)
    size = x.shape[names.index(name)]
    return wrap(lax.constant(shape=(), dtype=dt.int32, value=size, device=x.device))
