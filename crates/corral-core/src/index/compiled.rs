//! A grammar compiled against a vocabulary: the vocabulary index of the Outlines paper
//! (Algorithms 3-4), computed lazily per state (or eagerly for a regular grammar), with
//! the caches that context-free masks share.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use super::lexer_mask::{AfterEnd, LexCache};
use super::state_mask::StateMask;
use super::walker::DfaWalker;
use crate::automata::{Dfa, DEAD};
use crate::error::{Error, Result};
use crate::frontend::ast::{Distinct, ItemStarts};
use crate::frontend::regex;
use crate::grammar::distinct_keys::{EntryRecognizer, KeyTracker, NoDistinctLists};
use crate::grammar::regex_text::{PatternTokens, RegexTexts};
use crate::grammar::Grammar;
use crate::limits::Limits;
use crate::parser::{advance_chart, Chart, EarleyGrammar, Overlay, ReadEntries, SetNumbers};
use crate::util::hash::FastMap;
use crate::vocab::{ByteRecognizer, TokenKind, Vocabulary};

/// How a compiled grammar recognizes bytes.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per compiled grammar, never in bulk
pub(crate) enum Engine {
    /// A regular constraint: one DFA, one cached mask per state, and the latest states
    /// whose masks took a string-safe slice (see `CompiledGrammar::compute_mask`).
    Dfa { dfa: Dfa, masks: Vec<OnceLock<StateMask>>, sliced: std::sync::Mutex<Vec<(u32, usize)>> },
    /// A context-free constraint: an Earley recognizer over DFA terminals, and the lexer
    /// masks computed so far, by their sorted (terminal, state) pairs.
    Cfg {
        earley: EarleyGrammar,
        start: Chart,
        lex_cache: RwLock<LexCache>,
        /// Shortest strings of the symbols, for completions: built on first use (few
        /// matchers ask, and large terminals make it costly).
        shortest: OnceLock<crate::grammar::shortest::Shortest>,
        /// Below the nodes where an open terminal may end (a lexer mask's completions),
        /// what expected terminal T reads: by (the list's number, T). Independent of the
        /// rest of the parse.
        after_end_cache: RwLock<FastMap<(u32, u32), Arc<AfterEnd>>>,
        /// Earley sets numbered by content, for the state keys (see `Chart::state_key`).
        set_numbers: SetNumbers,
        /// What the parser reads below the nodes where an open terminal may end, by (the
        /// number of that node list, the sets it ends from by content: see
        /// `CompiledGrammar::completion_key`).
        completion_cache: RwLock<FastMap<Box<[u32]>, Arc<AfterEnd>>>,
        /// Whole masks by canonical parser state (see `Chart::state_key`).
        state_cache: RwLock<FastMap<Box<[u32]>, Arc<super::parts_mask::PartsMask>>>,
        /// With strings that must be regular expressions: the vocabulary sorted for
        /// their check's masks.
        pattern_tokens: OnceLock<PatternTokens>,
    },
    /// Several compiled grammars that must all hold (see `index::intersection`): none of
    /// them an intersection itself.
    Intersection { parts: Vec<Arc<CompiledGrammar>> },
}

/// A grammar compiled against a vocabulary. Immutable after construction except for the
/// lazily filled mask cache, which is safe to fill from many threads at once.
#[derive(Debug)]
pub struct CompiledGrammar {
    pub(super) vocab: Arc<Vocabulary>,
    pub(super) grammar: Grammar,
    pub(crate) engine: Engine,
    pub(super) mask_bytes: AtomicUsize,
    pub(super) limits: Limits,
}

impl CompiledGrammar {
    /// Compiles `grammar` for `vocab` under `limits`. With `eager`, a regular grammar's
    /// mask of every state is computed now (the full index of the Outlines paper);
    /// otherwise each state's mask is computed the first time a matcher reaches it.
    ///
    /// A grammar that names tokens (`<[id]>`, `<think>`) is compiled for
    /// [`Vocabulary::with_readings`] of `vocab` (same ids; see [`CompiledGrammar::vocab`]).
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
        // A grammar that names tokens reads them as their readings.
        let vocab = match grammar.token_refs() {
            Some(refs) => vocab.with_readings(refs)?,
            None => vocab,
        };
        let engine = match grammar {
            Grammar::Regex(parsed) => {
                let dfa = regex::build_dfa(parsed, limits)?;
                let masks = (0..dfa.state_slots(vocab.trie().max_depth())).map(|_| OnceLock::new()).collect();
                Engine::Dfa { dfa, masks, sliced: Default::default() }
            }
            Grammar::Cfg(cfg) if cfg.cfg.regular.is_some() => {
                // A regular grammar is matched by its DFA, exactly like a regex.
                let dfa = cfg.cfg.regular.clone().ok_or_else(|| Error::InvalidArgument("no DFA".into()))?;
                let masks = (0..dfa.state_slots(vocab.trie().max_depth())).map(|_| OnceLock::new()).collect();
                Engine::Dfa { dfa, masks, sliced: Default::default() }
            }
            Grammar::Cfg(cfg) => {
                // (The grammar's own, shared: not a copy per compile.)
                let earley = EarleyGrammar::new(cfg.cfg.clone(), limits);
                let mut start = earley.start_chart()?;
                let set_numbers = SetNumbers::default();
                // (The start's one set: too small to count against the cache's bound.)
                start.number_sets(&earley, &set_numbers, limits.max_mask_cache_bytes > 0);
                Engine::Cfg {
                    earley,
                    start,
                    set_numbers,
                    shortest: OnceLock::new(),
                    lex_cache: RwLock::new(LexCache::default()),
                    after_end_cache: RwLock::new(FastMap::default()),
                    completion_cache: RwLock::new(FastMap::default()),
                    state_cache: RwLock::new(FastMap::default()),
                    pattern_tokens: OnceLock::new(),
                }
            }
        };
        let compiled =
            CompiledGrammar { vocab, grammar: grammar.clone(), engine, mask_bytes: AtomicUsize::new(0), limits: limits.clone() };
        // Sorted now, so that the first mask is not the one to pay for it.
        compiled.pattern_tokens();
        if eager {
            if let Engine::Dfa { dfa, .. } = &compiled.engine {
                // (Deep in a long count, a state stands for the others of its row.)
                for s in dfa.own_states(compiled.vocab.trie().max_depth()) {
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

    /// Of the grammar's terminals, how many have their automaton built, and how many there
    /// are: lowering plans a joined run of terminals and leaves it to be built the first
    /// time a parser state reads it (see [`crate::automata::lazy`]). A regular grammar
    /// has none.
    pub fn terminals_built(&self) -> (usize, usize) {
        match &self.engine {
            Engine::Dfa { .. } => (0, 0),
            Engine::Cfg { earley, .. } => {
                let terms = &earley.cfg().terminals;
                (terms.iter().filter(|t| t.dfa.is_built()).count(), terms.len())
            }
            Engine::Intersection { parts } => {
                parts.iter().map(|p| p.terminals_built()).fold((0, 0), |(b, n), (pb, pn)| (b + pb, n + pn))
            }
        }
    }

    /// Builds now every terminal automaton left to be built on first use (see
    /// [`CompiledGrammar::terminals_built`]), as a compile did before joins were built
    /// lazily; returns how many it built. Stops when interrupted.
    pub fn build_terminals(&self) -> Result<usize> {
        match &self.engine {
            Engine::Dfa { .. } => Ok(0),
            Engine::Cfg { earley, .. } => {
                let mut built = 0;
                for t in earley.cfg().terminals.iter().filter(|t| !t.dfa.is_built()) {
                    crate::util::interrupt::check_now()?;
                    t.dfa.get();
                    built += 1;
                }
                Ok(built)
            }
            Engine::Intersection { parts } => parts.iter().map(|p| p.build_terminals()).sum(),
        }
    }

    /// Heap bytes used by the automaton and the cached masks (not the vocabulary).
    pub fn memory_bytes(&self) -> usize {
        let engine = match &self.engine {
            Engine::Dfa { dfa, masks, .. } => dfa.memory_bytes() + masks.len() * std::mem::size_of::<OnceLock<StateMask>>(),
            Engine::Cfg { .. } => 0,
            Engine::Intersection { parts } => parts.iter().map(|p| p.memory_bytes()).sum(),
        };
        engine + self.mask_bytes.load(Ordering::Relaxed)
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
                if !(advance_chart(earley, &mut chart, data)? && chart.is_accepting()) {
                    return Ok(false);
                }
                if earley.has_regex_texts() {
                    let mut entries = ReadEntries { grammar: earley, chart: &chart, at: 0 };
                    if !RegexTexts::new().push_token(data, &mut entries)? {
                        return Ok(false);
                    }
                }
                if !self.grammar.distinct_keys() {
                    return Ok(true);
                }
                let mut entries = ReadEntries { grammar: earley, chart: &chart, at: 0 };
                let mut keys = KeyTracker::new(earley.has_distinct_lists()).in_json_regions(self.grammar.json_regions());
                return keys.push_token(data, &mut entries);
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
        Ok(grammar_ok && (!self.grammar.distinct_keys() || KeyTracker::default().push_token(data, &mut NoDistinctLists)?))
    }

    /// The vocabulary sorted for the masks of strings that must be regular expressions
    /// (see [`PatternTokens`]), built with the compiled grammar.
    pub(crate) fn pattern_tokens(&self) -> Option<&PatternTokens> {
        let Engine::Cfg { pattern_tokens, earley, .. } = &self.engine else { return None };
        earley.has_regex_texts().then(|| pattern_tokens.get_or_init(|| PatternTokens::new(&self.vocab)))
    }

    /// The normal tokens that break the pattern string open in `texts`, as a mask (see
    /// [`PatternTokens::refused`]; None when none is open), kept per pattern state within
    /// the mask cache's bound (`Limits::max_mask_cache_bytes`, shared with the
    /// parser-state masks).
    pub(crate) fn pattern_refusals(&self, texts: &RegexTexts) -> Option<Arc<[u32]>> {
        let cache = (&self.mask_bytes, self.limits.max_mask_cache_bytes);
        self.pattern_tokens()?.refused(texts, self.vocab.trie(), self.vocab.mask_words(), cache)
    }

    /// A recognizer standing at `at`, for probes that push and pop bytes there (the
    /// distinct-keys check).
    pub(crate) fn probe<'a>(&'a self, at: At<'a>) -> Result<Probe<'a>> {
        match (&self.engine, at) {
            (Engine::Dfa { dfa, .. }, At::Dfa(state)) => Ok(Probe::Dfa(DfaWalker::new(dfa, state, 0))),
            (Engine::Cfg { earley, .. }, At::Cfg(chart)) => Ok(Probe::Cfg(Overlay::new(earley, chart))),
            _ => Err(Error::InvalidArgument("matcher state does not fit its engine".into())),
        }
    }
}

/// A recognizer at a matcher's position: see [`CompiledGrammar::probe`].
#[allow(clippy::large_enum_variant)] // one per mask call, never in bulk
pub(crate) enum Probe<'a> {
    Dfa(DfaWalker<'a, false>),
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

impl EntryRecognizer for Probe<'_> {
    fn entry_here(&self, kind: Distinct) -> bool {
        match self {
            Probe::Dfa(_) => false,
            Probe::Cfg(ov) => ov.expects_distinct_entry(kind),
        }
    }

    fn value_lists_here(&self) -> ItemStarts {
        match self {
            Probe::Dfa(_) => ItemStarts::NONE,
            Probe::Cfg(ov) => ov.expects_value_lists(),
        }
    }

    fn json_region_here(&self, b: u8) -> bool {
        match self {
            Probe::Dfa(_) => false,
            Probe::Cfg(ov) => ov.starts_region_only(b),
        }
    }

    fn next_bytes(&self) -> [u64; 4] {
        match self {
            Probe::Dfa(_) => [u64::MAX; 4],
            Probe::Cfg(ov) => ov.next_bytes(),
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
