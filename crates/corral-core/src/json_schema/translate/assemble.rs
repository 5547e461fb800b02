//! The passes of a translation and the grammar they make.

use super::Translator;
use crate::error::{Error, Result};
use crate::frontend::ast::GrammarAst;

impl<'a> Translator<'a> {
    /// The grammar of the whole schema (start rule `start`).
    pub(crate) fn grammar(&mut self) -> Result<GrammarAst> {
        Err(Error::Internal("not assembled yet".into()))
    }
}
