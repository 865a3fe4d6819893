"""SHA-256 and SHA-1 from the interpreter's own modules where it has them, else hashlib.

hashlib loads OpenSSL's libcrypto on import: 3.4 MiB of a score's resident memory and 3 ms of its start, for digests
of a few names and of the kernels' modules (a few hundred KB; the interpreter's own SHA-256 takes about 2 ms for one).
The truth file's own hash is xxhash's (scorer.truth.cache)."""

try:
    from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12 and later
except ImportError:  # pragma: no cover - the module's name by Python version
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
    except ImportError:
        from hashlib import sha256
try:
    from _sha1 import sha1  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import sha1

__all__ = ["sha1", "sha256"]
