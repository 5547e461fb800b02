//! The values of scalar shapes: numbers (bounds digit by digit, `multipleOf` as an
//! automaton), strings (lengths, patterns, formats, excluded values) and `enum` members.

use serde_json::Value;

use super::lang::Lang;
use super::shape::Shape;
use super::Translator;
use crate::error::{Error, Result};
use crate::frontend::ast::Expr;

impl<'a> Translator<'a> {
    /// The numbers of `shape` (None: none).
    pub(crate) fn emit_number(&mut self, _shape: &Shape<'a>) -> Result<Option<Expr>> {
        Err(Error::Internal("numbers are not translated yet".into()))
    }

    /// The strings of `shape`, quotes included (None: none).
    pub(crate) fn emit_string(&mut self, _shape: &Shape<'a>) -> Result<Option<Expr>> {
        Err(Error::Internal("strings are not translated yet".into()))
    }

    /// The encoded characters between the quotes of the strings of `shape` (None: none).
    pub(crate) fn string_body(&mut self, _shape: &Shape<'a>) -> Result<Option<Lang>> {
        Err(Error::Internal("strings are not translated yet".into()))
    }

    /// The members of `shape`'s `enum` that satisfy it (None: none).
    pub(crate) fn emit_enum(&mut self, _shape: &Shape<'a>) -> Result<Option<Expr>> {
        Err(Error::Internal("enums are not translated yet".into()))
    }

    /// A JSON value as a literal, with whitespace where the output allows it, laid out
    /// `depth` containers deep with an indent.
    pub(crate) fn literal_value(&mut self, _value: &Value, _depth: usize) -> Result<Option<Expr>> {
        Err(Error::Internal("literals are not translated yet".into()))
    }

    /// The JSON-encoded characters of strings in which ECMAScript `pattern` finds a
    /// match; errors name `pointer` (the keyword's).
    pub(crate) fn pattern_lang(&mut self, _pattern: &str, _pointer: &str) -> Result<Lang> {
        Err(Error::Internal("patterns are not translated yet".into()))
    }
}
