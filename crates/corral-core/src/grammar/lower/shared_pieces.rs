//! Automata pieces shared by the lowerings of one build: a structural tag translates
//! one JSON Schema per tool, and the tools' parameters repeat the same values (strings,
//! bounded integers, dates); built once, their automata serve every schema.
//!
//! Inside [`share_built_pieces`] every lowering on this thread starts from the pieces the
//! earlier ones built, and leaves its own for the next. Pieces are keyed by their
//! language's printed form, so sharing changes no automaton; outside that scope each
//! lowering builds its own, as before.

use std::cell::RefCell;

use crate::frontend::regex::PieceCache;

thread_local! {
    /// The pieces shared on this thread, while a [`share_built_pieces`] runs.
    static SHARED: RefCell<Option<PieceCache>> = const { RefCell::new(None) };
}

/// Runs `work` with the lowerings it makes on this thread sharing built pieces.
pub fn share_built_pieces<T>(work: impl FnOnce() -> T) -> T {
    let outer = SHARED.with(|s| s.borrow_mut().replace(PieceCache::default()));
    /// Restores the enclosing scope's pieces (or none) when `work` returns or unwinds.
    struct Restore(Option<Option<PieceCache>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take().flatten();
            SHARED.with(|s| *s.borrow_mut() = outer);
        }
    }
    let _restore = Restore(Some(outer));
    work()
}

/// The shared pieces for a new lowering (an empty cache outside any scope).
pub(super) fn take() -> PieceCache {
    SHARED.with(|s| s.borrow_mut().as_mut().map(std::mem::take)).unwrap_or_default()
}

/// A lowering's pieces, left for the next one (dropped outside any scope).
pub(super) fn give_back(pieces: PieceCache) {
    SHARED.with(|s| {
        if let Some(shared) = s.borrow_mut().as_mut() {
            shared.merge(pieces);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::Dialect;
    use crate::grammar::Grammar;
    use crate::index::CompiledGrammar;
    use crate::limits::Limits;
    use crate::vocab::Vocabulary;
    use std::sync::Arc;

    const A: &str = r#"root ::= "[" item ("," item)* "]" ; item ::= /[a-z]{1,12}/ | /-?[0-9]{1,5}/ ;"#;
    const B: &str = r#"root ::= "{" /[a-z]{1,12}/ ":" /-?[0-9]{1,5}/ "}" | "<" root ">" ;"#;

    fn matcher_of(g: &Grammar) -> CompiledGrammar {
        let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        tokens.push(None);
        let vocab = Arc::new(Vocabulary::new(tokens, &[], &[256], None).unwrap());
        CompiledGrammar::new(g, vocab, &Limits::default(), false).unwrap()
    }

    #[test]
    fn lowerings_in_a_scope_share_pieces_and_keep_their_languages() {
        let limits = Limits::default();
        let alone = Grammar::cfg_text(B, Dialect::Ebnf, None, &limits, None).unwrap();
        let (shared, left) = share_built_pieces(|| {
            Grammar::cfg_text(A, Dialect::Ebnf, None, &limits, None).unwrap();
            let after_a = take();
            assert!(!after_a.is_empty(), "the first lowering left its pieces");
            give_back(after_a);
            let b = Grammar::cfg_text(B, Dialect::Ebnf, None, &limits, None).unwrap();
            (b, take().len())
        });
        assert!(left > 0);
        // Outside the scope nothing is kept.
        assert!(take().is_empty());
        let (x, y) = (matcher_of(&alone), matcher_of(&shared));
        for s in ["{ab:12}", "<{z:-3}>", "<<{abcdefghijkl:99999}>>", "{ab:}", "{:1}", "<{a:1}", "{abcdefghijklm:1}"] {
            assert_eq!(x.matches(s.as_bytes()).unwrap(), y.matches(s.as_bytes()).unwrap(), "{s}");
        }
        for seed in 0..20 {
            if let Some(s) = alone.sample(seed, 64, usize::MAX) {
                assert!(y.matches(&s).unwrap());
            }
        }
    }
}
