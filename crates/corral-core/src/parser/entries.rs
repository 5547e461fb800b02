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

    fn value_lists_at(&mut self, offset: usize) -> Result<ItemStarts> {
        if !self.grammar.has_checked_entries() {
            return Ok(ItemStarts::NONE);
        }
        Ok(self.chart.expects_value_lists(self.grammar, self.at + offset))
    }

    fn json_region_at(&mut self, offset: usize, b: u8) -> Result<bool> {
        if !self.grammar.has_checked_entries() {
            return Ok(false);
        }
        Ok(self.chart.starts_region_only(self.grammar, self.at + offset, b))
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
        Ok(self.read_to(offset)?.is_some_and(|ov| ov.expects_distinct_entry(kind)))
    }

    fn value_lists_at(&mut self, offset: usize) -> Result<ItemStarts> {
        Ok(self.read_to(offset)?.map_or(ItemStarts::NONE, |ov| ov.expects_value_lists()))
    }

    fn json_region_at(&mut self, offset: usize, b: u8) -> Result<bool> {
        Ok(self.read_to(offset)?.is_some_and(|ov| ov.starts_region_only(b)))
    }
}

impl<'a> AheadEntries<'a> {
    /// The parse read up to byte `offset` of the bytes; None where the grammar has no
    /// checked entry or refuses those bytes (they start nothing: the caller refuses them
    /// too).
    fn read_to(&self, offset: usize) -> Result<Option<Overlay<'a>>> {
        if !self.grammar.has_checked_entries() {
            return Ok(None);
        }
        let mut ov = Overlay::new(self.grammar, self.chart);
        for &b in &self.bytes[..offset.min(self.bytes.len())] {
            if !ov.push(b) {
                return match ov.error.take() {
                    Some(e) => Err(e),
                    None => Ok(None),
                };
            }
        }
        Ok(Some(ov))
    }
}
