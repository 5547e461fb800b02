//! UTF-8 well-formedness as a byte machine: the universe of complements, and the
//! character boundaries of string-safe fragments.

/// UTF-8 well-formedness (RFC 3629, no surrogates, at most U+10FFFF), as a byte machine:
/// the state says which continuation bytes must come next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Utf8 {
    /// Between characters (accepting).
    Boundary,
    /// `n` more continuation bytes 80..=BF.
    Cont(u8),
    /// After E0: A0..=BF, then one more.
    E0,
    /// After ED: 80..=9F (no surrogates), then one more.
    Ed,
    /// After F0: 90..=BF, then two more.
    F0,
    /// After F4: 80..=8F (at most U+10FFFF), then two more.
    F4,
}

impl Utf8 {
    pub(crate) fn next(self, b: u8) -> Option<Utf8> {
        use Utf8::*;
        let cont = |n: u8| if n == 0 { Boundary } else { Cont(n) };
        match self {
            Boundary => match b {
                0x00..=0x7f => Some(Boundary),
                0xc2..=0xdf => Some(Cont(1)),
                0xe0 => Some(E0),
                0xed => Some(Ed),
                0xe1..=0xef => Some(Cont(2)),
                0xf0 => Some(F0),
                0xf1..=0xf3 => Some(Cont(3)),
                0xf4 => Some(F4),
                _ => None,
            },
            Cont(n) => (0x80..=0xbf).contains(&b).then(|| cont(n - 1)),
            E0 => (0xa0..=0xbf).contains(&b).then_some(Cont(1)),
            Ed => (0x80..=0x9f).contains(&b).then_some(Cont(1)),
            F0 => (0x90..=0xbf).contains(&b).then_some(Cont(2)),
            F4 => (0x80..=0x8f).contains(&b).then_some(Cont(2)),
        }
    }

    /// Bytes that no state of the machine distinguishes share a class.
    pub(crate) fn classes() -> [u8; 256] {
        let mut class_of = [0u8; 256];
        for (b, class) in class_of.iter_mut().enumerate() {
            *class = match b as u8 {
                0x00..=0x7f => 0,
                0x80..=0x8f => 1,
                0x90..=0x9f => 2,
                0xa0..=0xbf => 3,
                0xc2..=0xdf => 4,
                0xe0 => 5,
                0xed => 6,
                0xe1..=0xef => 7,
                0xf0 => 8,
                0xf1..=0xf3 => 9,
                0xf4 => 10,
                _ => 11, // C0, C1, F5..=FF: never valid
            };
        }
        class_of
    }
}
