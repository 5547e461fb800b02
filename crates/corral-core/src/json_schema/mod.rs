//! JSON Schema in the core: the pieces a translation from a schema document to the
//! engine's grammar form is built from, with no grammar text in between. (The
//! translation of whole schemas is still done by the Python package, which writes
//! corral EBNF; these pieces are checked against it language by language.)
//!
//! The pieces, bottom-up:
//!
//! * [`ecma`]: ECMAScript regular expressions (`pattern`, `patternProperties`) read into
//!   an AST over code points, and built as regex HIR over a string value's JSON encoding
//!   (what the model writes between the quotes) or over the decoded value.
//! * [`numbers`]: JSON number text bounded digit by digit (`minimum`, `maximum`,
//!   exclusive bounds, integers) and the automaton of `multipleOf`.
//! * [`formats`]: the `format` keyword's languages.
//! * [`uri`]: URI references resolved by RFC 3986 (`$id`, `$ref`).
//! * [`resources`]: the documents of a translation, their drafts, identifiers and
//!   anchors, and the resolution of `$ref`.
//!
//! Every piece is exact: a constraint is enforced as written or reported as an error
//! that names it.

pub mod compile;
pub mod document;
pub mod ecma;
pub mod formats;
pub mod numbers;
pub mod resources;
pub mod translate;
pub mod uri;

#[cfg(test)]
mod resources_tests;
