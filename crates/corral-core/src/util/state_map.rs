//! A value per automaton state for a search that meets few of them: a table while the
//! automaton is small, a map past that. Filling a table of every state for each search
//! from one state would cost more than the search in a large automaton, and a counted
//! region (a string of a million characters with a pattern) numbers states by the
//! million.

use super::hash::FastMap;

/// States up to which a [`StateMap`] is a table.
const TABLE_UP_TO: usize = 1 << 16;

/// A `T` per state of an automaton of `n` states, `default` where none was set.
#[derive(Debug, Clone)]
pub(crate) enum StateMap<T: Copy> {
    /// One entry per state.
    Table(Vec<T>, T),
    /// The states set so far.
    Map(FastMap<u32, T>, T),
}

impl<T: Copy> StateMap<T> {
    /// Every one of `n` states at `default`.
    pub(crate) fn new(n: usize, default: T) -> StateMap<T> {
        if n <= TABLE_UP_TO {
            StateMap::Table(vec![default; n], default)
        } else {
            StateMap::Map(FastMap::default(), default)
        }
    }

    /// The value of state `s`.
    #[inline]
    pub(crate) fn get(&self, s: u32) -> T {
        match self {
            StateMap::Table(t, _) => t[s as usize],
            StateMap::Map(m, d) => m.get(&s).copied().unwrap_or(*d),
        }
    }

    /// Sets the value of state `s`.
    #[inline]
    pub(crate) fn set(&mut self, s: u32, v: T) {
        match self {
            StateMap::Table(t, _) => t[s as usize] = v,
            StateMap::Map(m, _) => {
                m.insert(s, v);
            }
        }
    }

    /// Every state back to the default.
    pub(crate) fn reset(&mut self) {
        match self {
            StateMap::Table(t, d) => t.fill(*d),
            StateMap::Map(m, _) => m.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_and_a_map_hold_the_same_values() {
        for n in [10, TABLE_UP_TO + 1] {
            let mut m = StateMap::new(n, 7u8);
            assert_eq!(m.get(3), 7);
            m.set(3, 1);
            m.set(9, 2);
            assert_eq!((m.get(3), m.get(9), m.get(4)), (1, 2, 7));
            m.reset();
            assert_eq!(m.get(3), 7);
            assert_eq!(matches!(m, StateMap::Map(..)), n > TABLE_UP_TO);
        }
    }
}
