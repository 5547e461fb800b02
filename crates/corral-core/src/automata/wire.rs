//! The serialized form of a DFA (the shipped prebuilt tables): little-endian, versioned,
//! and checked when read, so a malformed table is refused rather than trusted.

use super::{Dfa, DEAD};

impl Dfa {
    /// The DFA as bytes that [`Dfa::from_bytes`] reads back (used for the automata that
    /// ship prebuilt, see [`crate::frontend::regex::prebuilt`]). Layout, integers little-endian: `CDFA`,
    /// version 1, entry width (2 or 4 bytes), stride (u16), number of states (u32), the 256
    /// class ids, the accepting states as a bitset, then the table row by row.
    pub fn to_bytes(&self) -> Vec<u8> {
        if self.counted.is_some() {
            return self.stored().to_bytes();
        }
        let n = self.num_states();
        let width: u8 = if n <= 1 << 16 { 2 } else { 4 };
        let mut out = Vec::with_capacity(12 + 256 + n.div_ceil(8) + self.table.len() * width as usize);
        out.extend_from_slice(b"CDFA");
        out.push(1);
        out.push(width);
        out.extend_from_slice(&(self.stride as u16).to_le_bytes());
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.extend_from_slice(&self.class_of);
        let mut bits = vec![0u8; n.div_ceil(8)];
        for (s, _) in self.accepting.iter().enumerate().filter(|(_, &a)| a) {
            bits[s / 8] |= 1 << (s % 8);
        }
        out.extend_from_slice(&bits);
        for &t in &self.table {
            if width == 2 {
                out.extend_from_slice(&(t as u16).to_le_bytes());
            } else {
                out.extend_from_slice(&t.to_le_bytes());
            }
        }
        out
    }

    /// Reads [`Dfa::to_bytes`]'s layout back; None when the bytes are not a well-formed
    /// DFA (wrong header or length, a class or target out of range, a live dead state).
    pub fn from_bytes(bytes: &[u8]) -> Option<Dfa> {
        let (head, rest) = bytes.split_at_checked(12)?;
        if &head[..4] != b"CDFA" || head[4] != 1 || !matches!(head[5], 2 | 4) {
            return None;
        }
        let width = head[5] as usize;
        let stride = u16::from_le_bytes([head[6], head[7]]) as usize;
        let n = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
        if !(1..=256).contains(&stride) || n < 2 {
            return None;
        }
        let (classes, rest) = rest.split_at_checked(256)?;
        let (bits, rest) = rest.split_at_checked(n.div_ceil(8))?;
        if rest.len() != n.checked_mul(stride)?.checked_mul(width)? {
            return None;
        }
        let class_of: [u8; 256] = classes.try_into().ok()?;
        if class_of.iter().any(|&c| c as usize >= stride) {
            return None;
        }
        let accepting: Vec<bool> = (0..n).map(|s| bits[s / 8] & (1 << (s % 8)) != 0).collect();
        let table: Vec<u32> = if width == 2 {
            rest.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]) as u32).collect()
        } else {
            rest.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        };
        let dead_is_dead = !accepting[DEAD as usize] && table[..stride].iter().all(|&t| t == DEAD);
        if !dead_is_dead || table.iter().any(|&t| t as usize >= n) {
            return None;
        }
        Some(Dfa { class_of, stride, table, accepting, counted: None })
    }
}
