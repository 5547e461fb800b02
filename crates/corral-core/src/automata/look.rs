//! Look-around built into a DFA: a [`DfaExpr`] with look-aheads and look-behinds.
//!
//! Look-around keeps a language regular; what it needs is a subset construction that
//! remembers, beside the NFA states, the checks still pending. The ε-NFA is the one of
//! [`super::expr`] (Thompson's construction over DFA leaves), with guarded ε-edges:
//!
//! * A **look-behind** depends only on the input read so far, so each one is a *monitor*:
//!   a DFA of "the input so far is in the prefix language" that runs from the start of
//!   the input beside everything else. A guarded edge is passable when its monitor
//!   accepts (or, negated, does not). The monitors' states are part of every DFA state.
//! * A **look-ahead** depends on input not read yet, so passing its edge leaves an
//!   *obligation*: the look-ahead's body, run as a machine of its own from here. A
//!   positive obligation must end up matched, a negative one must not; one that is
//!   decided (matched, or unable to match) is dropped, or kills the thread that carries
//!   it.
//!
//! A *machine* is the top expression or one look-ahead body; its state is the monitors'
//! states and a set of *configurations*: an NFA position (a leaf DFA state, or the end
//! of the expression) with the obligations that thread carries, each a state of the
//! body's machine. Machine states are interned, so a DFA state is one number and an
//! obligation is a pair of numbers; a body's machine is stepped in lockstep with the
//! input, memoized. Every set is finite, so exploration ends; the work is bounded like
//! the plain subset construction's (`dfa_size_limit`).
//!
//! A body's machine has matched once one of its threads reached the body's end with no
//! obligation pending (the rest of the input does not matter to a look-ahead). At the
//! end of the input a machine accepts when a thread stands at the end and its pending
//! obligations come out right there.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use super::classes::representatives;
use super::expr::{Edge, Guard, LeafNfa};
use super::minimize::{MINIMIZE_FROM, MINIMIZE_UP_TO};
use super::{size_error, Dfa, DfaExpr, DEAD};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::util::hash::FastMap;

/// The machine of the whole expression (look-ahead `k`'s machine is `k`).
const TOP: u32 = u32::MAX;

/// The position of a thread that reached the end of the whole expression.
const TOP_END: u32 = u32::MAX;

/// The position of a thread that reached the end of look-ahead `k`'s body.
fn body_end(k: u32) -> u32 {
    u32::MAX - 1 - k
}

/// Pending look-aheads of a thread: (look-ahead, state of its machine), sorted.
type Obligations = Rc<[(u32, u32)]>;

/// A thread: where it stands (a leaf DFA state numbered globally, or an end) and what it
/// still owes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Config {
    pos: u32,
    owes: Obligations,
}

/// One interned machine state.
#[derive(Debug, PartialEq, Eq, Hash)]
struct MachineState {
    machine: u32,
    monitors: u32,
    configs: Box<[Config]>,
}

/// What an obligation's machine state means for the thread that carries it.
enum Verdict {
    /// Decided in the thread's favour: forget it.
    Drop,
    /// Decided against the thread.
    Fail,
    /// Not decided yet.
    Keep(u32),
}

/// The construction's tables (see the module docs).
struct Look<'n, 'a> {
    nfa: &'n LeafNfa<'a>,
    /// `end_of[j]`: the look-ahead whose body ends at junction `j`.
    end_of: Vec<Option<u32>>,
    /// A byte of each class.
    representative: Vec<u8>,
    vectors: Vec<Rc<[u32]>>,
    vector_ids: FastMap<Rc<[u32]>, u32>,
    vector_steps: FastMap<(u32, u8), u32>,
    states: Vec<Rc<MachineState>>,
    state_ids: FastMap<Rc<MachineState>, u32>,
    /// Whether each state is a body's machine that has matched.
    matched: Vec<bool>,
    starts: FastMap<(u32, u32), Option<u32>>,
    steps: FastMap<(u32, u8), Option<u32>>,
    accepts: FastMap<u32, bool>,
    work: usize,
    budget: usize,
    error: Option<Error>,
}

impl<'n, 'a> Look<'n, 'a> {
    fn new(nfa: &'n LeafNfa<'a>, class_of: &[u8; 256], limits: &Limits) -> Look<'n, 'a> {
        let mut end_of = vec![None; nfa.eps.len()];
        for (k, body) in nfa.aheads.iter().enumerate() {
            end_of[body.end as usize] = Some(k as u32);
        }
        let representative = representatives(class_of);
        Look {
            nfa,
            end_of,
            representative,
            vectors: Vec::new(),
            vector_ids: FastMap::default(),
            vector_steps: FastMap::default(),
            states: Vec::new(),
            state_ids: FastMap::default(),
            matched: Vec::new(),
            starts: FastMap::default(),
            steps: FastMap::default(),
            accepts: FastMap::default(),
            work: 0,
            budget: limits.dfa_size_limit / std::mem::size_of::<u32>(),
            error: None,
        }
    }

    /// Counts `n` units of work; an error past the budget.
    fn spend(&mut self, n: usize, limits: &Limits, what: &str) -> Result<()> {
        self.work += n;
        if self.work > self.budget {
            return Err(size_error(limits, what));
        }
        Ok(())
    }

    /// The id of a vector of monitor states.
    fn vector(&mut self, v: Vec<u32>) -> u32 {
        if let Some(&id) = self.vector_ids.get(v.as_slice()) {
            return id;
        }
        let v: Rc<[u32]> = v.into();
        let id = self.vectors.len() as u32;
        self.vectors.push(v.clone());
        self.vector_ids.insert(v, id);
        id
    }

    /// The monitors' states after reading a byte of class `class`.
    fn step_vector(&mut self, id: u32, class: u8) -> u32 {
        if let Some(&next) = self.vector_steps.get(&(id, class)) {
            return next;
        }
        let byte = self.representative[class as usize];
        let v = self.vectors[id as usize].clone();
        let stepped = v.iter().zip(&self.nfa.monitors).map(|(&s, m)| m.next(s, byte)).collect();
        let next = self.vector(stepped);
        self.vector_steps.insert((id, class), next);
        next
    }

    /// Interns a machine state; None when it has no thread (dead).
    fn intern(
        &mut self,
        machine: u32,
        monitors: u32,
        mut configs: Vec<Config>,
        limits: &Limits,
        what: &str,
    ) -> Result<Option<u32>> {
        if configs.is_empty() {
            return Ok(None);
        }
        configs.sort_unstable();
        configs.dedup();
        let state = MachineState { machine, monitors, configs: configs.into_boxed_slice() };
        if let Some(&id) = self.state_ids.get(&state) {
            return Ok(Some(id));
        }
        self.spend(state.configs.iter().map(|c| 1 + c.owes.len()).sum(), limits, what)?;
        let matched = machine != TOP && state.configs.iter().any(|c| c.pos == body_end(machine) && c.owes.is_empty());
        let state = Rc::new(state);
        let id = self.states.len() as u32;
        self.states.push(state.clone());
        self.state_ids.insert(state, id);
        self.matched.push(matched);
        Ok(Some(id))
    }

    /// What look-ahead `k`'s machine in `state` means for a thread that owes it.
    fn verdict(&self, k: u32, state: Option<u32>) -> Verdict {
        let positive = self.nfa.aheads[k as usize].positive;
        match state {
            None if positive => Verdict::Fail,
            None => Verdict::Drop,
            Some(s) if self.matched[s as usize] => {
                if positive {
                    Verdict::Drop
                } else {
                    Verdict::Fail
                }
            }
            Some(s) => Verdict::Keep(s),
        }
    }

    /// The threads reachable without reading from `roots` (junction, obligations), with
    /// the monitors in `monitors`: look-behinds are decided, look-aheads become
    /// obligations.
    fn close(&mut self, roots: Vec<(u32, Obligations)>, monitors: u32, limits: &Limits, what: &str) -> Result<Vec<Config>> {
        let nfa = self.nfa;
        let mut out = Vec::new();
        let mut seen: std::collections::HashSet<(u32, Obligations)> = Default::default();
        let mut stack = roots;
        while let Some((j, owes)) = stack.pop() {
            if !seen.insert((j, owes.clone())) {
                continue;
            }
            // One closure may visit many (junction, obligations) pairs (alternatives of
            // look-aheads, one after another): each is work, and memory (a set entry of
            // about eight words).
            self.spend(8 + owes.len(), limits, what)?;
            if seen.len() % 256 == 0 {
                crate::util::interrupt::check()?;
            }
            if j == 1 {
                out.push(Config { pos: TOP_END, owes: owes.clone() });
            }
            if let Some(k) = self.end_of[j as usize] {
                out.push(Config { pos: body_end(k), owes: owes.clone() });
            }
            for &edge in &nfa.eps[j as usize] {
                match edge {
                    Edge::To(t) => stack.push((t, owes.clone())),
                    Edge::Leaf(i) => {
                        let d = nfa.leaves[i as usize];
                        out.push(Config { pos: nfa.offset[i as usize] + d.start(), owes: owes.clone() });
                        if d.accepts_empty() {
                            stack.push((nfa.exit[i as usize], owes.clone()));
                        }
                    }
                    Edge::Guarded(Guard::Behind(m, positive), t) => {
                        let state = self.vectors[monitors as usize][m as usize];
                        if nfa.monitors[m as usize].is_accepting(state) == positive {
                            stack.push((t, owes.clone()));
                        }
                    }
                    Edge::Guarded(Guard::Ahead(k), t) => {
                        let sub = self.start(k, monitors, limits, what)?;
                        match self.verdict(k, sub) {
                            Verdict::Fail => {}
                            Verdict::Drop => stack.push((t, owes.clone())),
                            Verdict::Keep(s) => stack.push((t, with(&owes, (k, s)))),
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Look-ahead `k`'s machine started here (monitors in `monitors`).
    fn start(&mut self, k: u32, monitors: u32, limits: &Limits, what: &str) -> Result<Option<u32>> {
        if let Some(&s) = self.starts.get(&(k, monitors)) {
            return Ok(s);
        }
        let junction = self.nfa.aheads[k as usize].start;
        let configs = self.close(vec![(junction, Rc::from([]))], monitors, limits, what)?;
        let s = self.intern(k, monitors, configs, limits, what)?;
        self.starts.insert((k, monitors), s);
        Ok(s)
    }

    /// The state after reading a byte of class `class` in `id` (None: dead).
    fn step(&mut self, id: u32, class: u8, limits: &Limits, what: &str) -> Result<Option<u32>> {
        if let Some(&next) = self.steps.get(&(id, class)) {
            return Ok(next);
        }
        let nfa = self.nfa;
        let state = self.states[id as usize].clone();
        self.spend(state.configs.len(), limits, what)?;
        let byte = self.representative[class as usize];
        let monitors = self.step_vector(state.monitors, class);
        let (mut out, mut roots) = (Vec::new(), Vec::new());
        'threads: for c in state.configs.iter() {
            if c.pos == TOP_END {
                continue; // the input goes on: this thread ended too early
            }
            let mut owes = Vec::with_capacity(c.owes.len());
            for &(k, s) in c.owes.iter() {
                let next = self.step(s, class, limits, what)?;
                match self.verdict(k, next) {
                    Verdict::Fail => continue 'threads,
                    Verdict::Drop => {}
                    Verdict::Keep(s) => owes.push((k, s)),
                }
            }
            owes.sort_unstable();
            owes.dedup();
            let owes: Obligations = owes.into();
            if self.end_of_body(c.pos) {
                out.push(Config { pos: c.pos, owes });
                continue;
            }
            let i = nfa.owner[c.pos as usize] as usize;
            let d = nfa.leaves[i];
            let t = d.next(c.pos - nfa.offset[i], byte);
            if t != DEAD {
                out.push(Config { pos: nfa.offset[i] + t, owes: owes.clone() });
                if d.is_accepting(t) {
                    roots.push((nfa.exit[i], owes));
                }
            }
        }
        out.extend(self.close(roots, monitors, limits, what)?);
        let next = self.intern(state.machine, monitors, out, limits, what)?;
        self.steps.insert((id, class), next);
        Ok(next)
    }

    /// Is `pos` the end of a look-ahead's body?
    fn end_of_body(&self, pos: u32) -> bool {
        pos != TOP_END && pos > TOP_END - 1 - self.nfa.aheads.len() as u32
    }

    /// May the input end in state `id`: a thread at the end whose obligations come out
    /// right with nothing more to read?
    fn accepts(&mut self, id: u32) -> bool {
        if let Some(&a) = self.accepts.get(&id) {
            return a;
        }
        let state = self.states[id as usize].clone();
        let end = if state.machine == TOP { TOP_END } else { body_end(state.machine) };
        let a = state
            .configs
            .iter()
            .filter(|c| c.pos == end)
            .any(|c| c.owes.iter().all(|&(k, s)| self.accepts(s) == self.nfa.aheads[k as usize].positive));
        self.accepts.insert(id, a);
        a
    }
}

/// An expression with look-around whose leaves are built automata: what a front-end
/// writes, piece by piece, for [`LookTree::dfa`].
#[derive(Debug, Clone)]
pub enum LookTree {
    /// The empty string.
    Empty,
    /// No string at all.
    Nothing,
    /// The language of a DFA.
    Leaf(Arc<Dfa>),
    /// Concatenation.
    Seq(Vec<LookTree>),
    /// Union.
    Alt(Vec<LookTree>),
    /// `tree{min,max}` (`max` None: unbounded).
    Repeat(Box<LookTree>, u32, Option<u32>),
    /// A look-ahead, positive or not (see [`DfaExpr::Ahead`]).
    Ahead(bool, Box<LookTree>),
    /// A look-behind, positive or not, of the whole input read so far (see
    /// [`DfaExpr::Behind`]).
    Behind(bool, Box<LookTree>),
}

impl LookTree {
    /// The tree as an expression over its leaves.
    pub fn expr(&self) -> DfaExpr<'_> {
        fn boxed(t: &LookTree) -> Box<DfaExpr<'_>> {
            Box::new(t.expr())
        }
        match self {
            LookTree::Empty => DfaExpr::Empty,
            LookTree::Nothing => DfaExpr::Alt(Vec::new()),
            LookTree::Leaf(d) => DfaExpr::Leaf(d),
            LookTree::Seq(items) => DfaExpr::Seq(items.iter().map(LookTree::expr).collect()),
            LookTree::Alt(items) => DfaExpr::Alt(items.iter().map(LookTree::expr).collect()),
            LookTree::Repeat(t, min, max) => DfaExpr::Repeat { expr: boxed(t), min: *min, max: *max },
            LookTree::Ahead(positive, body) => DfaExpr::Ahead { positive: *positive, body: boxed(body) },
            LookTree::Behind(positive, prefix) => DfaExpr::Behind { positive: *positive, prefix: boxed(prefix) },
        }
    }

    /// The DFA of the whole strings of the tree ([`Dfa::from_expr`]).
    pub fn dfa(&self, limits: &Limits, what: &str) -> Result<Dfa> {
        Dfa::from_expr(&self.expr(), limits, what)
    }

    /// "The input so far ends with one of `chars`": `any_run`, then one of them (the
    /// prefix of a look-behind that a word boundary tests).
    pub fn ends_with(any_run: &Arc<Dfa>, chars: &Arc<Dfa>) -> LookTree {
        LookTree::Seq(vec![LookTree::Leaf(any_run.clone()), LookTree::Leaf(chars.clone())])
    }

    /// A word boundary (`negated`: its absence), words being the strings of `word`
    /// (one character) and `any_run` any text: "behind is a word character and ahead is
    /// not, or the reverse"; at the ends of the input the missing side is no word
    /// character.
    pub fn word_boundary(negated: bool, any_run: &Arc<Dfa>, word: &Arc<Dfa>) -> LookTree {
        let branch = |behind: bool, ahead: bool| {
            LookTree::Seq(vec![
                LookTree::Behind(behind, Box::new(LookTree::ends_with(any_run, word))),
                LookTree::Ahead(ahead, Box::new(LookTree::Leaf(word.clone()))),
            ])
        };
        // \b: (?<=w)(?!w) | (?<!w)(?=w); \B: (?<=w)(?=w) | (?<!w)(?!w).
        LookTree::Alt(vec![branch(true, negated), branch(false, !negated)])
    }
}

/// `owes` with `(k, s)` added (sorted, without repeats).
fn with(owes: &Obligations, item: (u32, u32)) -> Obligations {
    let mut v = owes.to_vec();
    if let Err(at) = v.binary_search(&item) {
        v.insert(at, item);
    }
    v.into()
}

/// The DFA of `e`, an expression with look-around (see the module docs). Bounded like
/// [`Dfa::from_expr`]: `max_dfa_states` and `dfa_size_limit`.
pub(super) fn build(e: &DfaExpr<'_>, limits: &Limits, what: &str) -> Result<Dfa> {
    let nfa = LeafNfa::new(e, limits, what)?;
    let class_of = nfa.classes();
    let look = RefCell::new(Look::new(&nfa, &class_of, limits));
    let start = {
        let mut l = look.borrow_mut();
        let monitors = l.vector(nfa.monitors.iter().map(Dfa::start).collect());
        let configs = l.close(vec![(0, Rc::from([]))], monitors, limits, what)?;
        l.intern(TOP, monitors, configs, limits, what)?.ok_or_else(|| Error::EmptyLanguage { what: what.to_string() })?
    };
    let result = Dfa::from_automaton(
        start,
        &class_of,
        |id, byte| {
            let mut l = look.borrow_mut();
            if l.error.is_some() {
                return None;
            }
            let class = class_of[byte as usize];
            l.step(id, class, limits, what).unwrap_or_else(|e| {
                l.error = Some(e);
                None
            })
        },
        |id| look.borrow_mut().accepts(id),
        limits,
        what,
    );
    if let Some(e) = look.borrow_mut().error.take() {
        return Err(e);
    }
    result.map(|d| if (MINIMIZE_FROM..=MINIMIZE_UP_TO).contains(&d.num_states()) { d.minimized() } else { d })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::regex::compile;
    use std::collections::BTreeSet;

    /// Where a match of `e` starting at `pos` of `input` may end: the definition of the
    /// expressions, look-arounds tried on the whole input.
    fn ends(e: &DfaExpr<'_>, input: &[u8], pos: usize) -> BTreeSet<usize> {
        match e {
            DfaExpr::Empty => [pos].into(),
            DfaExpr::Leaf(d) => (pos..=input.len()).filter(|&end| d.matches(&input[pos..end])).collect(),
            DfaExpr::Seq(items) => {
                items.iter().fold([pos].into(), |at: BTreeSet<usize>, x| at.iter().flat_map(|&p| ends(x, input, p)).collect())
            }
            DfaExpr::Alt(items) => items.iter().flat_map(|x| ends(x, input, pos)).collect(),
            DfaExpr::Repeat { expr, min, max } => {
                let mut at: BTreeSet<usize> = [pos].into();
                for _ in 0..*min {
                    at = at.iter().flat_map(|&p| ends(expr, input, p)).collect();
                }
                let mut all = at.clone();
                let extra = max.map_or(input.len() as u32 + 1, |m| m - min);
                for _ in 0..extra {
                    at = at.iter().flat_map(|&p| ends(expr, input, p)).collect();
                    all.extend(at.iter().copied());
                }
                all
            }
            DfaExpr::Ahead { positive, body } => {
                if ends(body, input, pos).is_empty() != *positive {
                    [pos].into()
                } else {
                    BTreeSet::new()
                }
            }
            DfaExpr::Behind { positive, prefix } => {
                if ends(prefix, &input[..pos], 0).contains(&pos) == *positive {
                    [pos].into()
                } else {
                    BTreeSet::new()
                }
            }
        }
    }

    fn strings(max_len: usize) -> Vec<Vec<u8>> {
        let mut out = vec![Vec::new()];
        let mut layer = vec![Vec::new()];
        for _ in 0..max_len {
            layer = layer.iter().flat_map(|s: &Vec<u8>| b"abc".iter().map(move |&c| [s.clone(), vec![c]].concat())).collect();
            out.extend(layer.iter().cloned());
        }
        out
    }

    /// A small random expression over `leaves`, with look-arounds (none ahead inside a
    /// look-behind).
    fn random_expr<'d>(rng: &mut u64, leaves: &'d [Dfa], depth: u32, in_behind: bool) -> DfaExpr<'d> {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        let pick = (*rng % if depth == 0 { 2 } else { 9 }) as usize;
        let sub = |rng: &mut u64, ib| Box::new(random_expr(rng, leaves, depth - 1, ib));
        match pick {
            0 => DfaExpr::Leaf(&leaves[(*rng >> 8) as usize % leaves.len()]),
            1 => DfaExpr::Empty,
            2 => {
                DfaExpr::Seq(vec![random_expr(rng, leaves, depth - 1, in_behind), random_expr(rng, leaves, depth - 1, in_behind)])
            }
            3 => {
                DfaExpr::Alt(vec![random_expr(rng, leaves, depth - 1, in_behind), random_expr(rng, leaves, depth - 1, in_behind)])
            }
            4 => DfaExpr::Repeat {
                expr: sub(rng, in_behind),
                min: (*rng >> 9) as u32 % 2,
                max: [None, Some(2)][(*rng >> 11) as usize % 2],
            },
            5 if !in_behind => DfaExpr::Ahead { positive: *rng & 1 << 20 != 0, body: sub(rng, false) },
            6 => DfaExpr::Behind { positive: *rng & 1 << 22 != 0, prefix: Box::new(DfaExpr::Empty) },
            _ => {
                let any = DfaExpr::Leaf(&leaves[0]);
                DfaExpr::Behind {
                    positive: *rng & 1 << 21 != 0,
                    prefix: Box::new(DfaExpr::Seq(vec![any, random_expr(rng, leaves, depth - 1, true)])),
                }
            }
        }
    }

    #[test]
    fn repeated_look_arounds_share_their_monitor_and_body() {
        let leaves: Vec<Arc<Dfa>> = ["[abc]*", "a"].iter().map(|p| Arc::new(compile(p, &Limits::default()).unwrap())).collect();
        let boundary = LookTree::word_boundary(false, &leaves[0], &leaves[1]);
        let tree = LookTree::Seq(vec![boundary.clone(), LookTree::Leaf(leaves[1].clone()), boundary]);
        let nfa = LeafNfa::new(&tree.expr(), &Limits::default(), "t").unwrap();
        // One monitor ("ends with a"), two bodies (positive and negative "a").
        assert_eq!((nfa.monitors.len(), nfa.aheads.len()), (1, 2));
        // Words are runs of `a`: `\ba\b` is a lone `a`.
        let d = tree.dfa(&Limits::default(), "t").unwrap();
        assert!(d.matches(b"a") && !d.matches(b"aa") && !d.matches(b""));
    }

    #[test]
    fn look_around_agrees_with_its_definition() {
        let leaves: Vec<Dfa> =
            ["[abc]*", "a", "b", "ab|c", "[bc]+", "a?"].iter().map(|p| compile(p, &Limits::default()).unwrap()).collect();
        let inputs = strings(6);
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut built = 0;
        for _ in 0..300 {
            let e = random_expr(&mut rng, &leaves, 4, false);
            if !e.has_look_around() {
                continue;
            }
            let want: Vec<bool> = inputs.iter().map(|s| ends(&e, s, 0).contains(&s.len())).collect();
            match Dfa::from_expr(&e, &Limits::default(), "t") {
                Ok(d) => {
                    built += 1;
                    for (s, w) in inputs.iter().zip(&want) {
                        assert_eq!(d.matches(s), *w, "{e:?} on {:?}", String::from_utf8_lossy(s));
                    }
                }
                Err(Error::EmptyLanguage { .. }) => assert!(!want.iter().any(|&w| w), "{e:?}"),
                Err(err) => panic!("{e:?}: {err}"),
            }
        }
        assert!(built > 100, "{built}");
    }
}
