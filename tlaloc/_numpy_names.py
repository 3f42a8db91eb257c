"""NumPy's names that the standard spells differently, for the AttributeError of
`tlaloc.<numpy name>`, `tlaloc.linalg.<name>` and `tlaloc.fft.<name>` (the modules'
`__getattr__`). Data and one function: importing it costs nothing, and
tests/test_numpy_namespace.py checks that every entry's standard spelling exists in tlaloc
and its NumPy spelling in tlaloc.numpy."""


def missing(module: str, name: str, table: dict) -> AttributeError:
    """The AttributeError for `module.name`, naming the standard's spelling when `name` is
    NumPy's (an entry of `table`)."""
    if name in table:
        return AttributeError(f"module {module!r} has no attribute {name!r}: that is NumPy's "
                              f"name; the standard's is {table[name]} (NumPy's spellings are "
                              f"in tlaloc.numpy)")
    return AttributeError(f"module {module!r} has no attribute {name!r}")


# NumPy name -> what to write in the standard namespace
STANDARD_SPELLING = {
    "concatenate": "tlaloc.concat(arrays, axis=...)",
    "transpose": "tlaloc.permute_dims(x, axes) (or x.mT, x.T for 2-d)",
    "swapaxes": "tlaloc.permute_dims(x, axes) or tlaloc.moveaxis",
    "cumsum": "tlaloc.cumulative_sum(x, axis=...)",
    "cumprod": "tlaloc.cumulative_prod(x, axis=...)",
    "dot": "tlaloc.matmul (or tlaloc.vecdot, tlaloc.tensordot)",
    "inner": "tlaloc.vecdot (or tlaloc.tensordot)",
    "outer": "tlaloc.linalg.outer",
    "einsum": "tlaloc.tensordot / tlaloc.matmul, or tlaloc.numpy.einsum",
    "array": "tlaloc.asarray(obj, copy=True)",
    "asanyarray": "tlaloc.asarray",
    "ascontiguousarray": "tlaloc.asarray",
    "copy": "tlaloc.asarray(x, copy=True)",
    "allclose": "tlaloc.all(tlaloc.abs(a - b) <= atol + rtol * tlaloc.abs(b)), or tlaloc.numpy.allclose",
    "isclose": "tlaloc.abs(a - b) <= atol + rtol * tlaloc.abs(b), or tlaloc.numpy.isclose",
    "array_equal": "tlaloc.all(a == b), or tlaloc.numpy.array_equal",
    "argwhere": "tlaloc.stack(tlaloc.nonzero(x), axis=-1)",
    "flatnonzero": "tlaloc.nonzero(tlaloc.reshape(x, (-1,)))[0]",
    "absolute": "tlaloc.abs",
    "power": "tlaloc.pow",
    "arccos": "tlaloc.acos", "arccosh": "tlaloc.acosh", "arcsin": "tlaloc.asin",
    "arcsinh": "tlaloc.asinh", "arctan": "tlaloc.atan", "arctan2": "tlaloc.atan2",
    "arctanh": "tlaloc.atanh",
    "conjugate": "tlaloc.conj",
    "invert": "tlaloc.bitwise_invert", "bitwise_not": "tlaloc.bitwise_invert",
    "left_shift": "tlaloc.bitwise_left_shift", "right_shift": "tlaloc.bitwise_right_shift",
    "mod": "tlaloc.remainder", "true_divide": "tlaloc.divide",
    "amax": "tlaloc.max", "amin": "tlaloc.min",
    "around": "tlaloc.round",
    "ravel": "tlaloc.reshape(x, (-1,))",
    "atleast_1d": "tlaloc.reshape / tlaloc.expand_dims",
    "atleast_2d": "tlaloc.reshape / tlaloc.expand_dims",
    "vstack": "tlaloc.concat(..., axis=0) (or tlaloc.stack)",
    "hstack": "tlaloc.concat(..., axis=1) (axis=0 for 1-d arrays)",
    "column_stack": "tlaloc.stack(..., axis=1)",
    "split": "slicing (x[a:b]) or tlaloc.unstack",
    "array_split": "slicing (x[a:b])",
    "diag": "tlaloc.linalg.diagonal (2-d) or x * tlaloc.eye(n) (1-d)",
    "diagonal": "tlaloc.linalg.diagonal",
    "trace": "tlaloc.linalg.trace",
    "identity": "tlaloc.eye(n)",
    "average": "tlaloc.sum(x * w) / tlaloc.sum(w), or tlaloc.numpy.average",
    "median": "tlaloc.numpy.median (the standard has no median)",
    "ptp": "tlaloc.max(x) - tlaloc.min(x)",
    "nan_to_num": "tlaloc.where(tlaloc.isnan(x), 0.0, x) (or array_api_extra.nan_to_num)",
    "unique": "tlaloc.unique_values / unique_counts / unique_inverse / unique_all",
    "fliplr": "tlaloc.flip(x, axis=1)", "flipud": "tlaloc.flip(x, axis=0)",
    "deg2rad": "x * (tlaloc.pi / 180)", "rad2deg": "x * (180 / tlaloc.pi)",
    "degrees": "x * (180 / tlaloc.pi)", "radians": "x * (tlaloc.pi / 180)",
    "exp2": "tlaloc.pow(2.0, x)",
    "ndim": "x.ndim", "shape": "x.shape", "size": "x.size",
    "float_": "tlaloc.float64", "int_": "tlaloc.int64", "bool_": "tlaloc.bool",
    "complex_": "tlaloc.complex128", "double": "tlaloc.float64", "single": "tlaloc.float32",
}

# tlaloc.linalg's
LINALG_SPELLING = {
    "norm": "tlaloc.linalg.vector_norm(x, ord=..., axis=...) or tlaloc.linalg.matrix_norm(x, ord=...)",
    "lstsq": "tlaloc.linalg.pinv(a) @ b (or tlaloc.linalg.solve for square a)",
    "multi_dot": "chained tlaloc.matmul (a @ b @ c)",
    "cond": "tlaloc.linalg.matrix_norm(a, ord=p) * tlaloc.linalg.matrix_norm(tlaloc.linalg.inv(a), ord=p)",
}

# tlaloc.fft's
FFT_SPELLING = {
    "fft2": "tlaloc.fft.fftn(x, axes=(-2, -1))", "ifft2": "tlaloc.fft.ifftn(x, axes=(-2, -1))",
    "rfft2": "tlaloc.fft.rfftn(x, axes=(-2, -1))", "irfft2": "tlaloc.fft.irfftn(x, axes=(-2, -1))",
}
