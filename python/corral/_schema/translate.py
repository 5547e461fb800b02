"""JSON Schema → corral EBNF.

The schema is read as a boolean formula over *shapes*: a shape is a conjunction of
constraints per JSON type (``kinds``), and the combinators (``anyOf``, ``oneOf``, ``not``,
``if``/``then``/``else``, ``dependentSchemas``...) become disjunctions of shapes, distributed
out (``allOf`` is a plain conjunction; ``not`` is pushed down to the keywords). Each shape
becomes one alternative of a value rule; subschemas (property values, items) become rules
of their own, memoized, so ``$ref`` recursion is grammar recursion.

Every constraint is either enforced exactly or reported: an unsupported keyword raises
:class:`~corral.UnsupportedSchemaError` with its JSON pointer (or, with ``strict=False``,
is dropped with a :class:`SchemaWarning`). Scalar sets that need intersection or
complement (a pattern *and* a length, a range *and* a multiple) use the grammar's
``and!``/``not!`` terminal operators, so they stay exact too.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
import sys
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from json.encoder import encode_basestring
from urllib.parse import unquote, urldefrag, urljoin

from .. import _core
from ..errors import CorralError, EmptyLanguageError, InvalidSchemaError, LimitExceededError, UnsupportedSchemaError
from . import ecma, numbers as num, regular
from .formats import FORMAT_PATTERNS

NULL, BOOL, INT, FRAC, STR, ARR, OBJ = "null", "boolean", "int", "frac", "string", "array", "object"
ALL_KINDS = frozenset({NULL, BOOL, INT, FRAC, STR, ARR, OBJ})
_TYPE_KINDS = {
    "null": {NULL},
    "boolean": {BOOL},
    "integer": {INT},
    "number": {INT, FRAC},
    "string": {STR},
    "array": {ARR},
    "object": {OBJ},
}

ROOT_URI = "https://corral.invalid/schema.json"

# Keywords that only annotate: ignored.
_ANNOTATIONS = frozenset(
    {
        "title", "description", "examples", "default", "$comment", "deprecated", "readOnly",
        "writeOnly", "$schema", "$id", "id", "$anchor", "$dynamicAnchor", "$defs", "definitions",
        "$vocabulary", "contentMediaType", "contentEncoding", "contentSchema", "discriminator",
        "example", "externalDocs", "xml", "$recursiveAnchor",
    }
)

# Every cap a schema can hit is a field of corral.Limits (the ``limits`` option), read by
# the Translator; the constants here only choose between constructions.
# A key class with at most this many keys is written as named keys (each at most once);
# a larger one stays an open class, whose keys the matcher keeps distinct.
MAX_ENUMERATED_KEYS = 256
# Strings whose length bound exceeds LONG_STRING characters (and that have no pattern or
# format) are read in chunks of STRING_CHUNK characters: one automaton for the whole bound
# would need about 14 states per character (see ``_chunked_string``).
LONG_STRING = 2048
STRING_CHUNK = 1024

from .options import MAX_INDENT, MAX_WHITESPACE, check_options, indent_string  # noqa: E402,F401


@functools.lru_cache(maxsize=1)
def _default_limits():
    from .. import _core

    return _core.Limits()


def limit_error(what: str, limit: str, value: int, pointer: str | None = None, keyword: str = "") -> LimitExceededError:
    """A LimitExceededError for the ``Limits`` field ``limit`` (set to ``value``): ``what``
    needs more, and the message says which field to raise. ``pointer`` (with ``keyword``)
    is the JSON pointer of the place, when there is one."""
    error = LimitExceededError(f"{what} (past Limits.{limit} = {value}: simplify the schema or raise the limit)")
    error.limit, error.value = limit, value
    if pointer is not None:
        error.pointer, error.keyword = pointer, keyword
    return error


def _check_document_depth(document, pointer: str, max_depth: int) -> None:
    """LimitExceededError when JSON values in ``document`` nest deeper than ``max_depth``
    (walked without recursion, so any depth is safe to look at)."""
    stack = [(document, 0, ())]
    while stack:
        node, depth, path = stack.pop()
        if depth > max_depth:
            where = pointer + "".join("/" + _escape_pointer(str(t)) for t in path)
            raise limit_error(f"schema at {where or '/'}: JSON values nest {depth} deep", "max_schema_document_depth", max_depth, where)
        if isinstance(node, dict):
            stack.extend((v, depth + 1, path + (k,)) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth + 1, path + (i,)) for i, v in enumerate(node) if isinstance(v, (dict, list)))


def shape_pointer(shape) -> str:
    for props, _, _ in shape.obj_clauses:
        for sub in props.values():
            return sub.pointer.rsplit("/properties/", 1)[0] or "/"
    return "/"


_META_SCHEMAS = {
    "json-schema.org/draft-04/schema": 4,
    "json-schema.org/draft-06/schema": 6,
    "json-schema.org/draft-07/schema": 7,
    "json-schema.org/draft/2019-09/schema": 2019,
    "json-schema.org/draft/2020-12/schema": 2020,
}


def _draft_of(schema, default: int) -> int:
    """The draft named by ``$schema`` (0 for a custom metaschema), else ``default``."""
    if isinstance(schema, dict) and isinstance(schema.get("$schema"), str):
        uri = schema["$schema"].split("://", 1)[-1].rstrip("#")
        return _META_SCHEMAS.get(uri, 0)
    return default


def _join(base: str, ref: str, pointer: str, keyword: str) -> str:
    """``urljoin``, with InvalidSchemaError (at ``pointer``) for a reference that is not a
    URI reference (``http://[``)."""
    try:
        return urljoin(base, ref)
    except ValueError as e:
        at = pointer + "/" + keyword.replace("~", "~0").replace("/", "~1")
        raise InvalidSchemaError(f"{keyword} at {at}: {ref!r} is not a valid URI reference ({e})", at, keyword) from None


def _escape_pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class Subschema:
    """One subschema in context: the schema, its JSON pointer, base URI and draft."""

    # The pointer is only needed for messages: a child keeps its parent and tokens, and
    # writes its pointer out when asked (most subs never are).
    __slots__ = ("schema", "_pointer", "_parent", "_tokens", "base", "draft", "negated")

    def __init__(self, schema, pointer: str | None, base: str, draft: int, negated: bool = False):
        self.schema = schema
        self._pointer = pointer
        self._parent: Subschema | None = None
        self._tokens: tuple = ()
        self.base = base
        self.draft = draft
        self.negated = negated

    @property
    def pointer(self) -> str:
        """The JSON pointer of the subschema in its document."""
        if self._pointer is None:
            self._pointer = self._parent.pointer + "".join("/" + _escape_pointer(str(t)) for t in self._tokens)
            self._parent = None
        return self._pointer

    def key(self):
        return (id(self.schema), self.base, self.draft, self.negated)

    def child(self, schema, *tokens) -> Subschema:
        sub = Subschema(schema, None, self.base, self.draft)
        sub._parent, sub._tokens = self, tokens
        return sub

    def negate(self) -> Subschema:
        sub = Subschema(self.schema, self._pointer, self.base, self.draft, not self.negated)
        sub._parent, sub._tokens = self._parent, self._tokens
        return sub


class SyntheticConstraint:
    """A synthetic constraint (made by negation): ``apply(shape)`` adds it to a shape."""

    __slots__ = ("apply", "label")

    def __init__(self, apply: Callable, label: str):
        self.apply = apply
        self.label = label


TRUE = True


class Shape:
    """A conjunction of constraints on one JSON value."""

    def __init__(self):
        self.kinds = set(ALL_KINDS)
        self.unsat = False
        self.enum: list | None = None
        self.enum_keys: frozenset = frozenset()  # _canon of the enum's members
        self.not_values: list = []
        self.not_keys: set = set()  # _canon of the excluded values
        # numbers
        self.lo: tuple[Decimal, bool] | None = None
        self.hi: tuple[Decimal, bool] | None = None
        self.mults: list[tuple[Decimal, str]] = []
        self.neg_mults: list[tuple[Decimal, str]] = []
        # strings
        self.min_len = 0
        self.max_len: int | None = None
        self.patterns: list[tuple[str, str]] = []
        self.neg_patterns: list[tuple[str, str]] = []
        self.formats: list[tuple[str, str]] = []
        self.neg_formats: list[tuple[str, str]] = []
        # arrays: clauses of (prefix subs, rest sub or None)
        self.arr_clauses: list[tuple[list, Subschema | None]] = []
        self.min_items = 0
        self.max_items: int | None = None
        self.contains: list[tuple[Subschema, int, int | None]] = []
        self.unique: str | None = None
        # objects: clauses of (props {name: Subschema}, patterns [(src, Subschema)], additional Subschema or None)
        self.obj_clauses: list[tuple[dict, list, Subschema | None]] = []
        self.required: list[str] = []
        self.forbidden: set = set()
        self.min_props = 0
        self.max_props: int | None = None
        self.prop_names: list[Subschema] = []
        # The pointer of the keyword that set a count bound (for messages).
        self.count_ptrs: dict[str, str] = {}
        # A draft-4 subschema said "integer": 1.0 is not one (from draft 6 on it is).
        self.int_without_fraction = False

    def copy(self) -> Shape:
        c = Shape.__new__(Shape)
        for k, v in self.__dict__.items():
            c.__dict__[k] = v.copy() if isinstance(v, (list, set, dict)) else v
        return c

    def restrict(self, kinds) -> None:
        self.kinds &= set(kinds)
        if not self.kinds:
            self.unsat = True


def json_equal(a, b) -> bool:
    """JSON Schema equality: 1 == 1.0, but true != 1; objects by content."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return _dec(a) == _dec(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _is_multiple(d: Decimal, step: Decimal) -> bool:
    """Whether ``d`` is an integer multiple of ``step``, exactly (``Decimal``'s ``%``
    fails once the quotient has more digits than its context keeps)."""
    return (Fraction(d) / Fraction(step)).denominator == 1


class _NotJSON(Exception):
    """A value in a schema (an ``enum`` member...) that is not a JSON value."""


def _canon(value):
    """A hashable key, equal for values JSON Schema calls equal (``1`` and ``1.0``; not
    ``true`` and ``1``), so that enum members are compared by hashing, not pairwise."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise _NotJSON(f"{value!r} is not a JSON number")
        return ("n", _dec(value))
    if isinstance(value, list):
        return ("a", tuple(_canon(v) for v in value))
    if isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise _NotJSON(f"object key {k!r} is not a string")
        return ("o", frozenset((k, _canon(v)) for k, v in value.items()))
    raise _NotJSON(f"{type(value).__name__} {value!r:.40} is not a JSON value")


def _dec(x) -> Decimal:
    return Decimal(x) if isinstance(x, int) else Decimal(repr(x))


def _kind_of(value) -> str:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return INT if value == value and value not in (float("inf"), float("-inf")) and value == int(value) else FRAC
    if isinstance(value, str):
        return STR
    if isinstance(value, list):
        return ARR
    if isinstance(value, dict):
        return OBJ
    raise InvalidSchemaError(f"not a JSON value: {value!r}")


def _possible_kinds(shape: Shape) -> set:
    """The kinds of the values ``shape`` may allow (from its enum when it has one)."""
    if shape.enum is None:
        return set(shape.kinds)
    kinds = set()
    for v in shape.enum:
        # A number may count as INT or FRAC depending on the draft/options: both, to be safe.
        kinds |= {INT, FRAC} if _kind_of(v) in (INT, FRAC) else {_kind_of(v)}
    return kinds & shape.kinds


# Control characters, which an EBNF literal writes as \xNN (quotes and backslashes are
# escaped by replacement).
_LIT_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# Keys the index walk looks at (identifiers, and `$schema`, which it checks everywhere).
_RESOURCE_KEYS = ('"$id"', '"id"', '"$anchor"', '"$dynamicAnchor"', '"$schema"')


def _may_declare_resources(schema) -> bool:
    """False only when no ``$id``/``id``/anchor/``$schema`` key appears anywhere in
    ``schema``: then indexing (a walk of every subschema) finds nothing. One C-speed
    serialization decides."""
    try:
        text = json.dumps(schema, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return True  # not plain JSON: index it and let the walk judge
    return any(k in text for k in _RESOURCE_KEYS)


def _lit(text: str) -> str:
    """An EBNF literal for ``text``."""
    if not _LIT_CONTROL.search(text):
        # The common case (a JSON-encoded key has quotes): two replaces, no loop.
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _rx(src: str) -> str:
    """An EBNF ``/regex/`` terminal for Python-``re`` source ``src`` (the empty string for an
    empty source: ``//`` would start a comment)."""
    if not src:
        return '""'
    return "/" + src.replace("/", "\\/") + "/"


# Keyed by the pattern text: rendering is cached per AST too, but hashing a large AST (a
# frozen dataclass tree, hashed anew on every lookup) cost a tenth of a translation.
@functools.cache  # one entry per format name
def format_source(name: str) -> str:
    """The regex the translator emits for the characters of a string of format ``name``
    (its JSON encoding, between the quotes)."""
    return ecma.render_json(ecma.full_language(FORMAT_PATTERNS[name]))


@functools.lru_cache(maxsize=1024)
def _search_source(src: str) -> str:
    return ecma.render_json(ecma.search_language(src))


def format_sources() -> list[str]:
    """Every regex source the engine receives for a ``format`` alone: the characters (as in
    ``and!``/``not!`` arguments) and the whole quoted string. Their DFAs ship prebuilt
    (``tools/prebuild_formats.py``)."""
    out = []
    for name in sorted(FORMAT_PATTERNS):
        body = format_source(name)
        out += [body, '"' + body + '"']
    return out


def _dump(value) -> str:
    if type(value) is str:  # what json.dumps does for a string, without its call overhead
        return encode_basestring(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _alt(parts: list[str]) -> str | None:
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return "(" + " | ".join(parts) + ")"


class Translator:
    """Turns one schema into EBNF rules. Options as in :func:`json_schema_to_ebnf`."""

    def __init__(self, schema, *, strict: bool, whitespace: str, max_whitespace: int, resolver, default_draft: int, property_order: str = "schema", spec_exact: bool = False, integer_fraction: bool = True, limits=None, indent=None):
        check_options(strict=strict, whitespace=whitespace, max_whitespace=max_whitespace, resolver=resolver, draft=default_draft, property_order=property_order, integer_fraction=integer_fraction, limits=limits, spec_exact=spec_exact, indent=indent)
        if not isinstance(schema, (bool, dict)):
            raise InvalidSchemaError(f"a schema must be a JSON object or a boolean, got {type(schema).__name__}")
        self.strict = strict
        # Off: objects silent about other keys are closed (see ``obj_clauses``).
        self.spec_exact = spec_exact
        self.any_order = property_order == "any"
        # Some open class of keys leaves a half-written key finitely many endings.
        self.finite_key_endings = False
        # JSON Schema counts 1.0 as an integer (draft 6 on); Pydantic models do not want it.
        self.integer_fraction = integer_fraction
        self.resolver = resolver
        self.docs: dict[str, tuple[object, int]] = {}
        self.anchors: dict[tuple[str, str], Subschema] = {}
        self.keep_alive: list = []
        self.proving: set = set()  # oneOfs whose disjointness is being proven (no re-entry)
        self._regex_cache: dict[str, re.Pattern] = {}
        self._resolved: dict[tuple[str, str], Subschema] = {}
        # Value rules found empty although referenced recursively while being built: the
        # translation is redone with them known empty (see ``grammar``).
        self.known_empty: set = set()
        limits = limits if limits is not None else _default_limits()
        # The caps of the translation (the JSON Schema fields of corral.Limits).
        self.limits = limits
        # The wall-clock budget of one translation (``grammar`` sets the deadline).
        self.budget_ms = limits.max_compile_ms
        self.deadline = math.inf
        # Set when the caller stopped waiting for a translation on its own thread.
        self.abandoned = False
        self.max_productions = limits.max_grammar_productions
        self.max_dfa_states = limits.max_dfa_states
        self.max_grammar_bytes = limits.max_grammar_bytes
        self.ws = "" if whitespace == "compact" else "ws"
        # With an indent, output is laid out as json.dumps(indent=...) writes it: value
        # rules depend on their nesting depth, and numbers are written canonically.
        self.indent = indent_string(indent)
        self._ws_rule = _rx(f"[ \\t\\n\\r]{{0,{max_whitespace}}}")
        self._reset()  # the per-pass state: rules, memo, warnings, depths
        _check_document_depth(schema, "", limits.max_schema_document_depth)
        draft = _draft_of(schema, default_draft)
        if draft == 0:
            raise UnsupportedSchemaError(f"$schema at /$schema: custom metaschema {schema['$schema']!r} (its vocabularies are unknown; corral reads drafts 4, 6, 7, 2019-09 and 2020-12)", "/$schema", "$schema")
        self.root = Subschema(schema, "", ROOT_URI, draft)
        self.docs[ROOT_URI] = (schema, draft)
        if _may_declare_resources(schema):
            self._index(schema, ROOT_URI, "", draft)

    # --- errors ----------------------------------------------------------------------

    def unsupported(self, sub: Subschema, keyword: str, why: str) -> None:
        """Raises in strict mode; otherwise records a warning (the keyword is dropped)."""
        pointer = sub.pointer + "/" + _escape_pointer(keyword)
        message = f"{keyword} at {pointer or '/'}: {why}"
        if self.strict:
            raise UnsupportedSchemaError(message + " (strict=False drops it with a warning)", pointer, keyword)
        self.warnings.append(f"dropped {message}")

    def unsupported_at(self, pointer: str, keyword: str, why: str) -> None:
        """:meth:`unsupported` for a keyword known by its pointer (``pointer`` is the
        keyword's own, or its schema's)."""
        if not pointer.endswith("/" + _escape_pointer(keyword)):
            pointer = pointer.rstrip("/") + "/" + _escape_pointer(keyword)
        message = f"{keyword} at {pointer}: {why}"
        if self.strict:
            raise UnsupportedSchemaError(message + " (strict=False drops it with a warning)", pointer, keyword)
        if f"dropped {message}" not in self.warnings:
            self.warnings.append(f"dropped {message}")

    def limit(self, sub: Subschema, keyword: str, why: str, limit: str, value: int) -> LimitExceededError:
        """A LimitExceededError naming the keyword's JSON pointer and the limit."""
        return self.limit_at(sub.pointer + ("/" + _escape_pointer(keyword) if keyword else ""), keyword, why, limit, value)

    def limit_at(self, pointer: str, keyword: str, why: str, limit: str, value: int) -> LimitExceededError:
        """A LimitExceededError naming the pointer and the limit."""
        return limit_error(f"{keyword or 'schema'} at {pointer or '/'}: {why}", limit, value, pointer, keyword)

    def check_count(self, shape: Shape, field: str, keyword: str, n: int | None) -> None:
        """LimitExceededError for a count the grammar would repeat more often than the
        engine's ``max_grammar_productions`` allows (it could never be compiled)."""
        if n is not None and n > self.max_productions:
            pointer = shape.count_ptrs.get(field) or shape_pointer(shape)
            raise self.limit_at(pointer, keyword, f"a count of {n} repetitions in the grammar", "max_grammar_productions", self.max_productions)

    def tick(self, what: str) -> None:
        """LimitExceededError once the translation has run past ``max_compile_ms``."""
        if self.abandoned:
            raise KeyboardInterrupt("the translation was abandoned by its caller")
        if time.monotonic() > self.deadline:
            raise limit_error(f"translating the JSON Schema took more than {self.budget_ms} ms, while translating {what}", "max_compile_ms", self.budget_ms)

    @staticmethod
    def invalid(sub: Subschema, keyword: str, why: str):
        pointer = sub.pointer + ("/" + _escape_pointer(keyword) if keyword else "")
        return InvalidSchemaError(f"{keyword or 'schema'} at {pointer or '/'}: {why}", pointer, keyword)

    # --- resources and $ref ----------------------------------------------------------

    def _index(self, node, base: str, pointer: str, draft: int) -> None:
        """Records the resources (``$id``) and anchors in ``node`` and below it (a walk of
        every subschema, with its own stack: any nesting depth is safe).

        An identifier given to two different subschemas is refused: which one a ``$ref``
        means is undefined (validators pick differently), and so is a ``$schema`` naming
        a metaschema corral does not read, anywhere in the document."""
        stack = [(node, base, draft, ())]
        while stack:
            node, base, draft, path = stack.pop()
            if not isinstance(node, dict):
                continue
            named = _draft_of(node, draft)
            if named == 0 and path:
                here = pointer + "".join("/" + _escape_pointer(str(t)) for t in path)
                raise UnsupportedSchemaError(
                    f"$schema at {here}/$schema: metaschema {node['$schema']!r} (corral reads drafts 4, 6, 7, 2019-09 and 2020-12)",
                    here + "/$schema",
                    "$schema",
                )
            if path and named != draft:
                # A draft changes only at the root of a resource (a subschema with its own
                # id): elsewhere `$schema` is not allowed, and validators read it
                # differently (jsonschema switches, the spec says ignore).
                # Its id may be spelled in the enclosing draft or in its own.
                idents = [node.get("id" if d == 4 else "$id") for d in (draft, named)]
                if not any(isinstance(i, str) and not i.startswith("#") for i in idents):
                    here = pointer + "".join("/" + _escape_pointer(str(t)) for t in path)
                    raise UnsupportedSchemaError(
                        f"$schema at {here}/$schema: changes the draft in a subschema that is not a schema resource (no $id); give it an $id or drop the $schema",
                        here + "/$schema",
                        "$schema",
                    )
            draft = named or draft
            if not node.keys().isdisjoint(_ID_KEYWORDS):
                # The pointer string is only built where an anchor needs it.
                here = pointer + "".join("/" + _escape_pointer(str(t)) for t in path)
                id_key = "id" if draft == 4 else "$id"
                ref_overrides = "$ref" in node and draft < 2019
                ident = node.get(id_key)
                if isinstance(ident, str) and not ref_overrides:
                    uri, frag = urldefrag(_join(base, ident, here, id_key))
                    if ident.startswith("#") and draft < 2019:
                        self._add_anchor((urldefrag(base)[0], frag), Subschema(node, here, base, draft), id_key)
                    else:
                        base = uri
                        known = self.docs.setdefault(base, (node, draft))
                        if known[0] is not node and base != ROOT_URI:
                            raise InvalidSchemaError(
                                f"{id_key} at {here}/{id_key}: {base} identifies another subschema too (which one a $ref means is undefined)",
                                here + "/" + id_key,
                                id_key,
                            )
                        if frag and draft < 2019:
                            self._add_anchor((base, frag), Subschema(node, here, base, draft), id_key)
                for key in ("$anchor", "$dynamicAnchor"):
                    if isinstance(node.get(key), str):
                        self._add_anchor((urldefrag(base)[0], node[key]), Subschema(node, here, base, draft), key)
            if node.keys().isdisjoint(_SUBSCHEMA_KEYWORDS):
                continue
            # Reversed onto the stack, so that subschemas are visited in document order
            # (the first of two equal anchors wins, as before).
            for _kw, child, tokens in reversed(list(_children(node))):
                stack.append((child, base, draft, path + tokens))

    def _add_anchor(self, key: tuple[str, str], sub: Subschema, keyword: str) -> None:
        """Records an anchor; the same name for another subschema of the same resource is
        refused. (A ``$dynamicAnchor`` may share its name with a ``$anchor`` of the same
        subschema.)"""
        known = self.anchors.setdefault(key, sub)
        if known.schema is not sub.schema:
            raise InvalidSchemaError(
                f"{keyword} at {sub.pointer}/{keyword}: #{key[1]} is also the anchor of {known.pointer or '/'} in {key[0]} (which one a $ref means is undefined)",
                sub.pointer + "/" + keyword,
                keyword,
            )

    def _enter(self, sub: Subschema) -> Subschema:
        """The sub with its own ``$id`` applied to its base URI (and its own draft)."""
        s = sub.schema
        if not isinstance(s, dict):
            return sub
        draft = _draft_of(s, sub.draft) or sub.draft
        id_key = "id" if draft == 4 else "$id"
        ident = s.get(id_key)
        base = sub.base
        if isinstance(ident, str) and not ident.startswith("#") and not ("$ref" in s and draft < 2019):
            base = urldefrag(_join(base, ident, sub.pointer, id_key))[0]
        if base == sub.base and draft == sub.draft:
            return sub
        return Subschema(s, sub.pointer, base, draft, sub.negated)

    def resolve(self, sub: Subschema, ref) -> Subschema:
        if not isinstance(ref, str):
            raise self.invalid(sub, "$ref", "must be a string")
        # The target depends only on the base URI and the reference (failures raise, and
        # are not kept).
        target = self._resolved.get((sub.base, ref))
        if target is None:
            target = self._resolved[(sub.base, ref)] = self._resolve(sub, ref)
        return target

    def _resolve(self, sub: Subschema, ref: str) -> Subschema:
        uri = _join(sub.base, ref, sub.pointer, "$ref")
        doc_uri, frag = urldefrag(uri)
        if doc_uri not in self.docs:
            self._load(sub, doc_uri, ref)
        doc, draft = self.docs[doc_uri]
        if frag and not frag.startswith("/"):
            target = self.anchors.get((doc_uri, frag))
            if target is None:
                raise self.invalid(sub, "$ref", f"`{ref}` names an anchor `{frag}` that does not exist")
            return target
        node, base, pointer = doc, doc_uri, ("" if doc is self.root.schema else ref.split("#")[0] + "#")
        ptr_base = "" if doc is self.root.schema else pointer
        path = ptr_base
        for raw in frag.split("/")[1:] if frag else []:
            token = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise self.invalid(sub, "$ref", f"`{ref}` points to nothing (no `{token}`)")
            path += "/" + _escape_pointer(token)
            if isinstance(node, dict):
                ident = node.get("id" if draft == 4 else "$id")
                if isinstance(ident, str) and not ident.startswith("#"):
                    base = urldefrag(_join(base, ident, path, "$id"))[0]
        return Subschema(node, path, base, (_draft_of(node, draft) or draft) if isinstance(node, dict) else draft)

    def _load(self, sub: Subschema, doc_uri: str, ref: str) -> None:
        found = None
        if callable(self.resolver):
            found = self.resolver(doc_uri)
        elif isinstance(self.resolver, dict):
            found = self.resolver.get(doc_uri)
        if found is None:
            raise self.invalid(sub, "$ref", f"cannot resolve `{ref}` (no schema for {doc_uri}; pass resolver=...)")
        if isinstance(found, (str, bytes)):
            try:
                found = json.loads(found)
            except (ValueError, RecursionError) as e:
                raise self.invalid(sub, "$ref", f"the document for {doc_uri} is not valid JSON ({e})") from None
        if not isinstance(found, (dict, bool)):
            raise self.invalid(sub, "$ref", f"the document for {doc_uri} is not a schema (an object or a boolean)")
        _check_document_depth(found, doc_uri + "#", self.limits.max_schema_document_depth)
        self.keep_alive.append(found)
        draft = _draft_of(found, sub.draft) or sub.draft
        self.docs[doc_uri] = (found, draft)
        self._index(found, doc_uri, doc_uri + "#", draft)

    # --- shapes ----------------------------------------------------------------------

    def shapes(self, subs: list) -> list[Shape]:
        """The conjunction of ``subs`` as a list of alternative shapes (unsatisfiable ones dropped)."""
        shape = Shape()
        disj: list = []
        for s in subs:
            self.absorb(shape, s, disj, ())
        out: list[Shape] = []
        self._expand(shape, disj, out)
        return out

    def _expand(self, shape: Shape, disj: list, out: list) -> None:
        # A loop over the pending disjunctions (each entry: its alternatives and the chain
        # of in-place subschemas it was found in), not a recursion per disjunction.
        stack = [(shape, disj)]
        while stack:
            shape, disj = stack.pop()
            if shape.unsat:
                continue
            if not disj:
                out.append(shape)
                if len(out) > self.limits.max_schema_alternatives:
                    raise limit_error("the schema expands to too many anyOf/oneOf/if combinations", "max_schema_alternatives", self.limits.max_schema_alternatives)
                continue
            self.tick("anyOf/oneOf/if alternatives")
            (alternatives, chain), rest = disj[0], disj[1:]
            for alternative in reversed(alternatives):
                s2 = shape.copy()
                new: list = []
                for s in alternative:
                    self.absorb(s2, s, new, chain)
                    if s2.unsat:
                        break
                stack.append((s2, new + rest))

    def absorb(self, shape: Shape, sub, disj: list, chain: tuple) -> None:
        """Adds the constraints of ``sub`` to ``shape``; disjunctions go to ``disj`` (with
        ``chain``, the subschemas being read in place around them)."""
        if isinstance(sub, SyntheticConstraint):
            sub.apply(shape)
            return
        key = sub.key()
        if key in chain:
            # The subschema needs itself, in place, with no value in between (a `$ref`
            # cycle through allOf/anyOf...). Its language is the least solution, as for a
            # recursive grammar rule: the cycle itself adds no value.
            shape.unsat = True
            return
        if (key[:3] + (not key[3],)) in chain:
            raise UnsupportedSchemaError(
                f"schema at {sub.pointer or '/'}: refers to its own negation in place (through `not`, `oneOf` or `if`, with no value in between), which has no solution",
                sub.pointer, "$ref",
            )
        self.depth += 1
        try:
            if self.depth > self.limits.max_schema_depth:
                raise self.limit(sub, "", "subschemas read in place (allOf, anyOf, not, $ref...) nest too deep", "max_schema_depth", self.limits.max_schema_depth)
            self._absorb(shape, sub, disj, chain + (key,))
        finally:
            self.depth -= 1

    def _absorb(self, shape: Shape, sub, disj: list, chain: tuple) -> None:
        if sub.negated:
            alts = self.negation(sub)
            if len(alts) == 1:
                for s in alts[0]:
                    self.absorb(shape, s, disj, chain)
            elif not alts:
                shape.unsat = True
            else:
                disj.append((alts, chain))
            return
        schema = sub.schema
        if schema is True:
            return
        if schema is False:
            shape.unsat = True
            return
        if not isinstance(schema, dict):
            raise self.invalid(sub, "", f"a schema must be an object or a boolean, got {_show(schema)}")
        self.tick(f"the subschema at {sub.pointer or '/'}")
        sub = self._enter(sub)
        draft = sub.draft
        if "$ref" in schema:
            target = self.resolve(sub, schema["$ref"])
            self.absorb(shape, target, disj, chain)
            if draft < 2019:
                return  # siblings of $ref are ignored before 2019-09
        for kw, val in schema.items():
            if _INTRODUCED.get(kw, 0) > draft:
                continue  # not a keyword of this draft: an unknown keyword, ignored
            handler = _KEYWORDS.get(kw)
            if handler is not None:
                handler(self, shape, sub, val, disj, chain)
            elif kw in ("$dynamicRef", "$recursiveRef"):
                self.unsupported(sub, kw, "dynamic references are not supported")
        if shape.kinds == set():
            shape.unsat = True

    # --- negation --------------------------------------------------------------------

    def negation(self, sub: Subschema) -> list[list]:
        """``not sub`` as alternatives (each a list of subs/synthetics to conjoin)."""
        schema = sub.schema
        if schema is True:
            return []
        if schema is False or schema == {}:
            return [[]] if schema is False else []
        if not isinstance(schema, dict):
            raise self.invalid(sub, "", "a schema must be an object or a boolean")
        pos = Subschema(schema, sub.pointer, sub.base, sub.draft)
        pos = self._enter(pos)
        draft = pos.draft
        alts: list[list] = []
        if "$ref" in schema:
            target = self.resolve(pos, schema["$ref"])
            alts.append([target.negate()])
            if draft < 2019:
                return alts
        for kw, val in schema.items():
            if _INTRODUCED.get(kw, 0) > draft:
                continue
            handler = _NEGATIONS.get(kw)
            if handler is not None:
                alts.extend(handler(self, pos, val, schema))
            elif kw in _KEYWORDS and kw not in _ANNOTATIONS:
                self.unsupported(pos, kw, "cannot be negated exactly (inside `not`, `oneOf` or `if`)")
        return alts

    # --- oneOf without negation ------------------------------------------------------

    def disjoint_branches(self, shape: Shape, sub: Subschema, branches: list[Subschema]) -> bool:
        """Whether no value can satisfy two of ``branches``, the ``oneOf`` of ``sub``.

        Then "exactly one branch" is "at least one", and the oneOf is emitted as an anyOf,
        with no negation. Conservative: False whenever no proof is found. Each branch is
        read as shapes (as the grammar will read it) in the context of ``shape`` (what is
        already known of the value) and of the keywords beside the oneOf.
        """
        key = sub.key()
        if key in self.proving:
            return False  # the oneOf is inside its own branch (through $ref): do not recurse
        # Keywords beside oneOf constrain every branch (often "type": "object"). Left out:
        # unevaluated* (they depend on the oneOf itself) and $id (already in sub.base).
        # Leaving a constraint out only widens the branches, so the proof stays sound.
        context = {k: v for k, v in sub.schema.items() if k not in ("oneOf", "$id", "id", "unevaluatedProperties", "unevaluatedItems")}
        self.keep_alive.append(context)
        context_sub = Subschema(context, sub.pointer, sub.base, sub.draft)
        strict, n_warnings = self.strict, len(self.warnings)
        # Strict while proving: a dropped keyword (strict=False) could make a negation
        # narrower than the schema, and a proof on it wrong.
        self.strict = True
        self.proving.add(key)
        try:
            per_branch = []
            for b in branches:
                s, disj, out = shape.copy(), [], []
                self.absorb(s, context_sub, disj, ())
                self.absorb(s, b, disj, ())
                self._expand(s, disj, out)
                per_branch.append(out)
            return all(self._shapes_disjoint(x, y) for xs, ys in itertools.combinations(per_branch, 2) for x in xs for y in ys)
        except CorralError:
            return False  # unsupported, too many alternatives...: no proof
        finally:
            self.strict = strict
            del self.warnings[n_warnings:]
            self.proving.discard(key)

    def _shapes_disjoint(self, a: Shape, b: Shape) -> bool:
        """Whether two shapes share no value (False when unsure)."""
        if a.enum is not None and b.enum is not None and a.enum_keys.isdisjoint(b.enum_keys):
            return True
        common = _possible_kinds(a) & _possible_kinds(b)
        if not common:
            return True
        if common == {OBJ}:
            # A discriminator: a property both require, with finite value sets that do not meet.
            for name in a.required:
                if name in b.required:
                    va, vb = self._finite_values(a, name), self._finite_values(b, name)
                    if va is not None and vb is not None and not any(json_equal(x, y) for x in va for y in vb):
                        return True
        return False

    def _finite_values(self, shape: Shape, name: str) -> list | None:
        """A finite superset of the values property ``name`` may have in ``shape``, or None.

        Only ``properties`` entries are read: patterns and other clauses can only narrow.
        """
        subs = [props[name] for props, _, _ in shape.obj_clauses if name in props]
        if not subs:
            return None
        values: list = []
        for s in self.shapes(subs):
            if s.enum is None:
                return None
            values.extend(s.enum)
        return values

    def synthetic(self, label: str, apply: Callable) -> SyntheticConstraint:
        s = SyntheticConstraint(apply, label)
        self.keep_alive.append(s)
        return s

    # --- values ----------------------------------------------------------------------

    def _canonical(self, sub):
        """The target of a sub that is only a ``$ref`` (with annotations beside it), so that
        every reference to one definition shares one value rule (not one per site)."""
        for _ in range(32):  # a chain of references; a cycle is left to absorb
            if not isinstance(sub, Subschema) or sub.negated or not isinstance(sub.schema, dict) or "$ref" not in sub.schema:
                break
            entered = self._enter(sub)
            if entered.draft >= 2019 and not all(k == "$ref" or k in _ANNOTATIONS for k in sub.schema):
                break  # siblings of $ref apply too (2019-09 on)
            sub = self.resolve(entered, sub.schema["$ref"])
        return sub

    def value_rule(self, subs: list, depth: int = 0) -> str | None:
        """The rule name for a value satisfying all ``subs`` (None: nothing does), written
        ``depth`` containers deep in the output (only an indent makes that matter)."""
        subs = [self._canonical(s) for s in subs]
        key = tuple(s.key() if isinstance(s, Subschema) else ("syn", id(s)) for s in subs)
        if self.indent is not None:
            if depth > self.limits.max_indent_depth:
                self.depth_cut = True
                return None
            # A value that lays out no container is the same at every depth: one rule.
            if key in self.depth_free:
                return self.depth_free[key]
            free_key, key = key, key + (("depth", depth),)
        if key in self.known_empty:
            return None
        if key in self.memo:
            name = self.memo[key]
            if name in self.building:
                self.early.add(name)  # a recursive reference, made before its body is known
            return name
        name = f"v{len(self.memo)}"
        self.memo[key] = name
        self.rule_keys[name] = key
        self.rules[name] = None
        self.building.add(name)
        self.value_depth += 1
        outer_depth, self.json_depth = self.json_depth, depth
        layouts = self.layouts
        try:
            if self.value_depth > self.limits.max_schema_value_depth:
                where = next((s.pointer for s in subs if isinstance(s, Subschema)), "")
                raise self.limit_at(where, "", "values nest too deep in the schema, through properties, items and references", "max_schema_value_depth", self.limits.max_schema_value_depth)
            shapes = self.shapes(subs)
            alts = [self.emit_shape(s) for s in shapes]
        finally:
            self.value_depth -= 1
            self.json_depth = outer_depth
            self.building.discard(name)
        body = _alt([a for a in alts if a is not None])
        if body is None:
            # Unsatisfiable: callers drop what needs it. A recursive reference made while
            # building it is redone (see ``grammar``) with the rule known empty.
            self.memo[key] = None
            del self.rules[name]
            if name in self.early:
                self.found_empty.add(key)
            return None
        self.rules[name] = body
        if self.indent is not None and self.layouts == layouts:
            self.depth_free[free_key] = name
        return name

    def emit_shape(self, shape: Shape) -> str | None:
        if shape.enum is not None:
            return self.emit_enum(shape)
        parts = []
        if NULL in shape.kinds and not any(v is None for v in shape.not_values):
            parts.append('"null"')
        if BOOL in shape.kinds:
            for text, value in (("true", True), ("false", False)):
                if not any(json_equal(value, v) for v in shape.not_values):
                    parts.append(_lit(text))
        if shape.kinds & {INT, FRAC}:
            parts.append(self.emit_number(shape))
        if STR in shape.kinds:
            parts.append(self.emit_string(shape))
        if self.indent is not None and shape.kinds & {ARR, OBJ}:
            parts = [self.shared_rule(_alt(parts))]  # the same scalars at every depth
        if ARR in shape.kinds:
            parts.append(self.emit_array(shape))
        if OBJ in shape.kinds:
            parts.append(self.emit_object(shape))
        return _alt(parts)

    def shared_rule(self, body: str | None) -> str | None:
        """``body`` as one rule that every place writing the same long body refers to (with an
        indent, the value rules of each depth repeat their scalars)."""
        if body is None or len(body) < 64:
            return body
        name = self.shared.get(body)
        if name is None:
            name = self.shared[body] = f"s{len(self.shared)}"
            self.rules[name] = body
        return name

    def emit_enum(self, shape: Shape) -> str | None:
        parts = []
        for i, value in enumerate(shape.enum):
            if i % 1024 == 0:
                self.tick("an enum")
            if not self.check(value, shape, member=True):
                continue
            if _kind_of(value) in (INT, FRAC):
                parts.append(self.number_literal(value))
            elif isinstance(value, (dict, list)):
                parts.append(self.literal_value(value, self.json_depth))
            else:
                parts.append(_lit(_dump(value)))
        return _alt(list(dict.fromkeys(parts)))

    def separators(self, brackets: str, depth: int) -> tuple[str, str, str, str]:
        """EBNF (open, close, comma, colon) of a non-empty container written ``depth``
        containers deep; ``brackets`` is ``"{}"`` or ``"[]"``. With an indent, as
        ``json.dumps(indent=...)`` lays it out: a newline and the next level's indentation
        after the opening bracket and after each comma, a newline and this level's before
        the closing bracket, ``": "`` between key and value."""
        if self.indent is not None:
            self.layouts += 1
            inner = "\n" + self.indent * (depth + 1)
            return _lit(brackets[0] + inner), _lit("\n" + self.indent * depth + brackets[1]), _lit("," + inner), _lit(": ")
        ws = self.ws
        if not ws:
            return _lit(brackets[0]), _lit(brackets[1]), '","', '":"'
        return f"{_lit(brackets[0])} {ws}", f"{ws} {_lit(brackets[1])}", f'{ws} "," {ws}', f'{ws} ":" {ws}'

    def number_literal(self, value) -> str:
        """EBNF for the spellings of one number (an enum or const member). With an indent,
        only those json.dumps writes for what json.loads reads from them: the integer
        (when the value is one) and ``repr`` of the float (when that float is the value),
        each only if it is one of the plain spellings allowed otherwise."""
        d = _dec(value)
        forms = num.canonical_forms(d)
        if self.indent is None:
            return _rx(forms)
        allowed = re.compile(forms)
        spellings = []
        if d == d.to_integral_value():
            spellings.append(str(int(d)))
        f = float(d)
        if math.isfinite(f) and Decimal(repr(f)) == d:
            spellings.append(repr(f))
        out = []
        for text in spellings:
            plain = text
            if "e" in text:  # the same number written out, as the plain forms are
                plain = format(Decimal(text), "f")
                plain = plain if "." in plain else plain + ".0"
            if allowed.fullmatch(plain):
                out.append(_lit(text))
        return _alt(list(dict.fromkeys(out)))

    def literal_value(self, value, depth: int = 0) -> str:
        """A JSON literal with whitespace allowed where the output shape allows it (laid
        out for ``depth`` with an indent)."""
        if self.indent is not None:
            if isinstance(value, (dict, list)):
                if not value:
                    return _lit(_dump(value))
                open_, close, comma, colon = self.separators("{}" if isinstance(value, dict) else "[]", depth)
                if isinstance(value, dict):
                    items = [f"{_lit(_dump(k))} {colon} {self.literal_value(v, depth + 1)}" for k, v in value.items()]
                else:
                    items = [self.literal_value(v, depth + 1) for v in value]
                return f"{open_} " + f" {comma} ".join(items) + f" {close}"
            if _kind_of(value) in (INT, FRAC):
                return self.number_literal(value)
            return _lit(_dump(value))
        ws = f" {self.ws} " if self.ws else " "
        if isinstance(value, (dict, list)) and not value:
            return _lit(_dump(value)) if not self.ws else ('"{"' if isinstance(value, dict) else '"["') + ws + ('"}"' if isinstance(value, dict) else '"]"')
        if isinstance(value, dict):
            items = [_lit(_dump(k)) + ws + '":"' + ws + self.literal_value(v) for k, v in value.items()]
            return '"{"' + ws + (ws + '","' + ws).join(items) + ws + '"}"' if items else '"{"' + ws + '"}"'
        if isinstance(value, list):
            items = [self.literal_value(v) for v in value]
            return '"["' + ws + (ws + '","' + ws).join(items) + ws + '"]"' if items else '"["' + ws + '"]"'
        if _kind_of(value) in (INT, FRAC):
            return _rx(num.canonical_forms(_dec(value)))
        return _lit(_dump(value))

    # numbers

    def emit_number(self, shape: Shape) -> str | None:
        kinds = shape.kinds & {INT, FRAC}
        # The draft of the subschema that said "integer" decides (a resource may have its own).
        int_suffix = r"(?:\.0+)?" if self.integer_fraction and not shape.int_without_fraction else ""
        constrained = shape.lo or shape.hi or shape.mults or shape.neg_mults or any(_kind_of(v) in (INT, FRAC) for v in shape.not_values)
        if not constrained and self.indent is not None:
            # Canonical spellings only (json.dumps of what json.loads reads). CANONICAL_NUMBER
            # lies within NUMBER; integers and fractions are told apart by their spelling.
            if kinds == {INT, FRAC}:
                return _rx(num.CANONICAL_NUMBER)
            if kinds == {INT}:
                return _bool_terms([_rx(num.INTEGER + int_suffix), _rx(num.CANONICAL_PLAIN_NUMBER)], []) if int_suffix else _rx(num.CANONICAL_INTEGER)
            return _bool_terms([_rx(num.CANONICAL_NUMBER)], [_rx(num.INTEGER + r"(?:\.0+)?"), _rx(num.CANONICAL_EXP_INTEGRAL)])
        if not constrained:
            if kinds == {INT, FRAC}:
                return _rx(num.NUMBER)
            if kinds == {INT}:
                return _rx(num.INTEGER + int_suffix)
            return _rx(r"-?(?:0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*")
        terms: list[str] = []
        negs: list[str] = []
        if kinds == {INT}:
            lo = hi = None
            if shape.lo:
                v, excl = shape.lo
                lo = int(v.to_integral_value(rounding="ROUND_FLOOR")) + 1 if excl or v != v.to_integral_value() else int(v)
                if not excl and v == v.to_integral_value():
                    lo = int(v)
            if shape.hi:
                v, excl = shape.hi
                hi = int(v.to_integral_value(rounding="ROUND_CEILING")) - 1 if excl or v != v.to_integral_value() else int(v)
                if not excl and v == v.to_integral_value():
                    hi = int(v)
            body = num.int_range(lo, hi)
            if body is None:
                return None
            terms.append("(?:" + body + ")" + int_suffix)
        else:
            if kinds == {FRAC}:
                negs.append(num.INTEGER + r"(?:\.0+)?")
            if shape.lo:
                if shape.hi and (shape.lo[0] > shape.hi[0] or (shape.lo[0] == shape.hi[0] and (shape.lo[1] or shape.hi[1]))):
                    return None
                terms.append(num.decimal_ge(*shape.lo))
            if shape.hi:
                terms.append(num.decimal_le(*shape.hi))
            # A bound's regex matches plain decimals only (tests check), so the generic
            # number is needed only without one; one intersection fewer to build.
            if not terms:
                terms.append(num.PLAIN_NUMBER)
        if self.indent is not None:
            # Bounds and steps are plain decimals: the canonical ones without an exponent.
            terms.append(num.CANONICAL_PLAIN_NUMBER)
        for v in shape.not_values:
            if _kind_of(v) in (INT, FRAC):
                negs.append(num.canonical_forms(_dec(v)))
        if shape.mults or shape.neg_mults:
            return self.emit_multiples(shape, terms, negs)
        return _bool_terms([_rx(t) for t in terms], [_rx(n) for n in negs])

    def emit_multiples(self, shape: Shape, terms: list[str], negs: list[str]) -> str | None:
        """Numbers with ``multipleOf``: the product of the terms' automata and each step's
        residue automaton, minimized and written as one rule per state (a residue
        automaton has no short regular expression: 7 states make ~20 KB of regex)."""
        dfas = []
        for steps, positive in ((shape.mults, True), (shape.neg_mults, False)):
            for step, pointer in steps:
                cap = self.limits.max_multiple_states
                dfa = num.multiple_dfa(step, cap)
                if dfa is None:
                    raise UnsupportedSchemaError(
                        f"multipleOf at {pointer}: {step} needs more than Limits.max_multiple_states = {cap} residue states (m·(e+2) for a step m·10^-e); raise the limit to allow it",
                        pointer, "multipleOf",
                    )
                dfas.append((dfa, positive))
        pointer = (shape.mults or shape.neg_mults)[0][1]
        try:
            dfa = regular.product([(t, True) for t in terms] + [(n, False) for n in negs], dfas, "-0123456789.", self.limits.max_number_states)
        except regular.TooLarge:
            raise self.limit_at(pointer, "", "the numbers allowed here, bounds and multipleOf together, need an automaton of too many states", "max_number_states", self.limits.max_number_states) from None
        if dfa is None:
            return None
        return self._dfa_rules(dfa)

    def _dfa_rules(self, dfa) -> str:
        """One right-linear rule per state of ``dfa`` (over digits, ``-`` and ``.``);
        returns the start state's rule name."""
        base = f"n{len(self.memo)}_{len(self.rules)}"
        for q, out in enumerate(dfa.moves):
            by_target: dict[int, list[str]] = {}
            for ch, t in out.items():
                by_target.setdefault(t, []).append(ch)
            opts = ['""'] if q in dfa.finals else []
            for t, chars in sorted(by_target.items()):
                digits = sorted(int(c) for c in chars if c.isdigit())
                others = [c for c in chars if not c.isdigit()]
                labels = [_lit(c) for c in sorted(others)]
                if len(digits) == 1:
                    labels.append(_lit(str(digits[0])))
                elif digits:
                    labels.append(_rx(num._digits_class(digits)))
                label = labels[0] if len(labels) == 1 else "(" + " | ".join(labels) + ")"
                opts.append(f"{label} {base}_{t}")
            self.rules[f"{base}_{q}"] = _alt(opts)
        return f"{base}_0"

    # strings

    def _state_rules(self, base: str, moves: dict, can_stop, lead_of) -> bool:
        """Writes one rule per state of a counted list or object (``moves``: state → the
        (item, next state) pairs; ``can_stop(*state)``: may it close there), keeping only
        states from which it can still close. False if the start state cannot: no value."""
        # Backward reachability from the states that may close (a worklist: linear).
        back: dict = {}
        for st, out in moves.items():
            for _, t in out:
                back.setdefault(t, []).append(st)
        alive = {st for st in moves if can_stop(*st)}
        todo = list(alive)
        while todo:
            for st in back.get(todo.pop(), ()):
                if st not in alive:
                    alive.add(st)
                    todo.append(st)
        if (0, 0) not in alive:
            return False
        for st, out in moves.items():
            if st not in alive:
                continue
            lead = lead_of(st)
            opts = ['""'] if can_stop(*st) else []
            opts += [f"{lead}{item} {base}_{t[0]}_{t[1]}" for item, t in out if t in alive]
            self.rules[f"{base}_{st[0]}_{st[1]}"] = _alt(opts)
        return True

    def string_body(self, shape: Shape) -> str | None:
        """EBNF for the encoded characters between the quotes (None: no string at all)."""
        terms: list[str] = []
        negs: list[str] = []
        if shape.max_len is not None and shape.max_len < shape.min_len:
            return None
        if shape.min_len or shape.max_len is not None:
            # A counted character class needs at least one DFA state per character: past
            # max_dfa_states it can never be built (and the count may not even parse).
            for field, keyword, n in (("min_len", "minLength", shape.min_len), ("max_len", "maxLength", shape.max_len)):
                if n is not None and n > self.max_dfa_states:
                    pointer = shape.count_ptrs.get(field) or "/"
                    raise self.limit_at(pointer, keyword, f"a length of {n} characters together with a pattern or format is one automaton of at least that many states", "max_dfa_states", self.max_dfa_states)
            hi = "" if shape.max_len is None else str(shape.max_len)
            terms.append(_rx(f"(?:{ecma.JSON_CHAR}){{{shape.min_len},{hi}}}"))
        for src, pointer in shape.patterns:
            terms.append(_rx(self.pattern_source(src, pointer)))
        for src, pointer in shape.neg_patterns:
            negs.append(_rx(self.pattern_source(src, pointer)))
        for name, _pointer in shape.formats:
            terms.append(_rx(format_source(name)))
        for name, _pointer in shape.neg_formats:
            negs.append(_rx(format_source(name)))
        for v in shape.not_values:
            if isinstance(v, str):
                negs.append(_lit(_dump(v)[1:-1]))
        if not terms:
            terms.append(_rx(f"(?:{ecma.JSON_CHAR})*"))
        return _bool_terms(terms, negs)

    def emit_string(self, shape: Shape) -> str | None:
        plain = not (shape.patterns or shape.neg_patterns or shape.formats or shape.neg_formats)
        plain = plain and not any(isinstance(v, str) for v in shape.not_values)
        longest = max(shape.min_len, shape.max_len or 0)
        if plain and longest > LONG_STRING and (shape.max_len is None or shape.max_len >= shape.min_len):
            # Each chunk of the bound is one repetition in the grammar: a count past what the
            # engine may expand is refused here, at its keyword, not in the generated text.
            for field, keyword, n in (("min_len", "minLength", shape.min_len), ("max_len", "maxLength", shape.max_len)):
                if n is not None and n // STRING_CHUNK > self.max_productions:
                    pointer = shape.count_ptrs.get(field) or "/"
                    raise self.limit_at(pointer, keyword, f"a length of {n} characters is {n // STRING_CHUNK} chunks of {STRING_CHUNK} in the grammar", "max_grammar_productions", self.max_productions)
            return _chunked_string(shape.min_len, shape.max_len)
        body = self.string_body(shape)
        if body is None:
            return None
        if body.startswith("/") and body.endswith("/") and body.count("/") - body.count("\\/") == 2:
            return '/"' + body[1:-1] + '"/'
        return '"\\"" ' + body + ' "\\""'

    def pattern_source(self, src: str, pointer: str) -> str:
        """The regex for the JSON-encoded characters of strings in which ``pattern`` ``src``
        finds a match."""
        self.pattern_ast(src, pointer)  # errors name the pointer
        return _search_source(src)

    def pattern_ast(self, src: str, pointer: str):
        try:
            return ecma.search_language(src)
        except ecma.PatternError as e:
            cls = UnsupportedSchemaError if e.unsupported else InvalidSchemaError
            raise cls(f"pattern at {pointer}: {e.message} (at offset {e.position} of {src!r})", pointer, "pattern") from None

    def python_regex(self, src: str, pointer: str, full: bool = False) -> re.Pattern:
        key = ("F" if full else "S") + src
        rx = self._regex_cache.get(key)
        if rx is None:
            tree = ecma.full_language(src) if full else self.pattern_ast(src, pointer)
            rx = re.compile(ecma.render_value(tree), re.DOTALL)
            self._regex_cache[key] = rx
        return rx

    # arrays

    def item_subs(self, shape: Shape, index: int) -> list:
        subs = []
        for prefix, rest in shape.arr_clauses:
            if index < len(prefix):
                subs.append(prefix[index])
            elif rest is not None:
                subs.append(rest)
        return subs

    def emit_array(self, shape: Shape) -> str | None:
        open_, close, comma, _ = self.separators("[]", self.json_depth)
        if self.indent is None:
            return self._emit_array(shape, shape.min_items, open_, close, comma)
        # json.dumps writes an empty array as [] and a non-empty one across lines: the
        # non-empty ones are built with at least one item, [] is added when allowed.
        contains = shape.contains
        empty = shape.min_items == 0 and not (len(contains) == 1 and contains[0][1] > 0)
        return _alt([self._emit_array(shape, max(shape.min_items, 1), open_, close, comma), _lit("[]") if empty else None])

    def _emit_array(self, shape: Shape, lo: int, open_: str, close: str, comma: str) -> str | None:
        """The arrays of ``shape`` with at least ``lo`` items."""
        hi = shape.max_items
        if hi is not None and hi < lo:
            return None
        if shape.unique and (hi is None or hi > 1):
            # Only the trivial case is exact; the keyword was reported when absorbed.
            pass
        contains = shape.contains
        if len(contains) > 1:
            raise UnsupportedSchemaError(f"contains at {contains[1][0].pointer}: more than one `contains` on one array", contains[1][0].pointer, "contains")
        if contains:
            c_sub, c_min, c_max = contains[0]
            return self._array_counted(shape, lo, c_sub, c_min, c_max, open_, close, comma)
        # The tuple positions one by one, then the rest as a counted repetition (the
        # engine bounds its counts by max_grammar_productions; they are never spelled out).
        explicit = max([len(p) for p, _ in shape.arr_clauses] + [0])
        if hi is not None:
            explicit = min(explicit, hi)
        items = []
        depth = self.json_depth + 1
        for i in range(explicit):
            items.append(self.value_rule(self.item_subs(shape, i), depth))
        rest = self.value_rule(self.item_subs(shape, explicit), depth) if (hi is None or hi > explicit) else None
        tail_lo = max(0, lo - explicit)
        tail_hi = None if hi is None else hi - explicit
        self.check_count(shape, "min_items", "minItems", tail_lo)
        self.check_count(shape, "max_items", "maxItems", tail_hi)

        def counted(body: str, a: int, b: int | None) -> str:
            if (a, b) == (0, None):
                return f"({body})*"
            if (a, b) == (1, None):
                return f"({body})+"
            if (a, b) == (0, 1):
                return f"({body})?"
            if a == b:
                return f"({body}){{{a}}}" if a != 1 else body
            return f"({body}){{{a},{'' if b is None else b}}}"

        # The items after the tuple positions, knowing whether one precedes them.
        if rest is None or tail_hi == 0:
            if tail_lo > 0:
                return None
            seq = ""
        elif explicit == 0:
            if tail_lo == 0:
                more = "" if tail_hi == 1 else " " + counted(f"{comma} {rest}", 0, None if tail_hi is None else tail_hi - 1)
                seq = f"({rest}{more})?"
            else:
                seq = f"{rest} " + counted(f"{comma} {rest}", tail_lo - 1, None if tail_hi is None else tail_hi - 1)
        else:
            seq = counted(f"{comma} {rest}", tail_lo, tail_hi)
        for i in range(explicit - 1, -1, -1):
            item = items[i]
            if item is None:
                if i < lo:
                    return None
                seq = ""
                continue
            if seq == "" and tail_lo > 0:
                return None
            lead = "" if i == 0 else comma + " "
            step = f"{lead}{item} {seq}".strip()
            seq = step if i < lo else f"({step})?"
        return " ".join(part for part in (open_, seq, close) if part)

    def _array_counted(self, shape, lo, c_sub, c_min, c_max, open_, close, comma) -> str | None:
        hi = shape.max_items
        explicit = max([len(p) for p, _ in shape.arr_clauses] + [lo, 0])
        if hi is not None:
            cap = self.limits.max_counted_items
            if hi > cap:
                raise UnsupportedSchemaError(
                    f"contains at {c_sub.pointer}: with maxItems above Limits.max_counted_items = {cap} (each position is counted); raise the limit to allow it", c_sub.pointer, "contains"
                )
            explicit = hi
        cap = c_min if c_max is None else c_max + 1
        base = f"a{len(self.memo)}_{len(self.rules)}"
        last = max(explicit, 1) if hi is None else hi
        # One state per (items so far, matches so far): refuse before spelling out a count
        # that large (minItems or minContains of a million).
        states = (last + 1) * (cap + 1)
        if states > self.limits.max_spelled_count:
            raise self.limit_at(c_sub.pointer, "contains", f"counting `contains` matches with minItems/maxItems/minContains/maxContains needs {states} grammar states", "max_spelled_count", self.limits.max_spelled_count)

        def step(i: int) -> int:
            # Without maxItems, positions past the tuple prefix (and past the first, for
            # the comma) are all alike.
            return min(i + 1, last) if hi is None else i + 1

        def can_stop(i: int, c: int) -> bool:
            return i >= lo and c >= c_min and (c_max is None or c <= c_max)

        # The states (items so far, matches so far) and their moves, then only the states
        # from which the array can still end are emitted.
        moves: dict[tuple[int, int], list] = {}
        todo = [(0, 0)]
        while todo:
            i, c = todo.pop()
            if (i, c) in moves:
                continue
            self.tick("an array's `contains` counts")
            out = []
            if hi is None or i < hi:
                subs = self.item_subs(shape, min(i, explicit))
                counted = self.value_rule(subs + [c_sub], self.json_depth + 1)
                plain = self.value_rule(subs + ([c_sub.negate()] if c_max is not None else []), self.json_depth + 1)
                if counted is not None and (c_max is None or c + 1 <= c_max):
                    out.append((counted, (step(i), min(c + 1, cap))))
                if plain is not None:
                    out.append((plain, (step(i), c)))
            moves[(i, c)] = out
            todo.extend(t for _, t in out)
        if not self._state_rules(base, moves, can_stop, lambda st: "" if st[0] == 0 else comma + " "):
            return None
        rule = lambda i, c: f"{base}_{i}_{c}"  # noqa: E731

        return f"{open_} {rule(0, 0)} {close}"

    # objects

    def obj_clauses(self, shape: Shape) -> list:
        """The object clauses of ``shape`` as the grammar enforces them: unless
        ``spec_exact``, an object whose schema names keys (``properties``, ``required``) and
        says nothing about others (no ``additionalProperties``, ``patternProperties`` or
        ``unevaluatedProperties`` in any clause) gets one more clause closing it to the
        named keys, which a model would otherwise keep inventing. An object that names no
        key stays open: closing it would leave only ``{}``."""
        clauses = shape.obj_clauses
        if self.spec_exact or any(patterns or additional is not None for _, patterns, additional in clauses):
            return clauses
        named: dict[str, None] = {}
        for props, _, _ in clauses:
            named.update(dict.fromkeys(props))
        named.update(dict.fromkeys(shape.required))
        if not named:
            return clauses
        anything = Subschema(True, "", ROOT_URI, self.root.draft)
        return clauses + [(dict.fromkeys(named, anything), [], Subschema(False, "", ROOT_URI, self.root.draft))]

    def object_layout(self, shape: Shape):
        """(named keys in order, value subs per name, additional key classes).

        A class is (key EBNF body, value subs); named keys never fall in a class.
        """
        # Properties' names, then required names, each once (dict: ordered, hashed).
        ordered: dict[str, None] = {}
        for props, _, _ in shape.obj_clauses:
            ordered.update(dict.fromkeys(props))
        ordered.update(dict.fromkeys(shape.required))
        names: list[str] = list(ordered)
        values: dict[str, list | None] = {}
        for k in names:
            subs: list = []
            for props, patterns, additional in self.obj_clauses(shape):
                # A named key obeys its schema and every pattern it matches; only keys
                # with neither fall to additionalProperties.
                matched = [p_sub for src, p_sub in patterns if self.python_regex(src, p_sub.pointer).fullmatch(k)]
                if k in props:
                    subs.append(props[k])
                subs.extend(matched)
                if k not in props and not matched and additional is not None:
                    subs.append(additional)
            if k in shape.forbidden or (shape.prop_names and not self.valid(k, shape.prop_names)):
                values[k] = None
            else:
                values[k] = subs
        clauses = self.obj_clauses(shape)
        all_patterns = [(src, p_sub, ci) for ci, (_, patterns, _) in enumerate(clauses) for src, p_sub in patterns]
        cap = self.limits.max_pattern_properties
        if len(all_patterns) > cap:
            raise UnsupportedSchemaError(
                f"patternProperties at {all_patterns[0][1].pointer}: more than {cap} patterns on one object (Limits.max_pattern_properties; each pattern doubles the key classes); raise the limit to allow more",
                all_patterns[0][1].pointer, "patternProperties",
            )
        classes = []
        # Named and forbidden keys never fall in a class of other keys.
        excluded = names + sorted(k for k in shape.forbidden if k not in names)
        named_body = "|".join(re.escape(_dump(k)[1:-1]) for k in excluded)
        for chosen in itertools.product((True, False), repeat=len(all_patterns)):
            subs = []
            closed = False
            for ci, (_, _patterns, additional) in enumerate(clauses):
                hit = [p for (src, p, cj), on in zip(all_patterns, chosen, strict=True) if on and cj == ci]
                if hit:
                    subs.extend(hit)
                elif additional is not None:
                    if additional.schema is False:
                        closed = True
                    subs.append(additional)
            if closed:
                continue
            terms = [_rx(f"(?:{ecma.JSON_CHAR})*")]
            negs = []
            for (src, p, _), on in zip(all_patterns, chosen, strict=True):
                (terms if on else negs).append(_rx(self.pattern_source(src, p.pointer)))
            if named_body:
                negs.append(_rx(named_body))
            if shape.prop_names:
                pn = self.key_body(shape.prop_names)
                if pn is None:
                    continue
                terms.append(pn)
            term = _bool_terms(terms, negs)
            if term is None:
                continue  # no key falls in this class (`.*` not matching, a named key's own pattern)
            # Any key but finitely many named ones: a half-written key always has
            # infinitely many endings, with no need to ask.
            plain = len(terms) == 1 and len(negs) == (1 if named_body else 0)
            classes.append((term, subs, plain))
        # A class of finitely many keys (a propertyNames enum, a pattern such as ^(a|b)$)
        # becomes named keys, so that each may appear at most once; in the open classes
        # left, the matcher keeps keys distinct (see json_keys in corral-core), so counts
        # of entries are counts of properties.
        open_classes = []
        for term, subs, plain in classes:
            keys = regular.finite_language(term, MAX_ENUMERATED_KEYS)
            if keys is None:
                # A class shaped by patterns may leave a half-written key finitely many
                # endings (`^(abc|x+)$` after `ab`): the matcher then checks half-written
                # keys against the written ones too (see json_keys in the core). Deciding
                # it exactly costs an automaton product per class: not worth its time.
                self.finite_key_endings |= not plain
                open_classes.append((term, subs))
                continue
            for encoded in keys:
                k = json.loads(f'"{encoded}"')
                if k not in values:
                    names.append(k)
                    values[k] = subs
        return names, values, open_classes


    def key_body(self, subs: list) -> str | None:
        """The encoded-key language of a ``propertyNames`` schema."""
        parts = []
        for shape in self.shapes(subs):
            if STR not in shape.kinds:
                continue
            if shape.enum is not None:
                parts.extend(_lit(_dump(v)[1:-1]) for v in shape.enum if isinstance(v, str) and self.check(v, shape))
            else:
                body = self.string_body(shape)
                if body is not None:
                    parts.append(body)
        return _alt(parts)

    def emit_object(self, shape: Shape) -> str | None:
        # Passed one by one: a call with *args runs in a C frame of its own, and this call
        # recurses once per nested object.
        open_, close, comma, colon = self.separators("{}", self.json_depth)
        if self.indent is None:
            return self._emit_object(shape, shape.min_props, open_, close, comma, colon)
        # As for arrays: {} apart, the others with at least one member.
        empty = shape.min_props == 0 and not shape.required
        return _alt([self._emit_object(shape, max(shape.min_props, 1), open_, close, comma, colon), _lit("{}") if empty else None])

    def _emit_object(self, shape: Shape, lo: int, open_: str, close: str, comma: str, colon: str) -> str | None:
        """The objects of ``shape`` with at least ``lo`` members."""
        names, values, classes = self.object_layout(shape)
        for k in shape.required:
            if values.get(k) is None:
                return None
        kv: dict[str, str | None] = {}
        depth = self.json_depth + 1
        for k in names:
            if values[k] is None:
                kv[k] = None
                continue
            rule = self.value_rule(values[k], depth)
            kv[k] = None if rule is None else f"{_lit(_dump(k))} {colon} {rule}"
            if kv[k] is None and k in shape.required:
                return None
        extra = []
        for key_body, subs in classes:
            rule = self.value_rule(subs, depth)
            if rule is not None:
                extra.append(f'"\\"" {key_body} "\\"" {colon} {rule}')
        extra_kv = _alt(extra)
        hi = shape.max_props
        if hi is not None and hi < lo:
            return None
        cap = hi if hi is not None else max(lo, 1)
        base = f"o{len(self.memo)}_{len(self.rules)}"
        if self.any_order:
            if lo != shape.min_props:
                shape = shape.copy()
                shape.min_props = lo
            return self._object_any_order(names, kv, extra_kv, shape, cap, base, comma, open_, close)
        if extra_kv is not None:
            self.check_count(shape, "min_props", "minProperties", lo)
            self.check_count(shape, "max_props", "maxProperties", hi)
        def tail(c: int) -> str | None:
            need = max(0, lo - c)
            room = None if hi is None else hi - c
            if extra_kv is None or room == 0:
                return "" if need == 0 else None
            if room is not None and room < need:
                return None
            if c == 0:
                if need == 0:
                    more = "*" if room is None else (f"{{0,{room - 1}}}" if room > 1 else "")
                    return f"({extra_kv} ({comma} {extra_kv}){more})?" if more else f"({extra_kv})?"
                more = f"{{{need - 1},}}" if room is None else f"{{{need - 1},{room - 1}}}"
                return f"{extra_kv} ({comma} {extra_kv}){more}"
            rep = f"{{{need},}}" if room is None else f"{{{need},{room}}}"
            rep = "*" if rep == "{0,}" else rep
            return f"({comma} {extra_kv}){rep}"

        required = set(shape.required)
        # chain(i, c): the entries from named key i on, c counted so far (c never passes
        # i or cap). Built from the last key back, without recursion.
        n = len(names)
        states = (n + 1) * (min(n, cap) + 1)
        # Ten times the cap of `contains`: these states are cheaper (no item rule each).
        if states > 10 * self.limits.max_spelled_count:
            raise self.limit_at(shape_pointer(shape), "properties", f"{n} properties counted up to {cap} need {states} grammar states, more than 10 × the limit an object may have", "max_spelled_count", self.limits.max_spelled_count)
        cache: dict[tuple[int, int], str | None] = {}

        def chain(i: int, c: int) -> str | None:
            return cache[(i, c)]

        for i in range(n, -1, -1):
            self.tick("an object's properties")
            for c in range(min(i, cap), -1, -1):
                if i == n:
                    body = tail(c)
                else:
                    k = names[i]
                    opts = []
                    if kv[k] is not None and (hi is None or c < hi):
                        nxt = chain(i + 1, min(c + 1, cap))
                        if nxt is not None:
                            opts.append(f"{'' if c == 0 else comma + ' '}{kv[k]} {nxt}".strip())
                    if k not in required:
                        nxt = chain(i + 1, c)
                        if nxt is not None:
                            opts.append(nxt if nxt else '""')
                    body = _alt(opts)
                if body is not None and len(body) > 60 and i < n:
                    name = f"{base}_{i}_{c}"
                    self.rules[name] = body
                    body = name
                cache[(i, c)] = body

        inner = chain(0, 0)
        if inner is None:
            return None
        return " ".join(part for part in (open_, inner, close) if part)

    def _object_any_order(self, names, kv, extra_kv, shape, cap, base, comma, open_, close) -> str | None:
        """Properties in any order: one ``perm!`` whose entries are the named properties
        (required ones exactly once, the others at most once) and the class of other
        keys (any number of times), with ``minProperties``/``maxProperties`` as its count.
        The parser carries the set of keys seen (see ``grammar/perm.rs`` in corral-core), so
        the grammar grows linearly with the number of properties and stays exact."""
        lo, hi = shape.min_props, shape.max_props
        required = set(shape.required)
        entries = []
        for k in names:
            if kv[k] is None:
                if k in required:
                    return None
                continue
            entries.append(kv[k] if k in required else f"({kv[k]})?")
        if any(k not in kv for k in required):
            return None
        if extra_kv is not None:
            entries.append(f"({extra_kv})*")
        # The list must be finishable (the engine would drop it too, but the translator
        # reports a schema that allows no value itself): enough keys for the least
        # count, room for the required ones.
        if (hi is not None and len(required) > hi) or (extra_kv is None and lo > len(entries)):
            return None
        if not entries:
            return " ".join(part for part in (open_, close) if part)
        counts = f"{{{lo},{'' if hi is None else hi}}}" if lo or hi is not None else ""
        body = f"perm!{counts}({comma}, {', '.join(entries)})"
        if len(body) > 60:
            self.rules[base] = body
            body = base
        return " ".join(part for part in (open_, body, close) if part)

    # --- checking concrete values (enum members, property names, test ordering) ----

    def valid(self, value, subs: list) -> bool:
        return any(self.check(value, s) for s in self.shapes(subs))

    def check(self, value, shape: Shape, member: bool = False) -> bool:
        """Whether ``value`` satisfies ``shape`` (``member``: it is one of the shape's own
        enum members, so membership needs no test)."""
        kind = _kind_of(value)
        if kind == INT and isinstance(value, float) and shape.int_without_fraction:
            kind = FRAC  # draft 4: 1.0 is not an integer
        if kind not in shape.kinds:
            return False
        if (shape.enum is not None and not member) or shape.not_keys:
            key = _canon(value)
            if shape.enum is not None and not member and key not in shape.enum_keys:
                return False
            if key in shape.not_keys:
                return False
        if kind in (INT, FRAC):
            d = _dec(value)
            if shape.lo and (d < shape.lo[0] or (shape.lo[1] and d == shape.lo[0])):
                return False
            if shape.hi and (d > shape.hi[0] or (shape.hi[1] and d == shape.hi[0])):
                return False
            if not all(_is_multiple(d, step) for step, _ in shape.mults) or any(_is_multiple(d, step) for step, _ in shape.neg_mults):
                return False
        elif kind == STR:
            n = len(value)
            if n < shape.min_len or (shape.max_len is not None and n > shape.max_len):
                return False
            if not all(self.python_regex(src, p).fullmatch(value) for src, p in shape.patterns):
                return False
            if any(self.python_regex(src, p).fullmatch(value) for src, p in shape.neg_patterns):
                return False
            if not all(self.python_regex(FORMAT_PATTERNS[f], p, True).fullmatch(value) for f, p in shape.formats):
                return False
            if any(self.python_regex(FORMAT_PATTERNS[f], p, True).fullmatch(value) for f, p in shape.neg_formats):
                return False
        elif kind == ARR:
            if len(value) < shape.min_items or (shape.max_items is not None and len(value) > shape.max_items):
                return False
            if not all(self.valid(v, self.item_subs(shape, i)) for i, v in enumerate(value)):
                return False
            for c_sub, c_min, c_max in shape.contains:
                n = sum(1 for v in value if self.valid(v, [c_sub]))
                if n < c_min or (c_max is not None and n > c_max):
                    return False
            if shape.unique and any(json_equal(a, b) for a, b in itertools.combinations(value, 2)):
                return False
        elif kind == OBJ:
            if len(value) < shape.min_props or (shape.max_props is not None and len(value) > shape.max_props):
                return False
            if any(k not in value for k in shape.required):
                return False
            names, values, classes = self.object_layout(shape)
            for k, v in value.items():
                if k in values:
                    if values[k] is None or not self.valid(v, values[k]):
                        return False
                else:
                    if not self._check_extra_key(k, v, shape):
                        return False
        return True

    def _check_extra_key(self, k: str, v, shape: Shape) -> bool:
        if k in shape.forbidden:
            return False
        if shape.prop_names and not self.valid(k, shape.prop_names):
            return False
        subs = []
        for _props, patterns, additional in self.obj_clauses(shape):
            matched = [p for src, p in patterns if self.python_regex(src, p.pointer).fullmatch(k)]
            if matched:
                subs.extend(matched)
            elif additional is not None:
                subs.append(additional)
        return self.valid(v, subs)

    def order(self, value, subs: list):
        """``value`` with object keys in the order the grammar writes them (for tests)."""
        for shape in self.shapes(subs):
            if not self.check(value, shape):
                continue
            if shape.enum is not None:
                # The member as the grammar writes it (its key order).
                return next((v for v in shape.enum if json_equal(v, value)), value)
            if isinstance(value, dict):
                names, values, _ = self.object_layout(shape)
                out = {}
                for k in names:
                    if k in value:
                        out[k] = self.order(value[k], values[k] or [])
                for k, v in value.items():
                    if k not in out:
                        out[k] = self.order(v, self._extra_subs(k, shape))
                return out
            if isinstance(value, list):
                return [self.order(v, self.item_subs(shape, i)) for i, v in enumerate(value)]
            return value
        return value

    def _extra_subs(self, k: str, shape: Shape) -> list:
        subs = []
        for _props, patterns, additional in self.obj_clauses(shape):
            matched = [p for src, p in patterns if self.python_regex(src, p.pointer).fullmatch(k)]
            subs.extend(matched if matched else ([additional] if additional is not None else []))
        return subs

    # --- output ----------------------------------------------------------------------

    def _reset(self) -> None:
        """Forgets the rules of a previous pass (``known_empty`` and resolved references stay)."""
        self.rules: dict[str, str | None] = {}
        if self.ws:
            self.rules["ws"] = self._ws_rule
        self.memo: dict[tuple, str | None] = {}
        self.rule_keys: dict[str, tuple] = {}
        self.building: set = set()  # value rules whose body is being built
        self.early: set = set()  # value rules referred to while being built (recursion)
        self.found_empty: set = set()
        self.warnings: list[str] = []
        self.depth = 0  # subschemas being read in place inside one another
        self.value_depth = 0  # value rules being built inside one another
        self.json_depth = 0  # nesting depth, in the output, of the value being built
        self.depth_cut = False  # with an indent: a value past max_indent_depth was refused
        self.layouts = 0  # with an indent: containers laid out so far (see ``value_rule``)
        self.depth_free: dict[tuple, str] = {}  # with an indent: value rules with no container
        self.shared: dict[str, str] = {}  # long bodies written once (see ``shared_rule``)

    def grammar(self) -> str:
        """The EBNF text of the whole schema (start rule ``start``)."""
        frames = _frames(self.limits)
        if frames <= _frames(_default_limits()):
            return self._grammar_in(frames)
        # Depth limits raised past their defaults: the deeper recursion runs on a thread
        # whose stack is sized for it. Some frames hold C stack too (a generator consumed by
        # ``tuple``, the JSON encoder): on the caller's stack, a deep enough schema would
        # crash the process instead of raising.
        return self._on_own_stack(min(frames, MAX_FRAMES))

    def _on_own_stack(self, frames: int) -> str:
        """:meth:`_grammar_in` on a new thread with room for ``frames`` frames; its result
        or its exception comes back here. Ctrl-C while waiting stops it too."""
        outcome: list = []

        def run() -> None:
            try:
                outcome.append((True, self._grammar_in(frames)))
            except BaseException as e:  # raised again on the caller's thread
                outcome.append((False, e))

        # The stack size applies to threads started while it is set: this one only. Whole
        # MiB, and one more for what runs before the first frame.
        old = threading.stack_size((math.ceil(frames * STACK_PER_FRAME / (1 << 20)) + 1) << 20)
        try:
            thread = threading.Thread(target=run, name="corral-json-schema", daemon=True)
            thread.start()
        finally:
            threading.stack_size(old)
        try:
            thread.join()
        except BaseException:
            self.abandoned = True  # the thread stops at its next check
            raise
        done, value = outcome[0]
        if not done:
            raise value
        return value

    def _grammar_in(self, frames: int) -> str:
        """:meth:`_grammar`, with the recursion limit ``frames`` above the current depth
        and the wall-clock budget set."""
        lim = self.limits
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, _stack_depth() + frames))
        # The budget covers this translation only; later checks of values (``order``,
        # ``valid``) run unbounded.
        self.deadline = time.monotonic() + self.budget_ms / 1000.0
        # The regular-language searches (emptiness of key classes...) keep the budget too.
        regular.set_deadline((self.deadline, lambda: self.tick("a regular-language check")))
        try:
            return self._grammar()
        except RecursionError:
            # The frames ran out before a depth limit was reached (with the limits set so
            # high that MAX_FRAMES cuts their frames): raising them further cannot help,
            # lowering them says where the schema is deep.
            error = LimitExceededError(
                f"the schema nests too deeply to translate: it needs more than {frames} Python frames before reaching Limits.max_schema_depth = {lim.max_schema_depth}, "
                f"max_schema_value_depth = {lim.max_schema_value_depth} or max_schema_document_depth = {lim.max_schema_document_depth}; simplify the schema or lower those limits to see where"
            )
            error.limit, error.value = "max_schema_depth", lim.max_schema_depth
            raise error from None
        finally:
            sys.setrecursionlimit(old_limit)
            regular.set_deadline(None)
            self.deadline = math.inf

    def _may_be_unproductive(self) -> bool:
        """False when no rule can need itself forever: then every rule referred to before
        its body was known (the only way into a cycle) has an alternative that finishes
        without any rule. Rules built without such a reference are made of finished parts."""
        for name in self.early:
            body = self.rules.get(name)
            if body is None or not _productive_tree(_read_body(body), set()):
                return True
        return False

    def _grammar(self) -> str:
        # A rule may turn out empty only after something recursive referred to it (a
        # property that requires the object itself, forever): the pass is redone with it
        # known empty, so that whatever needs it is dropped, as for any empty branch.
        for _ in range(self.limits.max_schema_passes):
            self._reset()
            start = self.value_rule([self.root])
            empty = set(self.found_empty)
            # Without a recursive reference the rules form a tree of non-empty bodies, all
            # productive; only recursion can make a rule need itself forever.
            for name in _unproductive(self.rules) if self._may_be_unproductive() else ():
                if name in self.rule_keys:
                    empty.add(self.rule_keys[name])
            if not empty:
                break
            self.known_empty |= empty
        else:
            raise self.limit_at("", "", "the schema needed too many passes to drop its recursive subschemas that allow no value", "max_schema_passes", self.limits.max_schema_passes)
        if start is None and self.depth_cut:
            # Refused for its depth, unless it allows nothing at any depth (an object that
            # requires itself): the translation without an indent tells them apart.
            indent, self.indent = self.indent, None
            try:
                self._grammar()
            finally:
                self.indent = indent
            raise self.limit_at("", "", "with indent, this schema allows no value that nests few enough containers deep", "max_indent_depth", self.limits.max_indent_depth)
        if start is None:
            raise EmptyLanguageError("the schema allows no JSON value at all")
        unproductive = _unproductive(self.rules) if self.known_empty and self._may_be_unproductive() else ()
        if unproductive:  # every rule is made from value rules; none should be left
            raise UnsupportedSchemaError(f"schema: rules {sorted(unproductive)[:5]} allow no finite value", "", "")
        lines = [f"start ::= {start} ;"] if not self.ws else [f"start ::= ws {start} ws ;"]
        for name, body in self.rules.items():
            if body is not None:
                lines.append(f"{name} ::= {body} ;")
        text = "\n".join(lines) + "\n"
        size = len(text.encode("utf-8", "surrogatepass"))  # lone surrogates are refused by the caller
        if size > self.max_grammar_bytes:
            raise self.limit_at("", "", f"the schema's grammar is {size} bytes", "max_grammar_bytes", self.max_grammar_bytes)
        return text


def _frames(limits) -> int:
    """The frames a translation may stack under ``limits``: reading a schema takes a few
    frames per level of each depth limit, more than Python's default recursion limit."""
    return 12 * limits.max_schema_value_depth + 16 * (limits.max_schema_depth + limits.max_schema_document_depth)


# With depth limits above their defaults, the translation runs on a thread with
# STACK_PER_FRAME bytes of stack per frame (the most measured is about 430 bytes, a
# generator consumed by ``tuple``), at most MAX_FRAMES frames (a 256 MiB stack, reserved
# rather than used); past them LimitExceededError.
STACK_PER_FRAME = 1024
MAX_FRAMES = 256_000


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


# Tokens of the EBNF the translator writes: a regex, a literal, an operator call (its
# arguments are terminals), a `perm!` (its arguments are read), a rule name, a count, or
# punctuation.
_EBNF_TOKEN = re.compile(r'''\s*(?:(/(?:\\.|[^/\\])*/)|("(?:\\.|[^"\\])*")|((?:and|not|except)!\()|(perm!(?:\{\d*(?:,\d*)?\})?\()|([A-Za-z_][A-Za-z0-9_]*)|\{(\d*)(?:,(\d*))?\}|([()|?*+,]))''')


def _parse_body(body: str):
    """A rule body as a tree: ("alt", [seq...]), a seq is [(atom, may_be_absent)], an
    atom is ("t",) (a terminal), ("r", name) or a nested ("alt", ...)."""
    tokens = []
    i = 0
    while i < len(body):
        m = _EBNF_TOKEN.match(body, i)
        if m is None:
            if body[i:].strip() == "":
                break
            raise ValueError(f"unexpected {body[i:i + 20]!r}")
        i = m.end()
        if m.group(3):  # skip the operator's arguments: they are terminals
            depth = 1
            while depth:
                m2 = _EBNF_TOKEN.match(body, i)
                if m2 is None:
                    raise ValueError("unterminated operator")
                i = m2.end()
                p = m2.group(8)
                depth += (p == "(") - (p == ")")
                if m2.group(3) or m2.group(4):
                    depth += 1
            tokens.append(("t",))
        elif m.group(1) or m.group(2):
            tokens.append(("t",))
        elif m.group(4):
            tokens.append(("perm",))
        elif m.group(5):
            tokens.append(("r", m.group(5)))
        elif m.group(6) is not None or m.group(7) is not None:
            tokens.append(("count", int(m.group(6) or 0)))
        else:
            tokens.append(("p", m.group(8)))
    pos = 0

    def alt():
        nonlocal pos
        seqs = [seq()]
        while pos < len(tokens) and tokens[pos] == ("p", "|"):
            pos += 1
            seqs.append(seq())
        return ("alt", seqs)

    def seq():
        nonlocal pos
        items = []
        while pos < len(tokens) and tokens[pos] not in (("p", "|"), ("p", ")"), ("p", ",")):
            tok = tokens[pos]
            pos += 1
            if tok == ("p", "("):
                atom = alt()
                pos += 1  # ")"
            elif tok == ("perm",):
                # Finishes when every entry can (optional entries are marked so inside).
                args = [alt()]
                while pos < len(tokens) and tokens[pos] == ("p", ","):
                    pos += 1
                    args.append(alt())
                pos += 1  # ")"
                # (The separator, first, is whitespace and a comma: never what is missing.)
                atom = ("alt", [[(a, k == 0) for k, a in enumerate(args)]])
            else:
                atom = tok
            optional = False
            while pos < len(tokens) and (tokens[pos][0] == "count" or tokens[pos] in (("p", "?"), ("p", "*"), ("p", "+"))):
                t = tokens[pos]
                pos += 1
                if t in (("p", "?"), ("p", "*")) or (t[0] == "count" and t[1] == 0):
                    optional = True
            items.append((atom, optional))
        return items

    return alt()


def _read_body(body: str):
    """``_parse_body``, or a productive terminal when the body is not one it reads (the
    engine then judges the rule itself)."""
    try:
        return _parse_body(body)
    except (ValueError, IndexError):
        return ("t",)


def _productive_tree(node, productive: set) -> bool:
    if node[0] == "t":
        return True
    if node[0] == "r":
        return node[1] in productive
    return any(all(optional or _productive_tree(atom, productive) for atom, optional in items) for items in node[1])


def _names_in(node, out: set) -> set:
    if node[0] == "r":
        out.add(node[1])
    elif node[0] == "alt":
        for items in node[1]:
            for atom, _ in items:
                _names_in(atom, out)
    return out


def _unproductive(rules: dict[str, str | None]) -> set:
    """The rules that can never finish (need themselves, forever), as a set of names.

    A worklist: a rule is looked at again only when a rule it names becomes productive.
    """
    trees = {name: _read_body(body) for name, body in rules.items() if body is not None}
    users: dict[str, list] = {}
    for name, tree in trees.items():
        for used in _names_in(tree, set()):
            users.setdefault(used, []).append(name)
    productive: set = set()
    todo = list(trees)
    while todo:
        name = todo.pop()
        if name in productive or not _productive_tree(trees[name], productive):
            continue
        productive.add(name)
        todo.extend(u for u in users.get(name, ()) if u not in productive)
    return set(trees) - productive


def _chunked_string(lo: int, hi: int | None) -> str:
    """EBNF for a JSON string of ``lo`` to ``hi`` characters (``hi`` None: no bound), read as
    chunks of exactly K = STRING_CHUNK characters and one last terminal that holds the rest
    and the closing quote (so that no terminal ends inside the text but at a chunk's end).

    With a = lo // K, b = lo % K and, for a bound, q, r = divmod(hi - lo, K):
    B{a} (B{0,q-1} C{b,b+K-1}" | B{q} C{b,b+r}"): lengths lo + K·j + t (0 <= j < q,
    0 <= t < K), then lo + K·q .. hi, each one way only.
    """
    k = STRING_CHUNK
    char = f"(?:{ecma.JSON_CHAR})"
    chunk = _rx(f"{char}{{{k}}}")
    a, b = divmod(lo, k)
    head = f'"\\"" ({chunk}){{{a}}} ' if a else '"\\"" '
    if hi is None:
        return head + _rx(f'{char}{{{b},}}"')
    q, r = divmod(hi - lo, k)
    last = _rx(f'{char}{{{b},{b + r}}}"')
    if q == 0:
        return head + last
    full = f"({chunk}){{0,{q - 1}}} " + _rx(f'{char}{{{b},{b + k - 1}}}"') if q > 1 else _rx(f'{char}{{{b},{b + k - 1}}}"')
    return head + f"({full} | ({chunk}){{{q}}} {last})"


def _bool_terms(terms: list[str], negs: list[str]) -> str | None:
    """``and!``/``not!`` of EBNF terms (plain when one term and no negation); None when the
    combination matches no string (an empty branch, which callers drop)."""
    if negs:
        neg = "not!(" + (" | ".join(negs)) + ")"
        terms = terms + [neg]
    if len(terms) == 1:
        # One term: a pattern, a number's or a format's regex. The combinations are what
        # may be empty (a pattern and the values it must not be); a lone regex that
        # matches nothing is dropped by the grammar's own build.
        return terms[0]
    expr = "and!(" + ", ".join(terms) + ")"
    if _is_empty(expr):
        return None
    return expr


@functools.lru_cache(maxsize=4096)
def _is_empty(expr: str) -> bool:
    """Does the terminal expression ``expr`` match no string? The core builds its DFA (the
    one the grammar would hold); past the default limits the answer is "no" (the grammar's
    own build then reports it, or drops an empty piece with a warning). Remembered: a
    schema's key classes and value constraints repeat."""
    from ..grammar import _PERL_CLASS, _python_perl_classes

    classes = _python_perl_classes() if _PERL_CLASS.search(expr) else None
    try:
        return _core.expression_is_empty(expr, None, classes)
    except LimitExceededError:
        return False


# --- keyword handlers ----------------------------------------------------------------


# Assertion keywords newer than draft 4, by the draft that introduced them: in a schema of
# an earlier draft they are unknown keywords, which validators ignore.
_INTRODUCED = {
    "const": 6, "contains": 6, "propertyNames": 6,
    "if": 7, "then": 7, "else": 7,
    "dependentRequired": 2019, "dependentSchemas": 2019, "minContains": 2019, "maxContains": 2019,
    "unevaluatedProperties": 2019, "unevaluatedItems": 2019,
    "prefixItems": 2020,
}

# Keywords that can give a subschema a URI or an anchor.
_ID_KEYWORDS = frozenset({"id", "$id", "$anchor", "$dynamicAnchor"})

# Keywords whose value holds subschemas (see _children).
_SUBSCHEMA_KEYWORDS = frozenset({
    "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "allOf", "anyOf", "oneOf",
    "prefixItems", "items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains",
    "propertyNames", "unevaluatedItems", "unevaluatedProperties", "dependencies",
})


def _children(node: dict):
    """(keyword, subschema, pointer tokens) of every subschema directly inside ``node``."""
    for kw in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
        v = node.get(kw)
        if isinstance(v, dict):
            for k, s in v.items():
                yield kw, s, (kw, k)
    for kw in ("allOf", "anyOf", "oneOf", "prefixItems"):
        v = node.get(kw)
        if isinstance(v, list):
            for i, s in enumerate(v):
                yield kw, s, (kw, i)
    for kw in ("items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties"):
        v = node.get(kw)
        if isinstance(v, (dict, bool)):
            yield kw, v, (kw,)
        elif kw == "items" and isinstance(v, list):
            for i, s in enumerate(v):
                yield kw, s, (kw, i)
    v = node.get("dependencies")
    if isinstance(v, dict):
        for k, s in v.items():
            if isinstance(s, (dict, bool)):
                yield "dependencies", s, ("dependencies", k)


def _show(val) -> str:
    """A keyword value for a message (``NaN`` and infinities as Python writes them)."""
    try:
        return _dump(val)[:60]
    except (TypeError, ValueError, RecursionError):
        return repr(val)[:60]


def _num(t: Translator, sub: Subschema, kw: str, val) -> Decimal:
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        raise t.invalid(sub, kw, f"must be a number, got {_show(val)}")
    if isinstance(val, float) and not math.isfinite(val):
        raise t.invalid(sub, kw, f"must be a finite number, got {_show(val)} (not a JSON number)")
    return _dec(val)


def _count(t: Translator, sub: Subschema, kw: str, val) -> int:
    if isinstance(val, bool) or not isinstance(val, (int, float)) or (isinstance(val, float) and not math.isfinite(val)) or val < 0 or val != int(val):
        raise t.invalid(sub, kw, f"must be a non-negative integer, got {_show(val)}")
    return int(val)


def _schema_list(t: Translator, sub: Subschema, kw: str, val) -> list[Subschema]:
    if not isinstance(val, list) or (not val and kw != "prefixItems"):
        raise t.invalid(sub, kw, "must be a non-empty array of schemas")
    return [sub.child(s, kw, i) for i, s in enumerate(val)]


def k_type(t, shape, sub, val, disj, chain):
    names = [val] if isinstance(val, str) else val
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise t.invalid(sub, "type", f"must be a type name or a list of them, got {_show(val)}")
    kinds = set()
    for n in names:
        if n not in _TYPE_KINDS:
            raise t.invalid(sub, "type", f"unknown type {n!r} (expected one of {', '.join(_TYPE_KINDS)})")
        kinds |= _TYPE_KINDS[n]
    if sub.schema.get("nullable") is True:
        kinds.add(NULL)
    if sub.draft < 6 and "integer" in names:
        shape.int_without_fraction = True
    shape.restrict(kinds)


def k_nullable(t, shape, sub, val, disj, chain):
    if not isinstance(val, bool):
        raise t.invalid(sub, "nullable", "must be a boolean")


def k_enum(t, shape, sub, val, disj, chain):
    if not isinstance(val, list):
        raise t.invalid(sub, "enum", "must be an array")
    kw = "const" if val is not sub.schema.get("enum") else "enum"
    if sub.schema.get("nullable") is True and shape.enum is None and kw == "enum":
        val = val + [None]
    values, keys = _enum_members(t, sub, kw, val)
    if shape.enum is not None:
        values = [v for v, k in zip(values, keys, strict=True) if k in shape.enum_keys]
        keys = [k for k in keys if k in shape.enum_keys]
    shape.enum = values
    shape.enum_keys = frozenset(keys)
    if not values:
        shape.unsat = True


def _enum_members(t, sub, kw: str, val: list) -> tuple[list, list]:
    """The members of an enum without repeats (by JSON equality, hashed), with their keys;
    InvalidSchemaError (with the member's pointer) for a value that is not JSON."""
    values, keys, seen = [], [], set()
    for i, v in enumerate(val):
        if i % 1024 == 0:
            t.tick(f"{kw} at {sub.pointer or '/'}")
        try:
            key = _canon(v)
        except _NotJSON as e:
            pointer = sub.pointer + "/" + kw + ("" if kw == "const" else f"/{i}")
            raise InvalidSchemaError(f"{kw} at {pointer}: {e}", pointer, kw) from None
        if key not in seen:
            seen.add(key)
            values.append(v)
            keys.append(key)
    return values, keys


def k_const(t, shape, sub, val, disj, chain):
    k_enum(t, shape, sub, [val], disj, chain)


def _bound(t, shape, sub, kw, val):
    d = _num(t, sub, kw, val)
    draft = sub.draft
    if kw == "minimum":
        excl = draft == 4 and sub.schema.get("exclusiveMinimum") is True
        _set_lo(shape, d, excl)
    elif kw == "maximum":
        excl = draft == 4 and sub.schema.get("exclusiveMaximum") is True
        _set_hi(shape, d, excl)
    elif kw == "exclusiveMinimum":
        _set_lo(shape, d, True)
    else:
        _set_hi(shape, d, True)


def _set_lo(shape, d, excl):
    if shape.lo is None or d > shape.lo[0] or (d == shape.lo[0] and excl):
        shape.lo = (d, excl)


def _set_hi(shape, d, excl):
    if shape.hi is None or d < shape.hi[0] or (d == shape.hi[0] and excl):
        shape.hi = (d, excl)


def k_bound(kw):
    def handler(t, shape, sub, val, disj, chain):
        if kw.startswith("exclusive") and isinstance(val, bool):
            if sub.draft == 4:
                return  # draft 4's boolean modifier, read by minimum/maximum
            raise t.invalid(sub, kw, "must be a number")
        _bound(t, shape, sub, kw, val)

    return handler


def k_multiple(t, shape, sub, val, disj, chain):
    d = _num(t, sub, "multipleOf", val)
    if d <= 0:
        raise t.invalid(sub, "multipleOf", f"must be greater than 0, got {_show(val)}")
    shape.mults.append((d, sub.pointer + "/multipleOf"))


def k_count_min(kw: str, field: str):
    """Handler for a lower count bound (``minLength``, ``minItems``, ``minProperties``)."""

    def handler(t, shape, sub, val, disj, chain):
        n = _count(t, sub, kw, val)
        if n > getattr(shape, field):
            setattr(shape, field, n)
            shape.count_ptrs[field] = sub.pointer + "/" + kw

    return handler


def k_count_max(kw: str, field: str):
    """Handler for an upper count bound (``maxLength``, ``maxItems``, ``maxProperties``)."""

    def handler(t, shape, sub, val, disj, chain):
        n, old = _count(t, sub, kw, val), getattr(shape, field)
        if old is None or n < old:
            setattr(shape, field, n)
            shape.count_ptrs[field] = sub.pointer + "/" + kw

    return handler


def k_pattern(t, shape, sub, val, disj, chain):
    if not isinstance(val, str):
        raise t.invalid(sub, "pattern", "must be a string")
    pointer = sub.pointer + "/pattern"
    t.pattern_ast(val, pointer)
    shape.patterns.append((val, pointer))


# Formats that JSON Schema defines but that no regular language expresses exactly.
_KNOWN_FORMATS = {
    "date", "time", "date-time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
    "uri", "uri-reference", "iri", "iri-reference", "uri-template", "uuid", "json-pointer", "relative-json-pointer", "regex",
}


def k_format(t, shape, sub, val, disj, chain):
    if not isinstance(val, str):
        raise t.invalid(sub, "format", "must be a string")
    if val in FORMAT_PATTERNS:
        shape.formats.append((val, sub.pointer + "/format"))
    elif val in _KNOWN_FORMATS:
        t.unsupported(sub, "format", f"format {val!r} cannot be expressed as a regular language")
    # Unknown formats are annotations.


def k_items(t, shape, sub, val, disj, chain):
    if isinstance(val, list):
        if sub.draft >= 2020:
            raise t.invalid(sub, "items", "must be a schema (use prefixItems for tuples)")
        prefix = _schema_list(t, sub, "items", val) if val else []
        add = sub.schema.get("additionalItems", True)
        rest = sub.child(add, "additionalItems")
        shape.arr_clauses.append((prefix, rest))
        return
    if sub.draft >= 2020 and "prefixItems" in sub.schema:
        return  # read together with prefixItems
    shape.arr_clauses.append(([], sub.child(val, "items")))


def k_prefix(t, shape, sub, val, disj, chain):
    if sub.draft < 2020:
        return  # not a keyword before 2020-12
    prefix = _schema_list(t, sub, "prefixItems", val)
    rest = None
    if "items" in sub.schema:
        rest = sub.child(sub.schema["items"], "items")
    elif "unevaluatedItems" in sub.schema and not any(k in sub.schema for k in _IN_PLACE):
        rest = sub.child(sub.schema["unevaluatedItems"], "unevaluatedItems")
    shape.arr_clauses.append((prefix, rest))


def k_contains(t, shape, sub, val, disj, chain):
    lo = sub.schema.get("minContains", 1) if sub.draft >= 2019 else 1
    hi = sub.schema.get("maxContains") if sub.draft >= 2019 else None
    lo = _count(t, sub, "minContains", lo)
    hi = None if hi is None else _count(t, sub, "maxContains", hi)
    if lo == 0 and hi is None:
        return
    shape.contains.append((sub.child(val, "contains"), lo, hi))


def k_unique(t, shape, sub, val, disj, chain):
    if not isinstance(val, bool):
        raise t.invalid(sub, "uniqueItems", "must be a boolean")
    if not val:
        return
    # Exact only when at most one item can be present.
    max_items = sub.schema.get("maxItems")
    if isinstance(max_items, int) and max_items <= 1:
        return
    if shape.max_items is not None and shape.max_items <= 1:
        return
    t.unsupported(sub, "uniqueItems", "a grammar cannot compare array items with each other (allowed only with maxItems <= 1)")


def k_properties(t, shape, sub, val, disj, chain):
    if not isinstance(val, dict):
        raise t.invalid(sub, "properties", "must be an object")
    props = {k: sub.child(s, "properties", k) for k, s in val.items()}
    _object_clause(t, shape, sub, props=props)


def k_pattern_props(t, shape, sub, val, disj, chain):
    if not isinstance(val, dict):
        raise t.invalid(sub, "patternProperties", "must be an object")
    if "properties" in sub.schema:
        return  # read together with properties
    _object_clause(t, shape, sub, props={})


def k_additional(t, shape, sub, val, disj, chain):
    if "properties" in sub.schema or "patternProperties" in sub.schema:
        return
    _object_clause(t, shape, sub, props={})


def k_unevaluated_props(t, shape, sub, val, disj, chain):
    if any(k in sub.schema for k in ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "dependentSchemas", "$dynamicRef")):
        t.unsupported(sub, "unevaluatedProperties", "supported only without in-place applicators (allOf, anyOf, $ref...) beside it")
        return
    if "additionalProperties" in sub.schema:
        return  # additionalProperties already decides every unevaluated property
    if "properties" in sub.schema or "patternProperties" in sub.schema:
        return
    _object_clause(t, shape, sub, props={})


_IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "contains", "$dynamicRef", "dependentSchemas")


def k_unevaluated_items(t, shape, sub, val, disj, chain):
    if any(k in sub.schema for k in ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "contains", "$dynamicRef")):
        t.unsupported(sub, "unevaluatedItems", "supported only without in-place applicators or contains beside it")
        return
    if "items" in sub.schema:
        return
    if "prefixItems" not in sub.schema:
        shape.arr_clauses.append(([], sub.child(val, "unevaluatedItems")))


def _object_clause(t, shape, sub, props):
    schema = sub.schema
    patterns = []
    pp = schema.get("patternProperties", {})
    if isinstance(pp, dict):
        for src, s in pp.items():
            pointer = sub.pointer + "/patternProperties/" + _escape_pointer(src)
            t.pattern_ast(src, pointer)
            patterns.append((src, sub.child(s, "patternProperties", src)))
    additional = None
    if "additionalProperties" in schema:
        additional = sub.child(schema["additionalProperties"], "additionalProperties")
    elif "unevaluatedProperties" in schema and not any(k in schema for k in ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "dependentSchemas")):
        additional = sub.child(schema["unevaluatedProperties"], "unevaluatedProperties")
    shape.obj_clauses.append((props, patterns, additional))


def k_required(t, shape, sub, val, disj, chain):
    if not isinstance(val, list) or not all(isinstance(k, str) for k in val):
        if sub.draft == 4 and isinstance(val, bool):
            return
        raise t.invalid(sub, "required", "must be an array of strings")
    known = set(shape.required)
    for k in val:
        if k not in known:
            known.add(k)
            shape.required.append(k)
        if k in shape.forbidden:
            shape.unsat = True


def k_prop_names(t, shape, sub, val, disj, chain):
    shape.prop_names.append(sub.child(val, "propertyNames"))


def _absent(t, name):
    def apply(shape):
        shape.forbidden.add(name)
        if name in shape.required:
            shape.unsat = True

    return t.synthetic(f"absent {name}", apply)


def _present(t, names):
    def apply(shape):
        for n in names:
            if n in shape.forbidden:
                shape.unsat = True
            if n not in shape.required:
                shape.required.append(n)

    return t.synthetic(f"present {names}", apply)


def _kinds(t, kinds):
    return t.synthetic(f"kinds {sorted(kinds)}", lambda shape: shape.restrict(kinds))


def k_dependent_required(t, shape, sub, val, disj, chain, kw="dependentRequired"):
    if not isinstance(val, dict):
        raise t.invalid(sub, kw, "must be an object")
    for k, deps in val.items():
        if isinstance(deps, list):
            if not all(isinstance(d, str) for d in deps):
                raise t.invalid(sub, kw, f"the dependencies of {k!r} must be strings")
            if deps:
                # Not an object, or k absent, or k and all of deps present.
                disj.append(([[_kinds(t, ALL_KINDS - {OBJ})], [_kinds(t, {OBJ}), _absent(t, k)], [_kinds(t, {OBJ}), _present(t, [k] + deps)]], chain))
        elif isinstance(deps, (dict, bool)):
            dep = sub.child(deps, kw, k)
            disj.append(([[_kinds(t, ALL_KINDS - {OBJ})], [_kinds(t, {OBJ}), _absent(t, k)], [_kinds(t, {OBJ}), _present(t, [k]), dep]], chain))
        else:
            raise t.invalid(sub, kw, f"the value for {k!r} must be an array or a schema")


def k_dependent_schemas(t, shape, sub, val, disj, chain):
    k_dependent_required(t, shape, sub, val, disj, chain, kw="dependentSchemas")


def k_dependencies(t, shape, sub, val, disj, chain):
    k_dependent_required(t, shape, sub, val, disj, chain, kw="dependencies")


def k_all_of(t, shape, sub, val, disj, chain):
    for s in _schema_list(t, sub, "allOf", val):
        t.absorb(shape, s, disj, chain)


def k_any_of(t, shape, sub, val, disj, chain):
    disj.append(([[s] for s in _schema_list(t, sub, "anyOf", val)], chain))


def k_one_of(t, shape, sub, val, disj, chain):
    branches = _schema_list(t, sub, "oneOf", val)
    if t.disjoint_branches(shape, sub, branches):
        # At most one branch can match any value: exactly one == at least one (no negation).
        disj.append(([[b] for b in branches], chain))
        return
    alts = []
    for i, b in enumerate(branches):
        alts.append([b] + [o.negate() for j, o in enumerate(branches) if j != i])
    # Negation may be unsupported for some branches: find out now, and fall back.
    try:
        for b in branches:
            strict = t.strict
            t.strict = True
            try:
                t.negation(b)
            finally:
                t.strict = strict
    except UnsupportedSchemaError as e:
        if t.strict:
            raise UnsupportedSchemaError(
                f"oneOf at {sub.pointer or '/'}/oneOf: exclusivity cannot be enforced ({e}); strict=False treats it as anyOf",
                sub.pointer + "/oneOf",
                "oneOf",
            ) from None
        t.warnings.append(f"oneOf at {sub.pointer or '/'}/oneOf is treated as anyOf: {e}")
        alts = [[b] for b in branches]
    disj.append((alts, chain))


def k_not(t, shape, sub, val, disj, chain):
    t.absorb(shape, sub.child(val, "not").negate(), disj, chain)


def k_if(t, shape, sub, val, disj, chain):
    cond = sub.child(val, "if")
    then = sub.child(sub.schema.get("then", True), "then")
    other = sub.child(sub.schema.get("else", True), "else")
    if "then" not in sub.schema and "else" not in sub.schema:
        return
    disj.append(([[cond, then], [cond.negate(), other]], chain))


def k_ignore(t, shape, sub, val, disj, chain):
    pass


_KEYWORDS = {
    "type": k_type,
    "nullable": k_nullable,
    "enum": k_enum,
    "const": k_const,
    "minimum": k_bound("minimum"),
    "maximum": k_bound("maximum"),
    "exclusiveMinimum": k_bound("exclusiveMinimum"),
    "exclusiveMaximum": k_bound("exclusiveMaximum"),
    "multipleOf": k_multiple,
    "minLength": k_count_min("minLength", "min_len"),
    "maxLength": k_count_max("maxLength", "max_len"),
    "pattern": k_pattern,
    "format": k_format,
    "items": k_items,
    "prefixItems": k_prefix,
    "additionalItems": k_ignore,  # read with items
    "minItems": k_count_min("minItems", "min_items"),
    "maxItems": k_count_max("maxItems", "max_items"),
    "contains": k_contains,
    "minContains": k_ignore,
    "maxContains": k_ignore,
    "uniqueItems": k_unique,
    "properties": k_properties,
    "patternProperties": k_pattern_props,
    "additionalProperties": k_additional,
    "unevaluatedProperties": k_unevaluated_props,
    "unevaluatedItems": k_unevaluated_items,
    "required": k_required,
    "minProperties": k_count_min("minProperties", "min_props"),
    "maxProperties": k_count_max("maxProperties", "max_props"),
    "propertyNames": k_prop_names,
    "dependentRequired": k_dependent_required,
    "dependentSchemas": k_dependent_schemas,
    "dependencies": k_dependencies,
    "allOf": k_all_of,
    "anyOf": k_any_of,
    "oneOf": k_one_of,
    "not": k_not,
    "if": k_if,
    "then": k_ignore,
    "else": k_ignore,
}


# --- negation handlers (each returns alternatives) -------------------------------------


def n_type(t, sub, val, schema):
    kinds = set()
    names = [val] if isinstance(val, str) else val
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise t.invalid(sub, "type", f"must be a type name or a list of them, got {_show(val)}")
    for n in names:
        if n not in _TYPE_KINDS:
            raise t.invalid(sub, "type", f"unknown type {n!r}")
        kinds |= _TYPE_KINDS[n]
    if schema.get("nullable") is True:
        kinds.add(NULL)
    rest = ALL_KINDS - kinds
    return [[_kinds(t, rest)]] if rest else []


def n_enum(t, sub, val, schema):
    if not isinstance(val, list):
        raise t.invalid(sub, "enum", "must be an array")
    values, keys = _enum_members(t, sub, "enum" if val is schema.get("enum") else "const", val)
    for v in values:
        if isinstance(v, (list, dict)):
            t.unsupported(sub, "enum", "excluding array or object values is not supported")
            return []

    def apply(shape):
        shape.not_values.extend(values)
        shape.not_keys.update(keys)

    return [[t.synthetic("not enum", apply)]]


def n_const(t, sub, val, schema):
    return n_enum(t, sub, [val], schema)


def _syn_shape(t, label, kinds, **fields):
    def apply(shape):
        shape.restrict(kinds)
        for k, v in fields.items():
            if k == "lo":
                _set_lo(shape, *v)
            elif k == "hi":
                _set_hi(shape, *v)
            elif k in ("min_len", "min_items", "min_props"):
                setattr(shape, k, max(getattr(shape, k), v))
            elif k in ("max_len", "max_items", "max_props"):
                cur = getattr(shape, k)
                setattr(shape, k, v if cur is None else min(cur, v))
            else:
                getattr(shape, k).append(v)

    return t.synthetic(label, apply)


def n_bound(kw):
    def handler(t, sub, val, schema):
        if isinstance(val, bool):
            return []  # draft 4 modifier
        d = _num(t, sub, kw, val)
        nums = {INT, FRAC}
        if kw == "minimum":
            excl4 = sub.draft == 4 and schema.get("exclusiveMinimum") is True
            return [[_syn_shape(t, "not minimum", nums, hi=(d, not excl4))]]
        if kw == "maximum":
            excl4 = sub.draft == 4 and schema.get("exclusiveMaximum") is True
            return [[_syn_shape(t, "not maximum", nums, lo=(d, not excl4))]]
        if kw == "exclusiveMinimum":
            return [[_syn_shape(t, "not exclusiveMinimum", nums, hi=(d, False))]]
        return [[_syn_shape(t, "not exclusiveMaximum", nums, lo=(d, False))]]

    return handler


def n_multiple(t, sub, val, schema):
    d = _num(t, sub, "multipleOf", val)
    if d <= 0:
        raise t.invalid(sub, "multipleOf", f"must be greater than 0, got {_show(val)}")
    return [[_syn_shape(t, "not multipleOf", {INT, FRAC}, neg_mults=(d, sub.pointer + "/multipleOf"))]]


def n_count_min(kw: str, kind: str, upper: str):
    """Negation of a lower count bound: at most ``n - 1`` (nothing when ``n`` is 0)."""

    def handler(t, sub, val, schema):
        n = _count(t, sub, kw, val)
        return [[_syn_shape(t, f"not {kw}", {kind}, **{upper: n - 1})]] if n > 0 else []

    return handler


def n_count_max(kw: str, kind: str, lower: str):
    """Negation of an upper count bound: at least ``n + 1``."""

    def handler(t, sub, val, schema):
        return [[_syn_shape(t, f"not {kw}", {kind}, **{lower: _count(t, sub, kw, val) + 1})]]

    return handler


def n_pattern(t, sub, val, schema):
    if not isinstance(val, str):
        raise t.invalid(sub, "pattern", "must be a string")
    pointer = sub.pointer + "/pattern"
    t.pattern_ast(val, pointer)
    return [[_syn_shape(t, "not pattern", {STR}, neg_patterns=(val, pointer))]]


def n_format(t, sub, val, schema):
    if not isinstance(val, str):
        raise t.invalid(sub, "format", "must be a string")
    if val in FORMAT_PATTERNS:
        return [[_syn_shape(t, "not format", {STR}, neg_formats=(val, sub.pointer + "/format"))]]
    if val in _KNOWN_FORMATS:
        t.unsupported(sub, "format", f"format {val!r} cannot be expressed as a regular language")
    return []


def n_required(t, sub, val, schema):
    if not isinstance(val, list):
        return []
    return [[_kinds(t, {OBJ}), _absent(t, k)] for k in val]


def n_properties(t, sub, val, schema):
    if not isinstance(val, dict):
        raise t.invalid(sub, "properties", "must be an object")
    if schema.get("patternProperties"):
        t.unsupported(sub, "properties", "cannot be negated next to patternProperties")
        return []
    alts = []
    for k, s in val.items():
        bad = sub.child(s, "properties", k).negate()

        def apply(shape, k=k, bad=bad):
            shape.obj_clauses.append(({k: bad}, [], None))

        alts.append([_kinds(t, {OBJ}), _present(t, [k]), t.synthetic(f"bad {k}", apply)])
    return alts


def n_items(t, sub, val, schema):
    if isinstance(val, list) or (sub.draft >= 2020 and schema.get("prefixItems")):
        t.unsupported(sub, "items", "cannot be negated next to a tuple prefix")
        return []
    bad = sub.child(val, "items").negate()
    return [[_syn_shape(t, "some bad item", {ARR}, contains=(bad, 1, None))]]


def n_prefix(t, sub, val, schema):
    alts = []
    for i, s in enumerate(s.schema for s in _schema_list(t, sub, "prefixItems", val)):
        bad = sub.child(s, "prefixItems", i).negate()

        def apply(shape, i=i, bad=bad):
            shape.arr_clauses.append(([true_subschema(sub)] * i + [bad], None))
            shape.min_items = max(shape.min_items, i + 1)

        alts.append([_kinds(t, {ARR}), t.synthetic(f"bad item {i}", apply)])
    if "items" in schema and not isinstance(schema.get("items"), list):
        t.unsupported(sub, "items", "cannot be negated next to prefixItems")
    return alts


def true_subschema(sub: Subschema) -> Subschema:
    return Subschema(True, sub.pointer, sub.base, sub.draft)


def n_contains(t, sub, val, schema):
    if "minContains" in schema or "maxContains" in schema:
        t.unsupported(sub, "contains", "cannot be negated with minContains/maxContains")
        return []
    good = sub.child(val, "contains").negate()

    def apply(shape):
        shape.arr_clauses.append(([], good))

    return [[_kinds(t, {ARR}), t.synthetic("no item contains", apply)]]


def n_all_of(t, sub, val, schema):
    return [[s.negate()] for s in _schema_list(t, sub, "allOf", val)]


def n_any_of(t, sub, val, schema):
    return [[s.negate() for s in _schema_list(t, sub, "anyOf", val)]]


def n_one_of(t, sub, val, schema):
    branches = _schema_list(t, sub, "oneOf", val)
    alts = [[b.negate() for b in branches]]
    for a, b in itertools.combinations(branches, 2):
        alts.append([a, b])
    return alts


def n_not(t, sub, val, schema):
    return [[sub.child(val, "not")]]


def n_if(t, sub, val, schema):
    cond = sub.child(val, "if")
    alts = []
    if "then" in schema:
        alts.append([cond, sub.child(schema["then"], "then").negate()])
    if "else" in schema:
        alts.append([cond.negate(), sub.child(schema["else"], "else").negate()])
    return alts


def n_dependent_required(t, sub, val, schema, kw="dependentRequired"):
    if not isinstance(val, dict):
        raise t.invalid(sub, kw, "must be an object")
    alts = []
    for k, deps in val.items():
        if isinstance(deps, list):
            if not all(isinstance(d, str) for d in deps):
                raise t.invalid(sub, kw, f"the dependencies of {k!r} must be strings")
            for d in deps:
                alts.append([_kinds(t, {OBJ}), _present(t, [k]), _absent(t, d)])
        elif isinstance(deps, (dict, bool)):
            alts.append([_kinds(t, {OBJ}), _present(t, [k]), sub.child(deps, kw, k).negate()])
        else:
            raise t.invalid(sub, kw, f"the value for {k!r} must be an array or a schema")
    return alts


def n_dependent_schemas(t, sub, val, schema):
    return n_dependent_required(t, sub, val, schema, kw="dependentSchemas")


def n_dependencies(t, sub, val, schema):
    return n_dependent_required(t, sub, val, schema, kw="dependencies")


def n_ignore(t, sub, val, schema):
    return []


def n_unsupported(kw):
    def handler(t, sub, val, schema):
        if kw == "additionalProperties" and val is True:
            return []
        if kw == "uniqueItems" and val is False:
            return []
        t.unsupported(sub, kw, "cannot be negated exactly (inside `not`, `oneOf` or `if`)")
        return []

    return handler


_NEGATIONS = {
    "type": n_type,
    "enum": n_enum,
    "const": n_const,
    "minimum": n_bound("minimum"),
    "maximum": n_bound("maximum"),
    "exclusiveMinimum": n_bound("exclusiveMinimum"),
    "exclusiveMaximum": n_bound("exclusiveMaximum"),
    "multipleOf": n_multiple,
    "minLength": n_count_min("minLength", STR, "max_len"),
    "maxLength": n_count_max("maxLength", STR, "min_len"),
    "pattern": n_pattern,
    "format": n_format,
    "minItems": n_count_min("minItems", ARR, "max_items"),
    "maxItems": n_count_max("maxItems", ARR, "min_items"),
    "minProperties": n_count_min("minProperties", OBJ, "max_props"),
    "maxProperties": n_count_max("maxProperties", OBJ, "min_props"),
    "required": n_required,
    "properties": n_properties,
    "items": n_items,
    "prefixItems": n_prefix,
    "contains": n_contains,
    "allOf": n_all_of,
    "anyOf": n_any_of,
    "oneOf": n_one_of,
    "not": n_not,
    "if": n_if,
    "dependentRequired": n_dependent_required,
    "dependentSchemas": n_dependent_schemas,
    "dependencies": n_dependencies,
    "then": n_ignore,
    "else": n_ignore,
    "minContains": n_ignore,
    "maxContains": n_ignore,
    "additionalItems": n_unsupported("additionalItems"),
    "nullable": n_ignore,
    "additionalProperties": n_unsupported("additionalProperties"),
    "patternProperties": n_unsupported("patternProperties"),
    "propertyNames": n_unsupported("propertyNames"),
    "uniqueItems": n_unsupported("uniqueItems"),
    "unevaluatedItems": n_unsupported("unevaluatedItems"),
    "unevaluatedProperties": n_unsupported("unevaluatedProperties"),
}
for _kw in _ANNOTATIONS:
    _KEYWORDS.setdefault(_kw, k_ignore)
    _NEGATIONS.setdefault(_kw, n_ignore)
