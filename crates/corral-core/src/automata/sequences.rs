//! Finite languages built directly: a literal as a chain of states, and a small set of
//! byte sequences determinized in one pass per state and minimized bottom-up.

use super::{too_many_states, Dfa, DEAD};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::util::hash::FastMap;

impl Dfa {
    /// The DFA of one byte string: a chain of `bytes.len() + 1` live states, over one class
    /// per distinct byte plus one for all others (already the coarsest classes). Object keys
    /// and enum members are most of a grammar's regexes; this is a fraction of a microsecond
    /// where [`Dfa::from_byte_sequences`] costs ~10.
    pub fn literal(bytes: &[u8], limits: &Limits, what: &str) -> Result<Dfa> {
        if bytes.len() + 2 > limits.max_dfa_states {
            return Err(too_many_states(limits, what));
        }
        let mut present = [false; 256];
        for &b in bytes {
            present[b as usize] = true;
        }
        // Classes numbered by their first byte, as `with_coarsest_classes` numbers them.
        let mut class_of = [0u8; 256];
        let mut other: Option<u8> = None;
        let mut next = 0usize;
        for b in 0..256 {
            class_of[b] = if present[b] {
                next += 1;
                (next - 1) as u8
            } else {
                *other.get_or_insert_with(|| {
                    next += 1;
                    (next - 1) as u8
                })
            };
        }
        let stride = next;
        let total = bytes.len() + 2;
        let mut table = vec![DEAD; total * stride];
        for (i, &b) in bytes.iter().enumerate() {
            table[(i + 1) * stride + class_of[b as usize] as usize] = i as u32 + 2;
        }
        let mut accepting = vec![false; total];
        accepting[total - 1] = true;
        Ok(Dfa { class_of, stride, table, accepting, counted: None })
    }

    /// The DFA of a finite set of byte-range sequences (each a string of byte classes, as
    /// a UTF-8 encoded character class or a literal is), built by subset construction over
    /// positions in the sequences: cheap for the literals and classes that make up most of
    /// a grammar's regexes. `Err(EmptyLanguage)` when `seqs` is empty.
    pub fn from_byte_sequences(seqs: &[Vec<(u8, u8)>], limits: &Limits, what: &str) -> Result<Dfa> {
        if seqs.is_empty() {
            return Err(Error::EmptyLanguage { what: what.to_string() });
        }
        let class_of = range_classes(seqs);
        let trie = SequenceSets::build(seqs, &class_of, limits, what)?;
        let merged = trie.merge_equivalent();
        Ok(trie.into_dfa(class_of, &merged).with_coarsest_classes())
    }
}

/// Bytes split at every range boundary of `seqs`: bytes in one class take the same moves.
fn range_classes(seqs: &[Vec<(u8, u8)>]) -> [u8; 256] {
    let mut cut = [false; 257];
    for seq in seqs {
        for &(lo, hi) in seq {
            cut[lo as usize] = true;
            cut[hi as usize + 1] = true;
        }
    }
    let mut class_of = [0u8; 256];
    let mut c = 0u8;
    for b in 1..256 {
        if cut[b] {
            c += 1;
        }
        class_of[b] = c;
    }
    class_of
}

/// The subset construction over the sequences: a state is a depth and the sequences
/// still matching there (sorted), interned. The language is finite, so every state is
/// live and the states form a DAG by depth. Moves are kept sparse (a literal set's state
/// has one or two of its dozens of classes) until the final table.
struct SequenceSets {
    sets: Vec<(usize, Vec<u32>)>,
    /// State `s`'s moves are `moves[starts[s]..starts[s + 1]]`: (class, target), by class.
    moves: Vec<(u8, u32)>,
    starts: Vec<u32>,
    classes: usize,
    /// Per state: does a sequence end there?
    accepting: Vec<bool>,
}

impl SequenceSets {
    /// Each state's moves are found in one pass over its sequences, bucketed by class.
    fn build(seqs: &[Vec<(u8, u8)>], class_of: &[u8; 256], limits: &Limits, what: &str) -> Result<SequenceSets> {
        let classes = class_of[255] as usize + 1;
        let mut sets: Vec<(usize, Vec<u32>)> = vec![(0, (0..seqs.len() as u32).collect())];
        let mut ids: FastMap<(usize, Vec<u32>), u32> = FastMap::default();
        ids.insert(sets[0].clone(), 0);
        let (mut moves, mut starts) = (Vec::new(), vec![0u32]);
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); classes];
        // The classes with a non-empty bucket, so that a state costs its moves, not the
        // number of classes.
        let mut touched: Vec<u8> = Vec::new();
        let mut i = 0;
        while i < sets.len() {
            let depth = sets[i].0;
            for &k in &sets[i].1 {
                if let Some(&(lo, hi)) = seqs[k as usize].get(depth) {
                    for c in class_of[lo as usize]..=class_of[hi as usize] {
                        if buckets[c as usize].is_empty() {
                            touched.push(c);
                        }
                        buckets[c as usize].push(k);
                    }
                }
            }
            touched.sort_unstable();
            for &c in &touched {
                let key = (depth + 1, std::mem::take(&mut buckets[c as usize]));
                let id = match ids.get(&key) {
                    Some(&id) => id,
                    None => {
                        let id = sets.len() as u32;
                        sets.push(key.clone());
                        ids.insert(key, id);
                        id
                    }
                };
                moves.push((c, id));
            }
            touched.clear();
            starts.push(moves.len() as u32);
            if sets.len() > limits.max_dfa_states {
                return Err(too_many_states(limits, what));
            }
            i += 1;
        }
        let accepting = sets.iter().map(|(d, alive)| alive.iter().any(|&k| seqs[k as usize].len() == *d)).collect();
        Ok(SequenceSets { sets, moves, starts, classes, accepting })
    }

    fn moves(&self, s: usize) -> &[(u8, u32)] {
        &self.moves[self.starts[s] as usize..self.starts[s + 1] as usize]
    }

    /// Minimal DFA of a finite language, bottom-up: deepest states first, two states are
    /// one when they agree on accepting and on their (already merged) successors. Returns
    /// each state's merged id.
    fn merge_equivalent(&self) -> Vec<u32> {
        let n = self.sets.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&s| std::cmp::Reverse(self.sets[s].0));
        let mut merged = vec![0u32; n];
        let mut signatures: FastMap<Vec<u32>, u32> = FastMap::default();
        let mut sig = Vec::new();
        for &s in &order {
            sig.clear();
            sig.push(self.accepting[s] as u32);
            for &(c, t) in self.moves(s) {
                sig.extend([c as u32, merged[t as usize]]);
            }
            let k = signatures.len() as u32;
            merged[s] = *signatures.entry(sig.clone()).or_insert(k);
        }
        merged
    }

    /// The DFA of the merged states, numbered dead 0, start 1, then by first reach
    /// (breadth first, each state's moves by class).
    fn into_dfa(self, class_of: [u8; 256], merged: &[u32]) -> Dfa {
        let count = merged.iter().map(|&m| m as usize + 1).max().unwrap_or(0);
        let mut new_id = vec![DEAD; count];
        let mut rep = vec![0usize]; // a raw state per new id - 1
        new_id[merged[0] as usize] = 1;
        let mut j = 0;
        while j < rep.len() {
            for &(_, t) in self.moves(rep[j]) {
                if new_id[merged[t as usize] as usize] == DEAD {
                    new_id[merged[t as usize] as usize] = rep.len() as u32 + 1;
                    rep.push(t as usize);
                }
            }
            j += 1;
        }
        let (total, n_classes) = (rep.len() + 1, self.classes);
        let mut table = vec![DEAD; total * n_classes];
        let mut accepting = vec![false; total];
        for (k, &s) in rep.iter().enumerate() {
            accepting[k + 1] = self.accepting[s];
            for &(c, t) in self.moves(s) {
                table[(k + 1) * n_classes + c as usize] = new_id[merged[t as usize] as usize];
            }
        }
        Dfa { class_of, stride: n_classes, table, accepting, counted: None }
    }
}
