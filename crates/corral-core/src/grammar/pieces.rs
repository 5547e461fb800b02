//! Small grammars built directly as automata: one exact string, free text that never
//! contains any of some strings (what a tag's content or the text between tool calls is),
//! and free text up to the first of some triggers.

use regex_syntax::hir::{Dot, Hir, Repetition};

use super::{lower, Grammar};
use crate::automata::Dfa;
use crate::error::{Error, Result};
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
        let dfa = excluding_dfa(&excluded, &what, limits)?;
        Ok(Grammar::plain_cfg(lower::regular_cfg(dfa, &what, limits)?, what))
    }

    /// [`Grammar::text_excluding`] of at most `max_chars` characters (a reasoning budget):
    /// the count is one counted region of the automaton (see `automata::counted`), so a
    /// budget of many thousand characters costs its rows, not a copy of the text's
    /// automaton per character.
    pub fn text_excluding_within(excluded: &[Vec<u8>], max_chars: u32, limits: &Limits) -> Result<Grammar> {
        let what = format!("text of at most {max_chars} characters");
        let one = regex::compile_hir(&Hir::dot(Dot::AnyChar), &what, limits)?;
        let counted = match one.repeat_counted(0, Some(max_chars), limits, &what)? {
            Some(d) => d,
            None => {
                let rep = Repetition { min: 0, max: Some(max_chars), greedy: true, sub: Box::new(Hir::dot(Dot::AnyChar)) };
                regex::compile_hir(&Hir::repetition(rep), &what, limits)?
            }
        };
        let excluded: Vec<&Vec<u8>> = excluded.iter().filter(|e| !e.is_empty()).collect();
        let dfa = match excluded.is_empty() {
            true => counted,
            false => counted.intersect(&excluding_dfa(&excluded, &what, limits)?, limits, &what)?,
        };
        Ok(Grammar::plain_cfg(lower::regular_cfg(dfa, &what, limits)?, what))
    }

    /// Free text up to the first trigger, that trigger included, as a parser reading the
    /// text meets them: text ending with `trigger` in which no string of `triggers` ends
    /// before the last byte, and none of `excluded` occurs anywhere, across the trigger
    /// too. `None` when no text is such (the trigger holds an excluded string).
    pub fn text_then_trigger(
        trigger: &[u8],
        triggers: &[Vec<u8>],
        excluded: &[Vec<u8>],
        limits: &Limits,
    ) -> Result<Option<Grammar>> {
        let what = format!("text up to the trigger {:?}", String::from_utf8_lossy(trigger));
        let any = |min: u32| Hir::repetition(Repetition { min, max: None, greedy: true, sub: Box::new(Hir::dot(Dot::AnyChar)) });
        let one_of = |strings: &[Vec<u8>]| {
            Hir::alternation(strings.iter().filter(|e| !e.is_empty()).map(|e| Hir::literal(e.as_slice())).collect())
        };
        let ending = regex::compile_hir(&Hir::concat(vec![any(0), Hir::literal(trigger)]), &what, limits)?;
        let mut bad = vec![Hir::concat(vec![any(0), one_of(triggers), any(1)])];
        if excluded.iter().any(|e| !e.is_empty()) {
            bad.push(Hir::concat(vec![any(0), one_of(excluded), any(0)]));
        }
        let bad = regex::compile_hir(&Hir::alternation(bad), &what, limits)?;
        let dfa = match ending.intersect(&bad.complement(limits, &what)?, limits, &what) {
            Ok(dfa) => dfa.minimized(),
            Err(Error::EmptyLanguage { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(Some(Grammar::plain_cfg(lower::regular_cfg(dfa, &what, limits)?, what)))
    }
}

/// Text of whole UTF-8 characters in which none of `excluded` (non-empty) occurs.
fn excluding_dfa(excluded: &[&Vec<u8>], what: &str, limits: &Limits) -> Result<Dfa> {
    if excluded.is_empty() {
        return Ok(Dfa::utf8_any());
    }
    let any = || Hir::repetition(Repetition { min: 0, max: None, greedy: true, sub: Box::new(Hir::dot(Dot::AnyChar)) });
    let one_of = Hir::alternation(excluded.iter().map(|e| Hir::literal(e.as_slice())).collect());
    let containing = regex::compile_hir(&Hir::concat(vec![any(), one_of, any()]), what, limits)?;
    Ok(containing.complement(limits, what)?.minimized())
}
