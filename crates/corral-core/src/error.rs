//! The error type of corral-core: every failure the engine can report.

use std::fmt;

/// Everything that can go wrong in corral-core. Each variant says what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
    /// A documented resource limit was hit while translating a JSON Schema, at a place in
    /// it: [`Error::LimitExceeded`] with the JSON pointer of the keyword (or subschema) that
    /// needs more (`""` for the whole schema) and the keyword's name.
    SchemaLimit {
        /// The name of the limit, as in `Limits`.
        limit: &'static str,
        /// Its value.
        value: usize,
        /// What needs more, beginning with the keyword and its pointer.
        context: String,
        /// The JSON pointer of the keyword or subschema.
        pointer: String,
        /// The keyword (`""` when a subschema as a whole is meant).
        keyword: String,
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
    /// Every grammar of an intersection (`g1 & g2`) allows some token here, but no token
    /// is allowed by all of them: their allowed sets do not meet.
    NoCommonToken {
        /// How many grammars are combined.
        grammars: usize,
        /// Tokens accepted so far.
        tokens: usize,
    },
    /// A JSON Schema that cannot be translated: it breaks the specification, or it uses
    /// something corral does not translate exactly. `pointer` is the JSON pointer of the
    /// keyword (`""` for the whole schema), `keyword` its name.
    Schema {
        /// Invalid, or unsupported.
        kind: SchemaErrorKind,
        /// What is wrong, beginning with the keyword and its pointer.
        message: String,
        /// The JSON pointer of the keyword in its document.
        pointer: String,
        /// The keyword (`""` when the schema as a whole is meant).
        keyword: String,
    },
    /// The work was stopped from outside (see [`crate::util::interrupt`]): nothing was changed.
    Interrupted,
    /// An invariant of the engine did not hold: a bug in corral, reported instead of a
    /// wrong answer.
    Internal(String),
}

/// Why a JSON Schema was refused (see [`Error::Schema`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaErrorKind {
    /// The schema breaks the JSON Schema specification (a `$ref` to nothing, a keyword
    /// value of the wrong type, an identifier given to two subschemas).
    Invalid,
    /// The schema is valid, but corral cannot translate this part of it exactly.
    Unsupported,
}

/// corral-core's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// Characters of a pattern shown on each side of an error's position.
const CARET_WINDOW: usize = 40;

/// Longest `context` a message shows, in characters (contexts can quote a whole pattern).
const MAX_CONTEXT_CHARS: usize = 200;

/// Renders the line of `pattern` that holds character `position` with a caret under it;
/// a long line is cut to a window around the position.
fn caret(pattern: &str, position: usize) -> String {
    let mut line_start = 0;
    let mut col = 0usize;
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
    let line: Vec<char> = pattern.chars().skip(line_start).take_while(|&c| c != '\n').collect();
    let from = col.saturating_sub(CARET_WINDOW);
    let to = (col + CARET_WINDOW).min(line.len());
    let mut shown: String = line[from.min(line.len())..to].iter().collect();
    let mut at = col - from;
    if from > 0 {
        shown.insert(0, '…');
        at += 1;
    }
    if to < line.len() {
        shown.push('…');
    }
    format!("    {}\n    {}^", shown, " ".repeat(at))
}

/// `text` cut to `MAX_CONTEXT_CHARS` characters.
fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_CONTEXT_CHARS) {
        Some((cut, _)) => format!("{}… ({} bytes in all)", &text[..cut], text.len()),
        None => text.to_string(),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RegexSyntax { message, pattern, position } => {
                write!(f, "regex syntax error at position {position}: {message}\n{}", caret(pattern, *position))
            }
            Error::UnsupportedRegex { construct, pattern, position } => {
                write!(f, "unsupported regex construct at position {position}: {construct}\n{}", caret(pattern, *position))
            }
            Error::Grammar { message, line, col } => {
                if *line == 0 {
                    write!(f, "grammar error: {message}")
                } else {
                    write!(f, "grammar error at line {line}, column {col}: {message}")
                }
            }
            Error::LimitExceeded { limit, value, context } | Error::SchemaLimit { limit, value, context, .. } => write!(
                f,
                "limit exceeded: {} needs more than Limits.{limit} = {value}; \
                 simplify the constraint or raise the limit",
                clip(context)
            ),
            Error::EmptyLanguage { what } => {
                write!(f, "the constraint matches no string at all: {}", clip(what))
            }
            Error::Vocabulary(m) => write!(f, "invalid vocabulary: {m}"),
            Error::InvalidArgument(m) => write!(f, "{m}"),
            Error::NoCommonToken { grammars, tokens } => write!(
                f,
                "no token is allowed by all {grammars} combined grammars after {tokens} tokens: their allowed sets \
                 do not meet here"
            ),
            Error::Schema { message, .. } => write!(f, "{message}"),
            Error::Interrupted => write!(f, "interrupted"),
            Error::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_patterns_and_contexts_are_cut() {
        let pattern = format!("{}(?<!x){}", "a".repeat(100_000), "b".repeat(100_000));
        let e = Error::UnsupportedRegex { construct: "look-behind".into(), pattern: pattern.clone(), position: 100_000 };
        let text = e.to_string();
        assert!(text.len() < 400, "{}", text.len());
        // The caret still points at the construct.
        let lines: Vec<&str> = text.lines().collect();
        let at = lines[2].chars().count() - 1;
        assert_eq!(lines[1].chars().nth(at), Some('('), "{text}");
        let e = Error::LimitExceeded { limit: "max_dfa_states", value: 1, context: pattern };
        assert!(e.to_string().len() < 400);
        // Short ones are shown whole.
        let e = Error::RegexSyntax { message: "m".into(), pattern: "ab(".into(), position: 2 };
        assert!(e.to_string().ends_with("    ab(\n      ^"), "{e}");
    }
}
