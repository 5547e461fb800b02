//! A grammar compiled against a vocabulary: the vocabulary index of the Outlines paper
//! (Algorithms 3-4), built lazily per state by walking the token trie, or eagerly.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use crate::automata::{Dfa, DEAD};
use crate::error::{Error, Result};
use crate::frontend::regex;
use crate::grammar::distinct_keys::KeyTracker;
use crate::grammar::Grammar;
use crate::index::lexer_mask::{self as lexmask, LexMask};
use crate::index::state_mask::StateMask;
use crate::index::string_safe::string_safe_slice_mask;
use crate::limits::Limits;
use crate::parser::{advance_chart, Chart, EarleyGrammar, Overlay};
use crate::util::hash::FastMap;
use crate::vocab::{ByteRecognizer, TokenKind, Vocabulary};

/// A DFA state stack that the token trie walks.
pub(crate) struct DfaWalker<'a> {
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

/// What a terminal T reads below a set of trie nodes: the tokens read inside T, and the
/// nodes where T may end (where the parser goes on).
#[derive(Debug)]
pub(crate) struct AfterEnd {
    tokens: StateMask,
    ends: Vec<u32>,
}

/// Longest parser-state key cached (deeper states are computed every time).
const STATE_KEY_MAX_WORDS: usize = 1 << 14;

/// How a compiled grammar recognizes bytes.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per compiled grammar, never in bulk
pub(crate) enum Engine {
    /// A regular constraint: one DFA, one cached mask per state.
    Dfa { dfa: Dfa, masks: Vec<OnceLock<StateMask>> },
    /// A context-free constraint: an Earley recognizer over DFA terminals, and the lexer
    /// masks computed so far, by their sorted (terminal, state) pairs.
    Cfg {
        earley: EarleyGrammar,
        start: Chart,
        lex_cache: RwLock<FastMap<(u32, u32), Arc<LexMask>>>,
        /// Shortest strings of the symbols, for completions: built on first use (few
        /// matchers ask, and large terminals make it costly).
        shortest: OnceLock<crate::grammar::shortest::Shortest>,
        /// Below the nodes where terminal-state pair P may end, what expected terminal T
        /// reads: by (P's terminal, P's state, T). Independent of the rest of the parse.
        after_end_cache: RwLock<FastMap<(u32, u32, u32), Arc<AfterEnd>>>,
        /// Whole masks by canonical parser state (see `Chart::state_key`).
        state_cache: RwLock<FastMap<Box<[u32]>, Arc<StateMask>>>,
    },
    /// Several compiled grammars that must all hold (see `index::intersection`): none of
    /// them an intersection itself.
    Intersection { parts: Vec<Arc<CompiledGrammar>> },
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
    ///
    /// The whole step runs within `limits.max_compile_ms` and stops when interrupted (see
    /// [`crate::util::interrupt`]).
    pub fn new(grammar: &Grammar, vocab: Arc<Vocabulary>, limits: &Limits, eager: bool) -> Result<CompiledGrammar> {
        let budget = crate::util::interrupt::Scope::with_budget("max_compile_ms", limits.max_compile_ms);
        crate::util::interrupt::run(&budget, || Self::build(grammar, vocab, limits, eager))
    }

    /// A compiled grammar around a ready `engine` (how an intersection is made).
    pub(crate) fn with_engine(grammar: Grammar, vocab: Arc<Vocabulary>, engine: Engine, limits: &Limits) -> CompiledGrammar {
        CompiledGrammar { vocab, grammar, engine, mask_bytes: AtomicUsize::new(0), limits: limits.clone() }
    }

    fn build(grammar: &Grammar, vocab: Arc<Vocabulary>, limits: &Limits, eager: bool) -> Result<CompiledGrammar> {
        let engine = match grammar {
            Grammar::Regex(parsed) => {
                let dfa = regex::build_dfa(parsed, limits)?;
                let masks = (0..dfa.num_states()).map(|_| OnceLock::new()).collect();
                Engine::Dfa { dfa, masks }
            }
            Grammar::Cfg(cfg) if cfg.cfg.regular.is_some() => {
                // A regular grammar is matched by its DFA, exactly like a regex.
                let dfa = cfg.cfg.regular.clone().ok_or_else(|| Error::InvalidArgument("no DFA".into()))?;
                let masks = (0..dfa.num_states()).map(|_| OnceLock::new()).collect();
                Engine::Dfa { dfa, masks }
            }
            Grammar::Cfg(cfg) => {
                let earley = EarleyGrammar::new(cfg.cfg.clone(), limits);
                let start = earley.start_chart()?;
                Engine::Cfg {
                    earley,
                    start,
                    shortest: OnceLock::new(),
                    lex_cache: RwLock::new(FastMap::default()),
                    after_end_cache: RwLock::new(FastMap::default()),
                    state_cache: RwLock::new(FastMap::default()),
                }
            }
        };
        let compiled =
            CompiledGrammar { vocab, grammar: grammar.clone(), engine, mask_bytes: AtomicUsize::new(0), limits: limits.clone() };
        if eager {
            if let Engine::Dfa { dfa, .. } = &compiled.engine {
                for s in 1..dfa.num_states() as u32 {
                    crate::util::interrupt::check_now()?;
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

    /// The grammar. For an intersection, its first part's (see [`CompiledGrammar::parts`]).
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
            _ => None,
        }
    }

    /// Number of automaton states of a regular grammar (0 for a context-free one or an
    /// intersection).
    pub fn num_states(&self) -> usize {
        self.dfa().map_or(0, |d| d.num_states())
    }

    /// Number of states whose mask is cached.
    pub fn cached_states(&self) -> usize {
        match &self.engine {
            Engine::Dfa { masks, .. } => masks.iter().filter(|m| m.get().is_some()).count(),
            Engine::Cfg { state_cache, .. } => state_cache.read().map_or(0, |c| c.len()),
            Engine::Intersection { parts } => parts.iter().map(|p| p.cached_states()).sum(),
        }
    }

    /// Heap bytes used by the automaton and the cached masks (not the vocabulary).
    pub fn memory_bytes(&self) -> usize {
        let engine = match &self.engine {
            Engine::Dfa { dfa, masks } => dfa.memory_bytes() + masks.len() * std::mem::size_of::<OnceLock<StateMask>>(),
            Engine::Cfg { .. } => 0,
            Engine::Intersection { parts } => parts.iter().map(|p| p.memory_bytes()).sum(),
        };
        engine + self.mask_bytes.load(Ordering::Relaxed)
    }

    /// The mask of a live DFA state, computed on first use.
    pub(crate) fn state_mask(&self, state: u32) -> &StateMask {
        let Engine::Dfa { masks, .. } = &self.engine else { unreachable!("state_mask is only called on regular grammars") };
        // (Deep in a long count, states of one row share a mask: see `equivalent_within`.)
        let state = self.dfa().map_or(state, |d| d.equivalent_within(state, self.vocab.trie().max_depth()));
        masks[state as usize].get_or_init(|| {
            let m = self.compute_mask(state);
            self.mask_bytes.fetch_add(m.memory_bytes(), Ordering::Relaxed);
            m
        })
    }

    /// Walks the token trie from `state` (Algorithm 4 with shared prefixes walked once and
    /// dead subtrees skipped).
    fn compute_mask(&self, state: u32) -> StateMask {
        let Engine::Dfa { dfa, .. } = &self.engine else { unreachable!("compute_mask is only called on regular grammars") };
        // Inside free text (a JSON string), most of the vocabulary is one precomputed
        // slice: walk only the rest of the trie.
        match string_safe_slice_mask(&self.vocab, dfa, state, true) {
            Some((s, bits)) => self.walk_dfa_mask(dfa, state, &s.rest, bits),
            None => self.walk_dfa_mask(dfa, state, self.vocab.trie(), vec![0u32; self.vocab.mask_words()]),
        }
    }

    /// `bits` plus the tokens of `trie` that `dfa` can read from `state`, plus EOS if
    /// `state` accepts.
    fn walk_dfa_mask(&self, dfa: &Dfa, state: u32, trie: &crate::vocab::TokenTrie, mut bits: Vec<u32>) -> StateMask {
        let mut walker = DfaWalker { dfa, stack: Vec::with_capacity(trie.max_depth() + 1) };
        walker.stack.push(state);
        trie.walk(&mut walker, |t| bits[(t >> 5) as usize] |= 1 << (t & 31));
        if dfa.is_accepting(state) {
            for &e in self.vocab.eos_ids() {
                bits[(e >> 5) as usize] |= 1 << (e & 31);
            }
        }
        StateMask::from_bits(bits)
    }

    /// [`CompiledGrammar::compute_mask`] by a walk of the whole trie (a reference for tests).
    pub(crate) fn compute_mask_full(&self, state: u32) -> StateMask {
        let Engine::Dfa { dfa, .. } = &self.engine else { unreachable!("compute_mask_full is only called on regular grammars") };
        self.walk_dfa_mask(dfa, state, self.vocab.trie(), vec![0u32; self.vocab.mask_words()])
    }

    /// The mask of a context-free parse `chart`: the cached lexer mask of the terminals
    /// open here, plus the tokens in which a terminal ends and the parser goes on (a trie
    /// walk with the Earley recognizer below each such node). Returns the number of
    /// allowed ids.
    pub(crate) fn chart_mask(&self, chart: &Chart, out: &mut [u32]) -> Result<u32> {
        let Engine::Cfg { earley, lex_cache, state_cache, .. } = &self.engine else {
            unreachable!("chart_mask is only called on context-free grammars")
        };
        // The key is built in a buffer kept per thread (one per mask otherwise).
        thread_local! {
            static KEY: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let mut key = KEY.with(|k| std::mem::take(&mut *k.borrow_mut()));
        let keyed = chart.state_key(earley, &mut key, STATE_KEY_MAX_WORDS);
        if keyed {
            if let Some(m) = state_cache.read().ok().and_then(|c| c.get(key.as_slice()).cloned()) {
                m.write(out);
                KEY.with(|k| *k.borrow_mut() = key);
                return Ok(m.count);
            }
        }
        let count = self.chart_mask_uncached(earley, lex_cache, chart, out)?;
        if keyed && self.mask_bytes.load(Ordering::Relaxed) < self.limits.max_mask_cache_bytes {
            let m = StateMask::from_bits(out.to_vec());
            self.mask_bytes.fetch_add(m.memory_bytes() + key.len() * 4, Ordering::Relaxed);
            if let Ok(mut c) = state_cache.write() {
                c.insert(key.into_boxed_slice(), Arc::new(m));
            }
        }
        Ok(count)
    }

    fn chart_mask_uncached(
        &self,
        earley: &EarleyGrammar,
        lex_cache: &RwLock<FastMap<(u32, u32), Arc<LexMask>>>,
        chart: &Chart,
        out: &mut [u32],
    ) -> Result<u32> {
        let open = chart.lex_entries(earley);
        let mut pairs: Vec<(u32, u32)> = open.iter().map(|&(t, q, _)| (t, q)).collect();
        pairs.sort_unstable();
        pairs.dedup();
        out.fill(0);
        let mut ov: Option<Overlay<'_>> = None;
        for &(term, state) in &pairs {
            let lex = self.lex_mask(earley, lex_cache, term, state);
            lex.tokens.or_into(out);
            if lex.completions.is_empty() {
                continue;
            }
            // Below a node where the terminal may end, the parser takes over: the parser
            // state there is the same at every such node, so it is built once.
            let completed: Vec<(u32, u32)> =
                open.iter().filter(|&&(t, q, _)| (t, q) == (term, state)).map(|&(t, _, origin)| (t, origin)).collect();
            let ov = ov.get_or_insert_with(|| Overlay::new(earley, chart));
            if !ov.push_completed(&completed) {
                break;
            }
            let (set, expected) = ov.current_expected();
            for next in expected {
                let after = self.after_end(earley, (term, state), next, &lex.completions);
                after.tokens.or_into(out);
                if after.ends.is_empty() || !ov.push_completed(&[(next, set)]) {
                    continue;
                }
                self.walk_after_end(earley, ov, &after.ends, out)?;
                ov.pop(1);
            }
            ov.pop(1);
        }
        if let Some(e) = ov.and_then(|mut o| o.error.take()) {
            return Err(e);
        }
        if chart.is_accepting() {
            for &e in self.vocab.eos_ids() {
                out[(e >> 5) as usize] |= 1 << (e & 31);
            }
        }
        Ok(out.iter().map(|w| w.count_ones()).sum())
    }

    /// Marks the tokens below the trie nodes `nodes` that the parse in `ov` (which stands
    /// just after a terminal ended at each of them, with no terminal open) can read: for
    /// each terminal the parser expects, a DFA walk of the children it can start with
    /// marks the tokens read inside it; where it may end, the parser's next state is built
    /// once for all those nodes and the walk goes on below them.
    ///
    /// The walk goes as deep as the longest token, so it keeps its own stack of frames
    /// (one per terminal ended inside a token) instead of recursing on the thread's stack.
    fn walk_after_end(&self, earley: &EarleyGrammar, ov: &mut Overlay<'_>, nodes: &[u32], out: &mut [u32]) -> Result<()> {
        /// One parser position inside the tokens: the end nodes below which it reads, the
        /// terminals it expects, and the next of those to try.
        struct Frame {
            candidates: Vec<u32>,
            set: u32,
            expected: Vec<u32>,
            next: usize,
        }
        let frame = |ov: &Overlay<'_>, nodes: &[u32]| -> Option<Frame> {
            let trie = self.vocab.trie();
            let (set, expected) = ov.current_expected();
            let fold = |f: &[u64; 4]| f.iter().fold(0u64, |a, &w| a | w);
            // Most end nodes have no child that can start any expected terminal (an
            // identifier ends at every letter, and letters follow): drop them once.
            let any_first = expected.iter().fold(0u64, |a, &t| a | fold(earley.first_bytes(t)));
            let candidates: Vec<u32> = nodes.iter().copied().filter(|&n| trie.child_bits(n) & any_first != 0).collect();
            (!candidates.is_empty()).then_some(Frame { candidates, set, expected, next: 0 })
        };
        // Frames above the first were each entered by one `push_completed` on `ov`.
        let mut stack: Vec<Frame> = frame(ov, nodes).into_iter().collect();
        let mut ends: Vec<u32> = Vec::new();
        while let Some(top) = stack.last_mut() {
            crate::util::interrupt::check()?;
            if top.next == top.expected.len() {
                stack.pop();
                if !stack.is_empty() {
                    ov.pop(1);
                }
                continue;
            }
            let term = top.expected[top.next];
            top.next += 1;
            ends.clear();
            self.read_terminal_below(earley, term, &top.candidates, out, &mut ends);
            if ends.is_empty() {
                continue;
            }
            // Walks from a node and from its descendant reach the same nodes: without
            // this, a terminal that ends at every byte and may follow itself multiplies
            // the end nodes at each level (exponential in the token's length).
            ends.sort_unstable();
            ends.dedup();
            let set = top.set;
            if !ov.push_completed(&[(term, set)]) {
                // A limit was hit (the overlay holds the error): unwind every frame.
                ov.pop(stack.len() - 1);
                return Ok(());
            }
            match frame(ov, &ends) {
                Some(f) => stack.push(f),
                None => ov.pop(1),
            }
        }
        Ok(())
    }

    /// Walks terminal `term` (from its start) below each of `nodes`: marks in `out` the
    /// tokens read inside it and appends to `ends` the nodes with children where it may end.
    fn read_terminal_below(&self, earley: &EarleyGrammar, term: u32, nodes: &[u32], out: &mut [u32], ends: &mut Vec<u32>) {
        let trie = self.vocab.trie();
        let first = earley.first_bytes(term);
        let first_folded = first.iter().fold(0u64, |a, &w| a | w);
        let dfa = &earley.cfg().terminals[term as usize].dfa;
        let mut walker_stack: Vec<u32> = Vec::with_capacity(trie.max_depth() + 1);
        for &node in nodes {
            if trie.child_bits(node) & first_folded == 0 {
                continue;
            }
            for (child, byte) in trie.children(node) {
                if first[(byte >> 6) as usize] >> (byte & 63) & 1 == 0 {
                    continue;
                }
                let q = dfa.next(dfa.start(), byte);
                for &t in trie.tokens_at(child) {
                    out[(t >> 5) as usize] |= 1 << (t & 31);
                }
                if dfa.is_accepting(q) && trie.has_children(child) {
                    ends.push(child);
                }
                let mut walker = lexmask::Walker::with_stack(dfa, q, std::mem::take(&mut walker_stack));
                trie.walk_nodes(child, &mut walker, |w, m, tokens| {
                    for &t in tokens {
                        out[(t >> 5) as usize] |= 1 << (t & 31);
                    }
                    if w.accepting && trie.has_children(m) {
                        ends.push(m);
                    }
                });
                walker_stack = walker.into_stack();
            }
        }
    }

    /// What terminal `term` reads below `nodes` (the completions of `pair`), cached.
    fn after_end(&self, earley: &EarleyGrammar, pair: (u32, u32), term: u32, nodes: &[u32]) -> Arc<AfterEnd> {
        let Engine::Cfg { after_end_cache, .. } = &self.engine else {
            unreachable!("after_end is only called on context-free grammars")
        };
        // What follows the terminal's end depends on the completions only, which states
        // equivalent over the trie's depth share.
        let dfa = &earley.cfg().terminals[pair.0 as usize].dfa;
        let key = (pair.0, dfa.equivalent_within(pair.1, self.vocab.trie().max_depth()), term);
        if let Some(a) = after_end_cache.read().ok().and_then(|c| c.get(&key).cloned()) {
            return a;
        }
        let mut bits = vec![0u32; self.vocab.mask_words()];
        let mut ends = Vec::new();
        self.read_terminal_below(earley, term, nodes, &mut bits, &mut ends);
        ends.sort_unstable();
        ends.dedup();
        let a = Arc::new(AfterEnd { tokens: StateMask::from_bits(bits), ends });
        self.mask_bytes.fetch_add(a.tokens.memory_bytes() + a.ends.len() * 4, Ordering::Relaxed);
        if let Ok(mut c) = after_end_cache.write() {
            c.insert(key, a.clone());
        }
        a
    }

    /// The cached lexer mask of terminal `term` in DFA state `state`.
    fn lex_mask(
        &self,
        earley: &EarleyGrammar,
        cache: &RwLock<FastMap<(u32, u32), Arc<LexMask>>>,
        term: u32,
        state: u32,
    ) -> Arc<LexMask> {
        let dfa = &earley.cfg().terminals[term as usize].dfa;
        // A lexer mask reads at most the trie's depth: equivalent states share it.
        let state = dfa.equivalent_within(state, self.vocab.trie().max_depth());
        if let Some(l) = cache.read().ok().and_then(|c| c.get(&(term, state)).cloned()) {
            return l;
        }
        let l = Arc::new(lexmask::compute(&self.vocab, dfa, state));
        self.mask_bytes.fetch_add(l.memory_bytes(), Ordering::Relaxed);
        if let Ok(mut c) = cache.write() {
            c.insert((term, state), l.clone());
        }
        l
    }

    /// The mask of `chart` by a plain trie walk with the Earley recognizer (no lexer
    /// cache): the reference the fast path is tested against.
    pub(crate) fn chart_mask_reference(&self, chart: &Chart, out: &mut [u32]) -> Result<u32> {
        let Engine::Cfg { earley, .. } = &self.engine else { unreachable!("chart_mask is only called on context-free grammars") };
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
        let grammar_ok = match &self.engine {
            Engine::Dfa { dfa, .. } => dfa.matches(data),
            Engine::Cfg { earley, start, .. } => {
                let mut chart = start.clone();
                advance_chart(earley, &mut chart, data)? && chart.is_accepting()
            }
            Engine::Intersection { parts } => {
                for p in parts {
                    if !p.matches(data)? {
                        return Ok(false);
                    }
                }
                return Ok(true);
            }
        };
        Ok(grammar_ok && (!self.grammar.distinct_keys() || KeyTracker::default().push_token(data)))
    }

    /// A recognizer standing at `at`, for probes that push and pop bytes there (the
    /// distinct-keys check).
    pub(crate) fn probe<'a>(&'a self, at: At<'a>) -> Result<Probe<'a>> {
        match (&self.engine, at) {
            (Engine::Dfa { dfa, .. }, At::Dfa(state)) => Ok(Probe::Dfa(DfaWalker { dfa, stack: vec![state] })),
            (Engine::Cfg { earley, .. }, At::Cfg(chart)) => Ok(Probe::Cfg(Overlay::new(earley, chart))),
            _ => Err(Error::InvalidArgument("matcher state does not fit its engine".into())),
        }
    }
}

/// A recognizer at a matcher's position: see [`CompiledGrammar::probe`].
#[allow(clippy::large_enum_variant)] // one per mask call, never in bulk
pub(crate) enum Probe<'a> {
    Dfa(DfaWalker<'a>),
    Cfg(Overlay<'a>),
}

impl Probe<'_> {
    /// A limit hit by an earlier push (which then failed), taken.
    pub(crate) fn take_error(&mut self) -> Option<Error> {
        match self {
            Probe::Dfa(_) => None,
            Probe::Cfg(ov) => ov.error.take(),
        }
    }
}

impl ByteRecognizer for Probe<'_> {
    #[inline]
    fn push_byte(&mut self, byte: u8) -> bool {
        match self {
            Probe::Dfa(w) => w.push_byte(byte),
            Probe::Cfg(ov) => ov.push(byte),
        }
    }

    #[inline]
    fn pop_bytes(&mut self, n: usize) {
        match self {
            Probe::Dfa(w) => w.pop_bytes(n),
            Probe::Cfg(ov) => ov.pop(n),
        }
    }
}

/// Where a matcher stands, as its engine sees it.
#[derive(Clone, Copy)]
pub(crate) enum At<'a> {
    /// A DFA state.
    Dfa(u32),
    /// A parse.
    Cfg(&'a Chart),
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

    /// Tokens of free text and of JSON syntax, short and long (past the 8- and 16-byte slice
    /// bounds), with unfinished and malformed UTF-8.
    fn text_tokens() -> Vocabulary {
        let mut toks: Vec<Option<Vec<u8>>> = Vec::new();
        let pieces: [&[u8]; 14] =
            [b"a", b"b", b" ", b"\"", b"\\", b"n", "é".as_bytes(), &[0xc3], &[0xa9], b"\n", b"}", b":", b"%", b"1"];
        for x in pieces {
            toks.push(Some(x.to_vec()));
            for y in pieces {
                toks.push(Some([x, y].concat()));
            }
        }
        for n in [5usize, 8, 9, 12, 16, 17, 24, 40] {
            toks.push(Some(b"ab".repeat(n).into_iter().take(n).collect()));
            toks.push(Some("é".repeat(n / 2).into_bytes()));
            let mut t = b"x".repeat(n - 1);
            t.push(b'"');
            toks.push(Some(t));
        }
        toks.push(Some(b"a\\nb".to_vec()));
        toks.push(Some(b"\",\"".to_vec()));
        toks.push(None);
        let eos = toks.len() as u32 - 1;
        Vocabulary::new(toks, &[], &[eos], None).unwrap()
    }

    /// Masks through the string-safe slices equal those of a walk of the whole trie, for
    /// regular grammars (per DFA state) and for lexer masks (tokens and end nodes).
    #[test]
    fn string_safe_slices_change_no_mask() {
        let vocab = Arc::new(text_tokens());
        assert_eq!(vocab.string_safe_slices().iter().map(|s| s.max_len).collect::<Vec<_>>(), vec![40, 32, 16, 8]);
        let patterns = [
            r#""(?:[^"\\\x00-\x1f]|\\["\\/bfnrt])*""#,
            r#""[^"\\\x00-\x1f]{0,20}""#,
            r#"[^"\\\x00-\x1f]{3,30}"#,
            r"[ab ]*",
            r"(?s:.)*",
            r#"[^"]*"x"#,
            r"(?:ab)+",
            r"a{0,12}",
            // Risky bytes: `b` dies always; `b` after `a` only; the second byte of `é` only.
            r#""[^"\\\x00-\x1fb]*""#,
            r#""(?:[^"\\\x00-\x1fa]|a[^"\\\x00-\x1fb])*""#,
            r"(?:[^é])*",
            r#""[^"\\\x00-\x1f]*b[^"\\\x00-\x1f]*""#,
            // Dangerous states entered by `%`: ASCII only, and with any character.
            r#""(?:[0-9a-z :}]|%[0-9a-f][0-9a-f])*""#,
            r#""(?:[^"\\\x00-\x1f%]|%1[0-9a-f])*""#,
            r"(?:[ab1]|%1)*",
            // Counts that run out inside a slice token: the short tokens need no reading.
            r#""[ab1 ]{2,12}""#,
            r"[ab1%]{0,6}",
            r#""(?:[ab1 ]|é){2,12}""#,
            // Room for 32 bytes but not 40: the 32-byte slice, with the 40-byte tokens read.
            r#""[^"\\\x00-\x1f]{0,36}""#,
        ];
        let (mut sliced, mut risky, mut mid) = (0, 0, 0);
        for pattern in patterns {
            let g = Grammar::regex(pattern, &Limits::default(), None).unwrap();
            let c = CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap();
            let dfa = c.dfa().unwrap();
            for state in 1..dfa.num_states() as u32 {
                let (mut got, mut want) = (vec![0u32; vocab.mask_words()], vec![0u32; vocab.mask_words()]);
                c.state_mask(state).write(&mut got);
                c.compute_mask_full(state).write(&mut want);
                assert_eq!(got, want, "/{pattern}/ state {state}");
                let fast = lexmask::compute(&vocab, dfa, state);
                let full = lexmask::compute_full(vocab.trie(), dfa, state, vocab.mask_words());
                let (mut a, mut b) = (vec![0u32; vocab.mask_words()], vec![0u32; vocab.mask_words()]);
                fast.tokens.write(&mut a);
                full.tokens.write(&mut b);
                assert_eq!(a, b, "lexer /{pattern}/ state {state}");
                let (mut ea, mut eb) = (fast.completions.clone(), full.completions.clone());
                ea.sort_unstable();
                eb.sort_unstable();
                assert_eq!(ea, eb, "ends /{pattern}/ state {state}");
                let clear = vocab.string_safe_slices().iter().any(|s| dfa.admits_string_safe(state, s.max_len, true));
                sliced += clear as usize;
                mid += (string_safe_slice_mask(&vocab, dfa, state, true).map(|(s, _)| s.max_len) == Some(32)) as usize;
                risky += (!clear && string_safe_slice_mask(&vocab, dfa, state, true).is_some()) as usize;
            }
        }
        assert!(sliced >= 10, "the slices were used in {sliced} states only");
        assert!(risky >= 4, "slices with risky bytes were used in {risky} states only");
        assert!(mid >= 4, "the 32-byte slice was used in {mid} states only");
    }

    /// Masks on a vocabulary where a node's children are exactly the readable bytes, or
    /// none of them, or only part of a multi-byte character (regular and lexer masks).
    #[test]
    fn masks_where_children_are_partly_readable() {
        let words: [&[u8]; 12] =
            [b"a", b"ab", b"abb", b"abx", b"b", b"ba", b"x", b"xy", b"\xc3", b"\xc3\xa9", b"a\xc3\xa9", b"b\""];
        let mut toks: Vec<Option<Vec<u8>>> = words.iter().map(|w| Some(w.to_vec())).collect();
        toks.push(None);
        let eos = toks.len() as u32 - 1;
        let vocab = Arc::new(Vocabulary::new(toks, &[], &[eos], None).unwrap());
        for pattern in [r"[ab]*", r"a(?:b|é)*", r#"[ab]*""#, r"x|xy", r"b|ba"] {
            let g = Grammar::regex(pattern, &Limits::default(), None).unwrap();
            let c = CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap();
            let dfa = c.dfa().unwrap();
            for state in 1..dfa.num_states() as u32 {
                let mut got = vec![0u32; vocab.mask_words()];
                c.state_mask(state).write(&mut got);
                let lex = lexmask::compute(&vocab, dfa, state);
                let mut lex_bits = vec![0u32; vocab.mask_words()];
                lex.tokens.write(&mut lex_bits);
                for id in 0..eos {
                    let want = dfa.walk(state, vocab.token_bytes(id)) != DEAD;
                    assert_eq!(got[(id >> 5) as usize] >> (id & 31) & 1 == 1, want, "/{pattern}/ state {state} token {id}");
                    assert_eq!(
                        lex_bits[(id >> 5) as usize] >> (id & 31) & 1 == 1,
                        want,
                        "lexer /{pattern}/ state {state} token {id}"
                    );
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

    /// The cached lexer path and the plain Earley trie walk give the same masks, along
    /// random walks through several grammars.
    #[test]
    fn cfg_fast_masks_equal_reference() {
        use crate::frontend::Dialect;
        let vocab = Arc::new(all_short_tokens());
        let grammars = [
            r#"s ::= "a" s "b" | "1" | s "." s ;"#,
            r#"s ::= ws v ; v ::= "[" ws (v ("." ws v)*)? "b" ws | [a1]+ ws | "é" ; ws ::= "b"* ;"#,
            r#"s ::= x "ab" ; x ::= [a]+ | "1" s "." ;"#,
            r#"s ::= "1" except!("a.") "a." s? ;"#,
            r#"e ::= e e | "a" | "b1" | "(" e ")" ;"#,
        ];
        for text in grammars {
            let g = Grammar::cfg_text(text, Dialect::Ebnf, None, &Limits::default(), None).unwrap();
            let c = Arc::new(CompiledGrammar::new(&g, vocab.clone(), &Limits::default(), false).unwrap());
            let mut seed = 12345u64;
            for _walk in 0..20 {
                let mut m = Matcher::new(c.clone());
                for _step in 0..12 {
                    let mut fast = vec![0u32; vocab.mask_words()];
                    let mut slow = vec![0u32; vocab.mask_words()];
                    m.fill_mask(&mut fast).unwrap();
                    let Some(chart) = m.chart() else { panic!("a grammar has a chart") };
                    c.chart_mask_reference(chart, &mut slow).unwrap();
                    assert_eq!(fast, slow, "{text}");
                    let allowed: Vec<u32> =
                        (0..vocab.size() as u32).filter(|&t| fast[(t >> 5) as usize] >> (t & 31) & 1 == 1).collect();
                    if allowed.is_empty() {
                        break;
                    }
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let t = allowed[(seed >> 33) as usize % allowed.len()];
                    assert!(m.advance(t).unwrap());
                    if m.is_finished() {
                        break;
                    }
                }
            }
        }
    }
}
