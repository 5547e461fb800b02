//! Where the entry of a distinct list may start: the parser's answer to the check that
//! keeps the strings of a `uniqueItems` array distinct ([`crate::grammar::distinct_keys`]),
//! for bytes already read into a chart or about to be read on top of one.

use super::*;
use crate::error::Result;
use crate::grammar::distinct_keys::EntryQuery;

/// Bytes already read into `chart`, which stood at byte position `at` before them.
pub struct ReadEntries<'a> {
    /// The grammar's tables.
    pub grammar: &'a EarleyGrammar,
    /// The parse, the bytes included.
    pub chart: &'a Chart,
    /// The position before the bytes.
    pub at: usize,
}

impl EntryQuery for ReadEntries<'_> {
    fn distinct_entry_at(&mut self, offset: usize, kind: Distinct) -> Result<bool> {
        if !self.grammar.has_checked_entries() {
            return Ok(false);
        }
        Ok(self.chart.expects_distinct_entry(self.grammar, self.at + offset, kind))
    }
}

/// Bytes not read yet, on top of `chart`: the parse is read up to the byte asked about.
pub struct AheadEntries<'a> {
    /// The grammar's tables.
    pub grammar: &'a EarleyGrammar,
    /// The parse before the bytes.
    pub chart: &'a Chart,
    /// The bytes.
    pub bytes: &'a [u8],
}

impl EntryQuery for AheadEntries<'_> {
    fn distinct_entry_at(&mut self, offset: usize, kind: Distinct) -> Result<bool> {
        if !self.grammar.has_checked_entries() {
            return Ok(false);
        }
        let mut ov = Overlay::new(self.grammar, self.chart);
        for &b in &self.bytes[..offset.min(self.bytes.len())] {
            if !ov.push(b) {
                // Bytes the grammar refuses start nothing (the caller refuses them too).
                return match ov.error.take() {
                    Some(e) => Err(e),
                    None => Ok(false),
                };
            }
        }
        Ok(ov.expects_distinct_entry(kind))
    }
}
