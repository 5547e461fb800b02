//! The values of array shapes: tuple prefixes, the items after them, counts, and
//! `contains` with its counts.

use super::shape::{Shape, Sub};
use super::Translator;
use crate::error::{Error, Result};
use crate::frontend::ast::Expr;

impl<'a> Translator<'a> {
    /// The arrays of `shape` (None: none).
    pub(crate) fn emit_array(&mut self, _shape: &Shape<'a>) -> Result<Option<Expr>> {
        Err(Error::Internal("arrays are not translated yet".into()))
    }

    /// The subschemas item `index` must satisfy.
    pub(crate) fn item_subs(&self, shape: &Shape<'a>, index: usize) -> Vec<Sub<'a>> {
        let mut subs = Vec::new();
        for (prefix, rest) in &shape.arr_clauses {
            if let Some(s) = prefix.get(index) {
                subs.push(s.clone());
            } else if let Some(r) = rest {
                subs.push(r.clone());
            }
        }
        subs
    }
}
