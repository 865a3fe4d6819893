"""load8: eight bytes of a uint8 array as one little-endian uint64, in one unaligned machine load.

Built from eight byte reads, numba keeps eight loads, each with its negative-index check; this
intrinsic is one `load i64, align 1` with no check at all. Callers guarantee that
buf[p:p + 8] is inside the array (the buffers carry SLACK readable bytes after their data).
"""

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def load8(typingctx, buf, p):
    if not (isinstance(buf, types.Array) and buf.ndim == 1 and buf.dtype == types.uint8 and buf.layout == "C"
            and isinstance(p, types.Integer)):
        return None
    signature = types.uint64(buf, p)

    def codegen(context, builder, sig, args):
        array = context.make_array(sig.args[0])(context, builder, args[0])
        index = context.cast(builder, args[1], sig.args[1], types.intp)
        address = builder.bitcast(builder.gep(array.data, [index]), ir.IntType(64).as_pointer())
        return builder.load(address, align=1)

    return signature, codegen
