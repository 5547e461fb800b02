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
        let trie = match SequenceSets::build_literals(seqs, &class_of, limits, what)? {
            Some(trie) => trie,
            None => SequenceSets::build(seqs, &class_of, limits, what)?,
        };
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

    /// [`SequenceSets::build`] for literals (every range one byte: a set of keys), with
    /// no interning: sorted, the literals that share a prefix are a run of them, and each
    /// run is reached by one move from its parent's, so a state is a run found once. The
    /// same states in the same order as `build`'s (each byte present is a class of its
    /// own, and children come by class). None when some range is wider than a byte.
    fn build_literals(seqs: &[Vec<(u8, u8)>], class_of: &[u8; 256], limits: &Limits, what: &str) -> Result<Option<SequenceSets>> {
        if !seqs.iter().flatten().all(|&(lo, hi)| lo == hi) {
            return Ok(None);
        }
        let mut lits: Vec<&[(u8, u8)]> = seqs.iter().map(|s| s.as_slice()).collect();
        lits.sort_unstable();
        lits.dedup();
        // Per state: its depth and run of literals (`sets` keeps only the depth here).
        let mut runs: Vec<(usize, usize, usize)> = vec![(0, 0, lits.len())];
        let (mut moves, mut starts, mut accepting) = (Vec::new(), vec![0u32], Vec::new());
        let mut i = 0;
        while i < runs.len() {
            let (depth, lo, hi) = runs[i];
            // (A literal sorts before those it is a prefix of; deduplicated, one at most.)
            let ends = lits[lo].len() == depth;
            accepting.push(ends);
            let mut k = lo + ends as usize;
            while k < hi {
                let b = lits[k][depth].0;
                let mut e = k + 1;
                while e < hi && lits[e][depth].0 == b {
                    e += 1;
                }
                moves.push((class_of[b as usize], runs.len() as u32));
                runs.push((depth + 1, k, e));
                k = e;
            }
            starts.push(moves.len() as u32);
            if runs.len() > limits.max_dfa_states {
                return Err(too_many_states(limits, what));
            }
            i += 1;
        }
        let sets = runs.iter().map(|&(depth, _, _)| (depth, Vec::new())).collect();
        Ok(Some(SequenceSets { sets, moves, starts, classes: class_of[255] as usize + 1, accepting }))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A set of literals is built by runs of the sorted literals, to the very automaton
    /// the subset construction builds (same states, same numbering); a set with a wider
    /// range takes the subset construction.
    #[test]
    fn literal_sets_build_as_the_subset_construction_does() {
        let lit = |s: &[u8]| s.iter().map(|&b| (b, b)).collect::<Vec<_>>();
        let sets: Vec<Vec<&[u8]>> = vec![
            vec![b"\"name\"", b"\"names\"", b"\"nam\"", b"\"id\"", b"\"name\""],
            vec![b"", b"a", b"ab", b"abc", b"b"],
            vec!["caf\u{e9}".as_bytes(), b"cafe", b"\xff\x00", b"z"],
            vec![b"x"],
            vec![b""],
        ];
        let limits = Limits::default();
        for set in &sets {
            let seqs: Vec<Vec<(u8, u8)>> = set.iter().map(|s| lit(s)).collect();
            let class_of = range_classes(&seqs);
            let fast = SequenceSets::build_literals(&seqs, &class_of, &limits, "t").unwrap().expect("literals");
            let general = SequenceSets::build(&seqs, &class_of, &limits, "t").unwrap();
            assert_eq!(
                (&fast.moves, &fast.starts, &fast.accepting),
                (&general.moves, &general.starts, &general.accepting),
                "{set:?}"
            );
            let depths = |t: &SequenceSets| t.sets.iter().map(|s| s.0).collect::<Vec<_>>();
            assert_eq!(depths(&fast), depths(&general));
            let d = Dfa::from_byte_sequences(&seqs, &limits, "t").unwrap();
            for s in set {
                assert!(d.matches(s), "{s:?}");
            }
            for s in [&b"\"na\""[..], b"abcd", b"caf", b"y", b"\"id"] {
                assert_eq!(d.matches(s), set.contains(&s), "{s:?} in {set:?}");
            }
        }
        let classes = vec![vec![(b'a', b'c')], lit(b"d")];
        assert!(SequenceSets::build_literals(&classes, &range_classes(&classes), &limits, "t").unwrap().is_none());
        // The state bound holds on both paths.
        let small = Limits { max_dfa_states: 3, ..Limits::default() };
        let seqs = vec![lit(b"abcdef")];
        assert!(SequenceSets::build_literals(&seqs, &range_classes(&seqs), &small, "t").is_err());
    }
}
