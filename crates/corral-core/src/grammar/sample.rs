//! Random sentences of a grammar: a generator over the normalized grammar, used by the
//! completeness tests (every generated sentence must be accepted under any tokenization).

use super::distinct_keys::EntryQuery;
use super::lower::{Cfg, Sym};
use crate::automata::{Dfa, DEAD};
use crate::error::Result;
use crate::frontend::ast::{Distinct, ItemStarts};
use crate::util::state_map::StateMap;

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// Automata with more states than this (a long counted region) get no table of
/// distances: a sample finishing in one is sent along a shortest path found from where
/// it stands (see [`shortest_ending`]).
const DISTANCES_UP_TO: usize = 1 << 16;

/// Bytes from each DFA state to the nearest accepting state (u32::MAX: none): one
/// breadth-first search backwards from the accepting states. Empty for an automaton
/// past [`DISTANCES_UP_TO`] states.
fn distances(dfa: &Dfa) -> Vec<u32> {
    let n = dfa.num_states();
    if n > DISTANCES_UP_TO {
        return Vec::new();
    }
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for s in 1..n as u32 {
        for b in 0..=255u8 {
            let t = dfa.next(s, b);
            if t != DEAD && preds[t as usize].last() != Some(&s) {
                preds[t as usize].push(s);
            }
        }
    }
    let mut dist = vec![u32::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for s in 1..n as u32 {
        if dfa.is_accepting(s) {
            dist[s as usize] = 0;
            queue.push_back(s);
        }
    }
    while let Some(t) = queue.pop_front() {
        for &s in &preds[t as usize] {
            if dist[s as usize] == u32::MAX {
                dist[s as usize] = dist[t as usize] + 1;
                queue.push_back(s);
            }
        }
    }
    dist
}

/// Per nonterminal, the fewest expansion steps to terminals (u64::MAX: none), by Knuth's
/// generalization of Dijkstra's algorithm: a production's cost is known once all its
/// nonterminals are, and nonterminals settle cheapest first.
fn expansion_costs(cfg: &Cfg) -> Vec<u64> {
    use std::cmp::Reverse;
    let n = cfg.nonterminals.len();
    let mut uses: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut waiting: Vec<usize> = Vec::with_capacity(cfg.productions.len());
    let mut heap = std::collections::BinaryHeap::new();
    for (i, p) in cfg.productions.iter().enumerate() {
        let nts: Vec<u32> = p.rhs.iter().filter(|s| !s.is_terminal()).map(|s| s.index()).collect();
        for &nt in &nts {
            uses[nt as usize].push(i as u32);
        }
        waiting.push(nts.len());
        if nts.is_empty() {
            heap.push(Reverse((1 + p.rhs.len() as u64, p.lhs)));
        }
    }
    let mut cost = vec![u64::MAX; n];
    while let Some(Reverse((c, nt))) = heap.pop() {
        if cost[nt as usize] != u64::MAX {
            continue;
        }
        cost[nt as usize] = c;
        for &i in &uses[nt as usize] {
            waiting[i as usize] -= 1;
            if waiting[i as usize] == 0 {
                let p = &cfg.productions[i as usize];
                let total = p
                    .rhs
                    .iter()
                    .fold(1u64, |acc, s| acc.saturating_add(if s.is_terminal() { 1 } else { cost[s.index() as usize] }));
                if cost[p.lhs as usize] == u64::MAX {
                    heap.push(Reverse((total, p.lhs)));
                }
            }
        }
    }
    cost
}

/// The bytes of a shortest way from `state` to an accepting state of `dfa` (a
/// breadth-first search forwards; every live state has one), or None if it is longer than
/// `room` bytes: the search stops there.
fn shortest_ending(dfa: &Dfa, state: u32, room: usize) -> Option<Vec<u8>> {
    let mut prev: StateMap<(u32, u8)> = StateMap::new(dfa.num_states(), (DEAD, 0));
    let mut level = vec![state];
    let mut end = None;
    // Level by level, so that the search knows its depth and stops past `room`.
    for _ in 0..=room {
        if let Some(&s) = level.iter().find(|&&s| dfa.is_accepting(s)) {
            end = Some(s);
            break;
        }
        let mut next = Vec::new();
        for &s in &level {
            for b in 0..=255u8 {
                let t = dfa.next(s, b);
                if t != DEAD && t != state && prev.get(t).0 == DEAD {
                    prev.set(t, (s, b));
                    next.push(t);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    let mut end = end?;
    let mut path = Vec::new();
    while end != state {
        let (p, b) = prev.get(end);
        path.push(b);
        end = p;
    }
    path.reverse();
    Some(path)
}

/// Appends a random string of terminal `dfa`, about `target` bytes long, biased to
/// ASCII, to `out`; false if that would take `out` past `max_bytes`.
fn sample_terminal(dfa: &Dfa, dist: &[u32], target: usize, max_bytes: usize, rng: &mut Rng, out: &mut Vec<u8>) -> bool {
    let mut s = dfa.start();
    let mut len = 0;
    loop {
        let done = dfa.is_accepting(s);
        let full = out.len() >= max_bytes;
        if done && (len >= target || full || rng.chance(0.3)) {
            return true;
        }
        if full {
            return false;
        }
        if len >= target && dist.is_empty() {
            let Some(ending) = shortest_ending(dfa, s, max_bytes - out.len()) else { return false };
            out.extend(ending);
            return true;
        }
        let live: Vec<u8> = (0..=255u8).filter(|&b| dfa.next(s, b) != DEAD).collect();
        let over = len >= target;
        let candidates: Vec<u8> = if over {
            // Head for the nearest accepting state.
            let best = live.iter().map(|&b| dist[dfa.next(s, b) as usize]).min().unwrap_or(u32::MAX);
            live.iter().copied().filter(|&b| dist[dfa.next(s, b) as usize] == best).collect()
        } else {
            let ascii: Vec<u8> = live.iter().copied().filter(|&b| (0x20..0x7f).contains(&b) || b == b'\n').collect();
            if !ascii.is_empty() && rng.chance(0.9) {
                ascii
            } else {
                live
            }
        };
        if candidates.is_empty() {
            return true;
        }
        let b = candidates[rng.below(candidates.len())];
        out.push(b);
        s = dfa.next(s, b);
        len += 1;
    }
}

/// The entries of a random `perm!` list, in order: random ones while `over` is false and
/// a few more are wanted, then the required ones missing, then any until the list is
/// finished. Each pick keeps the list finishable, so this ends.
fn sample_list(perm: &super::perm::Perm, over: bool, rng: &mut Rng) -> Vec<usize> {
    let extra = if over { 0 } else { rng.below(4) };
    let mut state: Option<Vec<u64>> = None;
    let mut scratch = Vec::new();
    let mut picks = Vec::new();
    loop {
        let st = state.as_deref();
        let open: Vec<usize> = (0..perm.entries.len()).filter(|&i| perm.can_add(st, i, &mut scratch)).collect();
        let finished = st.is_some_and(|s| perm.is_finished(s));
        if open.is_empty() || (finished && picks.len() >= extra.max(1)) {
            return picks;
        }
        let missing: Vec<usize> = open.iter().copied().filter(|&i| perm.required[i] && !perm.has(st, i)).collect();
        let pool = if picks.len() >= extra && !missing.is_empty() { &missing } else { &open };
        let i = pool[rng.below(pool.len())];
        let mut next = Vec::new();
        perm.with_entry(st, i, &mut next);
        state = Some(next);
        picks.push(i);
    }
}

/// A random sentence of `cfg` (about `budget` bytes; it may run longer to finish), or
/// None if the one being drawn runs past `max_bytes` (the draw stops there: a counted
/// region's shortest string can be millions of bytes long).
pub fn sample(cfg: &Cfg, seed: u64, budget: usize, max_bytes: usize) -> Option<Vec<u8>> {
    sample_with_entries(cfg, seed, budget, max_bytes).map(|(s, _)| s)
}

/// Where each checked entry of a sample starts (byte offset), and its kind.
pub type EntryStarts = Vec<(usize, Distinct)>;

/// [`sample`], with where each entry checked at run time (a `perm!` entry marked
/// [`Distinct`], but for regular expressions, which the sampler checks itself) starts in
/// it: what the parser would answer the check of distinct keys and items there (see
/// [`SampledEntries`]).
pub fn sample_with_entries(cfg: &Cfg, seed: u64, budget: usize, max_bytes: usize) -> Option<(Vec<u8>, EntryStarts)> {
    let mut rng = Rng(seed);
    let mut entries = Vec::new();
    let dists: Vec<Vec<u32>> = cfg.terminals.iter().map(|t| distances(&t.dfa)).collect();
    // Shortest expansion length in symbols-to-terminals steps, to steer toward termination.
    let cost = expansion_costs(cfg);
    let mut out = Vec::new();
    if cfg.productions_of[cfg.start as usize].is_empty() || (cfg.accepts_empty && rng.chance(0.1)) {
        return Some((out, entries));
    }
    let mut stack: Vec<Step> = vec![Step::Sym(Sym::n(cfg.start))];
    let mut expansions = 0usize;
    while let Some(step) = stack.pop() {
        let sym = match step {
            Step::Sym(sym) => sym,
            Step::PatternEntry { entry, tries } => {
                stack.push(Step::Pattern { start: out.len(), entry, tries });
                stack.push(Step::Sym(entry));
                continue;
            }
            Step::Mark(kind) => {
                entries.push((out.len(), kind));
                continue;
            }
            Step::Pattern { start, entry, tries } => {
                // A string that must be a regular expression: drawn again while it is not.
                if tries > 0 && !is_pattern_string(&out[start..]) {
                    out.truncate(start);
                    stack.push(Step::PatternEntry { entry, tries: tries - 1 });
                }
                continue;
            }
        };
        if sym.is_terminal() {
            let t = &cfg.terminals[sym.index() as usize];
            let target = 1 + rng.below(8);
            if !sample_terminal(&t.dfa, &dists[sym.index() as usize], target, max_bytes, &mut rng, &mut out) {
                return None;
            }
            continue;
        }
        expansions += 1;
        let over = out.len() + stack.len() > budget || expansions > budget * 4;
        if let Some(perm) = cfg.perms.iter().find(|p| p.list == sym.index()) {
            let picks = sample_list(perm, over, &mut rng);
            for (k, &i) in picks.iter().enumerate().rev() {
                let entry = perm.entries[i];
                match perm.distinct[i] {
                    Distinct::Regex => stack.push(Step::PatternEntry { entry, tries: PATTERN_TRIES }),
                    Distinct::No => stack.push(Step::Sym(entry)),
                    kind => stack.extend([Step::Sym(entry), Step::Mark(kind)]),
                }
                if k > 0 {
                    stack.extend(perm.sep.map(Step::Sym));
                }
            }
            continue;
        }
        let prods = &cfg.productions_of[sym.index() as usize];
        let pick = if over {
            // Finish as fast as possible: the cheapest production.
            *prods
                .iter()
                .min_by_key(|&&p| {
                    cfg.productions[p as usize]
                        .rhs
                        .iter()
                        .map(|s| if s.is_terminal() { 1 } else { cost[s.index() as usize] })
                        .fold(0u64, |a, b| a.saturating_add(b))
                })
                .unwrap_or(&prods[0])
        } else {
            prods[rng.below(prods.len())]
        };
        for &s in cfg.productions[pick as usize].rhs.iter().rev() {
            stack.push(Step::Sym(s));
        }
    }
    Some((out, entries))
}

/// Draws of a string that must be a regular expression (see `regex_text`) before the
/// sampler keeps one that is not.
const PATTERN_TRIES: u8 = 16;

/// What the sampler does next.
enum Step {
    /// Writes a symbol.
    Sym(Sym),
    /// Writes a `perm!` entry marked [`Distinct::Regex`], then checks it (`tries` more
    /// draws left if it is no pattern).
    PatternEntry { entry: Sym, tries: u8 },
    /// After such an entry: checks what it wrote from byte `start` on.
    Pattern { start: usize, entry: Sym, tries: u8 },
    /// Notes that an entry checked at run time of this kind starts here.
    Mark(Distinct),
}

/// The parser's answers about a sample, from where the sampler wrote each checked entry
/// (see [`sample_with_entries`]): the check of distinct keys and items reads the sample
/// as the matcher would read it.
pub struct SampledEntries<'a>(pub &'a [(usize, Distinct)]);

impl SampledEntries<'_> {
    /// The kinds of entry that start at byte `offset`.
    fn at(&self, offset: usize) -> impl Iterator<Item = Distinct> + '_ {
        self.0.iter().filter(move |(at, _)| *at == offset).map(|&(_, kind)| kind)
    }
}

impl EntryQuery for SampledEntries<'_> {
    fn distinct_entry_at(&mut self, offset: usize, kind: Distinct) -> Result<bool> {
        Ok(self.at(offset).any(|k| k == kind))
    }

    fn value_lists_at(&mut self, offset: usize) -> Result<ItemStarts> {
        Ok(self.at(offset).fold(ItemStarts::NONE, |acc, k| match k {
            Distinct::Values(starts) => acc.or(starts),
            _ => acc,
        }))
    }

    fn json_region_at(&mut self, offset: usize, _b: u8) -> Result<bool> {
        Ok(self.at(offset).any(|k| k == Distinct::Json))
    }
}

/// Is `text` a JSON string whose value is a regular expression?
fn is_pattern_string(text: &[u8]) -> bool {
    serde_json::from_slice::<String>(text).is_ok_and(|s| super::regex_text::is_pattern(&s))
}
