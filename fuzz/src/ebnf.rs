//! The `ebnf` target: arbitrary text read as corral's EBNF (see [`crate::cfg_text`]).

use corral_core::Dialect;

/// The target body.
pub fn run(data: &[u8]) {
    crate::cfg_text::run(data, Dialect::Ebnf);
}
