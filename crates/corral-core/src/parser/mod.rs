//! The Earley recognizer: a normalized grammar's parse, read one byte at a time.
//!
//! Between terminal boundaries a byte only advances the open terminals' DFA states; where
//! a terminal's DFA accepts, the terminal both ends (a new Earley set) and stays open, so
//! every split is kept. Leo items make right recursion linear. A [`Chart`] is the parse;
//! an [`Overlay`] reads bytes on top of it without changing it (the token trie walks) and
//! is committed by [`advance_chart`]. `completion` finds the shortest way to a sentence;
//! `entries` tells where an item of a distinct list (a `uniqueItems` array) may start;
//! `budgets` closes matches that have spent their budget in tokens; `follow` says which
//! bytes may come right after each terminal.

mod budgets;
mod chart;
mod completion;
pub mod earley;
mod entries;
mod follow;
mod overlay;
mod state_key;

#[cfg(test)]
mod counted_tests;
#[cfg(test)]
mod perm_tests;
#[cfg(test)]
mod tests;

use crate::frontend::ast::{Distinct, ItemStarts};
pub use budgets::BudgetScan;
use chart::*;
pub use chart::{advance_chart, Chart};
pub use earley::EarleyGrammar;
use earley::*;
pub use entries::{AheadEntries, ReadEntries};
pub use overlay::Overlay;
use overlay::*;
pub use state_key::SetNumbers;
