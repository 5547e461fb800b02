//! Regular expressions over DFAs: concatenation, union and repetition of automata that
//! no regex source describes (products, complements), by Thompson's construction over
//! DFA leaves and then the subset construction. Expressions with look-around are built
//! by [`super::look`] on the same ε-NFA.

use std::cell::RefCell;
use std::rc::Rc;

use super::classes::refine;
use super::minimize::{MINIMIZE_FROM, MINIMIZE_UP_TO};
use super::{size_error, Dfa, DEAD};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::util::hash::{FastMap, HashMap};

/// A regular expression whose leaves are DFAs: the input of [`Dfa::from_expr`], which
/// concatenates, unites and repeats automata that no regex source describes (e.g. the
/// results of [`Dfa::intersect`] and [`Dfa::complement`]).
#[derive(Debug, Clone)]
pub enum DfaExpr<'a> {
    /// The empty string.
    Empty,
    /// The language of a DFA.
    Leaf(&'a Dfa),
    /// Concatenation.
    Seq(Vec<DfaExpr<'a>>),
    /// Union.
    Alt(Vec<DfaExpr<'a>>),
    /// `expr{min,max}` (`max` None = unbounded).
    Repeat {
        /// What is repeated.
        expr: Box<DfaExpr<'a>>,
        /// Least number of repetitions.
        min: u32,
        /// Most (None: no bound).
        max: Option<u32>,
    },
    /// A look-ahead: the rest of the input, from here, starts (`positive`) or does not
    /// start with a string of `body`. Look-arounds inside `body` see the whole input.
    Ahead {
        /// `(?=` rather than `(?!`.
        positive: bool,
        /// What the rest of the input is tried against.
        body: Box<DfaExpr<'a>>,
    },
    /// A look-behind: the whole input read so far is (`positive`) or is not a string of
    /// `prefix` (the caller writes "ends with B" as any text, then B). `prefix` may hold
    /// look-behinds, not look-aheads.
    Behind {
        /// `(?<=` rather than `(?<!`.
        positive: bool,
        /// The language the input read so far is tested against.
        prefix: Box<DfaExpr<'a>>,
    },
}

impl DfaExpr<'_> {
    /// Does the expression hold a look-ahead or look-behind?
    pub fn has_look_around(&self) -> bool {
        match self {
            DfaExpr::Empty | DfaExpr::Leaf(_) => false,
            DfaExpr::Seq(items) | DfaExpr::Alt(items) => items.iter().any(DfaExpr::has_look_around),
            DfaExpr::Repeat { expr, .. } => expr.has_look_around(),
            DfaExpr::Ahead { .. } | DfaExpr::Behind { .. } => true,
        }
    }

    /// Does the expression hold a look-ahead?
    pub fn has_look_ahead(&self) -> bool {
        match self {
            DfaExpr::Empty | DfaExpr::Leaf(_) => false,
            DfaExpr::Seq(items) | DfaExpr::Alt(items) => items.iter().any(DfaExpr::has_look_ahead),
            DfaExpr::Repeat { expr, .. } => expr.has_look_ahead(),
            DfaExpr::Ahead { .. } => true,
            DfaExpr::Behind { prefix, .. } => prefix.has_look_ahead(),
        }
    }
}

/// The structure of `e` as text, its leaves by address: equal for expressions built alike
/// over the same automata (the look-arounds a pattern repeats).
fn shape_key(e: &DfaExpr<'_>) -> String {
    let list = |tag: &str, items: &[DfaExpr<'_>]| format!("{tag}({})", items.iter().map(shape_key).collect::<Vec<_>>().join(","));
    match e {
        DfaExpr::Empty => "e".into(),
        DfaExpr::Leaf(d) => format!("{:p}", *d),
        DfaExpr::Seq(items) => list("S", items),
        DfaExpr::Alt(items) => list("A", items),
        DfaExpr::Repeat { expr, min, max } => format!("R{min},{max:?}({})", shape_key(expr)),
        DfaExpr::Ahead { positive, body } => format!("H{positive}({})", shape_key(body)),
        DfaExpr::Behind { positive, prefix } => format!("B{positive}({})", shape_key(prefix)),
    }
}

/// A condition on an ε-edge of a [`LeafNfa`] (look-around only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Guard {
    /// Look-ahead `k` (an index into [`LeafNfa::aheads`]) holds from here.
    Ahead(u32),
    /// Look-behind monitor `k` (an index into [`LeafNfa::monitors`]) accepts (`true`) or
    /// does not (`false`) the input read so far.
    Behind(u32, bool),
}

/// An ε-edge of a [`LeafNfa`] junction.
#[derive(Debug, Clone, Copy)]
pub(super) enum Edge {
    /// To another junction.
    To(u32),
    /// Into leaf instance `i` (at its DFA's start state).
    Leaf(u32),
    /// To a junction, where the guard holds.
    Guarded(Guard, u32),
}

/// A look-ahead's body in a [`LeafNfa`]: built between its own two junctions.
#[derive(Debug, Clone, Copy)]
pub(super) struct AheadBody {
    /// `(?=` rather than `(?!`.
    pub positive: bool,
    /// Where the body starts.
    pub start: u32,
    /// Reached when the body has matched.
    pub end: u32,
}

/// An ε-NFA whose pieces are DFAs (for [`Dfa::from_expr`]). Junctions are ε-nodes; leaf
/// instance `i` is a copy of a DFA entered at its start state that, wherever its DFA
/// accepts, may leave to junction `exit[i]`. Junction 1 is the final node. The NFA states
/// that subset construction tracks are the leaves' DFA states, numbered globally: state `s`
/// of instance `i` is `offset[i] + s`.
///
/// Look-arounds (for [`super::look`]) are guarded ε-edges: a look-ahead's body is built
/// between junctions of its own ([`AheadBody`]); a look-behind is a monitor DFA of the
/// input read so far.
pub(super) struct LeafNfa<'a> {
    pub leaves: Vec<&'a Dfa>,
    pub exit: Vec<u32>,
    pub offset: Vec<u32>,
    /// The instance of each global state.
    pub owner: Vec<u32>,
    /// `eps[j]`: where junction `j` leads without reading.
    pub eps: Vec<Vec<Edge>>,
    /// The look-aheads' bodies.
    pub aheads: Vec<AheadBody>,
    /// The look-behinds' monitors, in the order of their guards.
    pub monitors: Vec<Dfa>,
    /// The look-aheads and monitors built so far, by [`shape_key`] (with the polarity, for
    /// look-aheads).
    ahead_ids: HashMap<String, u32>,
    monitor_ids: HashMap<String, u32>,
    /// NFA states so far (junctions plus leaf DFA states), bounded by `max_dfa_states`.
    size: usize,
    limits: Limits,
}

/// The final node, in NFA state sets (sorts last).
const FINAL: u32 = u32::MAX;

impl<'a> LeafNfa<'a> {
    /// The ε-NFA of `e` (between junction 0 and the final junction 1).
    pub fn new(e: &DfaExpr<'a>, limits: &Limits, what: &str) -> Result<LeafNfa<'a>> {
        let mut nfa = LeafNfa {
            leaves: Vec::new(),
            exit: Vec::new(),
            offset: Vec::new(),
            owner: Vec::new(),
            eps: vec![Vec::new(), Vec::new()],
            aheads: Vec::new(),
            monitors: Vec::new(),
            ahead_ids: HashMap::default(),
            monitor_ids: HashMap::default(),
            size: 2,
            limits: limits.clone(),
        };
        nfa.build(e, 0, 1, what)?;
        Ok(nfa)
    }

    fn grow(&mut self, n: usize, what: &str) -> Result<()> {
        self.size += n;
        if self.size > self.limits.max_dfa_states {
            return Err(Error::LimitExceeded {
                limit: "max_dfa_states",
                value: self.limits.max_dfa_states,
                context: format!("the automaton of {what}"),
            });
        }
        Ok(())
    }

    fn junction(&mut self, what: &str) -> Result<u32> {
        self.grow(1, what)?;
        self.eps.push(Vec::new());
        Ok(self.eps.len() as u32 - 1)
    }

    /// Thompson's construction of `e` between junctions `from` and `to`.
    fn build(&mut self, e: &DfaExpr<'a>, from: u32, to: u32, what: &str) -> Result<()> {
        match e {
            DfaExpr::Empty => self.eps[from as usize].push(Edge::To(to)),
            DfaExpr::Leaf(d) => {
                self.grow(d.num_states(), what)?;
                let i = self.leaves.len() as u32;
                self.leaves.push(d);
                self.exit.push(to);
                self.offset.push(self.owner.len() as u32);
                self.owner.extend(std::iter::repeat_n(i, d.num_states()));
                self.eps[from as usize].push(Edge::Leaf(i));
            }
            DfaExpr::Seq(items) => {
                let mut cur = from;
                for (k, item) in items.iter().enumerate() {
                    let next = if k + 1 == items.len() { to } else { self.junction(what)? };
                    self.build(item, cur, next, what)?;
                    cur = next;
                }
                if items.is_empty() {
                    self.eps[from as usize].push(Edge::To(to));
                }
            }
            DfaExpr::Alt(items) => {
                for item in items {
                    self.build(item, from, to, what)?;
                }
            }
            DfaExpr::Repeat { expr, min, max } => {
                // Each copy costs at least one junction, so huge counts hit the limit early.
                let mut cur = from;
                for _ in 0..*min {
                    let next = self.junction(what)?;
                    self.build(expr, cur, next, what)?;
                    cur = next;
                }
                match max {
                    None => {
                        // A loop on a fresh junction: one shared with a sibling (an
                        // alternative's entry) would let the loop run before the sibling.
                        let l = self.junction(what)?;
                        self.eps[cur as usize].push(Edge::To(l));
                        self.build(expr, l, l, what)?;
                        cur = l;
                    }
                    Some(max) => {
                        for _ in *min..*max {
                            self.eps[cur as usize].push(Edge::To(to));
                            let next = self.junction(what)?;
                            self.build(expr, cur, next, what)?;
                            cur = next;
                        }
                    }
                }
                self.eps[cur as usize].push(Edge::To(to));
            }
            DfaExpr::Ahead { positive, body } => {
                // One body per distinct look-ahead (`\b` repeated shares its two).
                let key = format!("{positive}{}", shape_key(body));
                let k = match self.ahead_ids.get(&key) {
                    Some(&k) => k,
                    None => {
                        let (start, end) = (self.junction(what)?, self.junction(what)?);
                        let k = self.aheads.len() as u32;
                        self.aheads.push(AheadBody { positive: *positive, start, end });
                        self.build(body, start, end, what)?;
                        self.ahead_ids.insert(key, k);
                        k
                    }
                };
                self.eps[from as usize].push(Edge::Guarded(Guard::Ahead(k), to));
            }
            DfaExpr::Behind { positive, prefix } => {
                if prefix.has_look_ahead() {
                    return Err(Error::Internal(format!("a look-ahead inside a look-behind in {what}")));
                }
                // One monitor per distinct prefix, whatever the polarity.
                let key = shape_key(prefix);
                let k = match self.monitor_ids.get(&key) {
                    Some(&k) => k,
                    None => {
                        // A prefix no input matches: a monitor that is dead from the start.
                        let monitor = match Dfa::from_expr(prefix, &self.limits, what) {
                            Err(Error::EmptyLanguage { .. }) => Dfa::nothing(),
                            other => other?,
                        };
                        self.grow(monitor.num_states(), what)?;
                        self.monitors.push(monitor);
                        let k = self.monitors.len() as u32 - 1;
                        self.monitor_ids.insert(key, k);
                        k
                    }
                };
                self.eps[from as usize].push(Edge::Guarded(Guard::Behind(k, *positive), to));
            }
        }
        Ok(())
    }

    /// The coarsest byte classes that refine every leaf's.
    pub fn classes(&self) -> [u8; 256] {
        let mut parts: Vec<&[u8; 256]> = Vec::new();
        for d in self.leaves.iter().copied().chain(&self.monitors) {
            // Repeated leaves are the same DFA: refine by each once.
            if !parts.iter().any(|p| std::ptr::eq(*p, &d.class_of)) {
                parts.push(&d.class_of);
            }
        }
        refine(&parts)
    }

    /// Adds to `out` the NFA states reachable from the junctions `roots` without reading,
    /// marking visited junctions with `stamp` (a fresh value per call).
    /// `roots` is used as the work stack (left empty).
    fn close(&self, roots: &mut Vec<u32>, seen: &mut [u32], stamp: u32, out: &mut Vec<u32>) {
        let stack = roots;
        while let Some(j) = stack.pop() {
            if std::mem::replace(&mut seen[j as usize], stamp) == stamp {
                continue;
            }
            if j == 1 {
                out.push(FINAL);
            }
            for &t in &self.eps[j as usize] {
                match t {
                    Edge::To(k) => stack.push(k),
                    // Only look-around has guards, and `super::look` builds those.
                    Edge::Guarded(..) => {}
                    Edge::Leaf(i) => {
                        let d = self.leaves[i as usize];
                        out.push(self.offset[i as usize] + d.start());
                        if d.accepts_empty() {
                            stack.push(self.exit[i as usize]);
                        }
                    }
                }
            }
        }
    }
}

/// The subset construction over a [`LeafNfa`]: NFA state sets interned, with the work
/// bounded (the sets stored plus the NFA states stepped stay under `budget`).
struct Subsets<'n, 'a> {
    nfa: &'n LeafNfa<'a>,
    sets: Vec<Rc<[u32]>>,
    ids: FastMap<Rc<[u32]>, u32>,
    /// NFA states stored plus NFA states stepped so far.
    work: usize,
    budget: usize,
    overflow: bool,
    /// Junctions visited by the closure being computed (`seen[j] == stamp`).
    seen: Vec<u32>,
    stamp: u32,
    /// Scratch buffers reused by every step (a step runs per state and byte class).
    out: Vec<u32>,
    exits: Vec<u32>,
}

impl<'n, 'a> Subsets<'n, 'a> {
    fn new(nfa: &'n LeafNfa<'a>, budget: usize) -> Subsets<'n, 'a> {
        let seen = vec![0u32; nfa.eps.len()];
        Subsets {
            nfa,
            sets: Vec::new(),
            ids: FastMap::default(),
            work: 0,
            budget,
            overflow: false,
            seen,
            stamp: 0,
            out: Vec::new(),
            exits: Vec::new(),
        }
    }

    /// Adds to `out` the NFA states reachable from the junctions `roots` without reading.
    fn close(&mut self, roots: &mut Vec<u32>, out: &mut Vec<u32>) {
        self.stamp += 1;
        self.nfa.close(roots, &mut self.seen, self.stamp, out);
    }

    /// Interns a state set (made canonical in place: sorted, without duplicates); None
    /// past the budget. The set is copied only when it is new.
    fn intern(&mut self, set: &mut Vec<u32>) -> Option<u32> {
        set.sort_unstable();
        set.dedup();
        if let Some(&id) = self.ids.get(set.as_slice()) {
            return Some(id);
        }
        self.work += set.len();
        if self.work > self.budget {
            self.overflow = true;
            return None;
        }
        let set: Rc<[u32]> = set.as_slice().into();
        let id = self.sets.len() as u32;
        self.sets.push(set.clone());
        self.ids.insert(set, id);
        Some(id)
    }

    /// The start set's id (None past the budget).
    fn start(&mut self) -> Option<u32> {
        let mut start = Vec::new();
        self.close(&mut vec![0], &mut start);
        self.intern(&mut start)
    }

    /// The set after reading `byte` in set `id`: None for the dead state, and (the error
    /// is reported by the caller) past the budget.
    fn step(&mut self, id: u32, byte: u8) -> Option<u32> {
        // Past the budget, stop exploring: the partial automaton is discarded.
        if self.overflow {
            return None;
        }
        self.work += self.sets[id as usize].len();
        let set = self.sets[id as usize].clone();
        let (mut out, mut exits) = (std::mem::take(&mut self.out), std::mem::take(&mut self.exits));
        out.clear();
        exits.clear();
        let nfa = self.nfa;
        for &g in set.iter().filter(|&&g| g != FINAL) {
            let i = nfa.owner[g as usize] as usize;
            let d = nfa.leaves[i];
            let t = d.next(g - nfa.offset[i], byte);
            if t != DEAD {
                out.push(nfa.offset[i] + t);
                if d.is_accepting(t) {
                    exits.push(nfa.exit[i]);
                }
            }
        }
        self.close(&mut exits, &mut out);
        // An empty set is the dead state.
        let next = if out.is_empty() { None } else { self.intern(&mut out) };
        (self.out, self.exits) = (out, exits);
        next
    }

    /// Does set `id` hold the final node?
    fn accepts(&self, id: u32) -> bool {
        self.sets[id as usize].last() == Some(&FINAL)
    }
}

impl Dfa {
    /// The DFA of a regular expression over DFAs without look-around (see
    /// [`Dfa::from_expr`]), by Thompson's construction on the leaves and the subset
    /// construction.
    pub(super) fn from_plain_expr(e: &DfaExpr<'_>, limits: &Limits, what: &str) -> Result<Dfa> {
        if let Some(dfa) = Dfa::seq_deterministic(e, limits, what)? {
            return Ok(dfa);
        }
        let nfa = LeafNfa::new(e, limits, what)?;
        let class_of = nfa.classes();
        let subsets = RefCell::new(Subsets::new(&nfa, limits.dfa_size_limit / std::mem::size_of::<u32>()));
        let start = subsets.borrow_mut().start().ok_or_else(|| size_error(limits, what))?;
        let result = Dfa::from_automaton(
            start,
            &class_of,
            |id, byte| subsets.borrow_mut().step(id, byte),
            |id| subsets.borrow().accepts(id),
            limits,
            what,
        );
        if subsets.borrow().overflow {
            return Err(size_error(limits, what));
        }
        // Minimized while that is cheap: subset construction keeps states that differ only
        // in which alternative led there (an IPv6 literal: 560 states, 156 minimal), and
        // every later join, walk and mask works on what it is given.
        result.map(|d| if (MINIMIZE_FROM..=MINIMIZE_UP_TO).contains(&d.num_states()) { d.minimized() } else { d })
    }

    /// A concatenation of DFAs built without subset construction, when every junction is
    /// deterministic (see [`Dfa::concat_all`]); None for any other expression.
    fn seq_deterministic(e: &DfaExpr<'_>, limits: &Limits, what: &str) -> Result<Option<Dfa>> {
        let DfaExpr::Seq(items) = e else { return Ok(None) };
        let leaves: Option<Vec<&Dfa>> = items
            .iter()
            .filter(|x| !matches!(x, DfaExpr::Empty))
            .map(|x| if let DfaExpr::Leaf(d) = x { Some(*d) } else { None })
            .collect();
        match leaves {
            Some(leaves) if !leaves.is_empty() => Dfa::concat_all(&leaves, limits, what),
            _ => Ok(None),
        }
    }
}
