//! Byte classes shared by the automata and the vocabulary.

/// Is `b` a byte of plain text: printable ASCII other than `"` and `\`, or a byte of a
/// multi-byte UTF-8 character? (What a JSON string holds unescaped, control characters
/// aside.)
pub(crate) fn is_plain_byte(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' || b >= 0x80
}
