//! The grammar AST that every grammar syntax (corral EBNF, GBNF, Lark) parses into.

use std::fmt;

/// A 1-based line and column in the grammar text (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1, in characters.
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A regular piece of a grammar: compiled to one byte DFA.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Term {
    /// A literal string (matched as its UTF-8 bytes).
    Literal(String),
    /// A regex in Python `re` syntax (character classes and `.` are parsed into this too).
    Regex(String),
}

impl Term {
    /// The term as Python `re` source.
    pub fn regex_source(&self) -> String {
        match self {
            Term::Literal(s) => regex_syntax::escape(s),
            Term::Regex(r) => format!("(?:{r})"),
        }
    }
}

/// A grammar expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Matches the empty string.
    Empty,
    /// A terminal piece.
    Term {
        /// The piece.
        term: Term,
        /// Where it is written.
        pos: Pos,
    },
    /// A reference to a rule.
    Ref {
        /// The rule's name.
        name: String,
        /// Where it is written.
        pos: Pos,
    },
    /// Concatenation.
    Seq(Vec<Expr>),
    /// Alternation.
    Alt(Vec<Expr>),
    /// `e{min,max}` (`max` None = unbounded); `?`, `*`, `+` are special cases.
    Repeat {
        /// What is repeated.
        expr: Box<Expr>,
        /// Least number of repetitions.
        min: u32,
        /// Most (None: no bound).
        max: Option<u32>,
        /// Where the operator is written.
        pos: Pos,
    },
    /// `except!(e)`: any string (of whole UTF-8 characters) that contains no match of the
    /// regular expression `e` (seed 004's `except!`).
    Except {
        /// The excluded terminals (must be regular).
        expr: Box<Expr>,
        /// Where it is written.
        pos: Pos,
    },
}

impl Expr {
    /// Where the expression starts, if known.
    pub fn pos(&self) -> Option<Pos> {
        match self {
            Expr::Empty => None,
            Expr::Term { pos, .. } | Expr::Ref { pos, .. } | Expr::Repeat { pos, .. } | Expr::Except { pos, .. } => {
                Some(*pos)
            }
            Expr::Seq(v) | Expr::Alt(v) => v.iter().find_map(|e| e.pos()),
        }
    }
}

/// One rule definition `name ::= expr`.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleDef {
    /// The rule's name.
    pub name: String,
    /// Its body.
    pub expr: Expr,
    /// Where the name is written.
    pub pos: Pos,
    /// Lark's terminal definitions (UPPERCASE) must be regular: they become one DFA.
    pub is_terminal: bool,
}

/// A parsed grammar text, before validation and lowering.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GrammarAst {
    /// The rules, in source order. A name may be defined several times (alternatives).
    pub rules: Vec<RuleDef>,
    /// Expressions that may appear between any two tokens (Lark's `%ignore`).
    pub ignore: Vec<Expr>,
}
