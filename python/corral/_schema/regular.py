"""Regular-language questions the JSON Schema translator answers in Python.

* ``finite_language(term, limit)``: the strings of a term when there are few (a key class
  of finitely many keys becomes named keys, each allowed once).
* ``product(...)``: the minimal DFA of number regexes and residue automata together
  (``multipleOf``), which the translator writes as one grammar rule per state.

(Whether a combination of terms is empty is the core's question: ``_core.expression_is_empty``
builds its DFA.) Terms are read as the translator writes them (``/regex/``, ``"literal"``, ``and!(...)``,
``not!(...)``, ``( a | b )``); each regex (Python ``re`` syntax, fullmatch) becomes an NFA
over code points, and the questions are answered on the product of their subset automata.
Every search is bounded (``MAX_NFA_STATES``, ``MAX_PRODUCT_STATES``,
``MAX_ENUMERATION_STEPS``): past a bound the answer is "unknown" (None), which callers treat
as non-empty or open, so the engine still judges.
"""

from __future__ import annotations

import bisect
import functools
import time
from collections.abc import Callable

try:  # Python 3.11+
    import re._constants as _c
    import re._parser as _p
except ImportError:  # pragma: no cover - older interpreters
    import sre_constants as _c  # type: ignore
    import sre_parse as _p  # type: ignore

MAX_CODE_POINT = 0x10FFFF
# Bounds on the work of one check; past them the answer is None ("unknown").
MAX_NFA_STATES = 20_000
MAX_PRODUCT_STATES = 20_000


class _Unknown(Exception):
    """The check would cost more than its bounds."""


# --- NFAs ----------------------------------------------------------------------------


class _NFA:
    """Thompson NFA: ``eps[s]`` epsilon targets, ``edges[s]`` (lo, hi, target) moves."""

    def __init__(self, max_states: int = MAX_NFA_STATES):
        self.max_states = max_states
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[int, int, int]]] = []
        self.start = 0
        self.accept = 0
        self._closures: dict[frozenset[int], frozenset[int]] = {}

    def state(self) -> int:
        if len(self.eps) >= self.max_states:
            raise _Unknown()
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def closure(self, states: frozenset[int]) -> frozenset[int]:
        """The states reachable from ``states`` by epsilon moves (memoized)."""
        done = self._closures.get(states)
        if done is not None:
            return done
        seen = set(states)
        todo = list(states)
        while todo:
            s = todo.pop()
            for t in self.eps[s]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        done = self._closures[states] = frozenset(seen)
        return done


# Python's \d \w \s as ranges are only needed for `[^\s\S]`-style classes (a category
# together with its complement); ASCII sets keep the pair exact.
_CATEGORIES = {
    _c.CATEGORY_DIGIT: ((0x30, 0x39),),
    _c.CATEGORY_SPACE: ((0x09, 0x0D), (0x20, 0x20)),
    _c.CATEGORY_WORD: ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
}
_NOT = {_c.CATEGORY_NOT_DIGIT: _c.CATEGORY_DIGIT, _c.CATEGORY_NOT_SPACE: _c.CATEGORY_SPACE, _c.CATEGORY_NOT_WORD: _c.CATEGORY_WORD}


def _complement(ranges) -> list[tuple[int, int]]:
    out, prev = [], 0
    for lo, hi in sorted(ranges):
        if lo > prev:
            out.append((prev, lo - 1))
        prev = max(prev, hi + 1)
    if prev <= MAX_CODE_POINT:
        out.append((prev, MAX_CODE_POINT))
    return out


def _class_ranges(items) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    negate = False
    for op, av in items:
        if op is _c.NEGATE:
            negate = True
        elif op is _c.LITERAL:
            ranges.append((av, av))
        elif op is _c.RANGE:
            ranges.append(av)
        elif op is _c.CATEGORY:
            if av in _NOT:
                ranges.extend(_complement(_CATEGORIES[_NOT[av]]))
            elif _CATEGORIES.get(av):
                ranges.extend(_CATEGORIES[av])
            else:
                raise _Unknown()
        else:
            raise _Unknown()
    return _complement(ranges) if negate else sorted(ranges)


def _build(nfa: _NFA, tree, start: int) -> int:
    """Adds ``tree`` (a parsed regex) from state ``start``; returns its end state."""
    cur = start
    for op, av in tree:
        if op is _c.LITERAL:
            nxt = nfa.state()
            nfa.edges[cur].append((av, av, nxt))
            cur = nxt
        elif op is _c.NOT_LITERAL:
            nxt = nfa.state()
            for lo, hi in _complement([(av, av)]):
                nfa.edges[cur].append((lo, hi, nxt))
            cur = nxt
        elif op is _c.ANY:
            nxt = nfa.state()
            nfa.edges[cur].append((0, MAX_CODE_POINT, nxt))  # DOTALL or not: one character
            cur = nxt
        elif op is _c.IN:
            nxt = nfa.state()
            for lo, hi in _class_ranges(av):
                nfa.edges[cur].append((lo, hi, nxt))
            cur = nxt
        elif op is _c.SUBPATTERN:
            cur = _build(nfa, av[-1], cur)
        elif op is _c.BRANCH:
            end = nfa.state()
            for branch in av[1]:
                s = nfa.state()
                nfa.eps[cur].append(s)
                nfa.eps[_build(nfa, branch, s)].append(end)
            cur = end
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
            lo, hi, body = av
            unbounded = hi is _c.MAXREPEAT or hi >= _c.MAXREPEAT
            for _ in range(lo):
                cur = _build(nfa, body, cur)
            if unbounded:
                loop = nfa.state()
                nfa.eps[cur].append(loop)
                nfa.eps[_build(nfa, body, loop)].append(loop)
                cur = loop
            else:
                end = nfa.state()
                for _ in range(hi - lo):
                    nfa.eps[cur].append(end)
                    cur = _build(nfa, body, cur)
                nfa.eps[cur].append(end)
                cur = end
        else:  # anchors, lookaround, backreferences: not written by the translator
            raise _Unknown()
    return cur


@functools.lru_cache(maxsize=512)  # NFAs may be large: keep the recent ones only
def _regex_nfa(src: str, max_states: int = MAX_NFA_STATES) -> _NFA:
    nfa = _NFA(max_states)
    nfa.start = nfa.state()
    try:
        tree = _p.parse(src)
    except Exception:
        raise _Unknown() from None
    nfa.accept = _build(nfa, tree, nfa.start)
    return nfa


def _literal_nfa(text: str) -> _NFA:
    nfa = _NFA()
    cur = nfa.start = nfa.state()
    for ch in text:
        nxt = nfa.state()
        nfa.edges[cur].append((ord(ch), ord(ch), nxt))
        cur = nxt
    nfa.accept = cur
    return nfa


# --- terminal expressions ------------------------------------------------------------
# A parsed expression is ("leaf", index) | ("and", [...]) | ("or", [...]) | ("not", expr).


class _Reader:
    """Reads the terminal expressions the translator writes."""

    def __init__(self, text: str):
        self.text = text
        self.i = 0
        self.leaves: list[_NFA] = []

    def skip(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def expect(self, token: str) -> None:
        self.skip()
        if not self.text.startswith(token, self.i):
            raise _Unknown()
        self.i += len(token)

    def alternation(self):
        items = [self.sequence()]
        self.skip()
        while self.i < len(self.text) and self.text[self.i] == "|":
            self.i += 1
            items.append(self.sequence())
            self.skip()
        return items[0] if len(items) == 1 else ("or", items)

    def sequence(self):
        # The translator never concatenates terminals inside an operator argument.
        return self.atom()

    def atom(self):
        self.skip()
        t = self.text
        if t.startswith("and!(", self.i) or t.startswith("not!(", self.i):
            op = t[self.i : self.i + 3]
            self.i += 5
            items = [self.alternation()]
            self.skip()
            while t.startswith(",", self.i):
                self.i += 1
                items.append(self.alternation())
                self.skip()
            self.expect(")")
            if op == "and":
                return ("and", items)
            if len(items) != 1:
                raise _Unknown()
            return ("not", items[0])
        if t.startswith("(", self.i):
            self.i += 1
            node = self.alternation()
            self.expect(")")
            return node
        if t.startswith("/", self.i):
            j = self.i + 1
            out = []
            while j < len(t) and t[j] != "/":
                if t[j] == "\\" and j + 1 < len(t):
                    out.append(t[j : j + 2] if t[j + 1] != "/" else "/")
                    j += 2
                else:
                    out.append(t[j])
                    j += 1
            if j >= len(t):
                raise _Unknown()
            self.i = j + 1
            self.leaves.append(_regex_nfa("".join(out)))
            return ("leaf", len(self.leaves) - 1)
        if t.startswith('"', self.i):
            j = self.i + 1
            out = []
            while j < len(t) and t[j] != '"':
                if t[j] == "\\":
                    nxt = t[j + 1 : j + 2]
                    if nxt == "x":
                        out.append(chr(int(t[j + 2 : j + 4], 16)))
                        j += 4
                        continue
                    if nxt not in ('"', "\\"):
                        raise _Unknown()
                    out.append(nxt)
                    j += 2
                else:
                    out.append(t[j])
                    j += 1
            if j >= len(t):
                raise _Unknown()
            self.i = j + 1
            self.leaves.append(_literal_nfa("".join(out)))
            return ("leaf", len(self.leaves) - 1)
        raise _Unknown()


def _value(expr, accepting: tuple[bool, ...]) -> bool:
    kind = expr[0]
    if kind == "leaf":
        return accepting[expr[1]]
    if kind == "and":
        return all(_value(e, accepting) for e in expr[1])
    if kind == "or":
        return any(_value(e, accepting) for e in expr[1])
    return not _value(expr[1], accepting)


def _may_accept(expr, alive: tuple[bool, ...]) -> bool | None:
    """False when no continuation can make ``expr`` accept (dead leaves stay rejecting);
    True when one always will (a dead leaf under ``not``); None when it depends."""
    kind = expr[0]
    if kind == "leaf":
        return None if alive[expr[1]] else False
    if kind == "not":
        inner = _may_accept(expr[1], alive)
        return None if inner is None else not inner
    values = [_may_accept(e, alive) for e in expr[1]]
    if kind == "and":
        if False in values:
            return False
        return True if all(v is True for v in values) else None
    if True in values:
        return True
    return False if all(v is False for v in values) else None


def _successors(leaves: list[_NFA], state: tuple) -> list[tuple[int, int, tuple]]:
    """The moves of a product state: ``(a, b, next state)`` for each interval ``[a, b)``
    of code points on which every leaf moves alike. The alphabet is cut at every edge
    boundary; each edge then adds its target to the intervals it spans (found by
    bisection), rather than every interval scanning every edge."""
    moves = [[e for q in s for e in nfa.edges[q]] for nfa, s in zip(leaves, state, strict=True)]
    cuts = sorted({lo for m in moves for lo, _, _ in m} | {hi + 1 for m in moves for _, hi, _ in m})
    if len(cuts) < 2:
        return []
    targets: list[list[set]] = [[set() for _ in moves] for _ in range(len(cuts) - 1)]
    for i, m in enumerate(moves):
        for lo, hi, t in m:
            for k in range(bisect.bisect_left(cuts, lo), bisect.bisect_left(cuts, hi + 1)):
                targets[k][i].add(t)
    out = []
    for k, per_leaf in enumerate(targets):
        nxt = tuple(nfa.closure(frozenset(ts)) if ts else frozenset() for nfa, ts in zip(leaves, per_leaf, strict=True))
        out.append((cuts[k], cuts[k + 1], nxt))
    return out


# A deadline for the searches (set by the translator for its wall-clock budget).
_deadline: tuple[float, Callable[[], None]] | None = None
_ticks = 0


def set_deadline(deadline: tuple[float, Callable[[], None]] | None) -> None:
    """While set, the searches call ``deadline[1]()`` (which raises) once
    ``time.monotonic()`` passes ``deadline[0]``."""
    global _deadline
    _deadline = deadline


def _tick(weight: int = 1) -> None:
    """Counts ``weight`` units of work (about one product state each); looks at the
    deadline every 64 units."""
    global _ticks
    before = _ticks
    _ticks += weight
    if _deadline is not None and (before >> 6) != (_ticks >> 6) and time.monotonic() > _deadline[0]:
        _deadline[1]()


# --- automata over a small alphabet (numbers) ----------------------------------------


class DFA:
    """A deterministic automaton over single characters: ``moves[state][char]`` (missing:
    rejected), ``start``, ``finals``. States are 0..len(moves)-1."""

    def __init__(self, moves: list[dict[str, int]], start: int, finals: set):
        self.moves = moves
        self.start = start
        self.finals = finals


class TooLarge(Exception):
    """An automaton would need more states than allowed."""


def product(regexes: list[tuple[str, bool]], dfas: list[tuple[DFA, bool]], alphabet: str, max_states: int) -> DFA | None:
    """The strings over ``alphabet`` that every positive component accepts and no negative
    one does, as a minimal DFA whose every state can still reach a final one (None: no
    string at all). Components: Python regexes (fullmatch) and DFAs, each with a flag
    ``positive``. Raises TooLarge past ``max_states`` states, or when a regex's NFA
    would pass the larger of its own bound (``MAX_NFA_STATES``) and ``max_states`` (the
    digit-level regex of a bound such as ``1e308`` has hundreds of digits), or it cannot
    read the regex."""
    try:
        nfas = [(_regex_nfa(src, max(MAX_NFA_STATES, max_states)), pos) for src, pos in regexes]
    except _Unknown:
        raise TooLarge() from None
    start = tuple(n.closure(frozenset([n.start])) for n, _ in nfas) + tuple(d.start for d, _ in dfas)
    index = {start: 0}
    states = [start]
    moves: list[dict[str, int]] = []
    finals = set()
    k = len(nfas)
    i = 0
    while i < len(states):
        _tick()
        state = states[i]
        if all((n.accept in s) == pos for (n, pos), s in zip(nfas, state[:k], strict=True)) and all(((q is not None and q in d.finals) == pos) for (d, pos), q in zip(dfas, state[k:], strict=True)):
            finals.add(i)
        out: dict[str, int] = {}
        for ch in alphabet:
            code = ord(ch)
            nxt = []
            dead = False
            for (n, pos), s in zip(nfas, state[:k], strict=True):
                targets = frozenset(t for q in s for lo, hi, t in n.edges[q] if lo <= code <= hi)
                closed = n.closure(targets) if targets else frozenset()
                if not closed and pos:
                    dead = True
                    break
                nxt.append(closed)
            if dead:
                continue
            for (d, pos), q in zip(dfas, state[k:], strict=True):
                t = None if q is None else d.moves[q].get(ch)
                if t is None and pos:
                    dead = True
                    break
                nxt.append(t)
            if dead:
                continue
            nxt = tuple(nxt)
            j = index.get(nxt)
            if j is None:
                if len(states) >= max_states:
                    raise TooLarge()
                j = index[nxt] = len(states)
                states.append(nxt)
            out[ch] = j
        moves.append(out)
        i += 1
    return minimize(DFA(moves, 0, finals))


def minimize(dfa: DFA) -> DFA | None:
    """``dfa`` without states that cannot reach a final one, with equivalent states
    merged (Moore's partition refinement); None when its language is empty."""
    n = len(dfa.moves)
    back: list[list[int]] = [[] for _ in range(n)]
    for a, out in enumerate(dfa.moves):
        for b in out.values():
            back[b].append(a)
    live = set(dfa.finals)
    todo = list(live)
    while todo:
        for a in back[todo.pop()]:
            if a not in live:
                live.add(a)
                todo.append(a)
    if dfa.start not in live:
        return None
    alphabet = sorted({ch for out in dfa.moves for ch in out})
    block = {s: (s in dfa.finals) for s in live}
    count = len(set(block.values()))
    while True:
        # One refinement round reads every live state's moves: weigh it accordingly.
        _tick(1 + len(live) * len(alphabet) // 256)
        signature = {s: (block[s],) + tuple(block.get(dfa.moves[s].get(ch), None) if dfa.moves[s].get(ch) in live else None for ch in alphabet) for s in live}
        ids: dict[tuple, int] = {}
        new = {s: ids.setdefault(sig, len(ids)) for s, sig in signature.items()}
        if len(ids) == count:
            break
        block, count = new, len(ids)
    # Renumber blocks: the start's block first.
    numbering: dict[object, int] = {block[dfa.start]: 0}
    for s in sorted(live):
        numbering.setdefault(block[s], len(numbering))
    moves: list[dict[str, int]] = [dict() for _ in numbering]
    finals = set()
    for s in live:
        b = numbering[block[s]]
        if s in dfa.finals:
            finals.add(b)
        for ch, t in dfa.moves[s].items():
            if t in live:
                moves[b][ch] = numbering[block[t]]
    return DFA(moves, 0, finals)


MAX_ENUMERATION_STEPS = 20_000


@functools.lru_cache(maxsize=1024)
def finite_language(term: str, limit: int) -> tuple[str, ...] | None:
    """The strings of the terminal expression ``term``, sorted, when there are at most
    ``limit`` of them; None when there are more, infinitely many, or the search would
    cost more than its bounds (callers then treat the language as open)."""
    try:
        reader = _Reader(term)
        expr = reader.alternation()
        reader.skip()
        if reader.i != len(term):
            return None
        leaves = reader.leaves
        start = tuple(nfa.closure(frozenset([nfa.start])) for nfa in leaves)
        found: list[str] = []
        stack = [(start, "")]
        steps = 0
        while stack:
            state, prefix = stack.pop()
            steps += 1
            if steps > MAX_ENUMERATION_STEPS or len(prefix) > 4 * limit + 64:
                return None  # a loop that stays alive: infinitely many, or too costly
            if _value(expr, tuple(nfa.accept in s for nfa, s in zip(leaves, state, strict=True))):
                found.append(prefix)
                if len(found) > limit:
                    return None
            verdict = _may_accept(expr, tuple(bool(s) for s in state))
            if verdict is True:
                return None  # every continuation is accepted: infinitely many
            if verdict is False:
                continue
            _tick()
            for a, b, nxt in _successors(leaves, state):
                if _may_accept(expr, tuple(bool(s) for s in nxt)) is False:
                    continue
                if b - a > limit:
                    return None  # more characters than strings allowed, all still alive
                for code in range(a, b):
                    stack.append((nxt, prefix + chr(code)))
        return tuple(sorted(found))
    except _Unknown:
        return None

