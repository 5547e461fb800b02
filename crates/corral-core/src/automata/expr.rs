//! Regular expressions over DFAs: concatenation, union and repetition of automata that
//! no regex source describes (products, complements), by Thompson's construction over
//! DFA leaves and then the subset construction.

use std::cell::RefCell;
use std::rc::Rc;

use super::classes::refine;
use super::minimize::{MINIMIZE_FROM, MINIMIZE_UP_TO};
use super::{size_error, Dfa, DEAD};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::util::hash::FastMap;

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
}

/// An ε-NFA whose pieces are DFAs (for [`Dfa::from_expr`]). Junctions are ε-nodes; leaf
/// instance `i` is a copy of a DFA entered at its start state that, wherever its DFA
/// accepts, may leave to junction `exit[i]`. Junction 1 is the final node. The NFA states
/// that subset construction tracks are the leaves' DFA states, numbered globally: state `s`
/// of instance `i` is `offset[i] + s`.
struct LeafNfa<'a> {
    leaves: Vec<&'a Dfa>,
    exit: Vec<u32>,
    offset: Vec<u32>,
    /// The instance of each global state.
    owner: Vec<u32>,
    /// `eps[j]`: where junction `j` leads without reading (Ok = junction, Err = leaf start).
    eps: Vec<Vec<std::result::Result<u32, u32>>>,
    /// NFA states so far (junctions plus leaf DFA states), bounded by `max_dfa_states`.
    size: usize,
    limit: usize,
}

/// The final node, in NFA state sets (sorts last).
const FINAL: u32 = u32::MAX;

impl<'a> LeafNfa<'a> {
    fn grow(&mut self, n: usize, what: &str) -> Result<()> {
        self.size += n;
        if self.size > self.limit {
            return Err(Error::LimitExceeded {
                limit: "max_dfa_states",
                value: self.limit,
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
            DfaExpr::Empty => self.eps[from as usize].push(Ok(to)),
            DfaExpr::Leaf(d) => {
                self.grow(d.num_states(), what)?;
                let i = self.leaves.len() as u32;
                self.leaves.push(d);
                self.exit.push(to);
                self.offset.push(self.owner.len() as u32);
                self.owner.extend(std::iter::repeat_n(i, d.num_states()));
                self.eps[from as usize].push(Err(i));
            }
            DfaExpr::Seq(items) => {
                let mut cur = from;
                for (k, item) in items.iter().enumerate() {
                    let next = if k + 1 == items.len() { to } else { self.junction(what)? };
                    self.build(item, cur, next, what)?;
                    cur = next;
                }
                if items.is_empty() {
                    self.eps[from as usize].push(Ok(to));
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
                        self.eps[cur as usize].push(Ok(l));
                        self.build(expr, l, l, what)?;
                        cur = l;
                    }
                    Some(max) => {
                        for _ in *min..*max {
                            self.eps[cur as usize].push(Ok(to));
                            let next = self.junction(what)?;
                            self.build(expr, cur, next, what)?;
                            cur = next;
                        }
                    }
                }
                self.eps[cur as usize].push(Ok(to));
            }
        }
        Ok(())
    }

    /// The coarsest byte classes that refine every leaf's.
    fn classes(&self) -> [u8; 256] {
        let mut parts: Vec<&[u8; 256]> = Vec::new();
        for d in &self.leaves {
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
                    Ok(k) => stack.push(k),
                    Err(i) => {
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
    /// The DFA of a regular expression over DFAs (concatenation, union, repetition), by
    /// Thompson's construction on the leaves and the subset construction.
    ///
    /// Bounded by `limits.max_dfa_states` (states of the NFA and of the result) and
    /// `limits.dfa_size_limit`: the NFA state sets stored, plus the NFA states stepped
    /// (which bounds the time), stay under `dfa_size_limit / 4` (sets are `u32` lists).
    /// Past either: `Error::LimitExceeded`.
    pub fn from_expr(e: &DfaExpr<'_>, limits: &Limits, what: &str) -> Result<Dfa> {
        if let Some(dfa) = Dfa::seq_deterministic(e, limits, what)? {
            return Ok(dfa);
        }
        let mut nfa = LeafNfa {
            leaves: Vec::new(),
            exit: Vec::new(),
            offset: Vec::new(),
            owner: Vec::new(),
            eps: vec![Vec::new(), Vec::new()],
            size: 2,
            limit: limits.max_dfa_states,
        };
        nfa.build(e, 0, 1, what)?;
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
