//! JSON numbers as exact languages: bounds (`minimum`, `maximum`, the exclusive ones, an
//! integer type's range), the spellings of one value (`enum`, `const`), the canonical
//! spellings a serializer writes, and the residue automaton of `multipleOf`.
//!
//! Everything works on digit strings of exact decimals ([`Decimal`]), never on floats, so
//! bounds such as `1e308` or `0.1` are exact. The languages are regex HIR over the number's
//! characters, built directly; the HIR of a bound nests once per digit that has an
//! alternative, so a bound of very many digits fails with
//! [`Error::LimitExceeded`](crate::Error::LimitExceeded) (`regex_nest_limit`, or
//! `max_dfa_states` for a bound with more digits than any automaton may have states)
//! instead of building. Bounded numbers are written without an exponent (`12.5`, not
//! `1.25e1`), as a generator writes them; unbounded ones may use one.
//!
//! | function | the language |
//! | --- | --- |
//! | [`uint_range`], [`int_range`] | canonical integers in an inclusive range, either side open |
//! | [`decimal_ge`], [`decimal_le`] | plain JSON numbers above / below a bound (inclusive or strict) |
//! | [`canonical_forms`] | the plain spellings of one value (`3`, `3.0`, `3.50`...) |
//! | [`number`], [`plain_number`], [`integer`], [`uint`] | JSON numbers (RFC 8259), without an exponent, integers |
//! | [`canonical_integer`], [`canonical_plain_float`], [`canonical_exp_float`], [`canonical_plain_number`], [`canonical_number`], [`canonical_exp_integral`] | what `json.dumps` writes for what `json.loads` reads, where that round-trips |
//! | [`multiple_dfa`] | the multiples of a step (an automaton, meant for a product) |

mod bounds;
mod canonical;
mod decimal;
mod hir;
mod multiple;
#[cfg(test)]
mod tests;

pub use bounds::{decimal_ge, decimal_le, int_range, uint_range};
pub use canonical::{
    canonical_exp_float, canonical_exp_integral, canonical_forms, canonical_integer, canonical_number, canonical_plain_float,
    canonical_plain_number, integer, number, plain_number, uint,
};
pub use decimal::Decimal;
pub use multiple::multiple_dfa;
