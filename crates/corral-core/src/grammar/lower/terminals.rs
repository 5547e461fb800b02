//! Terminals: regular pieces and DFAs built once per grammar (prebuilt patterns read from
//! their table, literals as chains, shared pieces cached), and folding a regular grammar
//! into one DFA while that is cheap.

use std::sync::Arc;

use super::piece::Piece;
use super::*;
use crate::automata::{Dfa, LazyDfa};
use crate::error::{Error, Result};
use crate::frontend::ast::Pos;
use crate::frontend::scanner::grammar_error;
use crate::limits::Limits;

#[cfg(test)]
thread_local! {
    /// States of the automata built by operators and joins on this thread (see
    /// [`Lowering::cached`]), for tests of what a lowering builds.
    pub(crate) static OPERATOR_STATES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

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
        self.fold_memo.clear();
        match reg {
            Ok(Reg::Dfa { dfa, .. }) => Some((*dfa).clone()),
            Ok(Reg::Hir(p)) => self.piece_dfa(&p, name, Pos::default()).ok().map(|d| (*d).clone()),
            Ok(Reg::Void(_)) | Err(_) => None,
        }
    }

    /// The DFA of piece `p` under [`Lowering::dfa_limits`] (built once, then cached by
    /// its key); errors name `name` and point at `pos`.
    pub(super) fn piece_dfa(&mut self, p: &Piece, name: &str, pos: Pos) -> Result<Arc<Dfa>> {
        if let Some(d) = self.dfa_cache.get(p.key()) {
            return Ok(d.clone());
        }
        let fold = self.fold_limits.is_some();
        // A fold gives up on a heavy piece before the regex compiler spends its budget.
        if fold && p.measure().weight > MAX_TERMINAL_WEIGHT {
            return Err(fold_stopped(FOLD_MAX_STATES));
        }
        let dfa = match self.build_piece(p, self.dfa_limits(), name) {
            // A fold with a large counted piece (a bounded JSON string: 14 states a
            // character) would spend its whole budget combining it before giving up.
            Ok(d) if fold && d.num_states() > FOLD_MAX_PIECE_STATES && p.measure().largest_count >= 16 => {
                Err(fold_stopped(FOLD_MAX_PIECE_STATES))
            }
            Ok(d) => Ok(d),
            Err(Error::EmptyLanguage { .. }) => Err(grammar_error(pos, format!("`{name}` matches no string at all"))),
            Err(e @ (Error::LimitExceeded { .. } | Error::Interrupted)) => Err(e),
            Err(e) => Err(grammar_error(pos, format!("in `{name}`: {e}"))),
        }?;
        self.count_fold_work(&dfa)?;
        self.dfa_cache.insert(p.key().to_string(), dfa.clone());
        Ok(dfa)
    }

    /// Builds piece `p` under `limits` (no cache of the lowering's; errors name its regex
    /// as written, else `what`): a regex as written that ships prebuilt is read from the
    /// table, anything else is built from its HIR, sharing the grammar's built pieces.
    pub(super) fn build_piece(&self, p: &Piece, limits: &Limits, what: &str) -> Result<Arc<Dfa>> {
        if let Some(d) = p.src().and_then(|src| crate::frontend::regex::prebuilt::lookup(src, limits)) {
            return Ok(Arc::new(d));
        }
        crate::util::interrupt::check_now()?;
        regex::compile_hir_cached(p.hir(), p.src().unwrap_or(what), limits, &mut self.pieces.borrow_mut())
    }

    /// The DFA of a regular piece or DFA (pieces are built once).
    pub(super) fn reg_dfa(&mut self, reg: &Reg, pos: Pos) -> Result<Arc<Dfa>> {
        match reg {
            Reg::Dfa { dfa, .. } => Ok(dfa.clone()),
            // Callers take void pieces apart first; a DFA needs at least one string.
            Reg::Void(v) => Err(grammar_error(pos, self.voids[*v].1.clone())),
            Reg::Hir(p) => {
                let name = format!("the regular expression at {pos}");
                self.piece_dfa(p, &name, pos)
            }
        }
    }

    /// During a fold, adds a built DFA's states to the attempt's work (see
    /// [`FOLD_MAX_WORK`]); past the bound the attempt stops.
    pub(super) fn count_fold_work(&self, dfa: &Dfa) -> Result<()> {
        if self.fold_limits.is_some() {
            self.fold_work.set(self.fold_work.get() + dfa.num_states());
            if self.fold_work.get() > FOLD_MAX_WORK {
                return Err(fold_stopped(FOLD_MAX_WORK));
            }
        }
        Ok(())
    }

    /// The DFA built by an operator, named `key` (its operands' keys inside): from the
    /// cache, or built now. Its own key is short (`@` and a number, one per distinct
    /// `key`), so that keys of operators over operators do not grow with their depth.
    pub(super) fn cached(&mut self, key: String, build: impl FnOnce(&Self) -> Result<Dfa>) -> Result<Reg> {
        if let Some((dfa, id)) = self.op_cache.get(&key) {
            return Ok(Reg::Dfa { dfa: dfa.clone(), key: format!("@{id}") });
        }
        let dfa = Arc::new(build(self)?);
        self.count_fold_work(&dfa)?;
        #[cfg(test)]
        OPERATOR_STATES.with(|n| n.set(n.get() + dfa.num_states()));
        let id = self.op_cache.len();
        self.op_cache.insert(key, (dfa.clone(), id));
        Ok(Reg::Dfa { dfa, key: format!("@{id}") })
    }

    /// The terminal of a DFA-built piece (one per key).
    pub(super) fn dfa_terminal(&mut self, dfa: &Arc<Dfa>, key: String, name: &str) -> u32 {
        if let Some(&t) = self.terminal_of_key.get(&key) {
            return t;
        }
        self.lazy_terminal(Arc::new(LazyDfa::ready(dfa.clone())), key, name)
    }

    /// The terminal of an automaton that may be built on first use (a joined run; one
    /// per key).
    pub(super) fn lazy_terminal(&mut self, dfa: Arc<LazyDfa>, key: String, name: &str) -> u32 {
        if let Some(&t) = self.terminal_of_key.get(&key) {
            return t;
        }
        let id = self.push_terminal(Terminal { name: name.to_string(), dfa, token_budget: None }, None, key.clone());
        self.terminal_of_key.insert(key, id);
        id
    }

    /// Adds a terminal with its piece (if it is one) and canonical key.
    pub(super) fn push_terminal(&mut self, t: Terminal, piece: Option<Piece>, key: String) -> u32 {
        let id = self.terminals.len() as u32;
        self.terminals.push(t);
        self.terminal_piece.push(piece);
        self.terminal_key.push(key);
        id
    }

    /// The terminal of piece `p` (one per key), named `name`; build errors point at `pos`.
    pub(super) fn terminal(&mut self, p: &Piece, name: &str, pos: Option<Pos>) -> Result<u32> {
        if let Some(&t) = self.terminal_of_key.get(p.key()) {
            return Ok(t);
        }
        let dfa = Arc::new(LazyDfa::ready(self.piece_dfa(p, name, pos.unwrap_or_default())?));
        let key = p.key().to_string();
        let id = self.push_terminal(Terminal { name: name.to_string(), dfa, token_budget: None }, Some(p.clone()), key.clone());
        self.terminal_of_key.insert(key, id);
        Ok(id)
    }

    /// The terminal of a piece or DFA (a void piece has none: callers take it apart).
    pub(super) fn reg_terminal(&mut self, reg: Reg, name: &str, pos: Option<Pos>) -> Result<u32> {
        match reg {
            Reg::Hir(p) => self.terminal(&p, name, pos),
            Reg::Dfa { dfa, key } => Ok(self.dfa_terminal(&dfa, key, name)),
            Reg::Void(v) => Err(grammar_error(pos.unwrap_or_default(), self.voids[v].1.clone())),
        }
    }

    /// Terminal `t`'s regular form: its piece, or its DFA and key.
    pub(super) fn terminal_reg(&self, t: u32) -> Reg {
        match &self.terminal_piece[t as usize] {
            Some(p) => Reg::Hir(p.clone()),
            None => Reg::Dfa { dfa: self.terminals[t as usize].dfa.arc(), key: self.terminal_key[t as usize].clone() },
        }
    }
}

/// The error that ends a fold attempt past one of its budgets (`value`).
pub(super) fn fold_stopped(value: usize) -> Error {
    Error::LimitExceeded { limit: "max_dfa_states", value, context: "folding the grammar into one DFA".into() }
}
