"""The operations programs are drawn from: one generator per family of namespace functions.

A generator draws its operands among the program's values (or makes a new input of a
fitting shape and dtype), draws its parameters so that the call is valid by the standard
(and tlaloc's documented extensions), writes the source line and computes the reference.

Families: element-wise (unary, binary with arrays or Python scalars on either side, as
functions or operators; clip; where), reductions, cumulative sums and products, diff,
contractions (matmul, tensordot, vecdot), manipulation, indexing (basic, integer arrays,
boolean masks, take, take_along_axis) and `__setitem__`, sorting and searching, creation
functions (constants in the compiled program) and astype.
"""
from .gen_arrays import (gen_cumulative, gen_diff, gen_matmul, gen_reduction, gen_tensordot,
                         gen_vecdot)
from .gen_creation import gen_astype, gen_creation, gen_meshgrid
from .gen_elementwise import (gen_binary, gen_cast_op, gen_clip, gen_expression, gen_unary,
                              gen_where)
from .gen_indexing import (gen_getitem, gen_nonzero, gen_searchsorted, gen_setitem, gen_sort,
                           gen_take, gen_take_along_axis, gen_unique_values)
from .gen_shapes import (gen_broadcast_arrays, gen_broadcast_to, gen_concat, gen_expand_dims,
                         gen_flip, gen_matrix_transpose, gen_moveaxis, gen_permute_dims,
                         gen_repeat, gen_reshape, gen_roll, gen_squeeze, gen_stack, gen_tile,
                         gen_tril, gen_unstack)


# Generators with weights (repeats): element-wise arithmetic most, since compilers rewrite
# chains of it; hypothesis also favours the first entries a little, and shrinks towards
# them, so the simplest come first.
GENERATORS = ([gen_expression] * 8 + [gen_binary] * 6 + [gen_unary] * 4 + [gen_cast_op] * 3
              + [gen_where, gen_clip]
              + [gen_reduction] * 3 + [gen_cumulative, gen_diff]
              + [gen_matmul, gen_tensordot, gen_vecdot]
              + [gen_getitem, gen_getitem, gen_setitem, gen_setitem, gen_take, gen_take_along_axis]
              + [gen_reshape, gen_permute_dims, gen_matrix_transpose, gen_expand_dims,
                 gen_squeeze, gen_flip, gen_roll, gen_concat, gen_stack, gen_broadcast_to,
                 gen_broadcast_arrays, gen_tile, gen_repeat, gen_moveaxis, gen_unstack, gen_tril]
              + [gen_sort, gen_searchsorted, gen_nonzero, gen_unique_values]
              + [gen_astype, gen_astype, gen_creation, gen_creation, gen_meshgrid])
