//! Terminals: regex sources and DFAs compiled once per grammar (literals as chains,
//! shared pieces cached), and folding a regular grammar into one DFA while that is cheap.

use std::sync::Arc;

use super::*;
use crate::automata::Dfa;
use crate::error::{Error, Result};
use crate::frontend::ast::Pos;
use crate::frontend::scanner::grammar_error;
use crate::limits::Limits;

impl<'a> Lowering<'a> {
    /// Limits for building DFAs: the grammar's, or a speculative fold's smaller budget.
    pub(super) fn dfa_limits(&self) -> &Limits {
        self.fold_limits.as_ref().unwrap_or(self.limits)
    }

    /// The DFA of a regular start rule that uses boolean operators, if it is cheap to build
    /// (the whole grammar is then matched like a regex). Folding concatenations and
    /// repetitions of operator DFAs into one automaton can blow up where the Earley parser,
    /// reading the same pieces as separate terminals, does not: so this tries under a small
    /// budget and otherwise leaves the rule to the parser (errors are reported there).
    pub(super) fn try_fold(&mut self, name: &'a str) -> Option<Dfa> {
        if self.oversized.contains(name) {
            return None;
        }
        let small = Limits {
            max_dfa_states: self.limits.max_dfa_states.min(FOLD_MAX_STATES),
            dfa_size_limit: self.limits.dfa_size_limit.min(FOLD_MAX_BYTES),
            ..self.limits.clone()
        };
        self.fold_limits = Some(small);
        self.fold_work.set(0);
        let reg = self.rule_reg(name);
        self.fold_limits = None;
        match reg {
            Ok(Reg::Dfa { dfa, .. }) => Some((*dfa).clone()),
            Ok(Reg::Src(src)) => self.compile_cached(&src, self.limits).ok().map(|d| (*d).clone()),
            Ok(Reg::Void(_)) | Err(_) => None,
        }
    }

    /// Compiles regex source to a DFA; errors name `name` and point at `pos`.
    pub(super) fn compile_src(&self, src: &str, name: &str, pos: Pos) -> Result<Arc<Dfa>> {
        // A fold gives up on a large regex before the regex engine spends its budget.
        if self.fold_limits.is_some() && src.len() > MAX_TERMINAL_SOURCE && !self.compiled.borrow().contains_key(src) {
            return Err(Error::LimitExceeded {
                limit: "max_dfa_states",
                value: FOLD_MAX_STATES,
                context: "folding the grammar into one DFA".into(),
            });
        }
        match self.compile_cached(src, self.dfa_limits()) {
            // A fold with a large counted piece (a bounded JSON string: 14 states a
            // character) would spend its whole budget combining it before giving up.
            Ok(d) if self.fold_limits.is_some() && d.num_states() > FOLD_MAX_PIECE_STATES && largest_count(src) >= 16 => {
                Err(Error::LimitExceeded {
                    limit: "max_dfa_states",
                    value: FOLD_MAX_PIECE_STATES,
                    context: "folding the grammar into one DFA".into(),
                })
            }
            Ok(d) => Ok(d),
            Err(Error::EmptyLanguage { .. }) => Err(grammar_error(pos, format!("`{name}` matches no string at all"))),
            Err(e @ (Error::LimitExceeded { .. } | Error::Interrupted)) => Err(e),
            Err(e) => Err(grammar_error(pos, format!("in `{name}`: {e}"))),
        }
    }

    /// Compiles a regex source once (successes are remembered; sources are whole
    /// patterns, so the key is exact).
    pub(super) fn compile_cached(&self, src: &str, limits: &Limits) -> Result<Arc<Dfa>> {
        // `(?:x)` is `x` when the group spans the whole source. Stripping a group that
        // closes earlier leaves an unbalanced `)`, which no compiled (cached) source has.
        let mut key = src;
        loop {
            if let Some(d) = self.compiled.borrow().get(key) {
                return Ok(d.clone());
            }
            match key.strip_prefix("(?:").and_then(|k| k.strip_suffix(')')) {
                Some(inner) => key = inner,
                None => break,
            }
        }
        crate::util::interrupt::check_now()?;
        let d = crate::frontend::regex::prebuilt::compile_cached(src, limits, self.classes, &mut self.pieces.borrow_mut())?;
        self.compiled.borrow_mut().insert(src.to_string(), d.clone());
        Ok(d)
    }

    /// The DFA of a regular piece (regex sources are compiled once).
    pub(super) fn reg_dfa(&mut self, reg: &Reg, pos: Pos) -> Result<Arc<Dfa>> {
        match reg {
            Reg::Dfa { dfa, .. } => Ok(dfa.clone()),
            // Callers take void pieces apart first; a DFA needs at least one string.
            Reg::Void(v) => Err(grammar_error(pos, self.voids[*v].1.clone())),
            Reg::Src(src) => {
                let key = reg.key();
                if let Some(d) = self.dfa_cache.get(&key) {
                    return Ok(d.clone());
                }
                let dfa = self.compile_src(src, src, pos)?;
                self.count_fold_work(&dfa)?;
                self.dfa_cache.insert(key, dfa.clone());
                Ok(dfa)
            }
        }
    }

    /// During a fold, adds a built DFA's states to the attempt's work (see
    /// [`FOLD_MAX_WORK`]); past the bound the attempt stops.
    pub(super) fn count_fold_work(&self, dfa: &Dfa) -> Result<()> {
        if self.fold_limits.is_some() {
            self.fold_work.set(self.fold_work.get() + dfa.num_states());
            if self.fold_work.get() > FOLD_MAX_WORK {
                return Err(Error::LimitExceeded {
                    limit: "max_dfa_states",
                    value: FOLD_MAX_WORK,
                    context: "folding the grammar into one DFA".into(),
                });
            }
        }
        Ok(())
    }

    /// The piece named `key`: from the cache, or built now.
    pub(super) fn cached(&mut self, key: String, build: impl FnOnce(&Self) -> Result<Dfa>) -> Result<Reg> {
        if let Some(dfa) = self.dfa_cache.get(&key) {
            return Ok(Reg::Dfa { dfa: dfa.clone(), key });
        }
        let dfa = Arc::new(build(self)?);
        self.count_fold_work(&dfa)?;
        self.dfa_cache.insert(key.clone(), dfa.clone());
        Ok(Reg::Dfa { dfa, key })
    }

    /// The terminal of a DFA-built piece (one per key).
    pub(super) fn dfa_terminal(&mut self, dfa: &Arc<Dfa>, key: String, name: &str) -> u32 {
        if let Some(&t) = self.terminal_of_dfa.get(&key) {
            return t;
        }
        let id = self.push_terminal(Terminal { name: name.to_string(), dfa: dfa.clone() }, None, key.clone());
        self.terminal_of_dfa.insert(key, id);
        id
    }

    /// Adds a terminal with its regex source (if any) and canonical key.
    pub(super) fn push_terminal(&mut self, t: Terminal, src: Option<String>, key: String) -> u32 {
        let id = self.terminals.len() as u32;
        self.terminals.push(t);
        self.terminal_regex.push(src);
        self.terminal_key.push(key);
        id
    }

    pub(super) fn terminal(&mut self, src: String, name: &str, pos: Option<Pos>) -> Result<u32> {
        if let Some(&t) = self.terminal_of_regex.get(&src) {
            return Ok(t);
        }
        let dfa = self.compile_src(&src, name, pos.unwrap_or_default())?;
        let id = self.push_terminal(Terminal { name: name.to_string(), dfa }, Some(src.clone()), format!("{src:?}"));
        self.terminal_of_regex.insert(src, id);
        Ok(id)
    }
}
