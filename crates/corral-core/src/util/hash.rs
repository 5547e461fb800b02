//! The crate's hash maps and sets.
//!
//! * [`FastMap`] / [`FastSet`]: small integer keys (set ids, states, terminals), a cheap
//!   multiplicative hasher, with no DoS concern since the keys come from the grammar.
//! * [`HashMap`] / [`HashSet`]: every other key (names, rule keys, byte strings, tuples):
//!   foldhash, seeded per map, several times cheaper than the standard library's SipHash
//!   on the short keys a grammar build hashes by the hundred thousand. `::new()` and
//!   `::with_capacity()` come from [`HashMapExt`] / [`HashSetExt`].

use std::collections::HashSet as StdHashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// A cheap hasher for small integer keys (no DoS concern: keys come from the grammar).
#[derive(Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(29) ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.0 = (self.0.rotate_left(32) ^ i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0 ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub(crate) type FastSet<T> = StdHashSet<T, BuildHasherDefault<IntHasher>>;
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<IntHasher>>;

pub(crate) use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

/// FNV-1a: a stable content hash for cache keys (not for security).
#[derive(Clone, Copy)]
pub(crate) struct Fnv(pub u64);

impl Fnv {
    pub(crate) fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn write(&mut self, data: &[u8]) {
        for &b in data {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }

    pub(crate) fn write_u64(&mut self, v: u64) {
        self.write(&v.to_le_bytes());
    }
}
