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

/// Interned NFA state sets (subset construction), with the work bounded.
struct Subsets {
    sets: Vec<Rc<[u32]>>,
    ids: FastMap<Rc<[u32]>, u32>,
    /// NFA states stored plus NFA states stepped so far.
    work: usize,
    overflow: bool,
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
        let class_of = {
            let mut parts: Vec<&[u8; 256]> = Vec::new();
            for d in &nfa.leaves {
                // Repeated leaves are the same DFA: refine by each once.
                if !parts.iter().any(|p| std::ptr::eq(*p, &d.class_of)) {
                    parts.push(&d.class_of);
                }
            }
            refine(&parts)
        };
        let budget = limits.dfa_size_limit / std::mem::size_of::<u32>();
        let seen = RefCell::new((vec![0u32; nfa.eps.len()], 0u32));
        let subsets = RefCell::new(Subsets { sets: Vec::new(), ids: FastMap::default(), work: 0, overflow: false });
        // Interns a state set (made canonical in place: sorted, without duplicates); None
        // past the budget. The set is copied only when it is new.
        let intern = |set: &mut Vec<u32>| -> Option<u32> {
            set.sort_unstable();
            set.dedup();
            let mut sub = subsets.borrow_mut();
            if let Some(&id) = sub.ids.get(set.as_slice()) {
                return Some(id);
            }
            sub.work += set.len();
            if sub.work > budget {
                sub.overflow = true;
                return None;
            }
            let set: Rc<[u32]> = set.as_slice().into();
            let id = sub.sets.len() as u32;
            sub.sets.push(set.clone());
            sub.ids.insert(set, id);
            Some(id)
        };
        // Scratch buffers reused by every step (a step runs per state and byte class).
        let scratch = RefCell::new((Vec::<u32>::new(), Vec::<u32>::new()));
        let closure = |roots: &mut Vec<u32>, out: &mut Vec<u32>| {
            let mut seen = seen.borrow_mut();
            seen.1 += 1;
            let stamp = seen.1;
            nfa.close(roots, &mut seen.0, stamp, out);
        };
        let mut start = Vec::new();
        closure(&mut vec![0], &mut start);
        let start = intern(&mut start).ok_or_else(|| size_error(limits, what))?;
        let result = Dfa::from_automaton(
            start,
            &class_of,
            |id, byte| {
                let set = {
                    let mut sub = subsets.borrow_mut();
                    // Past the budget, stop exploring: the error is reported below and the
                    // partial automaton discarded.
                    if sub.overflow {
                        return None;
                    }
                    sub.work += sub.sets[id as usize].len();
                    sub.sets[id as usize].clone()
                };
                let mut scratch = scratch.borrow_mut();
                let (out, exits) = &mut *scratch;
                out.clear();
                exits.clear();
                for &g in set.iter() {
                    if g == FINAL {
                        continue;
                    }
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
                closure(exits, out);
                // An empty set is the dead state.
                if out.is_empty() {
                    None
                } else {
                    intern(out)
                }
            },
            |id| subsets.borrow().sets[id as usize].last() == Some(&FINAL),
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
