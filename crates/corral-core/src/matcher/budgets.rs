//! The matcher's side of budgets in tokens (a structural tag's `max_tokens`): after each
//! token, the chart counts the tokens each budgeted match has touched and closes the
//! spent ones (see [`crate::parser::BudgetScan`]); the counts are kept per token, so that
//! a rollback returns to them.

use super::{Matcher, State};
use crate::error::Result;
use crate::index::compiled::Engine;
use crate::parser::BudgetScan;

/// The counts after each accepted step (EOS included), for a grammar with budgets.
#[derive(Debug, Clone, Default)]
pub(super) struct Budgets {
    steps: Vec<Vec<BudgetScan>>,
}

impl Budgets {
    pub(super) fn rollback(&mut self, n: usize) {
        self.steps.truncate(self.steps.len().saturating_sub(n));
    }
}

impl Matcher {
    /// Counts the budgets after a step that read `bytes` (none: EOS), which the chart
    /// holds already.
    pub(super) fn count_budgets(&mut self, bytes: Option<&[u8]>) -> Result<()> {
        let Some(budgets) = &mut self.budgets else { return Ok(()) };
        let before = budgets.steps.last().cloned().unwrap_or_default();
        let (State::Cfg { chart, bounds }, Engine::Cfg { earley, .. }) = (&mut self.state, &self.grammar.engine) else {
            return Ok(());
        };
        let Some(bytes) = bytes else {
            budgets.steps.push(before);
            return Ok(());
        };
        // The row where this step began: after the step before it (row 0 at the start).
        let began = bounds.iter().rev().nth(1).map_or(0, |&b| b as usize - 1);
        let counted = chart.count_token_budgets(earley, &before, began, bytes)?;
        budgets.steps.push(counted);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::index::compiled::CompiledGrammar;
    use crate::limits::Limits;
    use crate::structural::{structural_tag, TagOptions};
    use crate::vocab::Vocabulary;
    use crate::Matcher;

    /// `<t>` text within `budget` tokens `</t>`, over tokens `<t>`, `a`, `b`, `ab`, `</t>`
    /// (ids 0 to 4) and EOS.
    fn think(budget: u32) -> Matcher {
        let spec = format!(
            r#"{{"type": "tag", "begin": "<t>", "content": {{"type": "any_text", "max_tokens": {budget}}}, "end": "</t>"}}"#
        );
        let g = structural_tag(&spec, &TagOptions::default(), &Limits::default()).unwrap().grammar;
        let tokens = [&b"<t>"[..], b"a", b"b", b"ab", b"</t>"].iter().map(|t| Some(t.to_vec())).chain([None]).collect();
        let vocab = Arc::new(Vocabulary::new(tokens, &[], &[5], None).unwrap());
        Matcher::new(Arc::new(CompiledGrammar::new(&g, vocab, &Limits::default(), false).unwrap()))
    }

    fn allowed(m: &Matcher) -> Vec<u32> {
        let mut mask = vec![0u32; 1];
        m.fill_mask(&mut mask).unwrap();
        (0..6).filter(|t| mask[0] >> t & 1 == 1).collect()
    }

    #[test]
    fn a_spent_budget_leaves_only_the_end() {
        let mut m = think(2);
        assert!(m.advance(0).unwrap() && m.advance(3).unwrap());
        assert_eq!(allowed(&m), vec![0, 1, 2, 3, 4], "one token more");
        assert!(m.advance(1).unwrap());
        assert_eq!(allowed(&m), vec![4], "spent: only the end");
        assert!(!m.advance(2).unwrap());
        m.rollback(1).unwrap();
        assert!(m.advance(2).unwrap() && !m.advance(1).unwrap() && m.advance(4).unwrap() && m.advance(5).unwrap());
        let mut one = think(1);
        assert!(one.advance(0).unwrap() && one.advance(3).unwrap() && !one.advance(1).unwrap());
    }

    #[test]
    fn steps_that_read_no_byte_spend_nothing() {
        // A completion reads its steps without tokens, some of them empty.
        let mut m = think(3);
        assert!(m.advance(0).unwrap() && m.advance(1).unwrap());
        assert_eq!(m.completion().unwrap().as_deref(), Some(&b"</t>"[..]));
        assert!(m.try_push_bytes(b"").unwrap());
        assert!(m.advance(2).unwrap() && m.advance(3).unwrap() && !m.advance(1).unwrap());
    }
}
