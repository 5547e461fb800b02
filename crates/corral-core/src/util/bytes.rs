//! Byte classes shared by the automata and the vocabulary.

/// Is `b` a string-safe byte: printable ASCII other than `"` and `\`, or a byte of a
/// multi-byte UTF-8 character? (What a JSON string holds unescaped, control characters
/// aside.)
pub(crate) fn is_string_safe_byte(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' || b >= 0x80
}

/// The bytes of a 256-bit set (bit `b & 63` of word `b >> 6`), in order.
pub(crate) fn set_bytes(set: &[u64; 4]) -> impl Iterator<Item = u8> + '_ {
    (0..=255u8).filter(move |&b| set[(b >> 6) as usize] & (1 << (b & 63)) != 0)
}
