//! Small grammars built directly as automata: one exact string, and free text that never
//! contains any of some strings (what a tag's content or the text between tool calls is).

use regex_syntax::hir::{Dot, Hir, Repetition};

use super::{lower, Grammar};
use crate::automata::Dfa;
use crate::error::Result;
use crate::frontend::regex;
use crate::limits::Limits;

impl Grammar {
    /// Exactly the bytes `text`.
    pub fn literal(text: &[u8], limits: &Limits) -> Result<Grammar> {
        let what = format!("the string {:?}", String::from_utf8_lossy(text));
        let dfa = Dfa::literal(text, limits, &what)?;
        Ok(Grammar::plain_cfg(lower::regular_cfg(dfa, &what, limits)?, what))
    }

    /// Any text of whole UTF-8 characters (the empty text too) in which none of
    /// `excluded` occurs (empty strings are ignored): the complement of "contains one of
    /// them", one automaton.
    pub fn text_excluding(excluded: &[Vec<u8>], limits: &Limits) -> Result<Grammar> {
        let excluded: Vec<&Vec<u8>> = excluded.iter().filter(|e| !e.is_empty()).collect();
        let what = if excluded.is_empty() {
            "any text".to_string()
        } else {
            let list: Vec<String> = excluded.iter().map(|e| format!("{:?}", String::from_utf8_lossy(e))).collect();
            format!("text without {}", list.join(", "))
        };
        let dfa = if excluded.is_empty() {
            Dfa::utf8_any()
        } else {
            let any = || Hir::repetition(Repetition { min: 0, max: None, greedy: true, sub: Box::new(Hir::dot(Dot::AnyChar)) });
            let one_of = Hir::alternation(excluded.iter().map(|e| Hir::literal(e.as_slice())).collect());
            let containing = regex::compile_hir(&Hir::concat(vec![any(), one_of, any()]), &what, limits)?;
            containing.complement(limits, &what)?.minimized()
        };
        Ok(Grammar::plain_cfg(lower::regular_cfg(dfa, &what, limits)?, what))
    }
}
