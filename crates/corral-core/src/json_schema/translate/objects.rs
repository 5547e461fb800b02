//! The values of object shapes: named properties in the schema's order or any order,
//! classes of other keys (patterns, `additionalProperties`, `propertyNames`), required
//! keys and counts.

use super::shape::{ObjClause, Shape};
use super::Translator;
use crate::error::{Error, Result};
use crate::frontend::ast::Expr;

impl<'a> Translator<'a> {
    /// The objects of `shape` (None: none).
    pub(crate) fn emit_object(&mut self, _shape: &Shape<'a>) -> Result<Option<Expr>> {
        Err(Error::Internal("objects are not translated yet".into()))
    }

    /// The object clauses of `shape` as the grammar enforces them (see the Python
    /// translator's `obj_clauses`: unless `spec_exact`, an object that names keys and says
    /// nothing of others is closed to them).
    pub(crate) fn obj_clauses(&self, shape: &Shape<'a>) -> Vec<ObjClause<'a>> {
        shape.obj_clauses.clone()
    }
}
