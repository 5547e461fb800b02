"""ECMAScript regular expressions (JSON Schema's ``pattern``) as a small AST over code points.

The AST renders two ways: as a Python ``re`` pattern over the decoded value (to check a
concrete string, e.g. an ``enum`` member), and as a pattern over the value's *JSON encoding*
(what the model writes between the quotes). The encoding is the canonical one that
``json.dumps(..., ensure_ascii=False)`` produces: characters appear raw except ``"`` and
``\\`` and the C0 controls, which have exactly one escape each. One encoding per string is
what keeps ``minLength``/``maxLength`` exact: a character is one encoded unit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

MAX_CODE_POINT = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)

Ranges = tuple[tuple[int, int], ...]


def normalize(ranges) -> Ranges:
    """Sorted, merged, surrogate-free code-point ranges."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        # Surrogates are not characters of a UTF-8 string: cut them out.
        pieces = [(lo, hi)]
        if lo <= _SURROGATES[1] and hi >= _SURROGATES[0]:
            pieces = [(lo, _SURROGATES[0] - 1), (_SURROGATES[1] + 1, hi)]
        for a, b in pieces:
            if a > b:
                continue
            if out and a <= out[-1][1] + 1:
                out[-1][1] = max(out[-1][1], b)
            else:
                out.append([a, b])
    return tuple((a, b) for a, b in out)


@functools.lru_cache(maxsize=4096)  # pure, and called with the same classes again and again
def complement(ranges: Ranges) -> Ranges:
    """All characters not in ``ranges``."""
    out = []
    prev = 0
    for lo, hi in ranges:
        if lo > prev:
            out.append((prev, lo - 1))
        prev = hi + 1
    if prev <= MAX_CODE_POINT:
        out.append((prev, MAX_CODE_POINT))
    return normalize(out)


@functools.lru_cache(maxsize=4096)  # pure, and called with the same classes again and again
def intersect(a: Ranges, b: Ranges) -> Ranges:
    """Characters in both."""
    return complement(normalize(complement(a) + complement(b)))


# --- AST -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chars:
    """One character from a set."""

    ranges: Ranges


@dataclass(frozen=True)
class Seq:
    items: tuple


@dataclass(frozen=True)
class Alt:
    items: tuple


@dataclass(frozen=True)
class Repeat:
    item: object
    min: int
    max: int | None


@dataclass(frozen=True)
class Anchor:
    """``^`` (start=True) or ``$``; only allowed at the ends of a top-level branch."""

    start: bool
    position: int


EMPTY = Seq(())
ANY = Chars(normalize([(0, MAX_CODE_POINT)]))


class PatternError(Exception):
    """A pattern that is invalid or uses a feature a regular language cannot express.

    ``unsupported`` tells the two apart; ``position`` is the offset in the pattern.
    """

    def __init__(self, message: str, position: int, unsupported: bool = False):
        super().__init__(message)
        self.message = message
        self.position = position
        self.unsupported = unsupported


# --- ECMAScript character classes ------------------------------------------------------

DIGIT = normalize([(0x30, 0x39)])
WORD = normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
# ECMAScript WhiteSpace and LineTerminator (\s).
SPACE = normalize(
    [(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]
)
LINE_TERMINATORS = normalize([(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)])
DOT = complement(LINE_TERMINATORS)

_CLASS_ESCAPES = {"d": DIGIT, "w": WORD, "s": SPACE}
_CONTROL_ESCAPES = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D}


class _Parser:
    def __init__(self, src: str):
        self.src = src
        self.i = 0

    def error(self, message: str, unsupported: bool = False, position: int | None = None):
        return PatternError(message, self.i if position is None else position, unsupported)

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.src[j] if j < len(self.src) else None

    def parse(self):
        node = self.alternation()
        if self.i < len(self.src):
            raise self.error(f"unbalanced `{self.src[self.i]}`")
        return node

    def alternation(self):
        branches = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else Alt(tuple(branches))

    def sequence(self):
        items = []
        while self.peek() is not None and self.peek() not in "|)":
            atom = self.atom()
            items.append(self.quantified(atom))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def quantified(self, atom):
        while True:
            c = self.peek()
            start = self.i
            if c in ("*", "+", "?"):
                self.i += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{":
                bounds = self.braces()
                if bounds is None:
                    return atom
                lo, hi = bounds
            else:
                return atom
            if isinstance(atom, Anchor):
                raise self.error("a quantifier cannot follow an anchor", position=start)
            if self.peek() == "?":  # lazy: same language
                self.i += 1
            atom = Repeat(atom, lo, hi)

    def braces(self):
        """``{m}``, ``{m,}``, ``{m,n}``; None (a literal brace, as Annex B allows) otherwise."""
        import re as _re

        m = _re.compile(r"\{(\d+)(,(\d*))?\}").match(self.src, self.i)
        if not m:
            return None
        lo = int(m.group(1))
        hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
        if hi is not None and hi < lo:
            raise self.error(f"numbers out of order in quantifier `{m.group(0)}`")
        self.i = m.end()
        return lo, hi

    def atom(self):
        c = self.peek()
        start = self.i
        if c == "(":
            self.i += 1
            if self.src.startswith("?:", self.i):
                self.i += 2
            elif self.src.startswith("?=", self.i) or self.src.startswith("?!", self.i) or self.src.startswith("?<=", self.i) or self.src.startswith("?<!", self.i):
                raise self.error("look-around is not supported (it is not a regular-language construct corral can compile)", True, start)
            elif self.src.startswith("?<", self.i):
                end = self.src.find(">", self.i)
                if end < 0:
                    raise self.error("unterminated group name")
                self.i = end + 1
            elif self.peek() == "?":
                raise self.error("unknown group syntax `(?`", position=start)
            node = self.alternation()
            if self.peek() != ")":
                raise self.error("missing `)`", position=start)
            self.i += 1
            return node
        if c == "[":
            return Chars(self.char_class())
        if c == ".":
            self.i += 1
            return Chars(DOT)
        if c == "^":
            self.i += 1
            return Anchor(True, start)
        if c == "$":
            self.i += 1
            return Anchor(False, start)
        if c == "\\":
            return self.escape(in_class=False)
        if c in "*+?":
            raise self.error(f"nothing to repeat before `{c}`")
        if c == "{" and self.braces_like():
            raise self.error("nothing to repeat before `{`")
        self.i += 1
        return self.literal(ord(c))

    def braces_like(self) -> bool:
        import re as _re

        return bool(_re.compile(r"\{\d+(,\d*)?\}").match(self.src, self.i))

    @staticmethod
    def literal(cp: int):
        return Chars(normalize([(cp, cp)]))

    def hex_digits(self, n: int) -> int | None:
        digits = self.src[self.i : self.i + n]
        if len(digits) == n and all(ch in "0123456789abcdefABCDEF" for ch in digits):
            self.i += n
            return int(digits, 16)
        return None

    def unicode_escape(self) -> int | None:
        """After ``\\u``: ``XXXX`` (joining a surrogate pair) or ``{X...}``."""
        if self.peek() == "{":
            end = self.src.find("}", self.i)
            body = self.src[self.i + 1 : end] if end > 0 else ""
            if end > 0 and body and all(ch in "0123456789abcdefABCDEF" for ch in body) and int(body, 16) <= MAX_CODE_POINT:
                self.i = end + 1
                return int(body, 16)
            return None
        cp = self.hex_digits(4)
        if cp is not None and 0xD800 <= cp <= 0xDBFF and self.src.startswith("\\u", self.i):
            save = self.i
            self.i += 2
            low = self.hex_digits(4)
            if low is not None and 0xDC00 <= low <= 0xDFFF:
                return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
            self.i = save
        return cp

    def escape(self, in_class: bool):
        """An escape; returns Chars (or an Anchor-like error for \\b outside classes)."""
        start = self.i
        self.i += 1
        c = self.peek()
        if c is None:
            raise self.error("pattern ends with a backslash", position=start)
        self.i += 1
        if c in _CLASS_ESCAPES:
            return Chars(_CLASS_ESCAPES[c])
        if c.lower() in _CLASS_ESCAPES:
            return Chars(complement(_CLASS_ESCAPES[c.lower()]))
        if c in _CONTROL_ESCAPES:
            return self.literal(_CONTROL_ESCAPES[c])
        if c == "b":
            if in_class:
                return self.literal(0x08)
            raise self.error("word boundaries (\\b) are not supported", True, start)
        if c == "B":
            raise self.error("word boundaries (\\B) are not supported", True, start)
        if c == "0" and not (self.peek() or "").isdigit():
            return self.literal(0)
        if c.isdigit():
            raise self.error(f"backreferences (\\{c}) are not supported", True, start)
        if c == "k" and self.peek() == "<":
            raise self.error("backreferences (\\k<name>) are not supported", True, start)
        if c == "c":
            letter = self.peek()
            if letter is not None and letter.isascii() and letter.isalpha():
                self.i += 1
                return self.literal(ord(letter) % 32)
            raise self.error("`\\c` must be followed by a letter", position=start)
        if c == "x":
            cp = self.hex_digits(2)
            if cp is None:
                raise self.error("`\\x` needs two hex digits", position=start)
            return self.literal(cp)
        if c == "u":
            cp = self.unicode_escape()
            if cp is None:
                raise self.error("`\\u` needs four hex digits or {hex}", position=start)
            return self.literal(cp)
        if c in "pP":
            raise self.error(f"Unicode property escapes (\\{c}{{...}}) are not supported", True, start)
        if c.isascii() and c.isalnum():
            raise self.error(f"unknown escape `\\{c}`", position=start)
        return self.literal(ord(c))

    def class_atom(self):
        """One member of a class: ('set', ranges) or ('char', cp)."""
        c = self.peek()
        if c == "\\":
            node = self.escape(in_class=True)
            rs = node.ranges
            if len(rs) == 1 and rs[0][0] == rs[0][1]:
                return ("char", rs[0][0])
            return ("set", rs)
        self.i += 1
        return ("char", ord(c))

    def char_class(self) -> Ranges:
        start = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        ranges: list = []
        while True:
            c = self.peek()
            if c is None:
                raise self.error("unterminated character class `[`", position=start)
            if c == "]":
                self.i += 1
                break
            kind, value = self.class_atom()
            if kind == "char" and self.peek() == "-" and self.peek(1) not in (None, "]"):
                self.i += 1
                kind2, value2 = self.class_atom()
                if kind2 == "set":
                    raise self.error("a class escape cannot end a range")
                if value2 < value:
                    raise self.error("range out of order in character class")
                ranges.append((value, value2))
            elif kind == "char":
                ranges.append((value, value))
            else:
                ranges.extend(value)
        result = normalize(ranges)
        return complement(result) if negated else result


def parse(src: str):
    """Parses an ECMAScript pattern into the AST (anchors still in place)."""
    return _Parser(src).parse()


def _strip_anchors(node):
    """Applies ``^``/``$`` of a top-level branch: returns (node, anchored_start, anchored_end)."""
    items = list(node.items) if isinstance(node, Seq) else [node]
    start = end = False
    while items and isinstance(items[0], Anchor) and items[0].start:
        items.pop(0)
        start = True
    while items and isinstance(items[-1], Anchor) and not items[-1].start:
        items.pop()
        end = True
    # `^(a|b)$`-style groups whose every branch is anchored the same way.
    if len(items) == 1 and isinstance(items[0], Alt):
        branches = [list(b.items) if isinstance(b, Seq) else [b] for b in items[0].items]
        if not start and all(b and isinstance(b[0], Anchor) and b[0].start for b in branches):
            branches = [b[1:] for b in branches]
            start = True
        if not end and all(b and isinstance(b[-1], Anchor) and not b[-1].start for b in branches):
            branches = [b[:-1] for b in branches]
            end = True
        items = [Alt(tuple(Seq(tuple(b)) for b in branches))]
    return Seq(tuple(items)), start, end


def _check_no_anchor(node, src: str):
    if isinstance(node, Anchor):
        raise PatternError(f"anchor `{'^' if node.start else '$'}` inside the pattern is not supported (only at the start or end of a branch)", node.position, True)
    if isinstance(node, (Seq, Alt)):
        for x in node.items:
            _check_no_anchor(x, src)
    elif isinstance(node, Repeat):
        _check_no_anchor(node.item, src)


@functools.lru_cache(maxsize=1024)  # pure; the result is immutable
def search_language(src: str):
    """The AST of all strings in which ``src`` finds a match (``RegExp.test``)."""
    tree = parse(src)
    branches = tree.items if isinstance(tree, Alt) else (tree,)
    out = []
    for branch in branches:
        node, start, end = _strip_anchors(branch)
        _check_no_anchor(node, src)
        any_run = Repeat(ANY, 0, None)
        out.append(Seq((() if start else (any_run,)) + (node,) + (() if end else (any_run,))))
    return out[0] if len(out) == 1 else Alt(tuple(out))


@functools.lru_cache(maxsize=1024)  # pure; the result is immutable
def full_language(src: str):
    """The AST of the strings ``src`` matches as a whole (used for ``format`` patterns)."""
    tree = parse(src)
    _check_no_anchor(tree, src)
    return tree


# --- rendering -------------------------------------------------------------------------


def _class_char(cp: int) -> str:
    if cp < 0x80 and (chr(cp).isalnum() or chr(cp) in " _!\"#%&',:;<=>@`~"):
        return chr(cp)
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


@functools.lru_cache(maxsize=4096)  # pure, and called with the same classes again and again
def render_class(ranges: Ranges) -> str:
    """A Python ``re`` class for ``ranges`` (a never-matching class if empty)."""
    if not ranges:
        return "[^\\s\\S]"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        cp = ranges[0][0]
        return _class_char(cp) if chr(cp).isalnum() and cp < 0x80 else "[" + _class_char(cp) + "]"
    parts = []
    for lo, hi in ranges:
        parts.append(_class_char(lo) if lo == hi else f"{_class_char(lo)}-{_class_char(hi)}")
    return "[" + "".join(parts) + "]"


def _group(s: str) -> str:
    return f"(?:{s})"


def _repeat_suffix(lo: int, hi: int | None) -> str:
    if (lo, hi) == (0, None):
        return "*"
    if (lo, hi) == (1, None):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    if hi is None:
        return f"{{{lo},}}"
    if lo == hi:
        return f"{{{lo}}}"
    return f"{{{lo},{hi}}}"


def render_value(node) -> str:
    """Python ``re`` source matching the decoded strings of ``node`` (fullmatch)."""
    return _group(_render(node, render_class)) if isinstance(node, Alt) else _render(node, render_class)


# The escapes JSON (as json.dumps writes them) uses for the characters it must escape.
_SHORT_ESCAPES = {0x22: '\\\\"', 0x5C: "\\\\\\\\", 0x08: "\\\\b", 0x0C: "\\\\f", 0x0A: "\\\\n", 0x0D: "\\\\r", 0x09: "\\\\t"}
_MUST_ESCAPE = normalize([(0, 0x1F), (0x22, 0x22), (0x5C, 0x5C)])


@functools.lru_cache(maxsize=4096)  # pure, and called with the same classes again and again
def render_json_class(ranges: Ranges) -> str:
    """Regex source for one character of ``ranges`` in its canonical JSON encoding."""
    plain = intersect(ranges, complement(_MUST_ESCAPE))
    parts = []
    if plain:
        parts.append(render_class(plain))
    short, hexes = [], []
    for lo, hi in intersect(ranges, _MUST_ESCAPE):
        for cp in range(lo, hi + 1):
            (short if cp in _SHORT_ESCAPES else hexes).append(cp)
    # One class for the short escapes and one group for the \u00XX ones keep it small.
    if short:
        letters = "".join({0x22: '"', 0x5C: "\\\\", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r", 0x09: "t"}[cp] for cp in short)
        parts.append("\\\\" + (f"[{letters}]" if len(short) > 1 else letters))
    if hexes:
        parts.append("\\\\u00" + _group(_render_hex_pairs(hexes)))
    if not parts:
        return "[^\\s\\S]"
    # Control characters without a short escape share one \u00XX form: merge them.
    return parts[0] if len(parts) == 1 else _group("|".join(parts))


def _render_hex_pairs(codes: list[int]) -> str:
    """Regex source for the two lowercase hex digits of each code below 0x100, grouped by
    the first digit (``0[0-7bef]|1[0-9a-f]``, not 26 alternatives: the engine parses and
    builds it several times faster, and every JSON string pattern has it)."""
    digits = "0123456789abcdef"
    by_high: dict[int, list[int]] = {}
    for cp in codes:
        by_high.setdefault(cp >> 4, []).append(cp & 0xF)
    alts = []
    for high, lows in sorted(by_high.items()):
        runs, start = [], None
        for i, low in enumerate(lows):
            if start is None:
                start = low
            # Runs break between 9 and a, which are not adjacent characters.
            if i + 1 == len(lows) or lows[i + 1] != low + 1 or low == 9:
                runs.append(digits[start] if start == low else f"{digits[start]}{'-' if low > start + 1 else ''}{digits[low]}")
                start = None
        cls = "".join(runs)
        alts.append(digits[high] + (cls if len(lows) == 1 else f"[{cls}]"))
    return "|".join(alts)


@functools.lru_cache(maxsize=1024)  # pure; the result is immutable
def render_json(node) -> str:
    """Regex source matching the canonical JSON encodings (without quotes) of ``node``."""
    return _group(_render(node, render_json_class)) if isinstance(node, Alt) else _render(node, render_json_class)


def _render(node, chars) -> str:
    if isinstance(node, Chars):
        return chars(node.ranges)
    if isinstance(node, Seq):
        return "".join(_group(_render(x, chars)) if isinstance(x, Alt) else _render(x, chars) for x in node.items)
    if isinstance(node, Alt):
        return "|".join(_render(x, chars) for x in node.items)
    if isinstance(node, Repeat):
        return _group(_render(node.item, chars)) + _repeat_suffix(node.min, node.max)
    raise PatternError("anchor in an unexpected place", getattr(node, "position", 0), True)


JSON_CHAR = render_json_class(normalize([(0, MAX_CODE_POINT)]))
