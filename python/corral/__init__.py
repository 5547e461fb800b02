"""corral: make a language model's output follow a constraint, with exact token masks.

>>> import corral
>>> vocab = corral.Vocabulary.from_token_bytes([b"1", b"2", b"a", b""], eos_token_ids=[3])
>>> matcher = corral.compile(corral.Grammar.regex(r"\\d+"), vocab).matcher()
"""

from ._core import CompiledGrammar, Limits, Matcher, get_num_threads, set_num_threads
from .compiler import CompiledIntersection, IntersectionMatcher, clear_cache, compile
from .errors import (
    CorralError,
    DeadEndError,
    EmptyLanguageError,
    GenerationError,
    GrammarError,
    IncompleteOutputError,
    InternalError,
    InvalidGrammarError,
    InvalidSchemaError,
    LimitExceededError,
    MatcherError,
    RegexSyntaxError,
    RollbackLimitError,
    SchemaError,
    UnsupportedFeatureError,
    UnsupportedSchemaError,
    VocabularyError,
)
from .generation import Generation, generate
from .grammar import BanSpec, Grammar, GrammarWarning, SchemaWarning
from .masking import allocate_bitmask, apply_bitmask, fill_bitmasks, fill_draft_bitmasks
from .vocabulary import Vocabulary

__version__ = "0.1.0"

__all__ = [
    "BanSpec",
    "CompiledGrammar",
    "CompiledIntersection",
    "CorralError",
    "DeadEndError",
    "EmptyLanguageError",
    "Generation",
    "GenerationError",
    "Grammar",
    "GrammarError",
    "GrammarWarning",
    "IntersectionMatcher",
    "InternalError",
    "InvalidGrammarError",
    "InvalidSchemaError",
    "Limits",
    "LimitExceededError",
    "Matcher",
    "MatcherError",
    "RegexSyntaxError",
    "IncompleteOutputError",
    "RollbackLimitError",
    "SchemaError",
    "SchemaWarning",
    "UnsupportedFeatureError",
    "UnsupportedSchemaError",
    "Vocabulary",
    "VocabularyError",
    "allocate_bitmask",
    "apply_bitmask",
    "clear_cache",
    "compile",
    "fill_bitmasks",
    "fill_draft_bitmasks",
    "generate",
    "get_num_threads",
    "set_num_threads",
]
