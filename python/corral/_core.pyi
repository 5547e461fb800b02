"""Type stubs for ``corral._core``, the native module (crates/corral-py/src/).

It only converts arguments, checks buffers, releases the GIL around mask work, and raises
the exception classes of ``corral.errors`` (which registers them with ``_register_errors``
when it is imported). Token ids, rows and counts accept any integer
with ``__index__`` (an int, a numpy or torch integer), but not a bool.
"""

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, Protocol, SupportsIndex, final

import numpy as np
from numpy.typing import NDArray
from typing_extensions import Self, disjoint_base

__all__ = [
    "Limits",
    "Vocabulary",
    "Grammar",
    "CompiledGrammar",
    "Matcher",
    "CompiledIntersection",
    "IntersectionMatcher",
    "compile",
    "fill_bitmasks",
    "fill_draft_bitmasks",
    "set_num_threads",
    "get_num_threads",
    "apply_bitmask_inplace",
    "expression_is_empty",
    "_rebuild_grammar",
    "_register_errors",
    "_panic_for_test",
    "_prebuild_table",
    "_prebuilt_patterns",
    "_format_sources",
    "_format_patterns",
]

class _TensorLike(Protocol):
    """A CPU torch tensor (int32): it shares its memory through ``.numpy()``."""

    @property
    def device(self) -> Any: ...
    def numpy(self) -> NDArray[Any]: ...

# An int32 bitmask ``[rows, ceil(vocab_size / 32)]`` or one row, writable and C-contiguous
# (``corral.allocate_bitmask`` makes one).
_Bitmask = NDArray[np.int32] | _TensorLike
# Inclusive code-point ranges, each as a (first, last) pair of one-character strings.
_Ranges = Sequence[tuple[str, str]]
# The interpreter's ``\d``, ``\w`` and ``\s`` as code-point ranges.
_PerlClasses = tuple[_Ranges, _Ranges, _Ranges]
# What ``__reduce__`` returns: a function and the arguments that build the object again.
_Reduce = tuple[Callable[..., Any], tuple[Any, ...]]

@final
class Limits:
    """Resource limits; see docs/limits.md. Defaults come from corral-core."""

    def __new__(
        cls,
        *,
        max_pattern_bytes: int | None = None,
        regex_nest_limit: int | None = None,
        nfa_size_limit: int | None = None,
        dfa_size_limit: int | None = None,
        max_dfa_states: int | None = None,
        max_forced_tokens: int | None = None,
        max_vocab_size: int | None = None,
        max_grammar_bytes: int | None = None,
        max_grammar_nesting: int | None = None,
        max_grammar_productions: int | None = None,
        max_earley_items: int | None = None,
        max_chart_bytes: int | None = None,
        max_completion_bytes: int | None = None,
        max_fresh_item_steps: int | None = None,
        max_mask_cache_bytes: int | None = None,
        max_compile_ms: int | None = None,
        max_schema_alternatives: int | None = None,
        max_schema_depth: int | None = None,
        max_schema_document_depth: int | None = None,
        max_schema_value_depth: int | None = None,
        max_schema_passes: int | None = None,
        max_pattern_properties: int | None = None,
        max_key_classes: int | None = None,
        max_counted_items: int | None = None,
        max_unevaluated_subschemas: int | None = None,
        max_regex_format_states: int | None = None,
        max_spelled_count: int | None = None,
        max_multiple_states: int | None = None,
        max_number_states: int | None = None,
        max_indent_depth: int | None = None,
    ) -> Limits: ...
    @property
    def max_pattern_bytes(self) -> int:
        """Longest regex pattern, in bytes."""
    @property
    def regex_nest_limit(self) -> int:
        """Deepest group/repetition nesting in a regex."""
    @property
    def nfa_size_limit(self) -> int:
        """Heap bytes for a regex's NFA."""
    @property
    def dfa_size_limit(self) -> int:
        """Heap bytes for a regex's DFA (also bounds determinization)."""
    @property
    def max_dfa_states(self) -> int:
        """Most DFA states after pruning."""
    @property
    def max_forced_tokens(self) -> int:
        """Most tokens one forced_tokens() call returns."""
    @property
    def max_vocab_size(self) -> int:
        """Largest vocabulary size (logits width)."""
    @property
    def max_grammar_bytes(self) -> int:
        """Longest grammar text, in bytes."""
    @property
    def max_grammar_nesting(self) -> int:
        """Deepest group nesting in a grammar text."""
    @property
    def max_grammar_productions(self) -> int:
        """Most productions after grammar normalization."""
    @property
    def max_earley_items(self) -> int:
        """Most Earley items one byte of input may create or derive again."""
    @property
    def max_chart_bytes(self) -> int:
        """Heap bytes one parse (a matcher's Earley chart) may hold."""
    @property
    def max_completion_bytes(self) -> int:
        """Longest completion Matcher.completion() returns, in bytes."""
    @property
    def max_fresh_item_steps(self) -> int:
        """Most bytes tried, per token, finding a new value for a half-written uniqueItems item."""
    @property
    def max_mask_cache_bytes(self) -> int:
        """Heap bytes a grammar may spend caching parser-state masks."""
    @property
    def max_compile_ms(self) -> int:
        """Wall-clock milliseconds one build step (grammar, schema translation, compile) may take."""
    @property
    def max_schema_alternatives(self) -> int:
        """JSON Schema: most alternatives one subschema expands to (anyOf x anyOf, oneOf, if)."""
    @property
    def max_schema_depth(self) -> int:
        """JSON Schema: deepest nesting of subschemas read in place (allOf, anyOf, not, $ref...)."""
    @property
    def max_schema_document_depth(self) -> int:
        """JSON Schema: deepest nesting of JSON values in the schema document."""
    @property
    def max_schema_value_depth(self) -> int:
        """JSON Schema: deepest chain of value rules built inside one another."""
    @property
    def max_schema_passes(self) -> int:
        """JSON Schema: most translations of one schema (each drops subschemas found to allow no value)."""
    @property
    def max_pattern_properties(self) -> int:
        """JSON Schema: most patternProperties patterns that apply to one object."""
    @property
    def max_key_classes(self) -> int:
        """JSON Schema: most classes of an object's other keys whose values obey different subschemas."""
    @property
    def max_counted_items(self) -> int:
        """JSON Schema: largest maxItems of an array that also has contains."""
    @property
    def max_unevaluated_subschemas(self) -> int:
        """JSON Schema: most subschemas read in place around one unevaluatedProperties."""
    @property
    def max_regex_format_states(self) -> int:
        """JSON Schema: most states explored to show that a pattern or maxLength beside format 'regex' allows only regular expressions."""
    @property
    def max_spelled_count(self) -> int:
        """JSON Schema: most grammar states a counted contains spells out (10x for an object's counted properties)."""
    @property
    def max_multiple_states(self) -> int:
        """JSON Schema: most states of one multipleOf step's residue automaton."""
    @property
    def max_number_states(self) -> int:
        """JSON Schema: most states of a number set's automaton (bounds, steps, excluded values)."""
    @property
    def max_indent_depth(self) -> int:
        """JSON Schema with indent: deepest nesting of containers in an output value."""
    def __getnewargs_ex__(self) -> tuple[tuple[()], dict[str, int]]:
        """The keyword arguments that rebuild these limits: how they pickle."""
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Vocabulary:
    """Token id → exact bytes, EOS and special ids, the logits width, and the token trie."""

    def __new__(
        cls,
        token_bytes: Sequence[bytes | None],
        eos_token_ids: Iterable[SupportsIndex],
        special_token_ids: Iterable[SupportsIndex],
        size: SupportsIndex | None = None,
        limits: Limits | None = None,
    ) -> Vocabulary: ...
    @property
    def size(self) -> int:
        """The logits width (number of ids a mask covers)."""
    @property
    def mask_width(self) -> int:
        """int32 words per mask row: ceil(size / 32)."""
    @property
    def eos_token_ids(self) -> list[int]:
        """End-of-sequence ids."""
    @property
    def special_token_ids(self) -> list[int]:
        """The special (control) ids: never allowed by a grammar. EOS ids are not among them."""
    @property
    def fingerprint(self) -> str:
        """Content hash of the vocabulary, used for caching compiled grammars."""
    @property
    def trie_nodes(self) -> int:
        """Number of nodes in the token trie."""
    def token_bytes(self, id: SupportsIndex) -> bytes:
        """The exact bytes token `id` stands for ('' for special, EOS and missing ids)."""
    def tokens_with_prefix(self, prefix: bytes) -> list[int]:
        """The normal tokens whose bytes start with `prefix` (a walk down the token trie)."""
    def token_kind(self, id: SupportsIndex) -> Literal["normal", "special", "eos", "missing"]:
        """The kind of token `id`: "normal", "special", "eos" or "missing"."""
    def _export_tokens(self) -> tuple[bytes, bytes]:
        """Every id's stored bytes in one call, for pickling: `(data, ends)`, `ends` holding
        `size` little-endian uint32 end offsets into `data`."""
    def decode_bytes(self, ids: Iterable[SupportsIndex]) -> bytes:
        """Concatenated bytes of a token sequence (special tokens contribute nothing)."""

# (strict, whitespace, max_whitespace, property_order, spec_exact, integer_fraction,
# indent, draft) as Grammar.json_schema takes them.
_SchemaOptions = tuple[bool, str, int, str, bool, bool, str | None, int]

@final
class Grammar:
    """A validated constraint, not yet tied to a vocabulary."""

    @staticmethod
    def regex(pattern: str, limits: Limits | None = None, classes: _PerlClasses | None = None) -> Grammar:
        """Parses a Python `re` pattern (fullmatch meaning). Raises on syntax errors and on
        constructs a DFA cannot express.

        `classes`: `(digit, word, space)` lists of inclusive code-point ranges giving the
        interpreter's `\\d \\w \\s`; without it, corral's built-in Unicode tables are used.
        """
    @staticmethod
    def cfg(
        text: str,
        dialect: str,
        start: str | None = None,
        limits: Limits | None = None,
        classes: _PerlClasses | None = None,
        max_terminal_source: int | None = None,
        distinct_keys: bool = False,
        key_endings_infinite: bool = False,
    ) -> Grammar:
        """Parses, validates and normalizes corral EBNF (`dialect="ebnf"`), llama.cpp GBNF
        (`dialect="gbnf"`) or Lark (`dialect="lark"`). `start` names the start rule;
        `max_terminal_source` overrides how heavy a regular part may be to become one
        terminal (a weight about the bytes of its regex written out; default 150). `distinct_keys`: the text is JSON whose objects must not repeat a key;
        `key_endings_infinite`: every half-written key is known to have infinitely many
        endings (only closed keys are then checked).
        """
    def sample(self, seed: int, budget: int = 64, max_bytes: int = 1 << 20) -> bytes | None:
        """A random sentence of a context-free grammar (about `budget` bytes): for tests and
        examples. None for a regex, and when the draw runs past `max_bytes`."""
    @staticmethod
    def structural_tag(
        spec: str, options: _SchemaOptions, limits: Limits | None = None, classes: _PerlClasses | None = None
    ) -> Grammar:
        """XGrammar's structural tag (its JSON text) as one grammar; `options` are those of
        its `json_schema` formats, `classes` the meaning of `\\d \\w \\s` in its `regex` and
        `grammar` formats."""
    @staticmethod
    def join(join: str, parts: list[Grammar], limits: Limits | None = None) -> Grammar:
        """The union (`join="union"`) or concatenation (`join="concat"`) of `parts`, as one
        grammar."""
    @staticmethod
    def json_schema(
        schema: str,
        documents: list[tuple[str, str]],
        options: _SchemaOptions,
        limits: Limits | None = None,
    ) -> Grammar:
        """Translates a JSON Schema (its JSON text; ``documents``: (URI, JSON text) of other
        documents its ``$ref``s point into) into a grammar of the JSON values it allows."""
    @staticmethod
    def json_schema_missing(
        schema: str,
        documents: list[tuple[str, str]],
        options: _SchemaOptions,
        limits: Limits | None = None,
    ) -> list[str]:
        """The URIs of the documents the schema's ``$ref``s need that are not given."""
    @staticmethod
    def json_schema_order(
        schema: str,
        documents: list[tuple[str, str]],
        options: _SchemaOptions,
        value: str,
        limits: Limits | None = None,
    ) -> str:
        """The JSON ``value`` with its object keys in the order the schema's grammar writes them."""
    def _without_distinct_keys(self) -> Grammar:
        """The same grammar without the condition that JSON objects keep their keys distinct."""
    @property
    def _key_endings_infinite(self) -> bool:
        """With distinct keys: is every half-written key known to have infinitely many endings?"""
    @property
    def marker_texts(self) -> list[str]:
        """A structural tag's fixed strings: constant strings, triggers, tags' begins and
        ends, separators, the markers of XML styles (empty for other grammars)."""
    @property
    def schema_warnings(self) -> list[str]:
        """What a JSON Schema translation dropped (``strict=False``) or noticed."""
    @staticmethod
    def _to_lark(text: str, dialect: str, start: str) -> str:
        """The grammar text translated to Lark syntax (a test oracle)."""
    @property
    def warnings(self) -> list[str]:
        """Non-fatal findings about the grammar (e.g. unused rules)."""
    def __reduce__(self) -> _Reduce:
        """Pickles as the constructor call that built it."""

@disjoint_base
class CompiledGrammar:
    """A grammar compiled for one vocabulary: immutable and shareable across threads."""

    def matcher(self) -> Matcher:
        """A new matcher at the start of the grammar."""
    @property
    def num_states(self) -> int:
        """Number of automaton states of a regular grammar (the dead state included; 0 for
        a context-free grammar)."""
    @property
    def cached_states(self) -> int:
        """Number of states whose mask has been computed."""
    @property
    def memory_bytes(self) -> int:
        """Heap bytes of the automaton and cached masks."""
    def matches(self, data: bytes) -> bool:
        """Does the constraint accept the whole of `data` (as output bytes)?"""
    def warm_up(self) -> None:
        """Computes now the masks a context-free grammar's first tokens into each of its
        terminals need (a matcher's first visit there would otherwise compute them). For a
        serving engine that compiles off its decoding path; nothing to do for a regular
        grammar (see ``eager``)."""
    @property
    def vocab_size(self) -> int:
        """The vocabulary's logits width."""
    def __reduce__(self) -> _Reduce:
        """Pickles as the `corral.compile` call that made it (compiling again on load)."""

@disjoint_base
class Matcher:
    """One sequence's position in a compiled grammar.

    Safe to share between threads: calls on one matcher take turns.
    """

    def fill_bitmask(self, bitmask: _Bitmask, row: SupportsIndex | None = None) -> None:
        """Writes the allowed-token bitmask into `bitmask[row]` (int32, bit t of word t//32).
        Mask computation runs with the GIL released. Raises DeadEndError if no token is
        allowed."""
    def _fill_bitmask_reference(self, bitmask: _Bitmask, row: int = 0) -> None:
        """Fills the mask the slow way (no caches): a reference for tests of the fast path."""
    def advance(self, token: SupportsIndex) -> bool:
        """Consumes `token`; returns False (state unchanged) if the grammar does not allow it."""
    def is_allowed(self, token: SupportsIndex) -> bool:
        """Would `token` be accepted now?"""
    def rollback(self, n: SupportsIndex | None = None) -> None:
        """Undoes the last `n` accepted tokens (default 1)."""
    def reset(self) -> None:
        """Returns to the start of the grammar."""
    def is_accepting(self) -> bool:
        """May the output end here (is EOS allowed)?"""
    def is_finished(self) -> bool:
        """Has EOS been accepted?"""
    def forced_tokens(self) -> list[int]:
        """Tokens that are the only way forward (ending with EOS if ending is forced)."""
    def completion(self) -> bytes | None:
        """Bytes that, appended to the output, would make it complete (short, not always the
        shortest): b"" if it may end now, None once finished. A token the grammar names
        (``<think>``) is written as its text."""
    @property
    def num_tokens(self) -> int:
        """Number of tokens accepted so far (EOS included)."""
    def validate_tokens(self, draft: Iterable[SupportsIndex]) -> int:
        """How many tokens of `draft` the constraint accepts from here, in order (the longest
        accepted prefix). The matcher is left as it was."""
    def fill_draft_bitmask(self, draft: Iterable[SupportsIndex], bitmask: _Bitmask, row: SupportsIndex | None = None) -> int:
        """Writes the mask of every position of `draft` into `bitmask[row : row + len(draft) + 1]`
        (row `i` is the mask after `draft[:i]`) and returns how many draft tokens the
        constraint accepts; rows after the first refused token are left as they were. The
        matcher is left as it was. Raises DeadEndError if a written row allows no token."""
    def fork(self) -> Self:
        """An independent matcher at this one's position, sharing the compiled grammar (for a
        draft tree's branches, or `n > 1` samples of one prompt)."""
    def copy(self) -> Matcher:
        """An independent copy of this matcher (same grammar, same history)."""
    def __copy__(self) -> Matcher: ...

@final
class CompiledIntersection(CompiledGrammar):
    """Several compiled grammars that must all hold (from `g1 & g2`): a token is allowed only
    where every part allows it."""

    def __new__(cls, parts: Sequence[CompiledGrammar], limits: Limits | None = None) -> CompiledIntersection:
        """The intersection of `parts` (compiled for the same vocabulary; intersections among
        them give their parts). `limits` bound its matchers' forced runs and completions;
        each part keeps the limits it was compiled under."""
    def matcher(self) -> IntersectionMatcher:
        """A new matcher at the start of every part."""
    @property
    def parts(self) -> list[CompiledGrammar]:
        """The compiled grammars that must all hold."""
    @property
    def limits(self) -> Limits:
        """The limits its matchers' forced runs and completions are held to."""

@final
class IntersectionMatcher(Matcher):
    """One sequence's position in every part of a `CompiledIntersection`: a `Matcher` whose
    mask is the AND of its parts' masks. Where the parts' allowed sets do not meet,
    `fill_bitmask` raises `DeadEndError`. `completion()` is the shortest of the parts'
    completions that every part accepts, None if there is none such."""

    @property
    def parts(self) -> list[Matcher]:
        """Copies of the parts' matchers at this position (changing them changes nothing here)."""
    def copy(self) -> IntersectionMatcher:
        """An independent copy of this matcher (same grammars, same history)."""
    def __copy__(self) -> IntersectionMatcher: ...

def compile(
    grammar: Grammar,
    vocab: Vocabulary,
    limits: Limits | None = None,
    eager: bool = False,
    rebuild: _Reduce | None = None,
) -> CompiledGrammar:
    """Compiles a grammar against a vocabulary (GIL released). `rebuild`: a `(function,
    args)` pair that makes the same compiled grammar again, which is how it pickles."""

def fill_bitmasks(matchers: Sequence[Matcher], bitmask: _Bitmask, rows: Iterable[SupportsIndex] | None = None) -> None:
    """Fills `bitmask[i]` for each matcher `i` (or rows given by `rows`), with the GIL
    released and the uncached rows computed in parallel."""

def fill_draft_bitmasks(
    matchers: Sequence[Matcher],
    drafts: Sequence[Iterable[SupportsIndex]],
    bitmask: _Bitmask,
    rows: Iterable[SupportsIndex] | None = None,
) -> list[int]:
    """For each matcher `i`, writes the masks of every position of `drafts[i]` into
    `len(drafts[i]) + 1` consecutive rows from `rows[i]` (default: one block after another
    from row 0), with the GIL released and the matchers in parallel; returns how many tokens
    of each draft the constraint accepts. Each matcher is left as it was."""

def set_num_threads(n: SupportsIndex) -> None:
    """Sets how many threads `fill_bitmasks` uses for a batch (the calling thread
    included; default: one per core). 1 fills every row on the calling thread."""

def get_num_threads() -> int:
    """How many threads `fill_bitmasks` uses for a batch."""

def apply_bitmask_inplace(logits: NDArray[np.float32] | NDArray[np.float64], bitmask: _Bitmask) -> None:
    """Sets `logits[i, t] = -inf` wherever bit t of `bitmask[i]` is clear (float32 or float64,
    C-contiguous, 1 or 2 dimensions). Ids past the mask's width are masked too."""

def expression_is_empty(expr: str, limits: Limits | None = None, classes: _PerlClasses | None = None) -> bool:
    """Does the terminal expression `expr` (corral EBNF: strings, classes, regexes, `and!`,
    `not!`, `except!`; no rule references) match no string at all? Exact: its DFA is built,
    under `limits` (`LimitExceededError` past them)."""

def _rebuild_grammar(constructor: Literal["regex", "cfg"], args: tuple[Any, ...]) -> Grammar:
    """Builds a grammar by `Grammar.<constructor>(*args)`: what a pickled grammar loads by."""

def _register_errors(classes: dict[str, type[BaseException]]) -> None:
    """Stores the exception classes the binding raises: `corral/errors.py` calls it once, at
    import, with its classes by name (`CorralError` and every class the binding raises;
    others are ignored). Registering the same classes again does nothing; other classes
    cannot replace them (`ImportError`)."""

def _panic_for_test() -> None:
    """Panics on purpose, to test that a Rust panic reaches Python as corral.InternalError."""

def _prebuild_table(patterns: Sequence[str]) -> bytes:
    """The table of prebuilt automata for `patterns`."""

def _prebuilt_patterns() -> list[str]:
    """The patterns whose automata ship prebuilt."""

def _format_sources() -> list[str]:
    """Every pattern a JSON Schema ``format`` is compiled from (the prebuilt table must hold each)."""

def _format_patterns() -> list[tuple[str, str | None, str | None]]:
    """Each JSON Schema ``format`` with a language: (name, pattern over the decoded value in
    Python ``re`` syntax, what it does not enforce or None)."""
