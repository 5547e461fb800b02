//! Small grammars built directly as automata: one exact string, free text that never
//! contains any of some strings (what a tag's content or the text between tool calls is),
//! free text up to the first of some triggers, and whole tokens (one among some, or any
//! run but some) for the token-level formats of structural tags.

use std::sync::Arc;

use regex_syntax::hir::{Dot, Hir, Repetition};

use super::{lower, Grammar};
use crate::automata::Dfa;
use crate::error::{Error, Result};
use crate::frontend::{regex, tokens};
use crate::limits::Limits;
use crate::vocab::TokenRefs;

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

impl Grammar {
    /// One whole token among those `refs` names (by id or by text; not empty), matched
    /// by id as a grammar's token reference is (see `frontend::tokens`).
    pub fn token_among(refs: &TokenRefs, limits: &Limits) -> Result<Grammar> {
        if refs.is_empty() {
            return Err(Error::InvalidArgument("a token among none".into()));
        }
        let what = format!("the token {}", describe_tokens(refs));
        Self::over_readings(regex::compile_hir(&tokens::one_of(refs), &what, limits)?, refs, what, limits)
    }

    /// Any run of text and whole tokens (special ones too) but those `refs` names, the
    /// empty run included: the grammars' `!<…>*` for a list mixing ids and texts. No
    /// string of `texts` occurs in its text either.
    pub fn tokens_except(refs: &TokenRefs, texts: &[Vec<u8>], limits: &Limits) -> Result<Grammar> {
        let (dfa, what) = Self::tokens_except_dfa(refs, texts, limits)?;
        Self::over_readings(dfa, &with_specials(refs), what, limits)
    }

    /// One token but those `refs` names: [`Grammar::tokens_except`], not empty, within a
    /// budget of one token ([`Grammar::within_tokens`]). Where whole tokens stand around
    /// it (a tag whose `begin` and `end` are tokens), that is exactly one token; elsewhere,
    /// text in which at most one token starts.
    pub fn one_token_except(refs: &TokenRefs, texts: &[Vec<u8>], limits: &Limits) -> Result<Grammar> {
        let (dfa, what) = Self::tokens_except_dfa(refs, texts, limits)?;
        let what = format!("one token of {what}");
        let dfa = dfa.without_empty(limits, &what)?;
        Self::over_readings(dfa, &with_specials(refs), what, limits)?.within_tokens(1, limits)
    }

    /// The automaton of [`Grammar::tokens_except`], and its description.
    fn tokens_except_dfa(refs: &TokenRefs, texts: &[Vec<u8>], limits: &Limits) -> Result<(Dfa, String)> {
        let mut what = match refs.is_empty() {
            true => "any tokens".to_string(),
            false => format!("any tokens but {}", describe_tokens(refs)),
        };
        let texts: Vec<&Vec<u8>> = texts.iter().filter(|t| !t.is_empty()).collect();
        if !texts.is_empty() {
            let list: Vec<String> = texts.iter().map(|e| format!("{:?}", String::from_utf8_lossy(e))).collect();
            what = format!("{what}, without {}", list.join(", "));
        }
        let mut dfa = regex::compile_hir(&tokens::run_except(refs), &what, limits)?;
        if !texts.is_empty() {
            // Readings hold no byte below 0x80, so only text can spell such a string.
            let any = || Hir::repetition(Repetition { min: 0, max: None, greedy: true, sub: Box::new(any_byte()) });
            let one_of = Hir::alternation(texts.iter().map(|e| Hir::literal(e.as_slice())).collect());
            let containing = regex::compile_hir(&Hir::concat(vec![any(), one_of, any()]), &what, limits)?;
            dfa = dfa.minus(&containing, limits, &what)?;
        }
        Ok((dfa, what))
    }

    /// This grammar of free text (one terminal: [`Grammar::text_excluding`],
    /// [`Grammar::tokens_except`] and their kin) spending at most `max_tokens` of the
    /// model's tokens: tokens that start inside it (see `parser::budgets`). After that
    /// many, only what may follow it can be written. The matcher counts them
    /// (the grammar cannot: one token and several spell the same text), so the text is
    /// always read by the parser, never folded into a larger automaton; text read without
    /// tokens (`matches`) is not counted.
    pub fn within_tokens(self, max_tokens: u32, limits: &Limits) -> Result<Grammar> {
        if max_tokens == 0 {
            return Grammar::literal(b"", limits);
        }
        let Grammar::Cfg(c) = self else {
            return Err(Error::InvalidArgument("a token budget needs free text, not a regex".into()));
        };
        if c.cfg.terminals.len() > 1 {
            return Err(Error::InvalidArgument("a token budget needs free text of one piece".into()));
        }
        let mut c = Arc::unwrap_or_clone(c);
        let cfg = Arc::make_mut(&mut c.cfg);
        cfg.terminals.iter_mut().for_each(|t| t.token_budget = Some(max_tokens));
        cfg.regular = None;
        c.description = format!("{} in at most {max_tokens} tokens", c.description);
        Ok(Grammar::Cfg(Arc::new(c)))
    }

    /// The grammar of `dfa`, an automaton over token readings, naming the tokens `refs`.
    fn over_readings(dfa: Dfa, refs: &TokenRefs, what: String, limits: &Limits) -> Result<Grammar> {
        let mut cfg = lower::regular_cfg(dfa.minimized(), &what, limits)?;
        cfg.tokens = refs.clone();
        Ok(Grammar::plain_cfg(cfg, what))
    }
}

/// `refs`, with every special token read by id: a run of tokens may write any of them
/// (even when it names none).
fn with_specials(refs: &TokenRefs) -> TokenRefs {
    TokenRefs { specials: true, ..refs.clone() }
}

/// Any one byte.
fn any_byte() -> Hir {
    use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange};
    Hir::class(Class::Bytes(ClassBytes::new([ClassBytesRange::new(0, 0xFF)])))
}

/// The tokens `refs` names, for messages: `<think>`, `[151667]`.
fn describe_tokens(refs: &TokenRefs) -> String {
    let names = refs.names.iter().map(|n| format!("{:?}", String::from_utf8_lossy(n)));
    let ids = refs.ids.iter().map(|&(lo, hi)| if lo == hi { format!("[{lo}]") } else { format!("[{lo}-{hi}]") });
    names.chain(ids).collect::<Vec<_>>().join(", ")
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
