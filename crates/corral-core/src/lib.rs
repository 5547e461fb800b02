#![warn(missing_docs)]
//! corral-core: token masks for constrained decoding of language models.
//!
//! A constraint becomes a mask over the vocabulary before every sampling step. The crate
//! is organised in layers, each using only the layers above it in this list:
//!
//! 1. [`util`], [`error`], [`limits`]: hash maps, byte classes, UTF-8, deadlines; the
//!    error type; every resource limit in one struct ([`Limits`]).
//! 2. [`automata`]: byte-level DFAs and their constructions (products, concatenation,
//!    counted repetitions, minimization, the wire format).
//! 3. [`vocab`]: the [`Vocabulary`] (token id → exact bytes and kind) and its token trie.
//! 4. [`frontend`]: the syntaxes (Python `re` patterns, EBNF/GBNF, Lark) → a grammar AST
//!    or a regex DFA, with errors that say where.
//! 5. [`grammar`]: the AST → a normalized grammar over DFA terminals; the [`Grammar`] a
//!    constraint is.
//! 6. [`json_schema`]: a JSON Schema → a grammar AST (shapes, combinators, `$ref`s,
//!    patterns, number bounds and formats as regex HIR; no grammar text), then a [`Grammar`].
//! 7. [`structural`]: XGrammar's structural tags (tool calls, reasoning) → one
//!    [`Grammar`], by joins and repetitions of the grammars of its parts.
//! 8. [`parser`]: the Earley recognizer that reads a context-free grammar byte by byte.
//! 9. [`index`]: grammar × vocabulary → [`CompiledGrammar`], with the mask caches.
//! 10. [`matcher`]: a [`Matcher`], one sequence's position: fills int32 bitmasks (bit t of
//!     word t/32), advances, rolls back, forces tokens.
//!
//! ```
//! use std::sync::Arc;
//! use corral_core::{CompiledGrammar, Grammar, Limits, Matcher, Vocabulary};
//!
//! let limits = Limits::default();
//! // Tokens: "a", "b", "ab", and EOS (id 3).
//! let tokens = vec![Some(b"a".to_vec()), Some(b"b".to_vec()), Some(b"ab".to_vec()), None];
//! let vocab = Arc::new(Vocabulary::new(tokens, &[], &[3], None).unwrap());
//! let grammar = Grammar::regex("(ab)+", &limits, None).unwrap();
//! let compiled = Arc::new(CompiledGrammar::new(&grammar, vocab.clone(), &limits, false).unwrap());
//! let mut matcher = Matcher::new(compiled);
//! let mut mask = vec![0u32; vocab.mask_words()];
//! matcher.fill_mask(&mut mask).unwrap();
//! assert_eq!(mask[0], 0b0101); // "a" and "ab"
//! assert!(matcher.advance(2).unwrap()); // "ab"
//! matcher.fill_mask(&mut mask).unwrap();
//! assert_eq!(mask[0], 0b1101); // "a", "ab", or EOS
//! ```
//!
//! This crate has no Python in it; `corral-py` is its binding.

pub mod automata;
pub mod error;
pub mod frontend;
pub mod grammar;
pub mod index;
pub mod json_schema;
pub mod limits;
pub mod matcher;
pub mod parser;
pub mod structural;
pub mod util;
pub mod vocab;

pub use error::{Error, Result};
pub use frontend::regex::PerlClasses;
pub use frontend::Dialect;
pub use grammar::{Grammar, LowerOptions};
pub use index::CompiledGrammar;
pub use limits::Limits;
pub use matcher::{DraftMasks, MaskInfo, Matcher};
pub use util::interrupt;
pub use vocab::{TokenKind, Vocabulary};
