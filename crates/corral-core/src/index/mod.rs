//! Grammar × vocabulary: which tokens each state allows, and the caches that make a mask
//! cheap after its first computation.
//!
//! * [`compiled`]: [`CompiledGrammar`], a grammar compiled against a vocabulary, whose
//!   masks are computed per DFA state (regular grammars) or per parser state (context-free
//!   grammars) and cached;
//! * `dfa_mask`: masks of a regular grammar, per DFA state;
//! * `cfg_mask`: masks of a context-free grammar, per parser position;
//! * `walker`: the one DFA walker over the token trie;
//! * `lexer_mask`: the tokens a terminal's DFA state reads without ending (cached per
//!   terminal and state);
//! * `ends`: where a lexer mask records its terminal's ends (before what may follow it);
//! * `string_safe`: masks over the vocabulary's string-safe slices;
//! * `state_mask`: a cached mask, sparse or dense;
//! * `parts_mask`: a parser state's cached mask, as the cached masks it is made of;
//! * [`intersection`]: several compiled grammars that must all hold (`g1 & g2`), as one
//!   compiled grammar.

mod cfg_mask;
pub mod compiled;
mod dfa_mask;
mod ends;
pub mod intersection;
pub(crate) mod lexer_mask;
mod parts_mask;
pub(crate) mod state_mask;
pub(crate) mod string_safe;
#[cfg(test)]
mod tests;
pub(crate) mod walker;

pub use compiled::CompiledGrammar;
