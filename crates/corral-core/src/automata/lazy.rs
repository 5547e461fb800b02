//! An automaton built the first time it is read.
//!
//! Lowering joins runs of adjacent terminals into one (an object's keys, separators and
//! values). Most of a large grammar's joined terminals are never reached by one output,
//! so a join is planned at lowering ([`ConcatPlan`]: its junctions checked, its size
//! within the limits, its facts known) and built when a parser state first needs its
//! table. Planning reads only [`JoinFacts`], so a join of joins is planned without
//! building either.
//!
//! A [`LazyDfa`] derefs to its [`Dfa`], building it on first use, from many threads at
//! once (one of them builds, the others wait). The methods that only need its facts
//! ([`LazyDfa::accepts_empty`], [`LazyDfa::first_bytes`], [`LazyDfa::start`]) never build
//! it. A built join lets its parts go, so that a part kept only by the joins that read
//! it is freed once they are built.

use std::sync::{Arc, Mutex, OnceLock};

use super::concat::{ConcatPlan, JoinFacts};
use super::Dfa;

/// A DFA built now or on first use (see the module docs).
pub struct LazyDfa {
    built: OnceLock<Arc<Dfa>>,
    /// (Boxed, as the recipe: a grammar holds one per terminal, most never joined.)
    facts: OnceLock<Box<JoinFacts>>,
    /// What builds it, until it is built.
    recipe: Mutex<Option<Box<Recipe>>>,
}

/// A planned concatenation and its parts.
struct Recipe {
    plan: ConcatPlan,
    parts: Vec<Arc<LazyDfa>>,
}

impl LazyDfa {
    /// An automaton already built.
    pub fn ready(dfa: Arc<Dfa>) -> LazyDfa {
        LazyDfa { built: OnceLock::from(dfa), facts: OnceLock::new(), recipe: Mutex::new(None) }
    }

    /// The concatenation of `parts` by `plan` (made from their facts), built on first use.
    pub fn concat(plan: ConcatPlan, parts: Vec<Arc<LazyDfa>>) -> LazyDfa {
        let facts = OnceLock::from(Box::new(plan.facts()));
        LazyDfa { built: OnceLock::new(), facts, recipe: Mutex::new(Some(Box::new(Recipe { plan, parts }))) }
    }

    /// The automaton, built now if it was not yet.
    pub fn get(&self) -> &Dfa {
        self.built.get_or_init(|| {
            let mut recipe = self.recipe.lock().unwrap_or_else(|e| e.into_inner());
            let Some(r) = recipe.as_ref() else {
                // Only `concat` leaves `built` empty, and only a build clears the recipe.
                unreachable!("a lazy DFA without its recipe")
            };
            let parts: Vec<&Dfa> = r.parts.iter().map(|p| p.get()).collect();
            let dfa = Arc::new(r.plan.build(&parts));
            *recipe = None;
            dfa
        })
    }

    /// The automaton, shared, built now if it was not yet.
    pub fn arc(&self) -> Arc<Dfa> {
        self.get();
        self.built.get().cloned().unwrap_or_else(|| unreachable!("built above"))
    }

    /// Has it been built?
    pub fn is_built(&self) -> bool {
        self.built.get().is_some()
    }

    /// What planning a join with it needs (read from its table once, if built).
    pub fn facts(&self) -> JoinFacts {
        **self.facts.get_or_init(|| Box::new(self.get().join_facts()))
    }

    /// Does it match ""? (Never builds it.)
    pub fn accepts_empty(&self) -> bool {
        match self.built.get() {
            Some(d) => d.accepts_empty(),
            None => self.facts().accepts_empty,
        }
    }

    /// The bytes its start state moves on, bit `b & 63` of word `b >> 6`. (Never builds it.)
    pub fn first_bytes(&self) -> [u64; 4] {
        match self.built.get() {
            Some(d) => d.first_bytes(),
            None => self.facts().first,
        }
    }

    /// The start state (always 1; never builds it).
    pub fn start(&self) -> u32 {
        1
    }
}

impl std::ops::Deref for LazyDfa {
    type Target = Dfa;

    fn deref(&self) -> &Dfa {
        self.get()
    }
}

impl From<Dfa> for LazyDfa {
    fn from(dfa: Dfa) -> LazyDfa {
        LazyDfa::ready(Arc::new(dfa))
    }
}

impl PartialEq for LazyDfa {
    /// Equal automata (both built to compare).
    fn eq(&self, other: &LazyDfa) -> bool {
        self.get() == other.get()
    }
}

impl Eq for LazyDfa {}

impl std::hash::Hash for LazyDfa {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.get().hash(state)
    }
}

impl std::fmt::Debug for LazyDfa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.built.get() {
            Some(d) => d.fmt(f),
            None => write!(f, "LazyDfa(not built: {:?})", self.facts.get()),
        }
    }
}
