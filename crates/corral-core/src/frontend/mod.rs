//! The syntaxes: grammar and regex text → the grammar AST or a regex HIR, with errors
//! that say what and where (line:column, or a character offset in a pattern).
//!
//! * [`ebnf`]: corral's EBNF and llama.cpp's GBNF (one parser, two dialects);
//! * [`lark`]: Lark grammars;
//! * [`ast`]: the one grammar AST they all produce;
//! * [`regex`]: Python `re` patterns, read as CPython reads them and built into DFAs;
//! * `scanner`: characters, strings, classes and regexes shared by the grammar syntaxes;
//! * `tokens`: token references (`<[id]>`, `<think>`, `!<…>*`) shared by them too.

pub mod ast;
pub mod ebnf;
pub mod lark;
pub mod regex;
pub(crate) mod scanner;
pub(crate) mod tokens;

use crate::error::Result;
use crate::limits::Limits;

/// Which text syntax is being parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// corral's EBNF.
    Ebnf,
    /// llama.cpp's GBNF.
    Gbnf,
    /// Lark (the subset Outlines users write).
    Lark,
}

/// Parses grammar text of any supported syntax into the grammar AST.
pub fn parse(text: &str, dialect: Dialect, limits: &Limits) -> Result<ast::GrammarAst> {
    match dialect {
        Dialect::Lark => lark::parse(text, limits),
        Dialect::Ebnf | Dialect::Gbnf => ebnf::parse_bnf(text, dialect, limits),
    }
}
