//! Masks of a context-free grammar at a parser position: the union of the open
//! terminals' lexer masks, plus the tokens in which a terminal ends and the parser goes
//! on, computed below the trie nodes where it ends and cached per (those nodes, next
//! terminal) and, all of them, per (those nodes, origin sets by content); whole masks
//! cached per canonical parser state.

use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};

use super::compiled::{CompiledGrammar, Engine};
use super::lexer_mask::{self as lexmask, AfterEnd, LexCache, LexMask};
use super::parts_mask::{Part, PartsMask};
use super::state_mask::{StateMask, TokenCollector, TokenSink};
use super::walker::DfaWalker;
use crate::automata::Dfa;
use crate::error::Result;
use crate::parser::{Chart, EarleyGrammar, Overlay};

/// Longest parser-state key cached, in words (a position with more open scans is
/// computed every time).
const STATE_KEY_MAX_WORDS: usize = 1 << 14;

/// How many of a terminal's latest broad lexer masks a new state is compared with for a
/// slice or depth sibling (see `CompiledGrammar::slice_sibling` and `depth_sibling`).
const SLICE_SIBLINGS_COMPARED: usize = 2;

/// In a lexer-mask cache key: the mask without the nodes where the terminal ends.
const INSIDE_ONLY: u32 = 1 << 31;

impl CompiledGrammar {
    /// The mask of a context-free parse `chart`: the cached lexer mask of the terminals
    /// open here, plus the tokens in which a terminal ends and the parser goes on (a trie
    /// walk with the Earley recognizer below each such node). Returns the number of
    /// allowed ids.
    // Not inlined: in the matcher's `fill_mask` it would crowd the registers of the
    // regular-grammar path (one extra load per allowed id measured in its sparse write).
    #[inline(never)]
    pub(crate) fn chart_mask(&self, chart: &Chart, out: &mut [u32]) -> Result<u32> {
        let Engine::Cfg { earley, lex_cache, state_cache, .. } = &self.engine else {
            unreachable!("chart_mask is only called on context-free grammars")
        };
        if let Some(count) = self.lexical_mask(earley, lex_cache, chart, out) {
            return Ok(count);
        }
        // The key is built in a buffer kept per thread (one per mask otherwise).
        thread_local! {
            static KEY: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let mut key = KEY.with(|k| std::mem::take(&mut *k.borrow_mut()));
        let keyed = chart.state_key(&mut key, STATE_KEY_MAX_WORDS);
        if keyed {
            if let Some(m) = state_cache.read().ok().and_then(|c| c.get(key.as_slice()).cloned()) {
                m.write(out);
                KEY.with(|k| *k.borrow_mut() = key);
                return Ok(m.count);
            }
        }
        let uncached = self.chart_mask_uncached(earley, lex_cache, chart, out);
        let result = uncached.map(|(count, parts, own)| {
            if keyed && self.mask_bytes.load(Ordering::Relaxed) < self.limits.max_mask_cache_bytes {
                let m = PartsMask::new(parts, own, count, out);
                self.mask_bytes.fetch_add(m.memory_bytes() + key.len() * 4, Ordering::Relaxed);
                if let Ok(mut c) = state_cache.write() {
                    // A copy: the buffer stays with the thread for the next key.
                    c.insert(key.as_slice().into(), Arc::new(m));
                }
            }
            count
        });
        KEY.with(|k| *k.borrow_mut() = key);
        result
    }

    /// The sets the terminals `completed` end from (`(terminal, origin set)`), for a cache
    /// key: each terminal with its origin's content number, sorted. None where an origin
    /// has no number.
    fn completion_key(chart: &Chart, completed: &[(u32, u32)]) -> Option<Vec<u32>> {
        let mut pairs: Vec<(u32, u32)> =
            completed.iter().map(|&(t, origin)| chart.set_number(origin).map(|n| (t, n))).collect::<Option<_>>()?;
        pairs.sort_unstable();
        pairs.dedup();
        Some(pairs.into_iter().flat_map(|(t, n)| [t, n]).collect())
    }

    /// Numbers the sets `chart` committed since it was last numbered, for its state keys
    /// (see `Chart::state_key`): called after each step it reads. New numbers count with
    /// the cached masks against `Limits::max_mask_cache_bytes`; past it, parses that reach
    /// new sets are computed without the cache.
    pub(crate) fn number_sets(&self, chart: &mut Chart) {
        let Engine::Cfg { earley, set_numbers, .. } = &self.engine else { return };
        let may_grow = self.mask_bytes.load(Ordering::Relaxed) < self.limits.max_mask_cache_bytes;
        let added = chart.number_sets(earley, set_numbers, may_grow);
        self.mask_bytes.fetch_add(added, Ordering::Relaxed);
    }

    /// The mask of `chart` where one terminal is open and may not end inside a token that
    /// goes on (inside a literal, a key, most of a number): its cached lexer mask, and the
    /// end of the output where the parse may end there. It needs no parser state, so no
    /// state key: a first visit costs what a cached one does. None (with `out` untouched)
    /// elsewhere: where several terminals are open, the cached union of their masks is
    /// cheaper to write than to make again.
    fn lexical_mask(&self, earley: &EarleyGrammar, lex_cache: &RwLock<LexCache>, chart: &Chart, out: &mut [u32]) -> Option<u32> {
        let open = chart.lex_entries(earley);
        let &(term, state, _) = open.first()?;
        if open.iter().any(|&(t, q, _)| (t, q) != (term, state)) {
            return None;
        }
        let lex = self.lex_mask(earley, lex_cache, term, state, Self::ends_of(earley, term));
        if !lex.completions.is_empty() {
            return None;
        }
        lex.tokens.write(out);
        Some(lex.tokens.count + self.add_eos(chart, out))
    }

    /// Allows the end of the output in `out` where the parse `chart` may end; returns the
    /// number of ids so newly allowed.
    fn add_eos(&self, chart: &Chart, out: &mut [u32]) -> u32 {
        if !chart.is_accepting() {
            return 0;
        }
        let mut added = 0;
        for &e in self.vocab.eos_ids() {
            let (word, bit) = ((e >> 5) as usize, 1 << (e & 31));
            added += u32::from(out[word] & bit == 0);
            out[word] |= bit;
        }
        added
    }

    /// The mask of `chart` computed from its parts (see [`PartsMask`]): its count, the
    /// cached masks OR'd into it, and its own tokens.
    fn chart_mask_uncached(
        &self,
        earley: &EarleyGrammar,
        lex_cache: &RwLock<LexCache>,
        chart: &Chart,
        out: &mut [u32],
    ) -> Result<(u32, Vec<Part>, StateMask)> {
        let Engine::Cfg { completion_cache, .. } = &self.engine else {
            unreachable!("chart_mask is only called on context-free grammars")
        };
        let open = chart.lex_entries(earley);
        let mut pairs: Vec<(u32, u32)> = open.iter().map(|&(t, q, _)| (t, q)).collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut ov: Option<Overlay<'_>> = None;
        let mut parts = Vec::new();
        let mut own = TokenCollector::new(self.vocab.mask_words());
        // The first part is written over the row (no pass to clear it first), the others
        // OR'd. The count follows while the parts after the first are lists of ids (it
        // takes a pass over the row otherwise).
        let (mut blank, mut count) = (true, Some(0));
        let mut put = |mask: &StateMask, out: &mut [u32]| {
            if std::mem::take(&mut blank) {
                mask.write(out);
                count = Some(mask.count);
            } else {
                count = count.zip(mask.or_into_counting(out)).map(|(c, added)| c + added);
            }
        };
        for &(term, state) in &pairs {
            // Where nothing can follow the terminal (the text that ends the output), where
            // it ends does not matter.
            let lex = self.lex_mask(earley, lex_cache, term, state, Self::ends_of(earley, term));
            if lex.tokens.count > 0 {
                put(&lex.tokens, out);
                parts.push(Part::Lex(lex.clone()));
            }
            if lex.completions.is_empty() {
                continue;
            }
            // Below a node where the terminal may end, the parser takes over. What it reads
            // there is a function of those nodes (by their list's number) and of the sets
            // the terminal ends from (by content): cached under those, so a string read a
            // character at a time builds that parser state once.
            let completed: Vec<(u32, u32)> =
                open.iter().filter(|&&(t, q, _)| (t, q) == (term, state)).map(|&(t, _, origin)| (t, origin)).collect();
            let key = Self::completion_key(chart, &completed)
                .filter(|_| lex.completions_number != lexmask::UNNUMBERED)
                .map(|k| [&[lex.completions_number], k.as_slice()].concat());
            let cached = key.as_ref().and_then(|k| completion_cache.read().ok()?.get(k.as_slice()).cloned());
            let part = match cached {
                Some(part) => part,
                None => {
                    let ov = ov.get_or_insert_with(|| Overlay::new(earley, chart));
                    let Some(tokens) = self.read_after_end(earley, ov, &lex, &completed)? else {
                        break;
                    };
                    let part = Arc::new(AfterEnd { tokens, ends: Vec::new() });
                    if let Some(k) = key.filter(|_| self.mask_bytes.load(Ordering::Relaxed) < self.limits.max_mask_cache_bytes) {
                        self.mask_bytes.fetch_add(part.tokens.memory_bytes() + k.len() * 4, Ordering::Relaxed);
                        if let Ok(mut c) = completion_cache.write() {
                            c.insert(k.into_boxed_slice(), part.clone());
                        }
                    }
                    part
                }
            };
            if part.tokens.count > 0 {
                put(&part.tokens, out);
                parts.push(Part::After(part));
            }
        }
        if let Some(e) = ov.and_then(|mut o| o.error.take()) {
            return Err(e);
        }
        if chart.is_accepting() {
            own.extend(self.vocab.eos_ids());
        }
        let own = own.into_mask();
        put(&own, out);
        let count = count.unwrap_or_else(|| crate::index::state_mask::count_bits(out));
        Ok((count, parts, own))
    }

    /// What the parser reads below the trie nodes where an open terminal may end (`lex`'s
    /// completions), having ended from the sets of `completed`: for each terminal expected
    /// there, the tokens it reads below those nodes (cached per node list and next
    /// terminal), and below the nodes where that one ends in turn, the walk of
    /// [`Self::walk_after_end`]. None where a limit was hit (`ov` holds the error).
    fn read_after_end(
        &self,
        earley: &EarleyGrammar,
        ov: &mut Overlay<'_>,
        lex: &LexMask,
        completed: &[(u32, u32)],
    ) -> Result<Option<StateMask>> {
        if !ov.push_completed(completed) {
            return Ok(None);
        }
        let mut tokens = TokenCollector::new(self.vocab.mask_words());
        let (set, expected) = ov.current_expected();
        for next in expected {
            let after = self.after_end(earley, lex, next);
            tokens.add_mask(&after.tokens);
            if after.ends.is_empty() || !ov.push_completed(&[(next, set)]) {
                continue;
            }
            self.walk_after_end(earley, ov, &after.ends, &mut tokens)?;
            ov.pop(1);
        }
        ov.pop(1);
        Ok(ov.error.is_none().then(|| tokens.into_mask()))
    }

    /// Marks the tokens below the trie nodes `nodes` that the parse in `ov` (which stands
    /// just after a terminal ended at each of them, with no terminal open) can read: for
    /// each terminal the parser expects, a DFA walk of the children it can start with
    /// marks the tokens read inside it; where it may end, the parser's next state is built
    /// once for all those nodes and the walk goes on below them.
    ///
    /// The walk goes as deep as the longest token, so it keeps its own stack of frames
    /// (one per terminal ended inside a token) instead of recursing on the thread's stack.
    fn walk_after_end<S: TokenSink + ?Sized>(
        &self,
        earley: &EarleyGrammar,
        ov: &mut Overlay<'_>,
        nodes: &[u32],
        out: &mut S,
    ) -> Result<()> {
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
    fn read_terminal_below<S: TokenSink + ?Sized>(
        &self,
        earley: &EarleyGrammar,
        term: u32,
        nodes: &[u32],
        out: &mut S,
        ends: &mut Vec<u32>,
    ) {
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
                out.add(trie.tokens_at(child));
                if dfa.is_accepting(q) && trie.has_children(child) {
                    ends.push(child);
                }
                let mut walker = DfaWalker::<true>::with_stack(dfa, q, std::mem::take(&mut walker_stack));
                trie.walk_nodes(child, &mut walker, |w, m, tokens| {
                    out.add(tokens);
                    if w.accepting && trie.has_children(m) {
                        ends.push(m);
                    }
                });
                walker_stack = walker.into_stack();
            }
        }
    }

    /// What terminal `term` reads below `lex`'s completions, cached under their number.
    fn after_end(&self, earley: &EarleyGrammar, lex: &LexMask, term: u32) -> Arc<AfterEnd> {
        let Engine::Cfg { after_end_cache, .. } = &self.engine else {
            unreachable!("after_end is only called on context-free grammars")
        };
        let key = (lex.completions_number, term);
        let numbered = lex.completions_number != lexmask::UNNUMBERED;
        if let Some(a) = after_end_cache.read().ok().filter(|_| numbered).and_then(|c| c.get(&key).cloned()) {
            return a;
        }
        // Ids while few: most terminals read a few tokens below the end nodes (a comma,
        // a closing bracket), and a row of bits would cost passes over every word.
        let mut tokens = TokenCollector::new(self.vocab.mask_words());
        let mut ends = Vec::new();
        self.read_terminal_below(earley, term, &lex.completions, &mut tokens, &mut ends);
        ends.sort_unstable();
        ends.dedup();
        let a = Arc::new(AfterEnd { tokens: tokens.into_mask(), ends });
        if !numbered {
            return a;
        }
        self.mask_bytes.fetch_add(a.tokens.memory_bytes() + a.ends.len() * 4, Ordering::Relaxed);
        if let Ok(mut c) = after_end_cache.write() {
            c.insert(key, a.clone());
        }
        a
    }

    /// Computes now the lexer masks a context-free grammar's first steps into each terminal
    /// need: at every terminal's start state and at the states one byte in (a string's
    /// first character, where a token such as `":"` lands). A first visit there costs a
    /// trie walk or a string-safe analysis (0.1-0.4 ms for a format string on a 129k-token
    /// vocabulary); where compiles run off the decoding path (a serving engine's grammar
    /// workers), this moves that cost there. An intersection warms its parts; a regular
    /// grammar has nothing to warm (its masks are per state: see `eager`). Stops once the
    /// cached masks reach `Limits::max_mask_cache_bytes` (what is left is computed on
    /// first visit, as without warming), and when interrupted (see
    /// [`crate::util::interrupt`]).
    pub fn warm_up(&self) -> Result<()> {
        match &self.engine {
            Engine::Cfg { earley, lex_cache, .. } => {
                for (term, t) in earley.cfg().terminals.iter().enumerate() {
                    crate::util::interrupt::check_now()?;
                    if self.mask_bytes.load(Ordering::Relaxed) >= self.limits.max_mask_cache_bytes {
                        break;
                    }
                    let (dfa, ends) = (&t.dfa, Self::ends_of(earley, term as u32));
                    let mut states = vec![dfa.start()];
                    for byte in 0..=255u8 {
                        let next = dfa.next(dfa.start(), byte);
                        if next != crate::automata::DEAD && !states.contains(&next) {
                            states.push(next);
                        }
                    }
                    for state in states {
                        self.lex_mask(earley, lex_cache, term as u32, state, ends);
                    }
                }
                Ok(())
            }
            Engine::Intersection { parts } => parts.iter().try_for_each(|p| p.warm_up()),
            Engine::Dfa { .. } => Ok(()),
        }
    }

    /// Where terminal `term`'s lexer masks record its ends: nowhere where nothing can follow
    /// it, else before the bytes that can.
    fn ends_of(earley: &EarleyGrammar, term: u32) -> lexmask::Ends {
        if earley.ends_output(term) {
            lexmask::Ends::NONE
        } else {
            lexmask::Ends::before(earley.follow_bytes(term))
        }
    }

    /// The cached lexer mask of terminal `term` in DFA state `state`, recording the ends
    /// `ends` says (always [`Self::ends_of`] the terminal; masks without ends are cached
    /// apart from those with).
    fn lex_mask(
        &self,
        earley: &EarleyGrammar,
        cache: &RwLock<LexCache>,
        term: u32,
        state: u32,
        ends: lexmask::Ends,
    ) -> Arc<LexMask> {
        let dfa = &earley.cfg().terminals[term as usize].dfa;
        // A lexer mask reads at most the trie's depth: equivalent states share it.
        let state = dfa.equivalent_within(state, self.vocab.trie().max_depth());
        let key = (term, if ends.recorded() { state } else { state | INSIDE_ONLY });
        if let Some(l) = cache.read().ok().and_then(|c| c.masks.get(&key).cloned()) {
            return l;
        }
        let mut l = match Self::sibling(cache, dfa, key) {
            Some((sibling, differ)) => lexmask::derive(&self.vocab, dfa, state, &sibling, &differ, ends),
            None => match self.slice_sibling(cache, dfa, key) {
                Some(sibling) => lexmask::from_slice_sibling(&self.vocab, dfa, state, &sibling, ends),
                None => match self.depth_sibling(cache, dfa, key) {
                    Some((sibling, depth)) => lexmask::from_depth_sibling(&self.vocab, dfa, state, &sibling, depth, ends),
                    None => lexmask::compute(&self.vocab, dfa, state, ends),
                },
            },
        };
        // Sorted before the lock is taken: equal lists get one number.
        l.completions.sort_unstable();
        l.completions.dedup();
        let Ok(mut c) = cache.write() else { return Arc::new(l) };
        let list_bytes = c.number_completions(&mut l);
        let l = Arc::new(l);
        self.mask_bytes.fetch_add(l.memory_bytes() + list_bytes, Ordering::Relaxed);
        c.insert(key, l.clone(), self.vocab.size());
        l
    }

    /// A cached broad lexer mask of the same terminal, computed the same way as `key`'s
    /// would be, whose state goes the same way on all first bytes but a few (the fewest
    /// found), with those bytes: `key`'s mask derives from it (see [`lexmask::derive`]).
    fn sibling(cache: &RwLock<LexCache>, dfa: &Dfa, key: (u32, u32)) -> Option<(Arc<LexMask>, Vec<u8>)> {
        let (term, flag, state) = (key.0, key.1 & INSIDE_ONLY, key.1 & !INSIDE_ONLY);
        let cache = cache.read().ok()?;
        let mut best: Option<(Arc<LexMask>, Vec<u8>)> = None;
        let kept = cache.broad.get(&term)?;
        for (s, mask) in kept.iter().filter(|(s, _)| s & INSIDE_ONLY == flag) {
            if let Some(differ) = lexmask::differing_bytes(dfa, state, s & !INSIDE_ONLY) {
                if best.as_ref().is_none_or(|(_, d)| differ.len() < d.len()) {
                    best = Some((mask.clone(), differ));
                }
            }
        }
        best
    }

    /// A cached broad lexer mask of the same terminal, computed the same way as `key`'s
    /// would be, that took a string-safe slice's tokens and whose state reads every text
    /// of that slice's bound as `key`'s does: `key`'s mask takes that part from it (see
    /// [`lexmask::from_slice_sibling`]). Only the latest few are compared (inside a
    /// counted string, the state of the token before agrees): a comparison that fails
    /// costs a search, and a state near a count's bound agrees with none.
    fn slice_sibling(&self, cache: &RwLock<LexCache>, dfa: &Dfa, key: (u32, u32)) -> Option<Arc<LexMask>> {
        let state = key.1 & !INSIDE_ONLY;
        Self::latest_broad(cache, key)
            .into_iter()
            .find(|(s, mask)| lexmask::slice_sibling_agrees(&self.vocab, dfa, state, *s, mask))
            .map(|(_, mask)| mask)
    }

    /// One of the latest few broad lexer masks of the same terminal, computed the same way
    /// as `key`'s would be, whose state reads every text alike with `key`'s to a depth at
    /// which [`lexmask::from_depth_sibling`] pays; the deepest found, with that depth.
    fn depth_sibling(&self, cache: &RwLock<LexCache>, dfa: &Dfa, key: (u32, u32)) -> Option<(Arc<LexMask>, usize)> {
        let (state, max_depth) = (key.1 & !INSIDE_ONLY, self.vocab.trie().max_depth());
        Self::latest_broad(cache, key)
            .into_iter()
            .map(|(s, mask)| (mask, dfa.agreeing_depth(state, s, max_depth, lexmask::MAX_SIBLING_PAIRS)))
            .max_by_key(|&(_, depth)| depth)
            .filter(|&(_, depth)| lexmask::depth_sibling_pays(&self.vocab, depth))
    }

    /// The latest [`SLICE_SIBLINGS_COMPARED`] broad lexer masks of `key`'s terminal
    /// computed the same way as `key`'s would be (with or without end nodes), the latest
    /// first, with their DFA states.
    fn latest_broad(cache: &RwLock<LexCache>, key: (u32, u32)) -> Vec<(u32, Arc<LexMask>)> {
        let flag = key.1 & INSIDE_ONLY;
        let Ok(cache) = cache.read() else { return Vec::new() };
        let Some(kept) = cache.broad.get(&key.0) else { return Vec::new() };
        kept.iter()
            .rev()
            .filter(|(s, _)| s & INSIDE_ONLY == flag)
            .take(SLICE_SIBLINGS_COMPARED)
            .map(|(s, mask)| (s & !INSIDE_ONLY, mask.clone()))
            .collect()
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
        Ok(crate::index::state_mask::count_bits(out))
    }
}
