//! Budgets in tokens: terminals that at most so many of the model's tokens may hold bytes
//! of (a structural tag's `max_tokens`), enforced on the chart at token boundaries.
//!
//! A match *spends* a token when the token starts inside it (its first byte is one of
//! the match's bytes), as XGrammar counts the tokens a region consumes: a token that
//! starts before the match (holding a marker and its first bytes) is not spent.
//!
//! A grammar cannot count tokens (one token and several spell the same text), so the
//! matcher tells the chart where each token ends. At such a boundary, every open scan of
//! a terminal with a budget gets the number of tokens its match has spent: one if it
//! started with the token just read (its origin set stands where the token began), none
//! if it started inside it (its origin set stands at one of the token's inner positions),
//! else one more than the scan it continues at the previous boundary (the same terminal
//! and origin, whose DFA state the token's bytes lead to this one). Scans the parser
//! merged (equal terminal, state and origin: the same future) keep the least count, which
//! is the one that allows the most. A scan whose count has reached its budget is closed:
//! its match may end here (its completion already stands in the chart) but not go on
//! into another token.

use super::*;
use crate::error::{Error, Result};

/// An open scan of a terminal with a budget, at a token boundary, and the number of tokens
/// its match has spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetScan {
    term: u32,
    state: u32,
    origin: u32,
    spent: u32,
}

impl Chart {
    /// Counts the budgeted scans of the last row, which a token of `bytes` has just ended
    /// (it began at row `began`); `before` are the counts at the boundary where it began.
    /// Closes the scans whose budget is spent, and returns the counts of those left open.
    pub fn count_token_budgets(
        &mut self,
        g: &EarleyGrammar,
        before: &[BudgetScan],
        began: usize,
        bytes: &[u8],
    ) -> Result<Vec<BudgetScan>> {
        let terms = &g.cfg.terminals;
        let Some(&last) = self.rows.last() else { return Ok(Vec::new()) };
        if began + 1 >= self.rows.len() {
            // No byte was read (an empty token, an empty step of a completion): no token
            // started inside anything, and the scans are those of the last boundary.
            return Ok(before.to_vec());
        }
        // The sets a match begun in this token may start from: where it began (the match
        // spends it), and inside it (it does not).
        let at_start = self.rows[began].set;
        let inside: Vec<u32> = self.rows[began + 1..self.rows.len() - 1].iter().map(|r| r.set).filter(|&s| s != NONE).collect();
        let mut counted = Vec::new();
        let mut closed = false;
        for sc in &self.scans[last.scans.0 as usize..last.scans.1 as usize] {
            let Some(budget) = terms[sc.term as usize].token_budget else { continue };
            let spent = if inside.contains(&sc.origin) {
                0
            } else if sc.origin == at_start {
                1
            } else {
                let dfa = &terms[sc.term as usize].dfa;
                let continued = before
                    .iter()
                    .filter(|b| b.term == sc.term && b.origin == sc.origin && dfa.walk(b.state, bytes) == sc.state)
                    .map(|b| b.spent + 1)
                    .min();
                continued.ok_or_else(|| Error::Internal("a budgeted scan continues none of the last boundary".into()))?
            };
            if spent >= budget {
                closed = true;
            } else {
                counted.push(BudgetScan { term: sc.term, state: sc.state, origin: sc.origin, spent });
            }
        }
        if closed {
            self.close_spent_scans(g, &counted);
        }
        Ok(counted)
    }

    /// Drops from the last row the budgeted scans not in `open` (the last row's scans are
    /// the tail of the arena).
    fn close_spent_scans(&mut self, g: &EarleyGrammar, open: &[BudgetScan]) {
        let terms = &g.cfg.terminals;
        let Some(last) = self.rows.last_mut() else { return };
        let (start, end) = (last.scans.0 as usize, last.scans.1 as usize);
        let kept: Vec<Scan> = self.scans[start..end]
            .iter()
            .filter(|sc| {
                terms[sc.term as usize].token_budget.is_none()
                    || open.iter().any(|b| b.term == sc.term && b.state == sc.state && b.origin == sc.origin)
            })
            .copied()
            .collect();
        self.scans.truncate(start);
        self.scans.extend(kept);
        last.scans.1 = self.scans.len() as u32;
    }
}
