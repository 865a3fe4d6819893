"""load8: eight bytes of a uint8 array as one little-endian uint64, in one unaligned machine load; nondigit_mask64:
the digit test of 64 bytes as one vector compare.

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


@intrinsic
def nondigit_mask64(typingctx, buf, p):
    """A bit per byte of buf[p:p + 64], set where the byte is no ASCII digit (bytes of 0x80 and above included): one
    64-byte vector load and compare, which LLVM lowers to the target's vector instructions (a compare into a mask
    register on AVX-512, compares and byte masks on AVX2 or SSE2). Callers guarantee that buf[p:p + 64] is inside the
    array. valgrind runs no AVX-512: bench_stages counts instructions on an AVX2 build."""
    if not (isinstance(buf, types.Array) and buf.ndim == 1 and buf.dtype == types.uint8 and buf.layout == "C"
            and isinstance(p, types.Integer)):
        return None
    signature = types.uint64(buf, p)

    def codegen(context, builder, sig, args):
        array = context.make_array(sig.args[0])(context, builder, args[0])
        index = context.cast(builder, args[1], sig.args[1], types.intp)
        vector = ir.VectorType(ir.IntType(8), 64)
        address = builder.bitcast(builder.gep(array.data, [index]), vector.as_pointer())
        values = builder.sub(builder.load(address, align=1), ir.Constant(vector, [48] * 64))  # digits become 0-9
        return builder.bitcast(builder.icmp_unsigned(">", values, ir.Constant(vector, [9] * 64)), ir.IntType(64))

    return signature, codegen
