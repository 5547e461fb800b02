//! JSON Schema in the core: a schema document to the engine's grammar form, with no
//! grammar text in between ([`compile::schema_grammar`]).
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
//!   anchors, and the resolution of `$ref`; [`metaschemas`]: the drafts' metaschemas,
//!   shipped, for references no caller document answers.
//! * [`translate`]: the translation (shapes, combinators, negation, the values of each
//!   type) into a grammar AST.
//! * [`document`] and [`compile`]: schema text read with its nesting bounded, translated
//!   and lowered on a thread with the stack the limits need.
//! * [`embed`]: schemas written inside grammar text (`%json {...}`), translated and
//!   lowered with the grammar as one.
//!
//! Every piece is exact: a constraint is enforced as written or reported as an error
//! that names it.

pub mod compile;
pub mod document;
pub mod ecma;
pub mod embed;
pub mod formats;
pub mod metaschemas;
pub mod numbers;
pub mod resources;
pub mod translate;
pub mod uri;

#[cfg(test)]
mod resources_tests;
