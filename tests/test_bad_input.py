"""A battery of bad calls across the namespace, linalg, fft, jit, the derivative
transformations, export/deserialize and named axes (issue 23, deliverable 3).

Each call must raise the exception the Array API standard documents (TypeError for wrong
types and dtypes, ValueError for wrong shapes, sizes and values, IndexError for
out-of-range axes and static indices) or tlaloc's documented one (`ArrayTooLargeError`,
a MemoryError and a ValueError, for sizes that cannot be held; `ConcretizationError`), at
the call: nothing compiles or evaluates, and the message names the function (and, where
the table says so, the argument). None may crash the process, hang, or surface an
XLA-internal message.

tests/test_errors.py checks a smaller set in more detail (pending operands stay pending);
this file is the wide survey. A new bad call belongs in CASES: (label, call, exception,
text or texts that must appear in the message).
"""
import hashlib
import json
import os
import struct

import numpy as np
import pytest

import tlaloc as xp
from helpers import recorded
from tlaloc import named

HUGE = 10 ** 12          # elements: far past any machine's memory at any dtype


class Operands:
    """Pending operands on the tier's device, a few on the other device, and named ones."""

    def __init__(self, tier):
        other = xp.device("interpreter") if tier.platform == "cpu" else xp.device("cpu")
        self.tier, self.other = tier, other

        def pending(a, device=tier):
            with recorded():
                x = xp.asarray(np.asarray(a), device=device)
                return x & True if x.dtype == xp.bool else x * 1   # one op: pending

        self.f = pending(np.arange(6.0).reshape(2, 3))            # float64 (2, 3)
        self.g = pending(np.arange(4.0))                          # float64 (4,)
        self.g32 = pending(np.arange(4, dtype=np.float32))        # float32 (4,)
        self.m = pending(np.eye(3) + 1.0)                         # float64 (3, 3)
        self.cm = pending(np.eye(3) * (1 + 1j))                   # complex128 (3, 3)
        self.i = pending(np.arange(6).reshape(2, 3))              # int64 (2, 3)
        self.k = pending(np.array([0, 1]))                        # int64 (2,)
        self.u = pending(np.arange(3, dtype=np.uint64))           # uint64 (3,)
        self.b = pending(np.array([True, False, True]))           # bool (3,)
        self.c = pending(np.array([1 + 1j, 2j, 3.0]))             # complex128 (3,)
        self.s = pending(2.5)                                     # float64 ()
        self.o = pending(np.arange(6.0).reshape(2, 3), device=other)   # on the other device
        self.om = pending(np.eye(3), device=other)
        self.ok = pending(np.array([0, 1]), device=other)
        self.nij = xp.rename(pending(np.ones((2, 3))), "i", "j")  # named (2, 3)
        self.nik = xp.rename(pending(np.ones((2, 3))), "i", "k")
        self.njk = xp.rename(pending(np.ones((3, 4))), "j", "k")
        self.nkl = xp.rename(pending(np.ones((3, 4))), "k", "l")
        self.ni2 = xp.rename(pending(np.ones(2)), "i")
        self.ni3 = xp.rename(pending(np.ones(3)), "i")
        self.nio = xp.rename(pending(np.ones((2, 3)), device=other), "i", "j")
        self.nix = xp.rename(pending(np.ones((2, 3))), "i", None)
        # lazy and never evaluated here: a big 1-d array costs nothing until computed
        self.big = xp.zeros((10 ** 7,), device=tier)
        self.all = [v for v in vars(self).values() if isinstance(v, xp.Array)]

    def known(self, value):
        """An index array whose values are known (a leaf): out-of-range is caught at the call."""
        return xp.asarray(value, device=self.tier)


def _f2(a, b):
    return a + b


def _fvar(*args):
    return args[0]


def _needs_value(x):
    return x if float(x[0]) > 0 else -x


def _exported():
    cpu = xp.device("cpu")
    return xp.export(lambda a, b: a * b + 1.0)(xp.ones((3,), device=cpu), xp.ones((3,), device=cpu))


_BLOB = []


def _blob():
    if not _BLOB:
        _BLOB.append(_exported().serialize())
    return _BLOB[0]


def _reblob(mutate):
    """A copy of the exported blob with its header (a dict) changed by `mutate` and the
    checksum still right (so the deeper checks run)."""
    blob = _blob()
    magic = b"tlaloc-exported\0"
    (size,) = struct.unpack("<Q", blob[len(magic):len(magic) + 8])
    head = len(magic) + 8
    header = json.loads(blob[head:head + size])
    payload = bytearray(blob[head + size:])
    payload = mutate(header, payload) or payload
    header["sha256"] = hashlib.sha256(bytes(payload)).hexdigest()
    text = json.dumps(header).encode()
    return magic + struct.pack("<Q", len(text)) + text + bytes(payload)


def _garbage_artifact(header, payload):
    n = header["artifact"]["nbytes"]
    payload[:n] = np.random.default_rng(0).integers(0, 256, n, dtype=np.uint8).tobytes()


def _truncated_artifact(header, payload):
    header["artifact"]["nbytes"] //= 2


def _shape_lie(header, payload):
    header["in_leaves"][0]["array"][0] = [-3]


def _bad_dtype(header, payload):
    header["in_leaves"][0]["array"][1] = "float128"


def _bad_reference(header, payload):
    header["inputs"][0] = ["arg", 7]


def _future_format(header, payload):
    header["format"] = 99


def _negative_offset(header, payload):
    header["artifact"]["offset"] = -1


def _int_names(header, payload):
    header["in_leaves"][0]["array"][2] = [7]


def _raw_blob(text):
    magic = b"tlaloc-exported\0"
    return magic + struct.pack("<Q", len(text)) + text


def _deep_blob():
    return _raw_blob(b"[" * 100000 + b"]" * 100000)


def _list_header_blob():
    return _raw_blob(b"[1, 2, 3]")


T, V, I = TypeError, ValueError, IndexError
TOO_BIG = xp.ArrayTooLargeError      # a MemoryError and a ValueError


def C(label, call, exc, text):
    return (label, call, exc, (text,) if isinstance(text, str) else tuple(text))


CREATION = [
    C("zeros negative", lambda o: xp.zeros((-1,)), V, "zeros"),
    C("zeros float dim", lambda o: xp.zeros((2.5,)), T, "zeros"),
    C("zeros str shape", lambda o: xp.zeros("abc"), T, "zeros"),
    C("zeros dtype=object", lambda o: xp.zeros(3, dtype=object), T, ("zeros", "dtype")),
    C("zeros dtype name", lambda o: xp.zeros(3, dtype="float4"), T, ("zeros", "dtype")),
    C("zeros huge", lambda o: xp.zeros((HUGE,)), TOO_BIG, ("zeros", str(HUGE))),
    C("zeros bytes overflow int64", lambda o: xp.zeros((10 ** 10, 10 ** 10)), V, "zeros"),
    C("zeros huge int8", lambda o: xp.zeros((10 ** 13,), dtype=xp.int8), TOO_BIG, "zeros"),
    C("ones huge", lambda o: xp.ones((HUGE, 2)), TOO_BIG, "ones"),
    C("ones negative", lambda o: xp.ones((2, -3)), V, "ones"),
    C("empty huge", lambda o: xp.empty((HUGE,)), TOO_BIG, "empty"),
    C("empty negative", lambda o: xp.empty(-2), V, "empty"),
    C("full huge", lambda o: xp.full((HUGE,), 1.0), TOO_BIG, "full"),
    C("full negative", lambda o: xp.full(-1, 0.0), V, "full"),
    C("full str value", lambda o: xp.full((2,), "a"), T, "full"),
    C("full float into int", lambda o: xp.full((2,), 1.5, dtype=xp.int32), T, "full"),
    C("full int out of range", lambda o: xp.full((2,), 300, dtype=xp.uint8), OverflowError, "full"),
    C("full array value", lambda o: xp.full((2,), o.f), V, "full"),
    C("full dtype=object", lambda o: xp.full((2,), 1, dtype=object), T, ("full", "dtype")),
    C("zeros_like list", lambda o: xp.zeros_like([1, 2]), T, "zeros_like"),
    C("ones_like dtype=object", lambda o: xp.ones_like(o.f, dtype=object), T, ("ones_like", "dtype")),
    C("full_like float into int", lambda o: xp.full_like(o.i, 1.5), T, "full_like"),
    C("full_like str", lambda o: xp.full_like(o.f, "x"), T, "full_like"),
    C("empty_like numpy", lambda o: xp.empty_like(np.ones(3)), T, "empty_like"),
    C("arange huge", lambda o: xp.arange(10 ** 13), TOO_BIG, ("arange", str(10 ** 13))),
    C("arange step 0", lambda o: xp.arange(0, 10, 0), V, "arange"),
    C("arange complex", lambda o: xp.arange(1j), T, "arange"),
    C("arange bool dtype", lambda o: xp.arange(5, dtype=xp.bool), T, "arange"),
    C("arange dtype=object", lambda o: xp.arange(5, dtype=object), T, ("arange", "dtype")),
    C("arange inf", lambda o: xp.arange(float("inf")), V, "arange"),
    C("arange nan", lambda o: xp.arange(0.0, float("nan")), V, "arange"),
    C("arange str", lambda o: xp.arange("5"), T, "arange"),
    C("linspace negative num", lambda o: xp.linspace(0, 1, -1), V, "linspace"),
    C("linspace float num", lambda o: xp.linspace(0, 1, 2.5), T, "linspace"),
    C("linspace huge", lambda o: xp.linspace(0, 1, 10 ** 13), TOO_BIG, "linspace"),
    C("linspace int dtype", lambda o: xp.linspace(0, 1, 5, dtype=xp.int32), T, "linspace"),
    C("linspace complex into real", lambda o: xp.linspace(0j, 1, 5, dtype=xp.float64), T, "linspace"),
    C("linspace str endpoint", lambda o: xp.linspace("a", 1, 5), T, "linspace"),
    C("eye huge", lambda o: xp.eye(10 ** 7), TOO_BIG, "eye"),
    C("eye negative", lambda o: xp.eye(-1), V, "eye"),
    C("eye float k", lambda o: xp.eye(3, k=1.5), T, "eye"),
    C("eye float n", lambda o: xp.eye(2.5), T, "eye"),
    C("eye dtype=object", lambda o: xp.eye(3, dtype=object), T, ("eye", "dtype")),
    C("asarray ragged", lambda o: xp.asarray([[1, 2], [3]]), V, "asarray"),
    C("asarray str", lambda o: xp.asarray("abc"), T, "asarray"),
    C("asarray object", lambda o: xp.asarray(object()), T, "asarray"),
    C("asarray dtype=object", lambda o: xp.asarray([1, 2], dtype=object), T, ("asarray", "dtype")),
    C("asarray int overflow", lambda o: xp.asarray(2 ** 70), OverflowError, "asarray"),
    C("asarray numpy str array", lambda o: xp.asarray(np.array(["a"])), T, "asarray"),
    C("asarray copy=False cast", lambda o: xp.asarray(o.f, dtype=xp.float32, copy=False), V, "asarray"),
    C("asarray unknown device", lambda o: xp.asarray([1.0], device="tpu"), V, ("asarray", "tpu")),
    C("zeros device int", lambda o: xp.zeros(3, device=3), T, ("zeros", "device")),
    C("tril 1-d", lambda o: xp.tril(o.g), V, "tril"),
    C("triu float k", lambda o: xp.triu(o.f, k=0.5), T, "triu"),
    C("meshgrid 2-d", lambda o: xp.meshgrid(o.f), V, "meshgrid"),
    C("meshgrid indexing", lambda o: xp.meshgrid(o.g, indexing="xx"), V, "meshgrid"),
    C("meshgrid huge", lambda o: xp.meshgrid(o.big, o.big), TOO_BIG, "meshgrid"),
    C("meshgrid devices", lambda o: xp.meshgrid(o.g, xp.reshape(o.o, (-1,))), V, "meshgrid"),
    C("astype complex to real", lambda o: xp.astype(o.c, xp.float64), T, "astype"),
    C("astype dtype=list", lambda o: xp.astype(o.f, list), T, ("astype", "dtype")),
    C("astype list", lambda o: xp.astype([1.0], xp.float32), T, "astype"),
    C("arange int64 overflow", lambda o: xp.arange(2 ** 70, 2 ** 70 + 2), OverflowError, "arange"),
    C("arange unknown device", lambda o: xp.arange(3, device="tpu"), V, "arange"),
    C("linspace endpoint str", lambda o: xp.linspace(0, 1, 5, endpoint="yes"), T, "linspace"),
    C("astype device", lambda o: xp.astype(o.f, xp.float32, device="tpu"), V, "astype"),
    C("asarray copy=False list", lambda o: xp.asarray([1, 2], copy=False), V, "asarray"),
    C("full complex array into real", lambda o: xp.full((2,), o.c[0], dtype=xp.float64), T, "full"),
    C("eye huge columns", lambda o: xp.eye(2, 10 ** 12), TOO_BIG, "eye"),
    C("full int overflow", lambda o: xp.full((2,), 10 ** 30), OverflowError, "full"),
    C("asarray int overflow uint64", lambda o: xp.asarray(10 ** 20), OverflowError, "asarray"),
    C("arange start overflow", lambda o: xp.arange(2 ** 63 - 1, 2 ** 63 + 1), OverflowError, "arange"),
    C("linspace bool dtype", lambda o: xp.linspace(0, 1, 3, dtype=xp.bool), T, "linspace"),
    C("meshgrid indexing None", lambda o: xp.meshgrid(o.g, o.g, indexing=None), V, "meshgrid"),
    C("from_dlpack int", lambda o: xp.from_dlpack(3), T, "from_dlpack"),
]

ELEMENTWISE = [
    C("add shapes", lambda o: xp.add(o.f, o.g), V, "add"),
    C("add devices", lambda o: xp.add(o.f, o.o), V, "add"),
    C("add str", lambda o: xp.add(o.f, "a"), T, "add"),
    C("add None", lambda o: xp.add(o.f, None), T, "add"),
    C("add two scalars", lambda o: xp.add(1, 2), T, "add"),
    C("add numpy", lambda o: xp.add(o.f, np.ones((2, 3))), T, "add"),
    C("multiply outer huge", lambda o: xp.multiply(xp.reshape(o.big, (-1, 1)), o.big), TOO_BIG, "multiply"),
    C("operator * outer huge", lambda o: xp.reshape(o.big, (-1, 1)) * o.big, TOO_BIG, "multiply"),
    C("bitwise_and float", lambda o: xp.bitwise_and(o.f, o.f), T, "bitwise_and"),
    C("bitwise_or complex", lambda o: xp.bitwise_or(o.c, o.c), T, "bitwise_or"),
    C("bitwise_xor float", lambda o: xp.bitwise_xor(o.g, 1), T, "bitwise_xor"),
    C("shift by float", lambda o: xp.bitwise_left_shift(o.i, o.f), T, "bitwise_left_shift"),
    C("right shift float", lambda o: xp.bitwise_right_shift(o.f, 1), T, "bitwise_right_shift"),
    C("invert float", lambda o: xp.bitwise_invert(o.f), T, "bitwise_invert"),
    C("atan2 complex", lambda o: xp.atan2(o.c, o.c), T, "atan2"),
    C("atan2 shapes", lambda o: xp.atan2(o.f, o.g), V, "atan2"),
    C("floor complex", lambda o: xp.floor(o.c), T, "floor"),
    C("ceil complex", lambda o: xp.ceil(o.c), T, "ceil"),
    C("trunc complex", lambda o: xp.trunc(o.c), T, "trunc"),
    C("remainder complex", lambda o: xp.remainder(o.c, o.c), T, "remainder"),
    C("floor_divide complex", lambda o: o.c // 2, T, "floor_divide"),
    C("copysign complex", lambda o: xp.copysign(o.c, o.c), T, "copysign"),
    C("nextafter int", lambda o: xp.nextafter(o.i, o.i), T, "nextafter"),
    C("hypot complex", lambda o: xp.hypot(o.c, o.c), T, "hypot"),
    C("logaddexp complex", lambda o: xp.logaddexp(o.c, o.c), T, "logaddexp"),
    C("logaddexp devices", lambda o: xp.logaddexp(o.o, o.f), V, "logaddexp"),
    C("maximum complex", lambda o: xp.maximum(o.c, o.c), T, "maximum"),
    C("minimum shapes", lambda o: xp.minimum(o.f, o.g), V, "minimum"),
    C("less complex", lambda o: o.c < o.c, T, "less"),
    C("greater_equal devices", lambda o: xp.greater_equal(o.f, o.o), V, "greater_equal"),
    C("equal shapes", lambda o: o.f == o.g, V, "equal"),
    C("signbit int", lambda o: xp.signbit(o.i), T, "signbit"),
    C("negative bool", lambda o: -o.b, T, "negative"),
    C("subtract bool", lambda o: o.b - o.b, T, "subtract"),
    C("sqrt str", lambda o: xp.sqrt("x"), T, "sqrt"),
    C("sin list", lambda o: xp.sin([1.0, 2.0]), T, "sin"),
    C("isnan numpy", lambda o: xp.isnan(np.ones(2)), T, "isnan"),
    C("clip complex", lambda o: xp.clip(o.c, 0, 1), T, "clip"),
    C("clip bound shape", lambda o: xp.clip(o.f, o.g), V, "clip"),
    C("clip float bound int", lambda o: xp.clip(o.i, 0.5), T, "clip"),
    C("clip str bound", lambda o: xp.clip(o.f, min="a"), T, "clip"),
    C("clip devices", lambda o: xp.clip(o.f, o.o), V, "clip"),
    C("uint64 + int64", lambda o: o.u + o.i[0], T, "add"),
    C("int + 2**64", lambda o: o.i + 2 ** 64, OverflowError, "add"),
    C("uint * -1", lambda o: o.u * -1, OverflowError, "multiply"),
    C("in-place int **= float", lambda o: o.i.__ipow__(1.5), T, "pow"),
    C("where str branch", lambda o: xp.where(o.b, o.u, "a"), T, "where"),
    C("where huge", lambda o: xp.where(xp.reshape(o.big, (-1, 1)) > 0, o.big, 0.0), TOO_BIG, "where"),
    C("float() of 2-d", lambda o: float(o.f), T, "float"),
    C("int() of complex", lambda o: int(o.c[0]), T, "int()"),
    C("index() of float", lambda o: o.s.__index__(), T, "index"),
    C("bool() of 2-d", lambda o: bool(o.f), V, "truth value"),
    C("len() of 0-d", lambda o: len(o.s), T, "len"),
    C("T of 3-d", lambda o: xp.ones((2, 2, 2)).T, V, "T"),
    C("mT of 1-d", lambda o: o.g.mT, V, "matrix_transpose"),
    C("to_device unknown", lambda o: o.f.to_device("tpu"), V, "to_device"),
    C("array_namespace version", lambda o: o.f.__array_namespace__(api_version="2019.12"), V,
      "api_version"),
    C("float + huge int", lambda o: o.f + 10 ** 400, OverflowError, "add"),
    C("clip no array", lambda o: xp.clip(3, 0, 1), T, "clip"),
    C("in-place shape grows", lambda o: o.s.__iadd__(o.g), V, "add"),
    C("in-place int += float", lambda o: o.i.__iadd__(1.5), T, "add"),
    C("in-place float /= complex", lambda o: o.f.__itruediv__(1j), T, "__itruediv__"),
    C("in-place devices", lambda o: o.f.__imul__(o.o), V, "multiply"),
]

MANIPULATION = [
    C("reshape size", lambda o: xp.reshape(o.f, (4, 2)), V, "reshape"),
    C("reshape two -1", lambda o: xp.reshape(o.f, (-1, -1)), V, "reshape"),
    C("reshape -2", lambda o: xp.reshape(o.f, (-2, 3)), V, "reshape"),
    C("reshape float dim", lambda o: xp.reshape(o.f, (2.0, 3)), T, "reshape"),
    C("reshape -1 with 0", lambda o: xp.reshape(xp.zeros((0,)), (-1, 0)), V, "reshape"),
    C("reshape huge", lambda o: xp.reshape(o.f, (HUGE, 6)), V, "reshape"),
    C("broadcast_to incompatible", lambda o: xp.broadcast_to(o.f, (3, 3)), V, "broadcast_to"),
    C("broadcast_to fewer dims", lambda o: xp.broadcast_to(o.f, (3,)), V, "broadcast_to"),
    C("broadcast_to huge", lambda o: xp.broadcast_to(o.g, (HUGE, 4)), TOO_BIG, ("broadcast_to", str(HUGE))),
    C("broadcast_to negative", lambda o: xp.broadcast_to(o.g, (-1, 4)), V, "broadcast_to"),
    C("broadcast_to str", lambda o: xp.broadcast_to(o.g, "ab"), T, "broadcast_to"),
    C("broadcast_arrays shapes", lambda o: xp.broadcast_arrays(o.f, o.g), V, "broadcast_arrays"),
    C("broadcast_arrays huge", lambda o: xp.broadcast_arrays(xp.reshape(o.big, (-1, 1)), o.big),
      TOO_BIG, "broadcast_arrays"),
    C("broadcast_arrays devices", lambda o: xp.broadcast_arrays(o.f, o.o), V, "broadcast_arrays"),
    C("concat shapes", lambda o: xp.concat([o.f, o.g]), V, "concat"),
    C("concat axis", lambda o: xp.concat([o.f, o.f], axis=2), I, "concat"),
    C("concat empty", lambda o: xp.concat([]), V, "concat"),
    C("concat devices", lambda o: xp.concat([o.f, o.o]), V, "concat"),
    C("concat one array", lambda o: xp.concat(o.f), T, "concat"),
    C("concat 0-d", lambda o: xp.concat([o.s, o.s]), V, "concat"),
    C("stack shapes", lambda o: xp.stack([o.f, o.g]), V, "stack"),
    C("stack axis", lambda o: xp.stack([o.f, o.f], axis=3), I, "stack"),
    C("stack empty", lambda o: xp.stack([]), V, "stack"),
    C("stack devices", lambda o: xp.stack([o.f, o.o]), V, "stack"),
    C("expand_dims axis", lambda o: xp.expand_dims(o.f, axis=3), I, "expand_dims"),
    C("expand_dims repeated", lambda o: xp.expand_dims(o.f, axis=(0, 0)), V, "expand_dims"),
    C("squeeze size 2", lambda o: xp.squeeze(o.f, 0), V, "squeeze"),
    C("squeeze axis", lambda o: xp.squeeze(o.f, 5), I, "squeeze"),
    C("flip axis", lambda o: xp.flip(o.f, axis=2), I, "flip"),
    C("flip repeated", lambda o: xp.flip(o.f, axis=(0, 0)), V, "flip"),
    C("moveaxis axis", lambda o: xp.moveaxis(o.f, 0, 2), I, "moveaxis"),
    C("moveaxis lengths", lambda o: xp.moveaxis(o.f, (0, 1), (0,)), V, "moveaxis"),
    C("permute_dims axis", lambda o: xp.permute_dims(o.f, (0, 2)), I, "permute_dims"),
    C("permute_dims repeated", lambda o: xp.permute_dims(o.f, (0, 0)), V, "permute_dims"),
    C("permute_dims short", lambda o: xp.permute_dims(o.f, (0,)), V, "permute_dims"),
    C("unstack 0-d", lambda o: xp.unstack(o.s), V, "unstack"),
    C("unstack axis", lambda o: xp.unstack(o.f, axis=2), I, "unstack"),
    C("tile negative", lambda o: xp.tile(o.f, (-1,)), V, "tile"),
    C("tile huge", lambda o: xp.tile(o.f, (10 ** 6, 10 ** 6)), TOO_BIG, "tile"),
    C("tile float", lambda o: xp.tile(o.f, 2.5), T, "tile"),
    C("repeat negative", lambda o: xp.repeat(o.f, -1), V, "repeat"),
    C("repeat huge", lambda o: xp.repeat(o.f, HUGE), TOO_BIG, "repeat"),
    C("repeat axis", lambda o: xp.repeat(o.f, 2, axis=2), I, "repeat"),
    C("repeat float repeats", lambda o: xp.repeat(o.f, o.f), T, "repeat"),
    C("repeat float", lambda o: xp.repeat(o.f, 1.5), T, "repeat"),
    C("roll axis", lambda o: xp.roll(o.f, 1, axis=2), I, "roll"),
    C("roll float shift", lambda o: xp.roll(o.f, 1.5), T, "roll"),
    C("roll lengths", lambda o: xp.roll(o.f, (1, 2), axis=(0,)), V, "roll"),
    C("stack float axis", lambda o: xp.stack([o.f, o.f], axis=1.5), T, "stack"),
    C("expand_dims float axis", lambda o: xp.expand_dims(o.f, axis=1.5), T, "expand_dims"),
    C("concat uint64 int64", lambda o: xp.concat([o.u, o.k]), T, "concat"),
    C("squeeze float axis", lambda o: xp.squeeze(o.f, 0.0), T, "squeeze"),
    C("unstack float axis", lambda o: xp.unstack(o.f, axis=0.0), T, "unstack"),
    C("reshape str shape", lambda o: xp.reshape(o.f, "ab"), T, "reshape"),
    C("diff negative n", lambda o: xp.diff(o.f, n=-1), V, "diff"),
    C("diff 0-d", lambda o: xp.diff(o.s), V, "diff"),
    C("diff prepend shape", lambda o: xp.diff(o.f, prepend=o.g), V, "diff"),
    C("diff axis", lambda o: xp.diff(o.f, axis=2), I, "diff"),
]

REDUCTIONS = [
    C("sum axis", lambda o: xp.sum(o.f, axis=2), I, "sum"),
    C("sum complex into real", lambda o: xp.sum(o.c, dtype=xp.float64), T, "sum"),
    C("sum into bool", lambda o: xp.sum(o.f, dtype=xp.bool), T, "sum"),
    C("sum dtype=object", lambda o: xp.sum(o.f, dtype=object), T, ("sum", "dtype")),
    C("prod complex into real", lambda o: xp.prod(o.c, dtype=xp.float32), T, "prod"),
    C("prod axis float", lambda o: xp.prod(o.f, axis=1.0), T, "prod"),
    C("cumulative_sum 2-d no axis", lambda o: xp.cumulative_sum(o.f), V, "cumulative_sum"),
    C("cumulative_sum complex into real", lambda o: xp.cumulative_sum(o.c, dtype=xp.float64),
      T, "cumulative_sum"),
    C("cumulative_sum complex into real, initial",
      lambda o: xp.cumulative_sum(o.c, include_initial=True, dtype=xp.float64), T, "cumulative_sum"),
    C("cumulative_prod complex into real", lambda o: xp.cumulative_prod(o.c, dtype=xp.float32),
      T, "cumulative_prod"),
    C("cumulative_sum axis", lambda o: xp.cumulative_sum(o.g, axis=1), I, "cumulative_sum"),
    C("cumulative_sum include_initial int", lambda o: xp.cumulative_sum(o.g, include_initial=1),
      T, "cumulative_sum"),
    C("cumulative_sum 0-d", lambda o: xp.cumulative_sum(o.s), V, "cumulative_sum"),
    C("mean axis", lambda o: xp.mean(o.f, axis=-3), I, "mean"),
    C("var correction str", lambda o: xp.var(o.f, correction="a"), T, "var"),
    C("var complex", lambda o: xp.var(o.c), T, "var"),
    C("std complex", lambda o: xp.std(o.c), T, "std"),
    C("max empty", lambda o: xp.max(o.g[:0]), V, "max"),
    C("min complex", lambda o: xp.min(o.c), T, "min"),
    C("any repeated axes", lambda o: xp.any(o.f, axis=(0, -2)), V, "any"),
    C("all axis", lambda o: xp.all(o.b, axis=1), I, "all"),
    C("count_nonzero axis", lambda o: xp.count_nonzero(o.f, axis=3), I, "count_nonzero"),
    C("sum keepdims str", lambda o: xp.sum(o.f, keepdims="yes"), T, "sum"),
    C("mean takes no dtype", lambda o: xp.mean(o.f, dtype=xp.float32), T, "mean"),
    C("cumulative_sum dtype=object", lambda o: xp.cumulative_sum(o.g, dtype=object), T,
      ("cumulative_sum", "dtype")),
    C("trace dtype=object", lambda o: xp.linalg.trace(o.m, dtype=object), T, ("trace", "dtype")),
    C("sum list", lambda o: xp.sum([1, 2]), T, "sum"),
]

INDEXING = [
    C("index out of range", lambda o: o.f[2], I, "index"),
    C("negative index out of range", lambda o: o.f[0, -4], I, "index"),
    C("too many indices", lambda o: o.f[0, 0, 0], I, "indices"),
    C("float index", lambda o: o.f[1.5], I, "indexing"),
    C("str index", lambda o: o.f["a"], I, "indexing"),
    C("two ellipses", lambda o: o.f[..., ...], I, "ellipsis"),
    C("slice step 0", lambda o: o.f[::0], V, "step"),
    C("float index array", lambda o: o.f[o.g32], I, "index"),
    C("mask shape", lambda o: o.f[o.b], I, "indexing"),
    C("index on other device", lambda o: o.f[o.ok], V, "indexing"),
    C("setitem value shape", lambda o: o.f.__setitem__(0, o.g), V, "setitem"),
    C("setitem float into int", lambda o: o.i.__setitem__(0, 1.5), T, "setitem"),
    C("setitem out of range", lambda o: o.f.__setitem__(5, 1.0), I, "index"),
    C("setitem devices", lambda o: o.f.__setitem__(0, o.o[0]), V, "__setitem__"),
    C("setitem complex into float", lambda o: o.f.__setitem__(0, 1j), T, "setitem"),
    C("take float indices", lambda o: xp.take(o.g, o.g), T, "take"),
    C("take axis", lambda o: xp.take(o.f, o.k, axis=2), I, "take"),
    C("take 2-d without axis", lambda o: xp.take(o.f, o.k), V, "take"),
    C("take devices", lambda o: xp.take(o.g, o.ok), V, "take"),
    C("take_along_axis axis", lambda o: xp.take_along_axis(o.f, o.i, axis=2), I, "take_along_axis"),
    C("take_along_axis ndim", lambda o: xp.take_along_axis(o.f, o.k), V, "take_along_axis"),
    C("take known index out of range", lambda o: xp.take(o.g, o.known([10])), I, ("take", "10")),
    C("take_along_axis known index out of range",
      lambda o: xp.take_along_axis(o.f, o.known([[5]]), axis=1), I, ("take_along_axis", "5")),
    C("index array known out of range", lambda o: o.g[o.known([10])], I, ("indexing", "10")),
    C("index array known out of range, 2nd axis", lambda o: o.f[:, o.known([7])], I, ("indexing", "7")),
    C("setitem index array out of range", lambda o: o.g.__setitem__(o.known([9]), 1.0), I, ("indexing", "9")),
    C("negative index array out of range", lambda o: o.g[o.known([-5])], I, ("indexing", "-5")),
    C("take_along_axis float", lambda o: xp.take_along_axis(o.f, o.f, axis=1), T, "take_along_axis"),
]

SEARCH_SORT_SET = [
    C("argmax axis", lambda o: xp.argmax(o.f, axis=2), I, "argmax"),
    C("argmax complex", lambda o: xp.argmax(o.c), T, "argmax"),
    C("argmin empty", lambda o: xp.argmin(o.g[:0]), V, "argmin"),
    C("where float condition", lambda o: xp.where(o.f, o.f, o.f), T, "where"),
    C("where shapes", lambda o: xp.where(o.b, o.f, o.g), V, "where"),
    C("where devices", lambda o: xp.where(o.f > 0, o.f, o.o), V, "where"),
    C("where no arrays", lambda o: xp.where(True, 1, 2), T, "where"),
    C("searchsorted 2-d", lambda o: xp.searchsorted(o.f, o.g), V, "searchsorted"),
    C("searchsorted side", lambda o: xp.searchsorted(o.g, o.g, side="middle"), V, "searchsorted"),
    C("searchsorted complex", lambda o: xp.searchsorted(o.c, o.c), T, "searchsorted"),
    C("searchsorted float sorter", lambda o: xp.searchsorted(o.g, o.g, sorter=o.g), T, "searchsorted"),
    C("searchsorted devices", lambda o: xp.searchsorted(o.g, o.o), V, "searchsorted"),
    C("nonzero 0-d", lambda o: xp.nonzero(o.s), V, "nonzero"),
    C("sort axis", lambda o: xp.sort(o.f, axis=2), I, "sort"),
    C("sort complex", lambda o: xp.sort(o.c), T, "sort"),
    C("sort float axis", lambda o: xp.sort(o.f, axis=1.0), T, "sort"),
    C("argsort axis", lambda o: xp.argsort(o.f, axis=-3), I, "argsort"),
    C("argsort complex", lambda o: xp.argsort(o.c), T, "argsort"),
    C("searchsorted side int", lambda o: xp.searchsorted(o.g, o.g, side=1), V, "searchsorted"),
    C("sort descending str", lambda o: xp.sort(o.f, descending="yes"), T, "sort"),
    C("argsort stable str", lambda o: xp.argsort(o.f, stable="yes"), T, "argsort"),
    C("count_nonzero repeated", lambda o: xp.count_nonzero(o.f, axis=(1, 1)), V, "count_nonzero"),
    C("unique_values str", lambda o: xp.unique_values("a"), T, "unique_values"),
    C("unique_counts list", lambda o: xp.unique_counts([1, 2]), T, "unique_counts"),
    C("isin devices", lambda o: xp.isin(o.f, o.o), V, "isin"),
    C("isin str", lambda o: xp.isin(o.f, "a"), T, "isin"),
    C("can_cast str", lambda o: xp.can_cast("abc", xp.float32), T, "can_cast"),
    C("result_type empty", lambda o: xp.result_type(), V, "result_type"),
    C("result_type uint64 int64", lambda o: xp.result_type(o.u, o.i), T, "result_type"),
    C("result_type str", lambda o: xp.result_type("abc"), T, "result_type"),
    C("finfo int", lambda o: xp.finfo(xp.int32), T, "finfo"),
    C("iinfo float", lambda o: xp.iinfo(xp.float32), T, "iinfo"),
    C("isdtype kind", lambda o: xp.isdtype(xp.float32, "floatish"), V, "isdtype"),
    C("isdtype kind int", lambda o: xp.isdtype(xp.float32, 3), T, "isdtype"),
    C("result_type None", lambda o: xp.result_type(o.f, None), T, "result_type"),
    C("can_cast to str", lambda o: xp.can_cast(o.f, "x"), T, "can_cast"),
    C("info default_dtypes device", lambda o: xp.__array_namespace_info__().default_dtypes(device="tpu"),
      V, "default_dtypes"),
    C("isdtype dtype", lambda o: xp.isdtype("abc", "real floating"), T, "isdtype"),
]

LINALG = [
    C("matmul inner", lambda o: o.f @ o.f, V, "matmul"),
    C("matmul 0-d", lambda o: xp.matmul(o.s, o.f), V, "matmul"),
    C("matmul bool", lambda o: xp.matmul(xp.reshape(o.b, (3, 1)), xp.reshape(o.b, (1, 3))), T, "matmul"),
    C("matmul devices", lambda o: xp.matmul(o.f, xp.matrix_transpose(o.o)), V, "matmul"),
    C("matmul outer huge", lambda o: xp.matmul(xp.reshape(o.big, (-1, 1)), xp.reshape(o.big, (1, -1))),
      TOO_BIG, "matmul"),
    C("tensordot shapes", lambda o: xp.tensordot(o.f, o.g, axes=1), V, "tensordot"),
    C("tensordot too many axes", lambda o: xp.tensordot(o.f, o.f, axes=3), V, "tensordot"),
    C("tensordot negative axes", lambda o: xp.tensordot(o.f, o.f, axes=-1), V, "tensordot"),
    C("tensordot axis out of range", lambda o: xp.tensordot(o.f, o.f, axes=((0,), (5,))), I, "tensordot"),
    C("tensordot outer huge", lambda o: xp.tensordot(o.big, o.big, axes=0), TOO_BIG, "tensordot"),
    C("tensordot devices", lambda o: xp.tensordot(o.f, o.o), V, "tensordot"),
    C("vecdot shapes", lambda o: xp.vecdot(o.f, o.g), V, "vecdot"),
    C("vecdot axis", lambda o: xp.vecdot(o.f, o.f, axis=2), I, "vecdot"),
    C("matrix_transpose 1-d", lambda o: xp.matrix_transpose(o.g), V, "matrix_transpose"),
    C("inv non-square", lambda o: xp.linalg.inv(o.f), V, "inv"),
    C("inv int", lambda o: xp.linalg.inv(xp.astype(o.m, xp.int64)), T, "inv"),
    C("inv str", lambda o: xp.linalg.inv("a"), T, "inv"),
    C("det 1-d", lambda o: xp.linalg.det(o.g), V, "det"),
    C("slogdet non-square", lambda o: xp.linalg.slogdet(o.f), V, "slogdet"),
    C("cholesky non-square", lambda o: xp.linalg.cholesky(o.f), V, "cholesky"),
    C("solve shapes", lambda o: xp.linalg.solve(o.m, o.g), V, "solve"),
    C("solve devices", lambda o: xp.linalg.solve(o.m, o.om), V, "solve"),
    C("qr mode", lambda o: xp.linalg.qr(o.m, mode="x"), V, "qr"),
    C("eigh non-square", lambda o: xp.linalg.eigh(o.f), V, "eigh"),
    C("eigvals non-square", lambda o: xp.linalg.eigvals(o.f), V, "eigvals"),
    C("svd 1-d", lambda o: xp.linalg.svd(o.g), V, "svd"),
    C("svdvals 0-d", lambda o: xp.linalg.svdvals(o.s), V, "svdvals"),
    C("matrix_power float n", lambda o: xp.linalg.matrix_power(o.m, 1.5), T, "matrix_power"),
    C("matrix_power non-square", lambda o: xp.linalg.matrix_power(o.f, 2), V, "matrix_power"),
    C("vector_norm ord", lambda o: xp.linalg.vector_norm(o.f, ord="fro"), T, "vector_norm"),
    C("vector_norm axis", lambda o: xp.linalg.vector_norm(o.f, axis=3), I, "vector_norm"),
    C("matrix_norm 1-d", lambda o: xp.linalg.matrix_norm(o.g), V, "matrix_norm"),
    C("matrix_norm ord", lambda o: xp.linalg.matrix_norm(o.m, ord=3), V, "matrix_norm"),
    C("cross size 4", lambda o: xp.linalg.cross(o.g, o.g), V, "cross"),
    C("outer 2-d", lambda o: xp.linalg.outer(o.f, o.g), V, "outer"),
    C("outer huge", lambda o: xp.linalg.outer(o.big, o.big), TOO_BIG, "outer"),
    C("diagonal 1-d", lambda o: xp.linalg.diagonal(o.g), V, "diagonal"),
    C("trace complex into real", lambda o: xp.linalg.trace(o.cm, dtype=xp.float64), T, "trace"),
    C("matrix_rank 1-d", lambda o: xp.linalg.matrix_rank(o.g), V, "matrix_rank"),
    C("solve non-square", lambda o: xp.linalg.solve(o.f, o.f), V, "solve"),
    C("qr 1-d", lambda o: xp.linalg.qr(o.g), V, "qr"),
    C("cholesky int", lambda o: xp.linalg.cholesky(xp.astype(o.m, xp.int64)), T, "cholesky"),
    C("cross shapes", lambda o: xp.linalg.cross(o.f, o.g), V, "cross"),
    C("vector_norm complex ord", lambda o: xp.linalg.vector_norm(o.f, ord=1j), T, "vector_norm"),
    C("matrix_transpose str", lambda o: xp.matrix_transpose("a"), T, "matrix_transpose"),
    C("matmul str", lambda o: xp.matmul(o.f, "a"), T, "matmul"),
    C("tensordot uint64 int64", lambda o: xp.tensordot(o.u, o.k, axes=0), T, "tensordot"),
    C("solve devices, other first", lambda o: xp.linalg.solve(o.om, o.m), V, "solve"),
    C("pinv 1-d", lambda o: xp.linalg.pinv(o.g), V, "pinv"),
]

FFT = [
    C("fft 0-d", lambda o: xp.fft.fft(o.s), I, "fft"),
    C("fft n=0", lambda o: xp.fft.fft(o.g, n=0), V, "fft"),
    C("fft n<0", lambda o: xp.fft.fft(o.g, n=-1), V, "fft"),
    C("fft float n", lambda o: xp.fft.fft(o.g, n=2.5), T, "fft"),
    C("fft axis", lambda o: xp.fft.fft(o.g, axis=1), I, "fft"),
    C("fft norm", lambda o: xp.fft.fft(o.g, norm="bad"), V, "fft"),
    C("fft huge n", lambda o: xp.fft.fft(o.g, n=HUGE), TOO_BIG, "fft"),
    C("rfft complex", lambda o: xp.fft.rfft(o.c), T, "rfft"),
    C("irfft n=0", lambda o: xp.fft.irfft(o.c, n=0), V, "irfft"),
    C("hfft n<0", lambda o: xp.fft.hfft(o.c, n=-1), V, "hfft"),
    C("fftn s and axes", lambda o: xp.fft.fftn(o.f, s=(2,), axes=(0, 1)), V, "fftn"),
    C("fftn repeated axes", lambda o: xp.fft.fftn(o.f, axes=(0, 0)), V, "fftn"),
    C("ifftn axis", lambda o: xp.fft.ifftn(o.f, axes=(3,)), I, "ifftn"),
    C("fftfreq 0", lambda o: xp.fft.fftfreq(0), V, "fftfreq"),
    C("fftfreq negative", lambda o: xp.fft.fftfreq(-3), V, "fftfreq"),
    C("fftfreq huge", lambda o: xp.fft.fftfreq(10 ** 13), TOO_BIG, "fftfreq"),
    C("fftfreq d=0", lambda o: xp.fft.fftfreq(4, d=0), V, "fftfreq"),
    C("rfftfreq d=0.0", lambda o: xp.fft.rfftfreq(4, d=0.0), V, "rfftfreq"),
    C("fftfreq d str", lambda o: xp.fft.fftfreq(4, d="a"), T, "fftfreq"),
    C("fftfreq int dtype", lambda o: xp.fft.fftfreq(4, dtype=xp.int32), T, "fftfreq"),
    C("rfftfreq float n", lambda o: xp.fft.rfftfreq(4.5), T, "rfftfreq"),
    C("fftshift axis", lambda o: xp.fft.fftshift(o.f, axes=3), I, "fftshift"),
    C("fft int", lambda o: xp.fft.fft(o.i), T, "fft"),
    C("fftshift float axes", lambda o: xp.fft.fftshift(o.f, axes=1.5), T, "fftshift"),
    C("irfftn s=0", lambda o: xp.fft.irfftn(o.c, s=(0,)), V, "irfftn"),
    C("rfftn no axes", lambda o: xp.fft.rfftn(o.f, axes=()), V, "rfftn"),
    C("ihfft complex", lambda o: xp.fft.ihfft(o.c), T, "ihfft"),
    C("irfft huge n", lambda o: xp.fft.irfft(o.c, n=HUGE), TOO_BIG, "irfft"),
    C("rfftfreq huge", lambda o: xp.fft.rfftfreq(10 ** 13), TOO_BIG, "rfftfreq"),
    C("fft list", lambda o: xp.fft.fft([1.0, 2.0]), T, "fft"),
]

JIT = [
    C("jit int", lambda o: xp.jit(3), T, "jit"),
    C("jit static_argnums out of range", lambda o: xp.jit(_f2, static_argnums=5), V, ("jit", "static_argnums")),
    C("jit static_argnums negative", lambda o: xp.jit(_f2, static_argnums=-3), V, ("jit", "static_argnums")),
    C("jit static_argnums str", lambda o: xp.jit(_f2, static_argnums="a"), T, ("jit", "static_argnums")),
    C("jit static_argnums float", lambda o: xp.jit(_f2, static_argnums=1.0), T, ("jit", "static_argnums")),
    C("jit donate_argnums out of range", lambda o: xp.jit(_f2, donate_argnums=2), V, ("jit", "donate_argnums")),
    C("jit static_argnames int", lambda o: xp.jit(_f2, static_argnames=3), T, ("jit", "static_argnames")),
    C("jit static_argnames unknown", lambda o: xp.jit(_f2, static_argnames="zz"), V, ("jit", "static_argnames")),
    C("jit *args static_argnums at call", lambda o: xp.jit(_fvar, static_argnums=5)(o.f, o.g), V,
      ("jit", "static_argnums")),
    C("jit *args donate_argnums at call", lambda o: xp.jit(_fvar, donate_argnums=3)(o.f, o.g), V,
      ("jit", "donate_argnums")),
    C("jit devices", lambda o: xp.jit(_f2)(o.f, o.o), V, "jit"),
    C("jit numpy argument", lambda o: xp.jit(_f2)(o.f, np.ones(3)), T, "jit"),
    C("jit shapes inside", lambda o: xp.jit(_f2)(o.f, o.g), V, "add"),
    C("jit unhashable static", lambda o: xp.jit(_f2, static_argnums=1)(o.f, [1]), T, "jit"),
    C("jit donated twice", lambda o: xp.jit(_f2, donate_argnums=0)(o.f, o.f), V, "jit"),
    C("jit decorator with bad option", lambda o: xp.jit(static_argnums="x"), T, "jit"),
    C("jit static and donated", lambda o: xp.jit(_f2, static_argnums=0, donate_argnums=0), V, "jit"),
    C("jit unhashable static keyword", lambda o: xp.jit(_f2, static_argnames="b")(o.f, b=[1]), T, "jit"),
    C("jit *args static and donated at call", lambda o: xp.jit(_fvar, static_argnums=1, donate_argnums=-1)(o.f, o.g),
      V, "jit"),
    C("jit needs a value", lambda o: xp.jit(_needs_value)(o.g), xp.ConcretizationError, "float"),
]


def _sumsq(x):
    return xp.sum(x * x)


AUTODIFF = [
    C("grad int", lambda o: xp.grad(3), T, "grad"),
    C("grad int argument", lambda o: xp.grad(_sumsq)(o.i), T, "grad"),
    C("grad non-scalar output", lambda o: xp.grad(lambda x: x * 2)(o.g), T, "grad"),
    C("grad argnums out of range", lambda o: xp.grad(_sumsq, argnums=3)(o.g), V, ("grad", "argnums")),
    C("grad argnums float", lambda o: xp.grad(_sumsq, argnums=1.5)(o.g), T, ("grad", "argnums")),
    C("grad complex output", lambda o: xp.grad(lambda x: xp.sum(x) * 1j)(o.g), T, "grad"),
    C("grad str argument", lambda o: xp.grad(_sumsq)("a"), T, "grad"),
    C("value_and_grad int argument", lambda o: xp.value_and_grad(_sumsq)(o.i), T, "value_and_grad"),
    C("vjp int", lambda o: xp.vjp(3, o.g), T, "vjp"),
    C("vjp str primal", lambda o: xp.vjp(_sumsq, "a"), T, "vjp"),
    C("vjp cotangent shape", lambda o: xp.vjp(lambda x: x * 2, o.g)[1](o.f), V, "vjp"),
    C("vjp cotangent dtype", lambda o: xp.vjp(lambda x: x * 2, o.g)[1](o.g32), T, ("vjp", "cotangent")),
    C("vjp cotangent structure", lambda o: xp.vjp(lambda x: x * 2, o.g)[1]((o.g, o.g)), V, "vjp"),
    C("jvp float32 tangent", lambda o: xp.jvp(_sumsq, (o.g,), (o.g32,)), T, ("jvp", "tangent")),
    C("jvp int tangent", lambda o: xp.jvp(_sumsq, (o.g,), (xp.astype(o.g, xp.int64),)), T, ("jvp", "tangent")),
    C("jvp tangent shape", lambda o: xp.jvp(_sumsq, (o.g,), (o.f,)), V, "jvp"),
    C("jvp not tuples", lambda o: xp.jvp(_sumsq, o.g, o.g), T, "jvp"),
    C("jvp lengths", lambda o: xp.jvp(_sumsq, (o.g,), ()), V, "jvp"),
    C("jvp int primal", lambda o: xp.jvp(_sumsq, (o.i,), (o.i,)), T, "jvp"),
    C("jvp int", lambda o: xp.jvp(3, (o.g,), (o.g,)), T, "jvp"),
    C("jacobian argnums tuple", lambda o: xp.jacobian(_sumsq, argnums=(0, 1)), T, "jacobian"),
    C("jacobian mode", lambda o: xp.jacobian(_sumsq, mode="side"), V, "jacobian"),
    C("jacobian int argument", lambda o: xp.jacobian(lambda x: x * 2)(o.i), T, "jacobian"),
    C("jacobian argnums out of range", lambda o: xp.jacobian(_sumsq, argnums=2)(o.g), V, "jacobian"),
    C("jacobian int", lambda o: xp.jacobian(3), T, "jacobian"),
    C("hessian int argument", lambda o: xp.hessian(_sumsq)(o.i), T, "hessian"),
    C("grad has_aux not a pair", lambda o: xp.grad(_sumsq, has_aux=True)(o.g), T, "grad"),
    C("grad argnums str", lambda o: xp.grad(_sumsq, argnums="0"), T, ("grad", "argnums")),
    C("jacfwd int argument", lambda o: xp.jacfwd(lambda x: x * 2)(o.i), T, "jacfwd"),
    C("jacrev int", lambda o: xp.jacrev(3), T, "jacrev"),
    C("hessian int", lambda o: xp.hessian(3), T, "hessian"),
    C("jvp complex tangent for real", lambda o: xp.jvp(_sumsq, (o.g,), (xp.astype(o.g, xp.complex128),)),
      T, ("jvp", "tangent")),
    C("jvp scalar tangent for a vector", lambda o: xp.jvp(_sumsq, (o.g,), (1.0,)), V, ("jvp", "tangent")),
    C("vjp complex cotangent for real", lambda o: xp.vjp(lambda x: x * 2, o.g)[1](xp.astype(o.g, xp.complex128)),
      T, ("vjp", "cotangent")),
    C("jvp tangent on the other device", lambda o: xp.jvp(_sumsq, (o.g,), (xp.asarray(np.ones(4), device=o.other),)),
      V, ("jvp", "device")),
    C("vjp cotangent on the other device", lambda o: xp.vjp(lambda x: x * 2, o.g)[1](
        xp.asarray(np.ones(4), device=o.other)), V, ("vjp", "device")),
    C("grad of devices mixed inside", lambda o: xp.grad(lambda x: xp.sum(x * o.o))(o.f), V, "multiply"),
    C("stop_gradient str", lambda o: xp.stop_gradient("a"), T, "stop_gradient"),
    C("checkpoint int", lambda o: xp.checkpoint(3), T, "checkpoint"),
    C("custom_jvp without rule", lambda o: xp.custom_jvp(_sumsq)(o.g), T, "custom_jvp"),
    C("value_and_grad int", lambda o: xp.value_and_grad(3), T, "value_and_grad"),
    C("custom_vjp without rule", lambda o: xp.custom_vjp(_sumsq)(o.g), T, "custom_vjp"),
]

EXPORT = [
    C("export int", lambda o: xp.export(3), T, "export"),
    C("export numpy argument", lambda o: xp.export(_f2)(o.f, np.ones(3)), T, "export"),
    C("export devices", lambda o: xp.export(_f2)(o.f, o.o), V, "export"),
    C("export no array", lambda o: xp.export(lambda: 3)(), V, "export"),
    C("export shapes inside", lambda o: xp.export(_f2)(o.f, o.g), V, "add"),
    C("export jit with static", lambda o: xp.export(xp.jit(_f2, static_argnums=1)), V, "export"),
    C("deserialize int", lambda o: xp.deserialize(3), T, "tlaloc.deserialize"),
    C("deserialize str", lambda o: xp.deserialize("tlaloc"), T, "tlaloc.deserialize"),
    C("deserialize empty", lambda o: xp.deserialize(b""), V, "tlaloc.deserialize"),
    C("deserialize random bytes", lambda o: xp.deserialize(os.urandom(1000)), V, "tlaloc.deserialize"),
    C("deserialize magic + random", lambda o: xp.deserialize(b"tlaloc-exported\0" + os.urandom(200)),
      V, "tlaloc.deserialize"),
    C("deserialize magic only", lambda o: xp.deserialize(b"tlaloc-exported\0"), V, "tlaloc.deserialize"),
    C("deserialize truncated half", lambda o: xp.deserialize(_blob()[:len(_blob()) // 2]), V, "tlaloc.deserialize"),
    C("deserialize truncated by one", lambda o: xp.deserialize(_blob()[:-1]), V, "tlaloc.deserialize"),
    C("deserialize truncated header", lambda o: xp.deserialize(_blob()[:30]), V, "tlaloc.deserialize"),
    C("deserialize flipped byte", lambda o: xp.deserialize(_blob()[:-5] + b"\xff" + _blob()[-4:]),
      V, "tlaloc.deserialize"),
    C("deserialize garbage artifact", lambda o: xp.deserialize(_reblob(_garbage_artifact)), V, "tlaloc.deserialize"),
    C("deserialize truncated artifact", lambda o: xp.deserialize(_reblob(_truncated_artifact)), V, "tlaloc.deserialize"),
    C("deserialize negative shape", lambda o: xp.deserialize(_reblob(_shape_lie)), V, "tlaloc.deserialize"),
    C("deserialize unknown dtype", lambda o: xp.deserialize(_reblob(_bad_dtype)), V, "tlaloc.deserialize"),
    C("deserialize bad reference", lambda o: xp.deserialize(_reblob(_bad_reference)), V, "tlaloc.deserialize"),
    C("deserialize future format", lambda o: xp.deserialize(_reblob(_future_format)), V, "tlaloc.deserialize"),
    C("deserialize deeply nested header", lambda o: xp.deserialize(_deep_blob()), V, "tlaloc.deserialize"),
    C("deserialize negative offset", lambda o: xp.deserialize(_reblob(_negative_offset)), V, "tlaloc.deserialize"),
    C("deserialize header not an object", lambda o: xp.deserialize(_list_header_blob()), V, "tlaloc.deserialize"),
    C("deserialize bytes that are not utf-8", lambda o: xp.deserialize(
        b"tlaloc-exported\0" + struct.pack("<Q", 4) + b"\xff\xfe\xfd\xfc"), V, "tlaloc.deserialize"),
    C("deserialize names not str", lambda o: xp.deserialize(_reblob(_int_names)), V, "tlaloc.deserialize"),
    C("call wrong shape", lambda o: xp.deserialize(_blob()).call(xp.ones(4), xp.ones(3)), V, "call"),
    C("call wrong dtype", lambda o: xp.deserialize(_blob()).call(xp.ones(3, dtype=xp.float32), xp.ones(3)),
      T, "call"),
    C("call wrong structure", lambda o: xp.deserialize(_blob()).call(xp.ones(3)), T, "call"),
    C("call numpy", lambda o: xp.deserialize(_blob()).call(np.ones(3), xp.ones(3)), T, "call"),
    C("call on the interpreter",
      lambda o: xp.deserialize(_blob()).call(*[xp.ones(3, device="interpreter")] * 2), V, "call"),
]

NAMED = [
    C("broadcast sizes differ", lambda o: named.broadcast(o.ni2, o.ni3), V, "broadcast"),
    C("broadcast unnamed", lambda o: named.broadcast(o.f), V, "broadcast"),
    C("broadcast list", lambda o: named.broadcast([1, 2]), T, "broadcast"),
    C("rename twice", lambda o: xp.rename(o.f, "i", "i"), V, "rename"),
    C("rename count", lambda o: xp.rename(o.f, "i"), V, "rename"),
    C("rename int", lambda o: xp.rename(o.f, 1, 2), T, "rename"),
    C("rename unknown", lambda o: xp.rename(o.nij, zz="a"), V, "rename"),
    C("rename into clash", lambda o: xp.rename(o.nij, i="j"), V, "rename"),
    C("rename both forms", lambda o: xp.rename(o.nij, "a", "b", i="c"), T, "rename"),
    C("add conflicting names", lambda o: o.nij + o.nik, V, "add"),
    C("where conflicting names", lambda o: xp.where(o.nij > 0, o.nij, o.nik), V, "where"),
    C("sum unknown name", lambda o: xp.sum(o.nij, axis="zz"), V, ("sum", "zz")),
    C("mean unknown name", lambda o: xp.mean(o.nij, axis=("i", "zz")), V, ("mean", "zz")),
    C("align_to missing", lambda o: xp.align_to(o.nij, "i"), V, "align_to"),
    C("align_to unnamed", lambda o: xp.align_to(o.nix, "i"), V, "align_to"),
    C("contract unknown", lambda o: xp.contract(o.nij, o.njk, over="zz"), V, "contract"),
    C("contract sizes", lambda o: xp.contract(o.ni2, o.ni3, over="i"), V, "contract"),
    C("contract unnamed", lambda o: xp.contract(o.f, o.f, over="i"), V, "contract"),
    C("contract devices", lambda o: xp.contract(o.nij, o.nio, over="j"), V, "contract"),
    C("contract list", lambda o: xp.contract([1], o.nij, over="i"), T, "contract"),
    C("matmul contracted names", lambda o: xp.matmul(o.nij, o.nkl), V, "matmul"),
    C("tensordot contracted names", lambda o: xp.tensordot(o.nij, o.nkl, axes=1), V, "tensordot"),
    C("permute_dims unknown", lambda o: xp.permute_dims(o.nij, ("i", "zz")), V, "permute_dims"),
    C("zeros repeated names", lambda o: xp.zeros((2, 3), names=("i", "i")), V, "zeros"),
    C("zeros names count", lambda o: xp.zeros((2, 3), names=("i",)), V, "zeros"),
    C("ones int names", lambda o: xp.ones((2,), names=(1,)), T, "ones"),
    C("concat conflicting names", lambda o: xp.concat([o.nij, o.nik], axis=0), V, "concat"),
    C("stack conflicting names", lambda o: xp.stack([o.nij, o.nik]), V, "stack"),
    C("vecdot unknown", lambda o: xp.vecdot(o.nij, o.nij, axis="zz"), V, "vecdot"),
    C("moveaxis unknown", lambda o: xp.moveaxis(o.nij, "zz", 0), V, "moveaxis"),
    C("squeeze unknown", lambda o: xp.squeeze(o.nij, "zz"), V, "squeeze"),
    C("sort unknown", lambda o: xp.sort(o.nij, axis="zz"), V, "sort"),
    C("fft unknown", lambda o: xp.fft.fft(o.nij, axis="zz"), V, "fft"),
    C("align_to repeated", lambda o: xp.align_to(o.nij, "i", "j", "i"), V, "align_to"),
    C("align_to numpy", lambda o: xp.align_to(np.ones(2), "i"), T, "align_to"),
    C("contract repeated over", lambda o: xp.contract(o.nij, o.nij, over=("i", "i")), V, "contract"),
    C("sum repeated names", lambda o: xp.sum(o.nij, axis=("i", "i")), V, "sum"),
    C("permute_dims repeated names", lambda o: xp.permute_dims(o.nij, ("i", "i")), V, "permute_dims"),
    C("add names and devices", lambda o: o.nij + o.nio, V, "add"),
    C("zeros names str", lambda o: xp.zeros((2,), names="ij"), V, "zeros"),
    C("rename int name", lambda o: xp.rename(o.f, "i", 3), T, "rename"),
    C("argmax keepdims str", lambda o: xp.argmax(o.f, keepdims="x"), T, "argmax"),
    C("rename non-array", lambda o: xp.rename([1, 2], "i"), T, "rename"),
    C("typechecked names", lambda o: _typed(o.nik), V, "_typed"),
    C("typechecked dtype", lambda o: _typed(xp.astype(o.nij, xp.float32)), T, "_typed"),
]


@xp.typechecked
def _typed(x: xp.Array[xp.Named["i", "j"], xp.float64]):
    return x


CASES = ([("creation: " + c[0],) + c[1:] for c in CREATION]
         + [("elementwise: " + c[0],) + c[1:] for c in ELEMENTWISE]
         + [("manipulation: " + c[0],) + c[1:] for c in MANIPULATION]
         + [("reductions: " + c[0],) + c[1:] for c in REDUCTIONS]
         + [("indexing: " + c[0],) + c[1:] for c in INDEXING]
         + [("search/sort/set/dtypes: " + c[0],) + c[1:] for c in SEARCH_SORT_SET]
         + [("linalg: " + c[0],) + c[1:] for c in LINALG]
         + [("fft: " + c[0],) + c[1:] for c in FFT]
         + [("jit: " + c[0],) + c[1:] for c in JIT]
         + [("autodiff: " + c[0],) + c[1:] for c in AUTODIFF]
         + [("export: " + c[0],) + c[1:] for c in EXPORT]
         + [("named: " + c[0],) + c[1:] for c in NAMED])

XLA_INTERNALS = ("INTERNAL", "RESOURCE_EXHAUSTED", "INVALID_ARGUMENT", "xla::", "absl", "mlir::",
                 "Check failed", "StatusOr")


@pytest.mark.parametrize("label, call, exc, texts", CASES, ids=[c[0] for c in CASES])
def test_bad_call_raises_at_the_call(tier, label, call, exc, texts):
    o = Operands(tier)
    if label.startswith("export: "):
        _blob()     # made before the counters reset (exporting lowers a program)
    xp.reset_cache_info()
    with pytest.raises(exc) as info:
        call(o)
    message = str(info.value)
    for text in texts:
        assert text in message, message
    assert not any(s in message for s in XLA_INTERNALS), message
    stats = xp.cache_info()
    assert stats["misses"] == stats["hits"] == stats["compiles"] == stats["interpreted"] == 0, stats
    assert all(a._node.value is None for a in o.all)   # nothing was evaluated


def test_battery_size():
    assert len(CASES) >= 150
    assert len({c[0] for c in CASES}) == len(CASES)
