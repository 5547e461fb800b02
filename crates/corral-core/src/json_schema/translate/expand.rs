//! Shapes from subschemas: the conjunction of subschemas read in place, its disjunctions
//! distributed out into alternative shapes, and the proof that `oneOf` branches are
//! disjoint (then exactly one is at least one, with no negation).

use super::shape::{Shape, Sub};
use super::Translator;
use crate::error::{Error, Result};

impl<'a> Translator<'a> {
    /// The conjunction of `subs` as alternative shapes (unsatisfiable ones dropped).
    pub(crate) fn shapes(&mut self, _subs: &[Sub<'a>]) -> Result<Vec<Shape<'a>>> {
        Err(Error::Internal("shapes are not read yet".into()))
    }
}
