//! A format pattern rendered over a string's JSON encoding: the text is the key of the
//! format's prebuilt automaton.
//!
//! The pattern is read by [`ecma::parse`] (with ECMAScript's meaning, as the translator
//! reads a format) into a tree over code points; each character set is then written as
//! the ways its characters are encoded in canonical JSON (`json.dumps(...,
//! ensure_ascii=False)`: raw except `"`, `\` and the C0 controls, which have one escape
//! each), classes as `[...]` with `\uXXXX` escapes, every repeated item and every nested
//! alternation in a `(?:...)` group. Only the rendering is kept here: the automaton is
//! built from the rendered text by the regex front-end (or read from the prebuilt table
//! under it).

use crate::error::{Error, Result};
use crate::json_schema::ecma::{self, complement, intersect, normalize, Node};
use crate::limits::Limits;

/// One character in a rendered class.
fn class_char(cp: u32) -> String {
    match char::from_u32(cp) {
        Some(c) if c.is_ascii_alphanumeric() || " _!\"#%&',:;<=>@`~".contains(c) => c.to_string(),
        _ if cp <= 0xFFFF => format!("\\u{cp:04x}"),
        _ => format!("\\U{cp:08x}"),
    }
}

/// A class of `ranges` in Python `re` syntax (a never-matching class if empty).
fn render_class(ranges: &[(u32, u32)]) -> String {
    match ranges {
        [] => String::from("[^\\s\\S]"),
        [(a, b)] if a == b && char::from_u32(*a).is_some_and(|c| c.is_ascii_alphanumeric()) => class_char(*a),
        [(a, b)] if a == b => format!("[{}]", class_char(*a)),
        _ => {
            let parts: String = ranges
                .iter()
                .map(|&(lo, hi)| if lo == hi { class_char(lo) } else { format!("{}-{}", class_char(lo), class_char(hi)) })
                .collect();
            format!("[{parts}]")
        }
    }
}

fn group(s: &str) -> String {
    format!("(?:{s})")
}

/// The two lowercase hex digits of each code below 0x100, grouped by the first digit
/// (`0[0-7bef]|1[0-9a-f]`).
fn render_hex_pairs(codes: &[u32]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digit = |d: u32| char::from(HEX[d as usize]);
    let mut by_high: Vec<(u32, Vec<u32>)> = Vec::new();
    for &cp in codes {
        match by_high.last_mut() {
            Some((high, lows)) if *high == cp >> 4 => lows.push(cp & 0xF),
            _ => by_high.push((cp >> 4, vec![cp & 0xF])),
        }
    }
    let alts: Vec<String> = by_high
        .iter()
        .map(|(high, lows)| {
            let mut class = String::new();
            let mut start = None;
            for (i, &low) in lows.iter().enumerate() {
                let first = *start.get_or_insert(low);
                // Runs break between 9 and a, which are not adjacent characters.
                if i + 1 == lows.len() || lows[i + 1] != low + 1 || low == 9 {
                    class.push(digit(first));
                    if low > first + 1 {
                        class.push('-');
                    }
                    if low > first {
                        class.push(digit(low));
                    }
                    start = None;
                }
            }
            let class = if lows.len() == 1 { class } else { format!("[{class}]") };
            format!("{}{class}", digit(*high))
        })
        .collect();
    alts.join("|")
}

/// One character of `ranges` in its canonical JSON encoding.
fn render_json_class(ranges: &[(u32, u32)]) -> String {
    let must_escape = normalize([(0, 0x1F), (0x22, 0x22), (0x5C, 0x5C)]);
    let plain = intersect(ranges, &complement(&must_escape));
    let mut parts = Vec::new();
    if !plain.is_empty() {
        parts.push(render_class(&plain));
    }
    let (mut short, mut count, mut hexes) = (String::new(), 0, Vec::new());
    for (lo, hi) in intersect(ranges, &must_escape) {
        for cp in lo..=hi {
            count += usize::from(matches!(cp, 0x22 | 0x5C | 0x08 | 0x0C | 0x0A | 0x0D | 0x09));
            match cp {
                0x22 => short.push('"'),
                0x5C => short.push_str("\\\\"),
                0x08 => short.push('b'),
                0x0C => short.push('f'),
                0x0A => short.push('n'),
                0x0D => short.push('r'),
                0x09 => short.push('t'),
                _ => hexes.push(cp),
            }
        }
    }
    if count > 1 {
        parts.push(format!("\\\\[{short}]"));
    } else if count == 1 {
        parts.push(format!("\\\\{short}"));
    }
    if !hexes.is_empty() {
        parts.push(format!("\\\\u00{}", group(&render_hex_pairs(&hexes))));
    }
    match parts.len() {
        0 => String::from("[^\\s\\S]"),
        1 => parts.remove(0),
        _ => group(&parts.join("|")),
    }
}

fn repeat_suffix(lo: u32, hi: Option<u32>) -> String {
    match (lo, hi) {
        (0, None) => String::from("*"),
        (1, None) => String::from("+"),
        (0, Some(1)) => String::from("?"),
        (lo, None) => format!("{{{lo},}}"),
        (lo, Some(hi)) if lo == hi => format!("{{{lo}}}"),
        (lo, Some(hi)) => format!("{{{lo},{hi}}}"),
    }
}

fn render(node: &Node) -> Result<String> {
    Ok(match node {
        Node::Chars(ranges) => render_json_class(ranges),
        Node::Seq(items) => {
            let parts: Result<Vec<String>> =
                items.iter().map(|x| Ok(if matches!(x, Node::Alt(_)) { group(&render(x)?) } else { render(x)? })).collect();
            parts?.concat()
        }
        Node::Alt(items) => items.iter().map(render).collect::<Result<Vec<_>>>()?.join("|"),
        Node::Repeat { item, min, max } => group(&render(item)?) + &repeat_suffix(*min, *max),
        // Format patterns are whole-string languages written without anchors.
        Node::Anchor { position, .. } | Node::Look { position, .. } | Node::Boundary { position, .. } => {
            return Err(Error::Internal(format!("a format pattern has an assertion at character {position}")))
        }
    })
}

/// The pattern over the canonical JSON encoding (without the quotes) of the strings
/// `pattern` matches whole.
pub(super) fn render_json(pattern: &str) -> Result<String> {
    let node = ecma::parse(pattern, &Limits::default())?;
    let text = render(&node)?;
    Ok(if matches!(node, Node::Alt(_)) { group(&text) } else { text })
}
