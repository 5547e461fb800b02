//! Constraint descriptions, validated but not yet tied to a vocabulary.

use crate::error::Result;
use crate::limits::Limits;
use crate::regex::{self, ParsedRegex, PerlClasses};

/// A constraint on the output's bytes. Built by the front-ends; compiled against a
/// vocabulary by [`crate::CompiledGrammar::new`].
///
/// Today a grammar is a regular expression; context-free grammars (EBNF/GBNF/Lark, JSON
/// Schema) join as further variants that share the same matcher and mask machinery.
#[derive(Debug, Clone)]
pub enum Grammar {
    /// A Python `re` pattern with `re.fullmatch` meaning.
    Regex(ParsedRegex),
}

impl Grammar {
    /// Parses and validates a Python `re` pattern (syntax and supported constructs only;
    /// the DFA is built, under `limits`, when the grammar is compiled). `classes` are the
    /// interpreter's `\d \w \s` sets, if known (see [`PerlClasses`]).
    pub fn regex(pattern: &str, limits: &Limits, classes: Option<&PerlClasses>) -> Result<Grammar> {
        Ok(Grammar::Regex(regex::parse(pattern, limits, classes)?))
    }

    /// A short human description, for errors and reprs.
    pub fn describe(&self) -> String {
        match self {
            Grammar::Regex(r) => format!("regex /{}/", r.pattern()),
        }
    }
}
