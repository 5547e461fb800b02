//! Look-aheads at the start of a pattern, `^(?=A)(?!B)R`, read without look-around: the
//! strings matching it are those in which `^R` finds a match, `^A` does and `^B` does not.
//! (JSON Schema patterns have no flags, so `^` is the start of the string only, where each
//! look-ahead and `R` are tried.) The translator builds the three as patterns and
//! intersects their languages; look-around anywhere else stays unsupported.

/// A pattern split at its leading look-aheads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookaheads {
    /// `^R`: the pattern without them.
    pub rest: String,
    /// Per look-ahead: positive (`(?=`) or negative (`(?!`), and its body as a pattern
    /// anchored at the start (`A|B` becomes `^A|^B`).
    pub checks: Vec<(bool, String)>,
}

/// `pattern` split at the look-aheads that come right after its leading `^`; None when it
/// has none there (or an unbalanced group: the parser reports that).
pub fn leading_lookaheads(pattern: &str) -> Option<Lookaheads> {
    let b = pattern.as_bytes();
    let starts = |i: usize| b[i..].starts_with(b"(?=") || b[i..].starts_with(b"(?!");
    if !pattern.starts_with('^') || !starts(1) {
        return None;
    }
    let mut i = 1;
    let mut checks = Vec::new();
    while i < b.len() && starts(i) {
        let end = group_end(b, i)?;
        checks.push((b[i + 2] == b'=', anchored_alternatives(&pattern[i + 3..end])));
        i = end + 1;
    }
    Some(Lookaheads { rest: format!("^{}", &pattern[i..]), checks })
}

/// Walks `b` from `from`: calls `at` with each byte's index and group depth (1 inside the
/// group opened at `from`), skipping escapes and character classes; stops where `at`
/// returns true. The index it stopped at, or None.
fn scan(b: &[u8], from: usize, mut at: impl FnMut(usize, i32) -> bool) -> Option<usize> {
    let (mut i, mut depth, mut class) = (from, 0i32, false);
    while i < b.len() {
        match b[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'[' if !class => class = true,
            b']' if class => class = false,
            b'(' if !class => depth += 1,
            b')' if !class => depth -= 1,
            _ => {}
        }
        if !class && at(i, depth) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The index of the `)` that closes the group opened at `open`.
fn group_end(b: &[u8], open: usize) -> Option<usize> {
    scan(b, open, |i, depth| depth == 0 && b[i] == b')')
}

/// A look-ahead's body as a pattern tried at the start: each top-level alternative
/// anchored (`A|B` → `^A|^B`; a leading `^` already there is not doubled).
fn anchored_alternatives(body: &str) -> String {
    let b = body.as_bytes();
    let mut cuts = Vec::new();
    scan(b, 0, |i, depth| {
        if depth == 0 && b[i] == b'|' {
            cuts.push(i);
        }
        false
    });
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for cut in cuts.into_iter().chain([body.len()]) {
        let alt = &body[start..cut];
        out.push(format!("^{}", alt.strip_prefix('^').unwrap_or(alt)));
        start = cut + 1;
    }
    out.join("|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_lookaheads_are_split_off_and_anchored() {
        let l = leading_lookaheads(r"^(?!relationships$|links$)\w[-\w_]*$").unwrap();
        assert_eq!(l.rest, r"^\w[-\w_]*$");
        assert_eq!(l.checks, vec![(false, "^relationships$|^links$".to_string())]);
        let l = leading_lookaheads(r"^(?=[A-Z(])(?!^lucene\.|x[|)]y)[a-z]").unwrap();
        assert_eq!(l.rest, "^[a-z]");
        assert_eq!(l.checks, vec![(true, "^[A-Z(]".to_string()), (false, r"^lucene\.|^x[|)]y".to_string())]);
        assert_eq!(leading_lookaheads(r"^(?!(?:a|b)\))x").unwrap().checks, vec![(false, r"^(?:a|b)\)".to_string())]);
        for none in ["a(?!b)", "^a(?!b)", "(?!a)b", "^(?<x>a)", "^(?!a"] {
            assert_eq!(leading_lookaheads(none), None, "{none}");
        }
    }
}
