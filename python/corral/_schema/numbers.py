"""Exact regular expressions for JSON numbers in a range or a multiple of a step.

Everything works on digit strings, never on floats, so bounds such as ``1e308`` or
``0.1`` are exact. Bounded numbers are written without an exponent (``12.5``, not
``1.25e1``), which is how a generator writes them; unbounded ones may use one.
"""

from __future__ import annotations

from decimal import Decimal

# Canonical JSON number syntax (RFC 8259), with and without an exponent.
NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
PLAIN_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
UINT = r"(?:0|[1-9][0-9]*)"
INTEGER = r"-?" + UINT


def _round_trip_plain_floats() -> str:
    """Fixed-notation floats as ``repr(float)`` writes them (1e-4 <= |x| < 1e16, and 0.0),
    with at most 15 significant digits (DBL_DIG): the double nearest such a decimal has it
    as its shortest repr, so ``json.dumps(json.loads(s)) == s``."""
    # x >= 1, integral: up to 16 integer digits, at most 15 of them significant.
    integral = r"[1-9](?:[0-9]{0,14}|[0-9]{14}0)\.0"
    # x >= 1 with a fraction ending in a nonzero digit: n integer digits, 15 - n more.
    fractional = "|".join(f"[1-9][0-9]{{{n - 1}}}\\.[0-9]{{0,{14 - n}}}[1-9]" for n in range(1, 15))
    # 1e-4 <= x < 1: up to three zeros, then at most 15 digits from a nonzero to a nonzero.
    small = r"0\.0{0,3}[1-9](?:[0-9]{0,13}[1-9])?"
    return rf"-?(?:0\.0|{integral}|{fractional}|{small})"


# Numbers exactly as json.dumps (Python's int and repr(float)) writes the value json.loads
# reads from them, restricted to spellings proven to round-trip: integers (no ``-0``),
# and floats of at most 15 significant digits, fixed between 1e-4 and 1e16, otherwise
# ``d.ddde±XX`` (sign always, two digits at least). Exponents stay within -307..307:
# normal doubles, far from overflow, where 15 digits always survive.
CANONICAL_INTEGER = r"(?:0|-?[1-9][0-9]*)"
CANONICAL_PLAIN_FLOAT = _round_trip_plain_floats()
CANONICAL_EXP_FLOAT = (
    r"-?[1-9](?:\.[0-9]{0,13}[1-9])?e(?:-(?:0[5-9]|[1-9][0-9]|[12][0-9]{2}|30[0-7])|\+(?:1[6-9]|[2-9][0-9]|[12][0-9]{2}|30[0-7]))"
)
# Without an exponent: what a bounded number or a multiple (plain decimals) can be.
CANONICAL_PLAIN_NUMBER = f"(?:{CANONICAL_INTEGER}|{CANONICAL_PLAIN_FLOAT})"
CANONICAL_NUMBER = f"(?:{CANONICAL_INTEGER}|{CANONICAL_PLAIN_FLOAT}|{CANONICAL_EXP_FLOAT})"
# Canonical floats that are integers: a positive exponent with at most 15 digits.
CANONICAL_EXP_INTEGRAL = r"-?[1-9](?:\.[0-9]+)?e\+[0-9]+"


def _digit_class(lo: int, hi: int) -> str:
    if lo > hi:
        return ""
    if lo == hi:
        return str(lo)
    if (lo, hi) == (0, 9):
        return "[0-9]"
    return f"[{lo}-{hi}]"


def _alt(parts: list[str]) -> str:
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


def _digits(n: int) -> str:
    return "" if n == 0 else ("[0-9]" if n == 1 else f"[0-9]{{{n}}}")


def _suffix_ge(s: str) -> str | None:
    """Digit strings of length len(s) that are >= s."""
    if not s:
        return ""
    d = int(s[0])
    rest = _suffix_ge(s[1:])
    parts = [s[0] + rest]
    if d < 9:
        parts.append(_digit_class(d + 1, 9) + _digits(len(s) - 1))
    return _alt(parts)


def _suffix_le(s: str) -> str | None:
    """Digit strings of length len(s) that are <= s."""
    if not s:
        return ""
    d = int(s[0])
    parts = [s[0] + _suffix_le(s[1:])]
    if d > 0:
        parts.append(_digit_class(0, d - 1) + _digits(len(s) - 1))
    return _alt(parts)


def _same_length(lo: str, hi: str) -> str | None:
    """Digit strings of one length between lo and hi (inclusive), lo <= hi."""
    if not lo:
        return ""
    if lo[0] == hi[0]:
        return lo[0] + _same_length(lo[1:], hi[1:])
    a, b = int(lo[0]), int(hi[0])
    if set(lo[1:]) <= {"0"} and set(hi[1:]) <= {"9"}:
        return _digit_class(a, b) + _digits(len(lo) - 1)
    parts = [lo[0] + _suffix_ge(lo[1:])]
    if b - a >= 2:
        parts.append(_digit_class(a + 1, b - 1) + _digits(len(lo) - 1))
    parts.append(hi[0] + _suffix_le(hi[1:]))
    return _alt(parts)


def uint_range(lo: int, hi: int | None) -> str | None:
    """Canonical non-negative integers (no leading zeros) in [lo, hi]; hi=None: no bound.

    None when the range is empty.
    """
    lo = max(lo, 0)
    if hi is not None and hi < lo:
        return None
    parts = []
    if lo == 0:
        parts.append("0")
        lo = 1
        if hi is not None and hi < lo:
            return "0"
    low_len = len(str(lo))
    if hi is None:
        parts.append(_same_length(str(lo), "9" * low_len))
        parts.append(f"[1-9][0-9]{{{low_len},}}")  # every longer number
    else:
        high_len = len(str(hi))
        for n in range(low_len, high_len + 1):
            a = str(lo) if n == low_len else "1" + "0" * (n - 1)
            b = str(hi) if n == high_len else "9" * n
            parts.append(_same_length(a, b))
    return _alt(parts)


def int_range(lo: int | None, hi: int | None) -> str | None:
    """Canonical integers (no ``-0``) in [lo, hi] (None: unbounded); None if empty."""
    if lo is not None and hi is not None and lo > hi:
        return None
    parts = []
    # negatives: -hi' .. -lo' with magnitudes
    if lo is None or lo < 0:
        mag_lo = 1 if hi is None or hi >= 0 else -hi
        mag_hi = None if lo is None else -lo
        r = uint_range(mag_lo, mag_hi)
        if r is not None:
            parts.append("-" + r)
    if hi is None or hi >= 0:
        r = uint_range(max(lo or 0, 0), hi)
        if r is not None:
            parts.append(r)
    return _alt(parts)


# --- decimals --------------------------------------------------------------------------


def _split(d: Decimal) -> tuple[str, str]:
    """(integer digits, fraction digits without trailing zeros) of |d|."""
    t = format(d.copy_abs(), "f")  # abs() would round to the context's 28 digits
    if "." in t:
        i, f = t.split(".")
        f = f.rstrip("0")
    else:
        i, f = t, ""
    return str(int(i)), f


def _frac_ge(b: str, strict: bool) -> str:
    """Fraction digit strings F (nonempty) with 0.F >= 0.b (or >)."""
    if not b:
        return "[0-9]*[1-9][0-9]*" if strict else "[0-9]+"
    d = int(b[0])
    tail = _frac_ge(b[1:], strict) if len(b) > 1 else ("[0-9]*[1-9][0-9]*" if strict else "[0-9]*")
    parts = [b[0] + tail]
    if d < 9:
        parts.append(_digit_class(d + 1, 9) + "[0-9]*")
    return _alt(parts)


def _frac_le(b: str, strict: bool) -> str | None:
    """Fraction digit strings F (nonempty) with 0.F <= 0.b (or <); None if there are none."""
    if not b:
        return None if strict else "0+"
    d = int(b[0])
    parts = []
    if d > 0:
        parts.append(_digit_class(0, d - 1) + "[0-9]*")
    # F starts with b[0]: stopping there is below b if b goes on; else compare the rest.
    rest = _frac_le(b[1:], strict)
    can_stop = len(b) > 1 or not strict
    if rest is not None and can_stop:
        parts.append(b[0] + "(?:" + rest + ")?")
    elif rest is not None:
        parts.append(b[0] + rest)
    elif can_stop:
        parts.append(b[0])
    return _alt(parts)


def _abs_ge(a: Decimal, strict: bool) -> str | None:
    """Unsigned plain decimals x with x >= |a| (x > |a| if strict)."""
    i, f = _split(a)
    big = uint_range(int(i) + 1, None)
    parts = [big + r"(?:\.[0-9]+)?"]
    frac = _frac_ge(f, strict)
    if f:
        parts.append(i + r"\." + frac)
    else:
        parts.append(i + (r"\." + frac if strict else r"(?:\." + frac + ")?"))
    return _alt(parts)


def _abs_le(b: Decimal, strict: bool) -> str | None:
    """Unsigned plain decimals x with x <= |b| (x < |b| if strict)."""
    i, f = _split(b)
    parts = []
    if int(i) > 0:
        parts.append(uint_range(0, int(i) - 1) + r"(?:\.[0-9]+)?")
    frac = _frac_le(f, strict)
    if f:
        # No fraction (x = i) is below i.f; a fraction must be <= f.
        parts.append(i + (r"(?:\." + frac + ")?" if frac else ""))
    elif not strict:
        parts.append(i + r"(?:\.0+)?")
    return _alt(parts)


def decimal_ge(a: Decimal, strict: bool) -> str:
    """Plain JSON numbers x >= a (x > a if strict)."""
    if a >= 0:
        return _abs_ge(a, strict) if a > 0 or strict else r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
    # All non-negative numbers, and negatives with |x| <= |a|.
    neg = _abs_le(a, strict)
    return _alt([r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?", "-" + neg if neg else None])


def decimal_le(b: Decimal, strict: bool) -> str | None:
    """Plain JSON numbers x <= b (x < b if strict)."""
    if b < 0 or (b == 0 and strict):
        return "-" + _abs_ge(b, strict)
    # Negative zero spellings are included: 0 <= b here.
    return _alt([_abs_le(b, strict), r"-(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"])


# --- multiples -------------------------------------------------------------------------


def _digits_class(ds: list[int]) -> str:
    if len(ds) == 1:
        return str(ds[0])
    if ds == list(range(ds[0], ds[-1] + 1)):
        return f"[{ds[0]}-{ds[-1]}]"
    return "[" + "".join(map(str, ds)) + "]"


def canonical_forms(value) -> str:
    """Regex of the plain spellings of one number value (``3``, ``3.0``, ``3.50``...)."""
    d = Decimal(str(value)) if not isinstance(value, Decimal) else value
    i, f = _split(d)
    sign = "-" if d < 0 else ""
    if d == 0:
        return r"-?0(?:\.0+)?"
    if f:
        return sign + i + r"\." + f + "0*"
    return sign + i + r"(?:\.0+)?"


def multiple_dfa(step: Decimal, max_states: int):
    """The residue automaton of ``multipleOf: step`` over the characters ``-0-9.``: it
    accepts the plain decimals (as other terms spell them) whose value is an integer
    multiple of ``step`` (> 0). None when it would need more than ``max_states`` states.

    With step = m·10⁻ᵉ, x is a multiple iff the integer formed by x's integer digits and
    its first e fraction digits is divisible by m and every later fraction digit is 0.
    The state is that integer's residue mod m and how many fraction digits were read.
    """
    from .regular import DFA

    _, digits, exp = step.normalize().as_tuple()
    m = int("".join(map(str, digits)))
    e = -exp if exp < 0 else 0
    if exp > 0:
        m *= 10**exp
    if m * (e + 2) + 2 > max_states:
        return None
    # States: ("i", r) in the integer part; ("f", k, r) after k < e fraction digits;
    # "z" after e fraction digits with residue 0 (then only zeros may follow).
    ids: dict[object, int] = {}
    moves: list[dict[str, int]] = []

    def sid(key) -> int:
        if key not in ids:
            ids[key] = len(moves)
            moves.append({})
        return ids[key]

    start = sid(("i", 0))
    finals = set()
    todo = [("i", 0)]
    seen = {("i", 0)}
    while todo:
        key = todo.pop()
        here = sid(key)
        out = []
        if key == "z":
            finals.add(here)
            out.append(("0", "z"))
        elif key[0] == "i":
            r = key[1]
            if (r * 10**e) % m == 0:
                finals.add(here)
            if key == ("i", 0):
                out.append(("-", ("i", 0)))  # a sign changes no residue
            out += [(str(d), ("i", (r * 10 + d) % m)) for d in range(10)]
            if e == 0:
                if r == 0:
                    out.append((".", "z"))
            else:
                out.append((".", ("f", 0, r)))
        else:
            _, k, r = key
            if k > 0 and (r * 10 ** (e - k)) % m == 0:
                finals.add(here)
            for d in range(10):
                nr = (r * 10 + d) % m
                if k + 1 < e:
                    out.append((str(d), ("f", k + 1, nr)))
                elif nr == 0:
                    out.append((str(d), "z"))
        for ch, target in out:
            moves[here][ch] = sid(target)
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return DFA(moves, start, finals)
