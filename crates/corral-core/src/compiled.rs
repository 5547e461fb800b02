//! A grammar compiled against a vocabulary: the vocabulary index of the Outlines paper
//! (Algorithms 3-4), built lazily per state by walking the token trie, or eagerly.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::cfg::{advance_chart, Chart, EarleyGrammar, Overlay};
use crate::dfa::{Dfa, DEAD};
use crate::error::Result;
use crate::grammar::Grammar;
use crate::limits::Limits;
use crate::regex;
use crate::vocab::{ByteRecognizer, TokenKind, Vocabulary};

/// The allowed tokens of one automaton state.
#[derive(Debug)]
pub(crate) struct StateMask {
    repr: MaskRepr,
    /// Number of allowed token ids (EOS included).
    pub(crate) count: u32,
    /// The allowed token when `count == 1`.
    pub(crate) only: Option<u32>,
}

/// Dense bitmaps for states that allow many tokens; sorted id lists for the rest
/// (most states of most patterns allow a handful of tokens).
#[derive(Debug)]
enum MaskRepr {
    Dense(Box<[u32]>),
    Sparse(Box<[u32]>),
}

impl StateMask {
    fn from_bits(bits: Vec<u32>) -> StateMask {
        let count: u32 = bits.iter().map(|w| w.count_ones()).sum();
        let only = if count == 1 {
            bits.iter().enumerate().find(|(_, &w)| w != 0).map(|(i, &w)| (i * 32) as u32 + w.trailing_zeros())
        } else {
            None
        };
        if (count as usize) > bits.len() / 4 {
            return StateMask { repr: MaskRepr::Dense(bits.into_boxed_slice()), count, only };
        }
        let mut ids = Vec::with_capacity(count as usize);
        for (w, &word) in bits.iter().enumerate() {
            let mut x = word;
            while x != 0 {
                ids.push((w * 32) as u32 + x.trailing_zeros());
                x &= x - 1;
            }
        }
        StateMask { repr: MaskRepr::Sparse(ids.into_boxed_slice()), count, only }
    }

    /// Writes the mask into `out` (one row of `mask_words` words).
    pub(crate) fn write(&self, out: &mut [u32]) {
        match &self.repr {
            MaskRepr::Dense(bits) => out.copy_from_slice(bits),
            MaskRepr::Sparse(ids) => {
                out.fill(0);
                for &t in ids.iter() {
                    out[(t >> 5) as usize] |= 1 << (t & 31);
                }
            }
        }
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + match &self.repr {
                MaskRepr::Dense(b) | MaskRepr::Sparse(b) => b.len() * 4,
            }
    }
}

/// A DFA state stack that the token trie walks.
struct DfaWalker<'a> {
    dfa: &'a Dfa,
    stack: Vec<u32>,
}

impl ByteRecognizer for DfaWalker<'_> {
    #[inline(always)]
    fn push_byte(&mut self, byte: u8) -> bool {
        let s = self.dfa.next(*self.stack.last().unwrap_or(&DEAD), byte);
        if s == DEAD {
            false
        } else {
            self.stack.push(s);
            true
        }
    }

    #[inline(always)]
    fn pop_bytes(&mut self, n: usize) {
        let len = self.stack.len() - n;
        self.stack.truncate(len);
    }
}

/// How a compiled grammar recognizes bytes.
#[derive(Debug)]
pub(crate) enum Engine {
    /// A regular constraint: one DFA, one cached mask per state.
    Dfa {
        dfa: Dfa,
        masks: Vec<OnceLock<StateMask>>,
    },
    /// A context-free constraint: an Earley recognizer over DFA terminals.
    Cfg {
        earley: EarleyGrammar,
        start: Chart,
    },
}

/// A grammar compiled against a vocabulary. Immutable after construction except for the
/// lazily filled mask cache, which is safe to fill from many threads at once.
#[derive(Debug)]
pub struct CompiledGrammar {
    vocab: Arc<Vocabulary>,
    grammar: Grammar,
    pub(crate) engine: Engine,
    mask_bytes: AtomicUsize,
    limits: Limits,
}

impl CompiledGrammar {
    /// Compiles `grammar` for `vocab` under `limits`. With `eager`, a regular grammar's
    /// mask of every state is computed now (the full index of the Outlines paper);
    /// otherwise each state's mask is computed the first time a matcher reaches it.
    pub fn new(grammar: &Grammar, vocab: Arc<Vocabulary>, limits: &Limits, eager: bool) -> Result<CompiledGrammar> {
        let engine = match grammar {
            Grammar::Regex(parsed) => {
                let dfa = regex::build_dfa(parsed, limits)?;
                let masks = (0..dfa.num_states()).map(|_| OnceLock::new()).collect();
                Engine::Dfa { dfa, masks }
            }
            Grammar::Cfg(cfg) => {
                let earley = EarleyGrammar::new(cfg.cfg.clone(), limits);
                let start = earley.start_chart()?;
                Engine::Cfg { earley, start }
            }
        };
        let compiled = CompiledGrammar {
            vocab,
            grammar: grammar.clone(),
            engine,
            mask_bytes: AtomicUsize::new(0),
            limits: limits.clone(),
        };
        if eager {
            if let Engine::Dfa { dfa, .. } = &compiled.engine {
                for s in 1..dfa.num_states() as u32 {
                    compiled.state_mask(s);
                }
            }
        }
        Ok(compiled)
    }

    /// The vocabulary this grammar was compiled for.
    pub fn vocab(&self) -> &Arc<Vocabulary> {
        &self.vocab
    }

    /// The grammar.
    pub fn grammar(&self) -> &Grammar {
        &self.grammar
    }

    /// The limits it was compiled under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The automaton of a regular grammar.
    pub fn dfa(&self) -> Option<&Dfa> {
        match &self.engine {
            Engine::Dfa { dfa, .. } => Some(dfa),
            Engine::Cfg { .. } => None,
        }
    }

    /// Number of automaton states of a regular grammar (0 for a context-free one).
    pub fn num_states(&self) -> usize {
        self.dfa().map_or(0, |d| d.num_states())
    }

    /// Number of states whose mask is cached.
    pub fn cached_states(&self) -> usize {
        match &self.engine {
            Engine::Dfa { masks, .. } => masks.iter().filter(|m| m.get().is_some()).count(),
            Engine::Cfg { .. } => 0,
        }
    }

    /// Heap bytes used by the automaton and the cached masks (not the vocabulary).
    pub fn memory_bytes(&self) -> usize {
        let engine = match &self.engine {
            Engine::Dfa { dfa, masks } => dfa.memory_bytes() + masks.len() * std::mem::size_of::<OnceLock<StateMask>>(),
            Engine::Cfg { .. } => 0,
        };
        engine + self.mask_bytes.load(Ordering::Relaxed)
    }

    /// The mask of a live DFA state, computed on first use.
    pub(crate) fn state_mask(&self, state: u32) -> &StateMask {
        let Engine::Dfa { masks, .. } = &self.engine else {
            unreachable!("state_mask is only called on regular grammars")
        };
        masks[state as usize].get_or_init(|| {
            let m = self.compute_mask(state);
            self.mask_bytes.fetch_add(m.memory_bytes(), Ordering::Relaxed);
            m
        })
    }

    /// Walks the token trie from `state` (Algorithm 4 with shared prefixes walked once and
    /// dead subtrees skipped).
    fn compute_mask(&self, state: u32) -> StateMask {
        let Engine::Dfa { dfa, .. } = &self.engine else {
            unreachable!("compute_mask is only called on regular grammars")
        };
        let mut bits = vec![0u32; self.vocab.mask_words()];
        let mut walker = DfaWalker { dfa, stack: Vec::with_capacity(self.vocab.trie().max_depth() + 1) };
        walker.stack.push(state);
        self.vocab.trie().walk(&mut walker, |t| bits[(t >> 5) as usize] |= 1 << (t & 31));
        if dfa.is_accepting(state) {
            for &e in self.vocab.eos_ids() {
                bits[(e >> 5) as usize] |= 1 << (e & 31);
            }
        }
        StateMask::from_bits(bits)
    }

    /// The mask of a context-free parse `chart` (a trie walk with the Earley recognizer).
    /// Returns the number of allowed ids.
    pub(crate) fn chart_mask(&self, chart: &Chart, out: &mut [u32]) -> Result<u32> {
        let Engine::Cfg { earley, .. } = &self.engine else {
            unreachable!("chart_mask is only called on context-free grammars")
        };
        out.fill(0);
        let mut ov = Overlay::new(earley, chart);
        self.vocab.trie().walk(&mut ov, |t| out[(t >> 5) as usize] |= 1 << (t & 31));
        if let Some(e) = ov.error.take() {
            return Err(e);
        }
        if chart.is_accepting() {
            for &e in self.vocab.eos_ids() {
                out[(e >> 5) as usize] |= 1 << (e & 31);
            }
        }
        Ok(out.iter().map(|w| w.count_ones()).sum())
    }

    /// The state after reading token `id` in DFA `state`, or None if it is not allowed.
    pub(crate) fn next_state(&self, state: u32, id: u32) -> Option<u32> {
        let dfa = self.dfa()?;
        if self.vocab.kind(id) != TokenKind::Normal {
            return None;
        }
        let s = dfa.walk(state, self.vocab.token_bytes(id));
        (s != DEAD).then_some(s)
    }

    /// Does the constraint accept the whole of `data`?
    pub fn matches(&self, data: &[u8]) -> Result<bool> {
        match &self.engine {
            Engine::Dfa { dfa, .. } => Ok(dfa.matches(data)),
            Engine::Cfg { earley, start } => {
                let mut chart = start.clone();
                Ok(advance_chart(earley, &mut chart, data)? && chart.is_accepting())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Matcher;

    /// Every byte string of length 1..=3 over a small alphabet that includes the halves of a
    /// two-byte UTF-8 character, plus EOS.
    fn all_short_tokens() -> Vocabulary {
        let alphabet: [u8; 6] = [b'a', b'b', b'1', b'.', 0xc3, 0xa9];
        let mut toks: Vec<Option<Vec<u8>>> = Vec::new();
        for len in 1..=3 {
            for mut n in 0..alphabet.len().pow(len) {
                let mut t = Vec::new();
                for _ in 0..len {
                    t.push(alphabet[n % alphabet.len()]);
                    n /= alphabet.len();
                }
                toks.push(Some(t));
            }
        }
        toks.push(None);
        let eos = toks.len() as u32 - 1;
        Vocabulary::new(toks, &[], &[eos], None).unwrap()
    }

    #[test]
    fn trie_masks_equal_brute_force_on_every_state() {
        let vocab = Arc::new(all_short_tokens());
        for pattern in [r"a+b?", r"(ab|1\.)*é", r"[^a]{2,5}", r"\d+(\.\d+)?", r"(a|é)b(1|\.)+", ""] {
            let g = Grammar::regex(pattern, &Limits::default(), None).unwrap();
            let c = CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), true).unwrap();
            for state in 1..c.dfa().unwrap().num_states() as u32 {
                let mut got = vec![0u32; vocab.mask_words()];
                c.state_mask(state).write(&mut got);
                for id in 0..vocab.size() as u32 {
                    let want = match vocab.kind(id) {
                        TokenKind::Normal => c.dfa().unwrap().walk(state, vocab.token_bytes(id)) != DEAD,
                        TokenKind::Eos => c.dfa().unwrap().is_accepting(state),
                        _ => false,
                    };
                    let bit = got[(id >> 5) as usize] >> (id & 31) & 1 == 1;
                    assert_eq!(bit, want, "/{pattern}/ state {state} token {id}");
                }
            }
        }
    }

    #[test]
    fn matcher_rejects_and_rolls_back() {
        let vocab = Arc::new(all_short_tokens());
        let g = Grammar::regex(r"ab1", &Limits::default(), None).unwrap();
        let c = Arc::new(CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap());
        let id = |s: &[u8]| (0..vocab.size() as u32).find(|&i| vocab.token_bytes(i) == s).unwrap();
        let mut m = Matcher::new(c);
        assert!(!m.advance(id(b"b")).unwrap());
        assert!(m.advance(id(b"ab")).unwrap());
        assert!(!m.is_accepting());
        assert!(m.advance(id(b"1")).unwrap());
        assert!(m.is_accepting());
        m.rollback(1).unwrap();
        assert!(!m.is_accepting());
        assert!(m.rollback(2).is_err());
        assert_eq!(m.forced_tokens().unwrap(), vec![id(b"1"), vocab.eos_ids()[0]]);
    }
}
