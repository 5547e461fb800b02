//! The error type of corral-core: every failure the engine can report.

use std::fmt;

/// Everything that can go wrong in corral-core. Each variant says what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The pattern is not a valid regular expression. `position` is a character offset.
    RegexSyntax {
        /// What is wrong.
        message: String,
        /// The pattern as the user wrote it.
        pattern: String,
        /// Character offset (0-based) of the offending construct.
        position: usize,
    },
    /// The pattern is valid Python `re` syntax but uses a construct a DFA cannot express
    /// (backreferences, look-around, possessive quantifiers, ...).
    UnsupportedRegex {
        /// The construct, named.
        construct: String,
        /// The pattern as the user wrote it.
        pattern: String,
        /// Character offset (0-based) of the construct.
        position: usize,
    },
    /// A grammar (EBNF, GBNF, Lark) is invalid: syntax error, undefined or useless rule,
    /// a terminal that matches nothing, ... `line`/`col` are 1-based (0 when unknown).
    Grammar {
        /// What is wrong.
        message: String,
        /// Line of the problem.
        line: u32,
        /// Column (in characters) of the problem.
        col: u32,
    },
    /// A documented resource limit (see [`crate::Limits`]) was hit.
    LimitExceeded {
        /// The name of the limit, as in `Limits`.
        limit: &'static str,
        /// Its value.
        value: usize,
        /// What was being done when it was hit.
        context: String,
    },
    /// The grammar describes no string at all, so no output could ever satisfy it.
    EmptyLanguage {
        /// What the grammar is (e.g. the pattern).
        what: String,
    },
    /// A vocabulary that cannot be used (no tokens, a bad EOS id, ...).
    Vocabulary(String),
    /// A bad argument to a matcher or mask call (token out of range, rollback too far, ...).
    InvalidArgument(String),
}

/// corral-core's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// Renders `pattern` with a caret under character `position`.
fn caret(pattern: &str, position: usize) -> String {
    // Show the line containing the position; patterns with newlines are rare but possible.
    let mut line_start = 0;
    let mut col = 0;
    for (i, ch) in pattern.chars().enumerate() {
        if i == position {
            break;
        }
        if ch == '\n' {
            line_start = i + 1;
            col = 0;
        } else {
            col += 1;
        }
    }
    let line: String = pattern.chars().skip(line_start).take_while(|&c| c != '\n').collect();
    format!("    {}\n    {}^", line, " ".repeat(col))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RegexSyntax { message, pattern, position } => write!(
                f,
                "regex syntax error at position {position}: {message}\n{}",
                caret(pattern, *position)
            ),
            Error::UnsupportedRegex { construct, pattern, position } => write!(
                f,
                "unsupported regex construct at position {position}: {construct}\n{}",
                caret(pattern, *position)
            ),
            Error::Grammar { message, line, col } => {
                if *line == 0 {
                    write!(f, "grammar error: {message}")
                } else {
                    write!(f, "grammar error at line {line}, column {col}: {message}")
                }
            }
            Error::LimitExceeded { limit, value, context } => write!(
                f,
                "limit exceeded: {context} needs more than Limits.{limit} = {value}; \
                 simplify the constraint or raise the limit"
            ),
            Error::EmptyLanguage { what } => {
                write!(f, "the constraint matches no string at all: {what}")
            }
            Error::Vocabulary(m) => write!(f, "invalid vocabulary: {m}"),
            Error::InvalidArgument(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}
