"""Numba kernels for `scorer prepare`: parse OTTO session JSONL, split by time, cut test sessions, label, format.

Pure functions on numpy arrays; nothing here imports the scorer package. Event types are int8 codes
0 = clicks, 1 = carts, 2 = orders. Sessions are described CSR-style: `starts[s]:starts[s + 1]` are the
events of session s in the flat per-event arrays `aid` (int32), `ts` (int64), `typ` (int8).

Randomness is counter-based: the number of events kept in a test session of n events is
`1 + splitmix64(splitmix64(seed) ^ session) % (n - 1)`, so it depends only on (seed, session id, n)
and never on chunking, ordering or threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from scorer.kernels.hashing import splitmix64
from scorer.kernels.holdout_layout import (
    CARTS,
    CLICKS,
    ERR_BLANK_LINE,
    ERR_DUPLICATE_KEY,
    ERR_MISSING_AID,
    ERR_MISSING_EVENTS,
    ERR_MISSING_SESSION,
    ERR_MISSING_TS,
    ERR_MISSING_TYPE,
    ERR_NEGATIVE,
    ERR_NOT_INTEGER,
    ERR_SYNTAX,
    ERR_TOO_LARGE,
    ERR_TRAILING,
    ERR_TRUNCATED,
    ERR_UNKNOWN_TYPE,
    OK,
    ORDERS,
    ROLE_TEST,
    ROLE_TRAIN,
)

_K_SESSION = tuple(b"session")
_K_EVENTS = tuple(b"events")
_K_AID = tuple(b"aid")
_K_TS = tuple(b"ts")
_K_TYPE = tuple(b"type")
_V_CLICKS = tuple(b"clicks")
_V_CARTS = tuple(b"carts")
_V_ORDERS = tuple(b"orders")

_NL = 10
_SPACE = 32
_TAB = 9
_CR = 13
_QUOTE = 34
_BACKSLASH = 92
_COLON = 58
_COMMA = 44
_LBRACE = 123
_RBRACE = 125
_LBRACKET = 91
_RBRACKET = 93
_MINUS = 45
_ZERO = 48
_NINE = 57
_DOT = 46


# --- the cut ---------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def cut_point(seed_mix, session, n):
    """Events kept of a test session with n >= 2 events: uniform in 1..n-1 (bias below n / 2**64)."""
    h = splitmix64(np.uint64(seed_mix) ^ np.uint64(session))
    return np.int64(1) + np.int64(h % np.uint64(n - 1))


# --- JSONL parsing ---------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _ws(buf, i, n):
    while i < n:
        c = buf[i]
        if c == _SPACE or c == _TAB or c == _CR:
            i += 1
        else:
            break
    return i


@njit(cache=True, nogil=True)
def _string_end(buf, i, n):
    """buf[i] is the opening quote; return the index of the closing quote, or -1 (end of line/input)."""
    i += 1
    while i < n:
        c = buf[i]
        if c == _QUOTE:
            return i
        if c == _BACKSLASH:
            i += 2
            continue
        if c == _NL:
            return -1
        i += 1
    return -1


@njit(cache=True, nogil=True, inline="always")
def _eq(buf, a, b, lit):
    if b - a != len(lit):
        return False
    for k in range(b - a):
        if buf[a + k] != lit[k]:
            return False
    return True


@njit(cache=True, nogil=True)
def _after_member(buf, i, n, close):
    """After a member of an object or array: (index past the `,` or the closing byte, closed?, error code)."""
    i = _ws(buf, i, n)
    if i >= n or buf[i] == _NL:
        return i, False, ERR_TRUNCATED
    if buf[i] == _COMMA:
        return i + 1, False, OK
    if buf[i] == close:
        return i + 1, True, OK
    return i, False, ERR_SYNTAX


@njit(cache=True, nogil=True)
def _skip_value(buf, i, n):
    """Skip any JSON value starting at i (after whitespace); return (next index, error code)."""
    i = _ws(buf, i, n)
    if i >= n or buf[i] == _NL:
        return i, ERR_TRUNCATED
    c = buf[i]
    if c == _QUOTE:
        e = _string_end(buf, i, n)
        if e < 0:
            return i, ERR_TRUNCATED
        return e + 1, OK
    if c == _LBRACE or c == _LBRACKET:
        depth = 0
        while i < n:
            c = buf[i]
            if c == _NL:
                return i, ERR_TRUNCATED
            if c == _QUOTE:
                e = _string_end(buf, i, n)
                if e < 0:
                    return i, ERR_TRUNCATED
                i = e + 1
                continue
            if c == _LBRACE or c == _LBRACKET:
                depth += 1
            elif c == _RBRACE or c == _RBRACKET:
                depth -= 1
                if depth == 0:
                    return i + 1, OK
            i += 1
        return i, ERR_TRUNCATED
    start = i
    while i < n:
        c = buf[i]
        if c == _COMMA or c == _RBRACE or c == _RBRACKET or c == _NL or c == _SPACE or c == _TAB or c == _CR:
            break
        i += 1
    if i == start:
        return i, ERR_SYNTAX
    return i, OK


@njit(cache=True, nogil=True)
def _uint(buf, i, n, limit):
    """Parse a non-negative JSON integer at i; return (value, next index, error code)."""
    i = _ws(buf, i, n)
    if i >= n or buf[i] == _NL:
        return 0, i, ERR_TRUNCATED
    c = buf[i]
    if c == _MINUS:
        return 0, i, ERR_NEGATIVE
    if c < _ZERO or c > _NINE:
        return 0, i, ERR_NOT_INTEGER
    start = i
    v = np.int64(0)
    while i < n:
        c = buf[i]
        if c < _ZERO or c > _NINE:
            break
        if i - start == 18:  # 19 digits may overflow int64; no id or timestamp here needs them
            return 0, start, ERR_TOO_LARGE
        v = v * 10 + np.int64(c - _ZERO)
        i += 1
    if v > limit:
        return 0, start, ERR_TOO_LARGE
    if i < n:
        c = buf[i]
        if c == _DOT or c == 101 or c == 69:  # '.', 'e', 'E'
            return 0, start, ERR_NOT_INTEGER
    return v, i, OK


@njit(cache=True, nogil=True)
def _event(buf, i, n, max_id):
    """Parse one event object at i ('{' expected); return (aid, ts, type, next index, error, error pos)."""
    aid = np.int64(-1)
    ts = np.int64(-1)
    typ = np.int64(-1)
    i = _ws(buf, i, n)
    if i >= n or buf[i] == _NL:
        return aid, ts, typ, i, ERR_TRUNCATED, i
    if buf[i] != _LBRACE:
        return aid, ts, typ, i, ERR_SYNTAX, i
    obj = i
    i = _ws(buf, i + 1, n)
    if i < n and buf[i] == _RBRACE:
        return aid, ts, typ, i, ERR_MISSING_AID, obj
    while True:
        i = _ws(buf, i, n)
        if i >= n or buf[i] == _NL:
            return aid, ts, typ, i, ERR_TRUNCATED, i
        if buf[i] != _QUOTE:
            return aid, ts, typ, i, ERR_SYNTAX, i
        ke = _string_end(buf, i, n)
        if ke < 0:
            return aid, ts, typ, i, ERR_TRUNCATED, i
        ks = i + 1
        i = _ws(buf, ke + 1, n)
        if i >= n or buf[i] == _NL:
            return aid, ts, typ, i, ERR_TRUNCATED, i
        if buf[i] != _COLON:
            return aid, ts, typ, i, ERR_SYNTAX, i
        i += 1
        if _eq(buf, ks, ke, _K_AID):
            if aid >= 0:
                return aid, ts, typ, ks, ERR_DUPLICATE_KEY, ks
            v, i, err = _uint(buf, i, n, max_id)
            if err != OK:
                return aid, ts, typ, i, err, i
            aid = v
        elif _eq(buf, ks, ke, _K_TS):
            if ts >= 0:
                return aid, ts, typ, ks, ERR_DUPLICATE_KEY, ks
            v, i, err = _uint(buf, i, n, np.int64(9223372036854775807))
            if err != OK:
                return aid, ts, typ, i, err, i
            ts = v
        elif _eq(buf, ks, ke, _K_TYPE):
            if typ >= 0:
                return aid, ts, typ, ks, ERR_DUPLICATE_KEY, ks
            i = _ws(buf, i, n)
            if i >= n or buf[i] == _NL:
                return aid, ts, typ, i, ERR_TRUNCATED, i
            if buf[i] == _QUOTE:
                ve = _string_end(buf, i, n)
                if ve < 0:
                    return aid, ts, typ, i, ERR_TRUNCATED, i
                if _eq(buf, i + 1, ve, _V_CLICKS):
                    typ = CLICKS
                elif _eq(buf, i + 1, ve, _V_CARTS):
                    typ = CARTS
                elif _eq(buf, i + 1, ve, _V_ORDERS):
                    typ = ORDERS
                else:
                    return aid, ts, typ, i, ERR_UNKNOWN_TYPE, i
                i = ve + 1
            else:
                v, j, err = _uint(buf, i, n, np.int64(2))
                if err != OK:
                    return aid, ts, typ, i, ERR_UNKNOWN_TYPE, i
                typ = v
                i = j
        else:
            i, err = _skip_value(buf, i, n)
            if err != OK:
                return aid, ts, typ, i, err, i
        i, closed, err = _after_member(buf, i, n, _RBRACE)
        if err != OK:
            return aid, ts, typ, i, err, i
        if closed:
            break
    if aid < 0:
        return aid, ts, typ, i, ERR_MISSING_AID, obj
    if ts < 0:
        return aid, ts, typ, i, ERR_MISSING_TS, obj
    if typ < 0:
        return aid, ts, typ, i, ERR_MISSING_TYPE, obj
    return aid, ts, typ, i, OK, i


_F_SESSION = tuple(b'{"session":')
_F_EVENTS = tuple(b'"events":')
_F_AID = tuple(b'{"aid":')
_F_TS = tuple(b'"ts":')
_F_TYPE = tuple(b'"type":')
_F_CLICKS = tuple(b'clicks"}')
_F_CARTS = tuple(b'carts"}')
_F_ORDERS = tuple(b'orders"}')


@njit(cache=True, nogil=True, inline="always")
def _lit(buf, i, n, lit, space_after):
    """Index after the literal lit at i (and one optional space after it, if space_after), or -1."""
    m = len(lit)
    if i < 0 or i + m > n:
        return -1
    for k in range(m):
        if buf[i + k] != lit[k]:
            return -1
    i += m
    if space_after and i < n and buf[i] == _SPACE:
        i += 1
    return i


@njit(cache=True, nogil=True)
def _sep(buf, i, n, c):
    """Index after the byte c at i and one optional space, or -1."""
    if i < 0 or i >= n or buf[i] != c:
        return -1
    i += 1
    if i < n and buf[i] == _SPACE:
        i += 1
    return i


@njit(cache=True, nogil=True)
def _digits(buf, i, n, limit):
    """(value, index after) of 1..18 digits at i, at most limit; index -1 otherwise."""
    if i < 0:
        return np.int64(0), -1
    start = i
    v = np.int64(0)
    while i < n:
        c = buf[i]
        if c < _ZERO or c > _NINE:
            break
        v = v * 10 + np.int64(c - _ZERO)
        i += 1
        if i - start > 18:
            return np.int64(0), -1
    if i == start or v > limit:
        return np.int64(0), -1
    return v, i


@njit(cache=True, nogil=True)
def _fast_line(buf, i, n, aid, ts, typ, ne, max_id):
    """The common shape of a line, fast: keys in OTTO's order, ", " or "," and ": " or ":" between tokens, at
    least one event. Returns (session, index after the line's newline, events end), or index -1 when the line
    is anything else (the general parser then reads it again and names any problem)."""
    i = _lit(buf, i, n, _F_SESSION, True)
    session, i = _digits(buf, i, n, max_id)
    i = _sep(buf, i, n, _COMMA)
    i = _lit(buf, i, n, _F_EVENTS, True)
    if i < 0 or i >= n or buf[i] != _LBRACKET:
        return session, -1, ne
    i += 1
    e = ne
    while True:
        i = _lit(buf, i, n, _F_AID, True)
        a, i = _digits(buf, i, n, max_id)
        i = _sep(buf, i, n, _COMMA)
        i = _lit(buf, i, n, _F_TS, True)
        t, i = _digits(buf, i, n, np.int64(999999999999999999))
        i = _sep(buf, i, n, _COMMA)
        i = _lit(buf, i, n, _F_TYPE, True)
        if i < 0 or i + 1 >= n or buf[i] != _QUOTE:
            return session, -1, ne
        i += 1
        c = buf[i]
        if c == 99:  # 'c'
            if buf[i + 1] == 108:  # 'l'
                i = _lit(buf, i, n, _F_CLICKS, False)
                y = CLICKS
            else:
                i = _lit(buf, i, n, _F_CARTS, False)
                y = CARTS
        else:
            i = _lit(buf, i, n, _F_ORDERS, False)
            y = ORDERS
        if i < 0 or i >= n:
            return session, -1, ne
        aid[e] = a
        ts[e] = t
        typ[e] = y
        e += 1
        c = buf[i]
        if c == _COMMA:
            i += 1
            if i < n and buf[i] == _SPACE:
                i += 1
            continue
        if c == _RBRACKET:
            i += 1
            break
        return session, -1, ne
    if i >= n or buf[i] != _RBRACE:
        return session, -1, ne
    i += 1
    if i < n:
        if buf[i] != _NL:
            return session, -1, ne
        i += 1
    return session, i, e


@njit(cache=True, nogil=True)
def parse_jsonl(buf, sess, offs, aid, ts, typ, max_id):
    """Parse complete OTTO session lines in buf (the last one may lack its newline).

    Fills sess[j] (session id of line j), offs[j] (index of its first event; offs[n_sessions] = n_events)
    and the per-event aid/ts/typ. Arrays must be large enough: one session per line (+1 for offs), and
    len(buf) // 24 + 1 events (the smallest event, `{"aid":0,"ts":0,"type":0}`, takes 25 bytes).
    Returns (n_sessions, n_events, error code, byte position of the error).
    """
    n = buf.shape[0]
    i = np.int64(0)
    ns = np.int64(0)
    ne = np.int64(0)
    while i < n:
        if buf[i] == _LBRACE:
            session, j, e = _fast_line(buf, i, n, aid, ts, typ, ne, max_id)
            if j >= 0:
                offs[ns] = ne
                sess[ns] = session
                ns += 1
                ne = e
                i = j
                continue
        line = i
        i = _ws(buf, i, n)
        if i >= n:
            if i > line:
                return ns, ne, ERR_BLANK_LINE, line
            break
        if buf[i] == _NL:
            return ns, ne, ERR_BLANK_LINE, line
        if buf[i] != _LBRACE:
            return ns, ne, ERR_SYNTAX, i
        obj = i
        i += 1
        session = np.int64(-1)
        have_events = False
        offs[ns] = ne
        first = True
        while True:
            i = _ws(buf, i, n)
            if i >= n or buf[i] == _NL:
                return ns, ne, ERR_TRUNCATED, i
            if first and buf[i] == _RBRACE:
                break
            first = False
            if buf[i] != _QUOTE:
                return ns, ne, ERR_SYNTAX, i
            ke = _string_end(buf, i, n)
            if ke < 0:
                return ns, ne, ERR_TRUNCATED, i
            ks = i + 1
            i = _ws(buf, ke + 1, n)
            if i >= n or buf[i] == _NL:
                return ns, ne, ERR_TRUNCATED, i
            if buf[i] != _COLON:
                return ns, ne, ERR_SYNTAX, i
            i += 1
            if _eq(buf, ks, ke, _K_SESSION):
                if session >= 0:
                    return ns, ne, ERR_DUPLICATE_KEY, ks
                v, i, err = _uint(buf, i, n, max_id)
                if err != OK:
                    return ns, ne, err, i
                session = v
            elif _eq(buf, ks, ke, _K_EVENTS):
                if have_events:
                    return ns, ne, ERR_DUPLICATE_KEY, ks
                have_events = True
                i = _ws(buf, i, n)
                if i >= n or buf[i] == _NL:
                    return ns, ne, ERR_TRUNCATED, i
                if buf[i] != _LBRACKET:
                    return ns, ne, ERR_SYNTAX, i
                i = _ws(buf, i + 1, n)
                if i < n and buf[i] == _RBRACKET:
                    i += 1
                else:
                    while True:
                        a, t, y, i, err, pos = _event(buf, i, n, max_id)
                        if err != OK:
                            return ns, ne, err, pos
                        aid[ne] = a
                        ts[ne] = t
                        typ[ne] = y
                        ne += 1
                        i, closed, err = _after_member(buf, i, n, _RBRACKET)
                        if err != OK:
                            return ns, ne, err, i
                        if closed:
                            break
            else:
                i, err = _skip_value(buf, i, n)
                if err != OK:
                    return ns, ne, err, i
            i, closed, err = _after_member(buf, i, n, _RBRACE)
            if err != OK:
                return ns, ne, err, i
            if closed:
                break
        if session < 0:
            return ns, ne, ERR_MISSING_SESSION, obj
        if not have_events:
            return ns, ne, ERR_MISSING_EVENTS, obj
        i = _ws(buf, i, n)
        if i < n:
            if buf[i] != _NL:
                return ns, ne, ERR_TRAILING, i
            i += 1
        sess[ns] = session
        ns += 1
    offs[ns] = ne
    return ns, ne, OK, n


# --- session structure -----------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def run_starts(session):
    """Boundaries of runs of equal session ids: returns (run session ids, starts with a final n)."""
    n = session.shape[0]
    runs = 0
    for i in range(n):
        if i == 0 or session[i] != session[i - 1]:
            runs += 1
    ids = np.empty(runs, dtype=np.int64)
    starts = np.empty(runs + 1, dtype=np.int64)
    r = 0
    for i in range(n):
        if i == 0 or session[i] != session[i - 1]:
            ids[r] = session[i]
            starts[r] = i
            r += 1
    starts[runs] = n
    return ids, starts


@njit(cache=True, nogil=True)
def copy_checked(values, out, offset, limit):
    """out[offset + i] = values[i]; return the first i with a value outside 0..limit, or -1 (then stop)."""
    for i in range(values.shape[0]):
        v = values[i]
        if v < 0 or v > limit:
            return i
        out[offset + i] = v
    return -1


@njit(cache=True, nogil=True)
def unordered_sessions(ts, starts):
    """Per session, 1 if some event has a smaller ts than the one before it."""
    ns = starts.shape[0] - 1
    bad = np.zeros(ns, dtype=np.uint8)
    for s in range(ns):
        for i in range(starts[s] + 1, starts[s + 1]):
            if ts[i] < ts[i - 1]:
                bad[s] = 1
                break
    return bad


@njit(cache=True, nogil=True)
def sort_sessions_by_time(ts, aid, typ, starts, bad):
    """Stable sort by ts of the events of every session flagged in bad (in place)."""
    for s in range(starts.shape[0] - 1):
        if bad[s] == 0:
            continue
        a = starts[s]
        b = starts[s + 1]
        order = np.argsort(ts[a:b], kind="mergesort")
        t2 = ts[a:b].copy()
        a2 = aid[a:b].copy()
        y2 = typ[a:b].copy()
        for k in range(b - a):
            ts[a + k] = t2[order[k]]
            aid[a + k] = a2[order[k]]
            typ[a + k] = y2[order[k]]


@njit(cache=True, nogil=True)
def max_ts_of(ts):
    m = np.int64(-1)
    for i in range(ts.shape[0]):
        if ts[i] > m:
            m = ts[i]
    return m


# --- the split -------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def split_roles(ts, starts, split_ts):
    """Sessions (events sorted by time) whose first event is after split_ts are test (all events kept);
    the others keep their events with ts < split_ts and are train if at least two remain, else dropped.
    Returns (role int8 per session, events kept per session)."""
    ns = starts.shape[0] - 1
    role = np.zeros(ns, dtype=np.int8)
    keep = np.zeros(ns, dtype=np.int64)
    for s in range(ns):
        a = starts[s]
        b = starts[s + 1]
        if b == a:
            continue
        if ts[a] > split_ts:
            role[s] = ROLE_TEST
            keep[s] = b - a
        else:
            k = a
            while k < b and ts[k] < split_ts:
                k += 1
            if k - a >= 2:
                role[s] = ROLE_TRAIN
                keep[s] = k - a
    return role, keep


@njit(cache=True, nogil=True)
def train_item_bitmap(aid, starts, role, keep, max_aid):
    """Bitmap (uint8, bit aid & 7 of byte aid >> 3) of the items in the kept training events."""
    bits = np.zeros((max_aid >> 3) + 1, dtype=np.uint8)
    for s in range(starts.shape[0] - 1):
        if role[s] != ROLE_TRAIN:
            continue
        a = starts[s]
        for i in range(a, a + keep[s]):
            x = aid[i]
            bits[x >> 3] |= np.uint8(1) << np.uint8(x & 7)
    return bits


@njit(cache=True, nogil=True)
def filter_test(sess_ids, aid, ts, typ, starts, role, bits):
    """Test sessions without events on items unknown to training; those left with < 2 events dropped.
    Returns (test session ids, starts, aid, ts, typ, number of events removed, sessions dropped)."""
    ns = starts.shape[0] - 1
    counts = np.zeros(ns, dtype=np.int64)
    n_sessions = 0
    n_events = 0
    removed = 0
    dropped = 0
    for s in range(ns):
        if role[s] != ROLE_TEST:
            continue
        c = 0
        for i in range(starts[s], starts[s + 1]):
            x = aid[i]
            if (bits[x >> 3] >> np.uint8(x & 7)) & np.uint8(1):
                c += 1
        removed += starts[s + 1] - starts[s] - c
        if c >= 2:
            counts[s] = c
            n_sessions += 1
            n_events += c
        else:
            dropped += 1
    t_sess = np.empty(n_sessions, dtype=np.int64)
    t_starts = np.empty(n_sessions + 1, dtype=np.int64)
    t_aid = np.empty(n_events, dtype=aid.dtype)
    t_ts = np.empty(n_events, dtype=ts.dtype)
    t_typ = np.empty(n_events, dtype=typ.dtype)
    j = 0
    e = 0
    for s in range(ns):
        if counts[s] == 0:
            continue
        t_sess[j] = sess_ids[s]
        t_starts[j] = e
        for i in range(starts[s], starts[s + 1]):
            x = aid[i]
            if (bits[x >> 3] >> np.uint8(x & 7)) & np.uint8(1):
                t_aid[e] = x
                t_ts[e] = ts[i]
                t_typ[e] = typ[i]
                e += 1
        j += 1
    t_starts[n_sessions] = e
    return t_sess, t_starts, t_aid, t_ts, t_typ, removed, dropped


@njit(cache=True, nogil=True)
def cut_points(sess_ids, starts, seed_mix):
    """Events kept of every test session (each has >= 2 events)."""
    ns = sess_ids.shape[0]
    kept = np.empty(ns, dtype=np.int64)
    for s in range(ns):
        kept[s] = cut_point(seed_mix, sess_ids[s], starts[s + 1] - starts[s])
    return kept


@njit(cache=True, nogil=True)
def labels_after_cut(starts, kept, aid, typ):
    """Labels from each session's events after its cut: clicks = the first later click, carts and orders =
    the sorted distinct later carts / orders. Returns CSR (label_starts per session, label type, label aid),
    in the order clicks, carts ascending, orders ascending within a session."""
    ns = starts.shape[0] - 1
    total = 0
    for s in range(ns):
        total += starts[s + 1] - starts[s] - kept[s]
    l_starts = np.empty(ns + 1, dtype=np.int64)
    l_type = np.empty(total, dtype=np.int8)
    l_aid = np.empty(total, dtype=np.int64)
    o = 0
    for s in range(ns):
        l_starts[s] = o
        a = starts[s] + kept[s]
        b = starts[s + 1]
        for i in range(a, b):
            if typ[i] == CLICKS:
                l_type[o] = CLICKS
                l_aid[o] = aid[i]
                o += 1
                break
        for t in (CARTS, ORDERS):
            c = 0
            for i in range(a, b):
                if typ[i] == t:
                    c += 1
            if c == 0:
                continue
            items = np.empty(c, dtype=np.int64)
            c = 0
            for i in range(a, b):
                if typ[i] == t:
                    items[c] = aid[i]
                    c += 1
            items.sort()
            for k in range(c):
                if k == 0 or items[k] != items[k - 1]:
                    l_type[o] = t
                    l_aid[o] = items[k]
                    o += 1
    l_starts[ns] = o
    return l_starts, l_type[:o].copy(), l_aid[:o].copy()


# --- output --------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def gather_events(starts, sel, lens, aid, ts, typ, out_sess, out_aid, out_ts, out_typ, sess_ids):
    """Copy the first lens[j] events of session sel[j] for every j, one event per row."""
    o = 0
    for j in range(sel.shape[0]):
        s = sel[j]
        a = starts[s]
        for i in range(a, a + lens[j]):
            out_sess[o] = sess_ids[s]
            out_aid[o] = aid[i]
            out_ts[o] = ts[i]
            out_typ[o] = typ[i]
            o += 1
    return o


@njit(cache=True, nogil=True, inline="always")
def _put(out, o, lit):
    for k in range(len(lit)):
        out[o + k] = lit[k]
    return o + len(lit)


@njit(cache=True, nogil=True)
def _put_int(out, o, v):
    if v == 0:
        out[o] = _ZERO
        return o + 1
    if v < 0:
        out[o] = _MINUS
        o += 1
        v = -v
    n = 0
    x = v
    while x > 0:
        n += 1
        x //= 10
    k = o + n - 1
    while v > 0:
        out[k] = np.uint8(_ZERO + v % 10)
        v //= 10
        k -= 1
    return o + n


_S_SESSION = tuple(b'{"session": ')
_S_EVENTS = tuple(b', "events": [')
_S_AID = tuple(b'{"aid": ')
_S_TS = tuple(b', "ts": ')
_S_TYPE = tuple(b', "type": "')
_S_SEP = tuple(b", ")
_S_EVENT_END = tuple(b'"}')
_S_LINE_END = tuple(b"]}\n")
_S_LABELS = tuple(b', "labels": {')
_S_L_CLICKS = tuple(b'"clicks": ')
_S_L_CARTS = tuple(b'"carts": [')
_S_L_ORDERS = tuple(b'"orders": [')
_S_LABELS_END = tuple(b"}}\n")


@njit(cache=True, nogil=True)
def format_sessions(starts, sel, lens, sess_ids, aid, ts, typ, out):
    """OTTO session lines (json.dumps spacing) for the first lens[j] events of session sel[j]; returns bytes used."""
    o = 0
    for j in range(sel.shape[0]):
        s = sel[j]
        o = _put(out, o, _S_SESSION)
        o = _put_int(out, o, np.int64(sess_ids[s]))
        o = _put(out, o, _S_EVENTS)
        a = starts[s]
        for i in range(a, a + lens[j]):
            if i > a:
                o = _put(out, o, _S_SEP)
            o = _put(out, o, _S_AID)
            o = _put_int(out, o, np.int64(aid[i]))
            o = _put(out, o, _S_TS)
            o = _put_int(out, o, np.int64(ts[i]))
            o = _put(out, o, _S_TYPE)
            t = typ[i]
            if t == CLICKS:
                o = _put(out, o, _V_CLICKS)
            elif t == CARTS:
                o = _put(out, o, _V_CARTS)
            else:
                o = _put(out, o, _V_ORDERS)
            o = _put(out, o, _S_EVENT_END)
        o = _put(out, o, _S_LINE_END)
    return o


@njit(cache=True, nogil=True)
def format_labels(s0, s1, sess_ids, l_starts, l_type, l_aid, out):
    """OTTO test_labels lines for sessions s0..s1-1; absent keys for types without a label."""
    o = 0
    for s in range(s0, s1):
        o = _put(out, o, _S_SESSION)
        o = _put_int(out, o, np.int64(sess_ids[s]))
        o = _put(out, o, _S_LABELS)
        fields = 0
        prev = -1
        for k in range(l_starts[s], l_starts[s + 1]):
            t = l_type[k]
            if t != prev:
                if prev == CARTS or prev == ORDERS:
                    out[o] = _RBRACKET
                    o += 1
                if fields > 0:
                    o = _put(out, o, _S_SEP)
                fields += 1
                if t == CLICKS:
                    o = _put(out, o, _S_L_CLICKS)
                elif t == CARTS:
                    o = _put(out, o, _S_L_CARTS)
                else:
                    o = _put(out, o, _S_L_ORDERS)
                prev = t
            else:
                o = _put(out, o, _S_SEP)
            o = _put_int(out, o, l_aid[k])
        if prev == CARTS or prev == ORDERS:
            out[o] = _RBRACKET
            o += 1
        o = _put(out, o, _S_LABELS_END)
    return o
