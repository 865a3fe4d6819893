"""load8: eight bytes of a uint8 array as one little-endian uint64, in one unaligned machine load; nondigit_mask64 and
newline_mask64: the digit test and the newline test of 64 bytes, each one vector compare.

Built from eight byte reads, numba keeps eight loads, each with its negative-index check; this
intrinsic is one `load i64, align 1` with no check at all. Callers guarantee that
buf[p:p + 8] is inside the array (the buffers carry SLACK readable bytes after their data).
"""

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


def _bytes_and_index(buf, p) -> bool:
    """Typing: a C-contiguous uint8 array and an integer position (what both intrinsics take)."""
    return (isinstance(buf, types.Array) and buf.ndim == 1 and buf.dtype == types.uint8 and buf.layout == "C"
            and isinstance(p, types.Integer))


def _address(context, builder, sig, args, pointee):
    """The address of buf[p] (args: buf, p) as a pointer to `pointee`: no bounds or negative-index check."""
    array = context.make_array(sig.args[0])(context, builder, args[0])
    index = context.cast(builder, args[1], sig.args[1], types.intp)
    return builder.bitcast(builder.gep(array.data, [index]), pointee.as_pointer())


BYTES64 = ir.VectorType(ir.IntType(8), 64)


def _bytes64(context, builder, sig, args):
    """buf[p:p + 64] (args: buf, p) as one <64 x i8> vector load (the two masks' input)."""
    return builder.load(_address(context, builder, sig, args, BYTES64), align=1)


@intrinsic
def load8(typingctx, buf, p):
    if not _bytes_and_index(buf, p):
        return None

    def codegen(context, builder, sig, args):
        return builder.load(_address(context, builder, sig, args, ir.IntType(64)), align=1)

    return types.uint64(buf, p), codegen


@intrinsic
def nondigit_mask64(typingctx, buf, p):
    """A bit per byte of buf[p:p + 64], set where the byte is no ASCII digit (bytes of 0x80 and above included): one
    64-byte vector load and compare, which LLVM lowers to the target's vector instructions (a compare into a mask
    register on AVX-512, compares and byte masks on AVX2 or SSE2). Callers guarantee that buf[p:p + 64] is inside the
    array. valgrind runs no AVX-512: bench_stages counts instructions on an AVX2 build."""
    if not _bytes_and_index(buf, p):
        return None

    def codegen(context, builder, sig, args):
        values = builder.sub(_bytes64(context, builder, sig, args), ir.Constant(BYTES64, [48] * 64))  # digits become 0-9
        return builder.bitcast(builder.icmp_unsigned(">", values, ir.Constant(BYTES64, [9] * 64)), ir.IntType(64))

    return types.uint64(buf, p), codegen


@intrinsic
def newline_mask64(typingctx, buf, p):
    """A bit per byte of buf[p:p + 64], set where the byte is a newline: one 64-byte vector load and compare, as
    nondigit_mask64. Callers guarantee that buf[p:p + 64] is inside the array."""
    if not _bytes_and_index(buf, p):
        return None

    def codegen(context, builder, sig, args):
        newlines = builder.icmp_unsigned("==", _bytes64(context, builder, sig, args), ir.Constant(BYTES64, [10] * 64))
        return builder.bitcast(newlines, ir.IntType(64))

    return types.uint64(buf, p), codegen
