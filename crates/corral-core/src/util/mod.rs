//! Small building blocks every layer uses: hash maps for integer keys, values per
//! automaton state, byte classes, UTF-8 as a byte machine, and the deadline and stop
//! checks of long work.

pub(crate) mod bytes;
pub(crate) mod hash;
pub mod interrupt;
pub(crate) mod state_map;
pub(crate) mod utf8;
