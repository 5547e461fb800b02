#![warn(missing_docs)]
//! corral-core: token masks for constrained decoding of language models.
//!
//! The pieces, in data-flow order:
//! * [`Vocabulary`]: every token id's exact bytes, EOS ids, and the [`vocab::TokenTrie`].
//! * [`Grammar`]: a validated constraint (today a Python-syntax regex; see `regex`).
//! * [`CompiledGrammar`]: grammar × vocabulary, with the lazily (or eagerly) built
//!   state → allowed-tokens index. Immutable and shareable across threads.
//! * [`Matcher`]: one sequence's position in the grammar; fills int32 bitmasks
//!   (bit t of word t/32), advances, rolls back.
//!
//! [`Limits`] bounds every resource a constraint can consume. This crate has no Python in it.

pub mod cfg;
pub mod compiled;
pub mod dfa;
pub mod error;
pub mod grammar;
pub mod interrupt;
pub mod json_keys;
pub mod limits;
pub(crate) mod mask;
pub mod matcher;
pub mod prebuilt;
pub mod regex;
pub(crate) mod util;
pub mod vocab;

pub use compiled::CompiledGrammar;
pub use error::{Error, Result};
pub use grammar::Grammar;
pub use limits::Limits;
pub use matcher::{MaskInfo, Matcher};
pub use vocab::{TokenKind, Vocabulary};
