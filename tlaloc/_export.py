"""Exported programs: a function captured once, saved as bytes, and called later (in another
process, with later tlaloc and jaxlib versions) without its Python source (docs/export.md).

    exported = tlaloc.export(f)(x, y)     # traced for these arguments' shapes and dtypes
    blob = exported.serialize()           # bytes: the program and what calling it needs
    g = tlaloc.deserialize(blob)
    g.call(x2, y2)                        # compiled on the first call, then cached

The program travels as a StableHLO portable artifact (VHLO bytecode, with StableHLO's
compatibility guarantees), targeted at the oldest StableHLO version that can express it.
Beside it: the argument and result structures, the arrays' shapes, dtypes and axis names,
the values of Python scalar arguments (which tracing bakes into the program, as `jit` does),
and the arrays the function captured (program inputs, stored with the program). Calling it
checks the arguments against that record first. An argument the function wrote into (x[i]
= v, x += y, through a view of x) is rebound to its new value by each call, as under `jit`.
Exported programs run on PJRT devices; one that calls LAPACK (LU, QR, eigh, eig, SVD) runs
on the CPU only.
"""
from __future__ import annotations

import collections
import functools
import struct
# json and hashlib are imported where an exported program's bytes are written or read, not
# here: most processes never do, and the two cost milliseconds at `import tlaloc`

import numpy as np

from . import _dtypes as dt
from . import _tree
from ._api import views as _views
from ._array import Array
from ._config import VERSION
from ._devices import default_device
from ._context import trace
from ._graph import Aval, DerivativeLostError, evaluate, leaf, reaches_variable
from ._jit import Jitted
from ._mesh import Sharding, sharding_of
from .backends.spmd import lowering_attributes
from . import _protocol as protocol
from .lowering import lower_program

_MAGIC = b"tlaloc-exported\0"
_FORMAT = 1
_JSON_SCALARS = (bool, int, float, str)


def export(fun):
    """`export(f)(*args)`: trace `f` (a function, or a `tlaloc.jit` of one) for the shapes,
    dtypes and axis names of `args` (tlaloc arrays, Python scalars, and tuples, lists and
    dicts of them) and return the `Exported` program."""
    if isinstance(fun, Jitted):
        if fun.static_argnums or fun.static_argnames or fun.donate_argnums:
            raise ValueError("tlaloc.export: export the function itself; static and donated "
                             "arguments of a tlaloc.jit do not carry over (Python scalar "
                             "arguments are baked into the exported program)")
        fun = fun.fun
    if not callable(fun):
        raise TypeError(f"tlaloc.export: expected a function, got {type(fun).__name__}")

    def trace(*args):
        return _trace(fun, args)
    return functools.wraps(fun)(trace)


def deserialize(blob) -> "Exported":
    """The `Exported` program that `Exported.serialize` wrote (ValueError for anything else)."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"tlaloc.deserialize: expected bytes, got {type(blob).__name__}")
    import hashlib
    import json
    blob = bytes(blob)
    if not blob.startswith(_MAGIC):
        raise ValueError("tlaloc.deserialize: these bytes are not a tlaloc exported program")
    try:
        head = len(_MAGIC) + 8
        (size,) = struct.unpack("<Q", blob[len(_MAGIC):head])
        header = json.loads(blob[head:head + size].decode("utf-8"))
        version = int(header["format"])
    except (KeyError, TypeError, ValueError, struct.error, RecursionError) as e:
        raise ValueError(f"tlaloc.deserialize: corrupt exported program header ({e})") from None
    if version > _FORMAT:
        raise ValueError(f"tlaloc.deserialize: written in format {version} by tlaloc "
                         f"{header.get('tlaloc')}; this tlaloc reads format {_FORMAT} and older")
    payload = blob[head + size:]
    if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        raise ValueError("tlaloc.deserialize: corrupt exported program (its checksum does not "
                         "match: the bytes were truncated or changed)")
    try:
        return Exported._from_header(header, payload)
    except _jaxlib().ArtifactError as e:
        raise type(e)(f"tlaloc.deserialize: {e}") from None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError) as e:
        raise ValueError(f"tlaloc.deserialize: corrupt exported program ({type(e).__name__}: "
                         f"{e})") from None


class Exported:
    """A traced program with what calling it needs. Made by `export(f)(*args)` or
    `deserialize(blob)`; call it with arguments structured, shaped and typed as the ones it
    was exported for."""

    def __init__(self, *, artifact, version, text, in_tree, in_leaves, inputs, consts,
                 out_tree, outputs, out_avals, platform, mesh=None, writes=()):
        self._artifact = artifact        # VHLO bytecode
        self._version = version          # the StableHLO version it targets
        self._text = text                # its StableHLO text
        self._in_tree = in_tree          # structure of the arguments, as JSON
        self._in_leaves = in_leaves      # per argument leaf: ("array", Aval, names) or ("static", value)
        self._inputs = inputs            # per program input: ("arg", leaf index) or ("const", k)
        self._consts = consts            # captured arrays (NumPy)
        self._out_tree = out_tree        # a _tree.Structure
        self._outputs = outputs          # per result leaf: ("out", k, names), ("arg", i), ("const", k), ("value", v)
        self._out_avals = out_avals      # of the program's outputs
        self._writes = list(writes)      # (argument leaf i, its new value's record, as outputs')
        self.platform = platform         # where it was lowered
        self._mesh = mesh                # None, or (mesh axes, a layout spec per program input)
        self._lapack = "lapack_" in text
        self._plans = {}                 # device -> the plan its backend runs

    def __repr__(self):
        args = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.in_avals)
        return f"<tlaloc.Exported ({args}) -> {len(self._outputs)} result(s), StableHLO {self._version}>"

    @property
    def in_avals(self) -> tuple:
        """Shape and dtype of each array argument (flattened)."""
        return tuple(spec[1] for spec in self._in_leaves if spec[0] == "array")

    @property
    def out_avals(self) -> tuple:
        """Shape and dtype of each array the program computes."""
        return tuple(self._out_avals)

    def mlir_module(self) -> str:
        """The program as StableHLO text."""
        return self._text

    # ---------------------------------------------------------------- calling

    def call(self, *args):
        leaves, structure = _tree.flatten(args)
        if _tree_json(structure) != self._in_tree:
            raise TypeError(f"Exported.call: arguments are structured as {structure}, but the "
                            f"program was exported for {_tree_from_json(self._in_tree)}")
        arrays = [self._check_argument(i, x, spec)
                  for i, (x, spec) in enumerate(zip(leaves, self._in_leaves))]
        arrays = [a for a in arrays if a is not None]
        if trace.retain_graph and any(reaches_variable(a._node) for a in arrays):
            # the artifact holds the forward program only: a derivative through it would be
            # silently zero
            raise DerivativeLostError(
                "Exported.call: an exported program is not differentiable; differentiate "
                "before exporting (tlaloc.export(tlaloc.grad(f)) or export a function that "
                "returns value and gradient), or wrap the arguments in tlaloc.stop_gradient")
        devices = {a.device for a in arrays}
        if len(devices) > 1:
            raise ValueError(f"Exported.call: arguments are on different devices: "
                             f"{sorted(map(str, devices))}")
        device = devices.pop() if devices else default_device()
        if device.platform == "interpreter":
            raise ValueError("Exported.call: exported programs run on PJRT devices; move the "
                             "arguments with to_device('cpu')")
        self._check_mesh(device, leaves)
        if self._lapack and device.platform != "cpu":
            raise NotImplementedError("Exported.call: this program calls LAPACK (LU, QR, eigh, "
                                      f"eig or SVD), which runs on the CPU only, not {device}")
        evaluate([a._node for a in arrays])
        plan = self._plans.get(device)
        if plan is None:
            plan = self._plans[device] = _ExportedPlan(self, device)
        inputs = [leaves[what]._node if kind == "arg" else plan.consts[what]
                  for kind, what in self._inputs]
        values = device.backend.run(plan, inputs, compiled=True)

        def value(kind, what, *names):
            if kind == "out":
                return Array._from_node(leaf(values[what],
                                             self._out_avals[what]._replace(names=names[0]), device))
            if kind == "arg":
                return leaves[what]
            if kind == "const":   # a new leaf per call: the program's own inputs stay private
                host = self._consts[what]
                return Array._from_node(leaf(host, Aval(host.shape, dt.from_numpy(host.dtype)), device))
            return what
        results = [value(*record) for record in self._outputs]
        written = [(leaves[i], value(*record)) for i, record in self._writes]
        for x, new in written:   # (all read first: one argument may be written into another)
            _views.assign(x, new, "a write into an exported program's argument")
        return _tree.unflatten(self._out_tree, results)

    __call__ = call

    def _check_mesh(self, device, leaves):
        """A program exported on a mesh runs on a mesh of the same shape, its arguments laid
        out as they were; one exported on one device runs on one device."""
        mesh = getattr(device, "mesh", None)
        if self._mesh is None:
            if mesh is not None:
                raise NotImplementedError("Exported.call: this program was exported on one "
                                          "device; running it on a mesh is not supported (export "
                                          "it on arrays laid out over the mesh)")
            return
        axes, specs = self._mesh
        if mesh is None or tuple(mesh.axes.items()) != axes:
            raise ValueError(f"Exported.call: the program was exported for a mesh "
                             f"{dict(axes)}; the arguments are on {device}")
        evaluate([leaves[what]._node for kind, what in self._inputs if kind == "arg"])
        for (kind, what), spec in zip(self._inputs, specs):
            if kind == "arg" and sharding_of(leaves[what]._node).spec != spec:
                raise ValueError(f"Exported.call: argument leaf #{what} is laid out as "
                                 f"{leaves[what].sharding}; the program was exported for "
                                 f"{Sharding(mesh, spec, leaves[what]._names)} (lay it out "
                                 "so with tlaloc.shard)")

    @staticmethod
    def _check_argument(i, x, spec):
        if spec[0] == "static":
            if type(x) is not type(spec[1]) or x != spec[1]:
                raise ValueError(f"Exported.call: argument leaf #{i} was the Python value "
                                 f"{spec[1]!r} when exported (it is part of the program); got {x!r}")
            return None
        _, aval, names = spec
        if not isinstance(x, Array):
            raise TypeError(f"Exported.call: argument leaf #{i} must be a tlaloc array of "
                            f"{aval.dtype}{list(aval.shape)}, got {type(x).__name__}")
        if x.dtype is not aval.dtype:
            raise TypeError(f"Exported.call: argument leaf #{i} has dtype {x.dtype}; the "
                            f"program was exported for {aval.dtype}")
        if x.shape != aval.shape:
            raise ValueError(f"Exported.call: argument leaf #{i} has shape {x.shape}; the "
                             f"program was exported for {aval.shape}")
        if x._names != names:
            raise ValueError(f"Exported.call: argument leaf #{i} has axis names {x.names}; the "
                             f"program was exported for {names or (None,) * len(aval.shape)}")
        return x

    # ---------------------------------------------------------------- bytes

    def serialize(self) -> bytes:
        """The program and its record, as bytes for `tlaloc.deserialize`."""
        payload = bytearray(self._artifact)
        consts = []
        for value in self._consts:
            consts.append({"shape": list(value.shape), "dtype": dt.from_numpy(value.dtype).name,
                           "offset": len(payload), "nbytes": value.nbytes})
            payload += np.ascontiguousarray(value).tobytes()
        import hashlib
        import json
        header = {
            "format": _FORMAT, "tlaloc": _tlaloc_version(), "jaxlib": _jaxlib().VERSION,
            "stablehlo": self._version, "platform": self.platform,
            "artifact": {"offset": 0, "nbytes": len(self._artifact)},
            "sha256": hashlib.sha256(payload).hexdigest(),
            "in_tree": self._in_tree,
            "in_leaves": [{"array": [list(s[1].shape), s[1].dtype.name, _names_json(s[2])]}
                          if s[0] == "array" else {"static": s[1]} for s in self._in_leaves],
            "inputs": [list(i) for i in self._inputs],
            "consts": consts,
            "out_tree": _tree_json(self._out_tree),
            "outputs": [_record_json(o) for o in self._outputs],
            "out_avals": [[list(a.shape), a.dtype.name] for a in self._out_avals],
        }
        if self._writes:
            header["writes"] = [[i, _record_json(o)] for i, o in self._writes]
        if self._mesh is not None:
            axes, specs = self._mesh
            header["mesh"] = {"axes": [list(a) for a in axes],
                              "specs": [[list(dim) for dim in spec] for spec in specs]}
        text = json.dumps(header, separators=(",", ":")).encode("utf-8")
        return _MAGIC + struct.pack("<Q", len(text)) + text + bytes(payload)

    @classmethod
    def _from_header(cls, h, payload):
        def section(entry):
            start, n = int(entry["offset"]), int(entry["nbytes"])
            if start < 0 or n < 0 or start + n > len(payload):
                raise ValueError("a section lies outside the payload")
            return payload[start:start + n]

        artifact = section(h["artifact"])
        consts = []
        for c in h["consts"]:
            shape, dtype = _shape(c["shape"]), _dtype(c["dtype"])
            raw = section(c)
            if len(raw) != int(np.prod(shape, dtype=np.int64)) * dtype.numpy.itemsize:
                raise ValueError("a captured array's size does not match its shape")
            consts.append(np.frombuffer(raw, dtype=dtype.numpy).reshape(shape).copy())
        in_leaves = []
        for spec in h["in_leaves"]:
            if "array" in spec:
                shape, dtype, names = spec["array"]
                in_leaves.append(("array", Aval(_shape(shape), _dtype(dtype)),
                                  _names_from_json(names)))
            else:
                in_leaves.append(("static", spec["static"]))
        outputs = [_record_from_json(o) for o in h["outputs"]]
        writes = [(int(i), _record_from_json(o)) for i, o in h.get("writes", ())]
        out_avals = [Aval(_shape(s), _dtype(d)) for s, d in h["out_avals"]]
        inputs = [(k, int(w)) for k, w in h["inputs"]]
        _check_references(inputs, outputs + [o for _, o in writes], in_leaves, consts, out_avals)
        if any(in_leaves[i][0] != "array" for i, _ in writes):
            raise ValueError("a write refers to an argument that is not an array")
        mesh = None
        if "mesh" in h:
            axes = tuple((str(n), int(size)) for n, size in h["mesh"]["axes"])
            specs = tuple(tuple(tuple(str(a) for a in dim) for dim in spec)
                          for spec in h["mesh"]["specs"])
            if len(specs) != len(inputs) or any(size < 1 for _, size in axes):
                raise ValueError("its mesh record does not match its inputs")
            mesh = (axes, specs)
        text = _jaxlib().artifact_text(artifact)
        if "@main(" not in text:   # (MLIR reads zero bytes as an empty module)
            raise ValueError("its portable artifact holds no main function")
        return cls(artifact=artifact, version=h["stablehlo"], text=text,
                   in_tree=h["in_tree"], in_leaves=in_leaves,
                   inputs=inputs, consts=consts,
                   out_tree=_tree_from_json(h["out_tree"]), outputs=outputs,
                   out_avals=out_avals, platform=h["platform"], mesh=mesh, writes=writes)


def _record_json(o):
    return [o[0], o[1], _names_json(o[2])] if o[0] == "out" else list(o)


def _record_from_json(o):
    if o[0] == "out":
        return ("out", int(o[1]), _names_from_json(o[2]))
    return (o[0], o[1] if o[0] == "value" else int(o[1]))


def _check_references(inputs, outputs, in_leaves, consts, out_avals):
    """ValueError unless every program input and result names an existing argument leaf,
    captured array or program output."""
    arrays = {i for i, spec in enumerate(in_leaves) if spec[0] == "array"}
    for kind, what in inputs:
        if not (kind == "arg" and what in arrays or kind == "const" and 0 <= what < len(consts)):
            raise ValueError(f"a program input refers to a missing {kind} #{what}")
    for kind, what, *_ in outputs:
        if kind == "out":
            ok = 0 <= what < len(out_avals)
        elif kind == "arg":
            ok = what in arrays
        elif kind == "const":
            ok = 0 <= what < len(consts)
        else:
            ok = kind == "value"
        if not ok:
            raise ValueError(f"a result refers to a missing {kind} #{what}")


class _ExportedPlan(protocol.Plan):
    """An exported program as a PJRT backend runs it (see PjrtBackend.run): a key, the
    program already lowered, and its captured arrays as leaves on the device."""
    keeps_entry = True

    def __init__(self, exported, device):
        import hashlib
        digest = hashlib.sha256(exported._artifact).hexdigest()
        self.key = (device, "exported", digest)
        self.entry = None
        self.consts = [leaf(v, Aval(v.shape, dt.from_numpy(v.dtype)), device)
                       for v in exported._consts]
        self._program = _Lowered(exported._text, exported._out_avals)

    def program(self):
        return self._program


class _Lowered(protocol.Program):
    """What the backend compiles: StableHLO text (no tlaloc Program behind it)."""
    donated = ()

    def __init__(self, text, out_avals):
        self.text = text
        self._out_avals = out_avals

    def out_avals(self):
        return self._out_avals


# ----------------------------------------------------------------------------- tracing

def _trace(fun, args):
    leaves, structure = _tree.flatten((list(args), {}))   # the form Jitted traces
    in_leaves = []
    for i, x in enumerate(leaves):
        if isinstance(x, Array):
            in_leaves.append(("array", Aval(x.shape, x.dtype), x._names))
        elif isinstance(x, _JSON_SCALARS):
            in_leaves.append(("static", x))
        else:
            raise TypeError(f"tlaloc.export: argument leaf #{i} is a {type(x).__name__}; "
                            "arguments are tlaloc arrays and Python scalars (bool, int, float, str)")
    traced = Jitted(fun)._trace(args, {}, set(), leaves, structure, (), name="tlaloc.export")
    if traced.states:
        raise ValueError("tlaloc.export: the function draws from a tlaloc.random.Generator, "
                         "whose key lives outside it; pass a key (tlaloc.random.key) as an "
                         "argument and draw with the functional tlaloc.random API")
    if traced.plan is None:
        raise ValueError("tlaloc.export: the function computes no array; there is no program "
                         "to export")

    program = traced.plan.program()
    # The plan also returns pending intermediates that the caller's code still holds (a
    # captured array not yet computed): an exported program returns its results only.
    program.outputs = program.outputs[:len(traced.out_avals)]
    mesh = _mesh_record(traced, leaves)
    text = lower_program(program, **({} if mesh is None else lowering_attributes(*mesh)))
    artifact, version = _jaxlib().portable_artifact(text)
    consts, inputs = [], []
    for kind, what in traced.leaf_sources:
        if kind == "arg":
            inputs.append(("arg", what))
        else:
            inputs.append(("const", len(consts)))
            consts.append(_host_value(what))
    outputs = [_value_record(slot, consts) for slot in traced.out_slots]
    # arguments the function wrote into: each call rebinds the caller's arrays, as jit does
    writes = [(i, _value_record(slot, consts)) for i, slot in traced.writes]
    return Exported(artifact=artifact, version=version, text=text,
                    in_tree=_tree_json(_tree.flatten(args)[1]), in_leaves=in_leaves,
                    inputs=inputs, consts=consts, out_tree=traced.out_structure,
                    outputs=outputs, out_avals=list(traced.out_avals),
                    platform=traced.device.platform, mesh=mesh, writes=writes)


def _value_record(slot, consts):
    """How a call finds a value the trace gave (a result, or an argument's new value):
    ("out", k, names), ("arg", i), ("const", k) appending the array to `consts`, ("value", v)."""
    kind, what, *names = slot
    if kind == "out":
        return ("out", what, names[0])
    if kind == "arg":
        return ("arg", what)
    if isinstance(what, Array):
        consts.append(_host_value(what._node))
        return ("const", len(consts) - 1)
    if isinstance(what, _JSON_SCALARS):
        return ("value", what)
    raise TypeError(f"tlaloc.export: the function returns a {type(what).__name__}; "
                    "results are tlaloc arrays and Python scalars (bool, int, float, str)")


def _mesh_record(traced, leaves):
    """(mesh axes, the layout spec of each program input) of a trace on a mesh, else None:
    the program is lowered with them (sdy.mesh, sdy.sharding), and calls must match them."""
    mesh = getattr(traced.device, "mesh", None)
    if mesh is None:
        return None
    specs = []
    for kind, what in traced.leaf_sources:
        if kind == "arg":
            node = leaves[what]._node
            evaluate([node])
            spec = sharding_of(node).spec
            if spec is None:
                raise NotImplementedError(f"tlaloc.export: argument leaf #{what} has a layout "
                                          "no mapping of axes describes")
        else:                     # a captured array: copies on every device
            spec = ((),) * len(what.aval.shape)
        specs.append(spec)
    return tuple(mesh.axes.items()), tuple(specs)


def _host_value(node) -> np.ndarray:
    evaluate([node])
    return np.array(node.device.backend.to_numpy(node.value))   # an owned copy


def _jaxlib():
    """The jaxlib adapter, imported on first use (importing tlaloc does not load jaxlib)."""
    from .backends import _jaxlib as adapter
    return adapter


def _tlaloc_version():
    return VERSION


def _shape(dims):
    shape = tuple(int(n) for n in dims)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return shape


def _dtype(name):
    try:
        return dt._by_name(name)
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}") from None


def _names_json(names):
    return None if names is None else list(names)


def _names_from_json(names):
    if names is None:
        return None
    names = tuple(names)
    if not all(n is None or isinstance(n, str) for n in names):
        raise ValueError(f"axis names {list(names)} are not all str or None")
    return names


# ----------------------------------------------------------------------------- structures as JSON

def _tree_json(s: _tree.Structure):
    if s.kind in ("leaf", "none"):
        return {"kind": s.kind}
    if s.kind == "custom":   # a class registered with tlaloc.tree.register
        raise TypeError(f"tlaloc.export: the arguments or results hold a "
                        f"{s.meta[0].__name__} (a registered tree class), which an exported "
                        "program's portable record cannot rebuild; pass its arrays as a tuple, "
                        "list, dict or named tuple")
    children = [_tree_json(c) for c in s.children]
    if s.kind == "dict":
        for k in s.meta:
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise TypeError(f"tlaloc.export: dict keys must be str or int, got {k!r}")
        return {"kind": "dict", "keys": [[type(k).__name__, k] for k in s.meta],
                "children": children}
    if s.kind == "namedtuple":
        return {"kind": "namedtuple", "name": s.meta.__name__, "fields": list(s.meta._fields),
                "children": children}
    return {"kind": s.kind, "children": children}


def _tree_from_json(j) -> _tree.Structure:
    kind = j["kind"]
    if kind == "leaf":
        return _tree.LEAF
    if kind == "none":
        return _tree.NONE
    children = tuple(_tree_from_json(c) for c in j["children"])
    if kind == "dict":
        keys = tuple(int(k) if t == "int" else str(k) for t, k in j["keys"])
        return _tree.Structure("dict", keys, children)
    if kind == "namedtuple":
        return _tree.Structure("namedtuple", _named_tuple(j["name"], tuple(j["fields"])), children)
    if kind not in ("tuple", "list"):
        raise ValueError(f"unknown structure kind {kind!r}")
    return _tree.Structure(kind, None, children)


@functools.lru_cache(maxsize=None)
def _named_tuple(name, fields):
    """A named tuple class with these fields (results come back as named tuples of the same
    name and fields; the class is not the exporting process's own)."""
    return collections.namedtuple(name, fields)
