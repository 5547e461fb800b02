//! Python's `re` syntax, read the way CPython 3.11 reads it, and its meaning as a
//! regex-syntax HIR.
//!
//! The reader follows CPython's own parser step by step (its tokens, its error messages
//! and their positions, its quirks: `{` that is not a repetition is a literal, `]` first
//! in a class is a literal, `--` and `&&` are plain characters, global flags only at the
//! start), and keeps the intermediate form CPython compiles from, because a few of
//! CPython's rewrites change what a case-insensitive pattern matches (an alternation of
//! single characters becomes a set; a set tests the lower-cased character). The lowering
//! then gives each node CPython's meaning under the flags in force where it stands
//! (scoped flags apply only inside their group).
//!
//! Constructs a DFA over the whole output cannot express (backreferences, conditionals,
//! atomic groups, possessive repetitions) are named by [`Error::UnsupportedRegex`], but
//! only once the whole pattern is known to be valid: a pattern Python refuses is always
//! a syntax error. Assertions (look-around, word boundaries, anchors away from the ends)
//! have no HIR: a whole pattern that holds them is built by `look`; a grammar's
//! terminal refuses them (its look-ahead would see the text after the terminal).

use std::collections::BTreeMap;

use crate::error::Result;
use crate::util::hash::FastMap;

mod escapes;
mod look;
mod lower;
mod node;
mod parser;
mod source;
#[cfg(test)]
mod tests;
mod unicode;

pub(super) use lower::Lowering;
use node::*;
use parser::*;
use source::*;
use unicode::*;

/// CPython's repetition bound: a count must be below it, and it stands for "unbounded".
const MAXREPEAT: u64 = 4_294_967_295;

/// CPython's group limit.
const MAXGROUPS: u64 = 1_073_741_823;

/// CPython's largest look-behind width (`MAXCODE`).
const MAXCODE: u128 = (1 << 32) - 1;

/// CPython's width of an unbounded subpattern (`MAXWIDTH`).
const MAXWIDTH: u128 = 1 << 64;

const F_TEMPLATE: u32 = 1;

const F_I: u32 = 2;

const F_L: u32 = 4;

const F_M: u32 = 8;

const F_S: u32 = 16;

const F_U: u32 = 32;

const F_X: u32 = 64;

const F_A: u32 = 256;

/// The flags that choose how `\w`, `\d`, `\s` and case folding read characters.
const TYPE_FLAGS: u32 = F_A | F_L | F_U;

/// Flags that can only be set for the whole pattern.
const GLOBAL_FLAGS: u32 = F_TEMPLATE;

fn flag_of(c: char) -> Option<u32> {
    Some(match c {
        'i' => F_I,
        'L' => F_L,
        'm' => F_M,
        's' => F_S,
        'x' => F_X,
        'a' => F_A,
        't' => F_TEMPLATE,
        'u' => F_U,
        _ => return None,
    })
}

/// A parsed pattern: CPython's form, its global flags and its nesting depth.
pub(crate) struct Pattern {
    seq: Seq,
    flags: u32,
    pub(super) depth: u32,
    state: State,
}

impl Pattern {
    /// Drops the anchors at the ends (under `re.fullmatch` they hold) and tells whether
    /// an assertion is left (look-around, a word boundary, an anchor elsewhere).
    pub(crate) fn assertions_inside(&mut self) -> bool {
        strip_anchors(&mut self.seq, true);
        strip_anchors(&mut self.seq, false);
        look::has_assertion(&self.seq)
    }
}

/// Reads `pattern` as CPython does, refusing what it refuses (with its message and
/// position). `nest_limit` bounds the nesting of groups while reading.
pub(super) fn read(pattern: &str, nest_limit: u32) -> Result<Pattern> {
    let src = Source::new(pattern)?;
    let state = State {
        flags: 0,
        names: FastMap::default(),
        widths: vec![None],
        lookbehind_groups: None,
        condition_refs: BTreeMap::new(),
    };
    let mut p = Parser { src, state, open: 0, nest_limit };
    let parsed = p.alternation(false, 0)?;
    // The type flags: Unicode unless ASCII.
    let mut flags = p.state.flags;
    if flags & F_A == 0 {
        flags |= F_U;
    } else if flags & F_U != 0 {
        return Err(syntax(pattern, 0, "ASCII and UNICODE flags are incompatible"));
    }
    if p.src.next.is_some() {
        return Err(p.src.error("unbalanced parenthesis", 0));
    }
    for (&g, &at) in &p.state.condition_refs {
        if g >= p.state.groups() as u64 {
            return Err(syntax(pattern, at, &format!("invalid group reference {g}")));
        }
    }
    let pat = Pattern { seq: parsed.seq, flags, depth: parsed.depth, state: p.state };
    compile_checks(&pat.seq, pat.flags, &pat.state, pattern)?;
    Ok(pat)
}

/// What CPython refuses when it compiles a parsed pattern: repetitions under the
/// template flag, look-behinds of variable width.
fn compile_checks(seq: &[Node], flags: u32, state: &State, pattern: &str) -> Result<()> {
    for node in seq {
        match node {
            Node::Repeat { body, at, .. } => {
                if flags & F_TEMPLATE != 0 {
                    return Err(syntax(pattern, *at, "internal: unsupported template operator (the (?t) flag)"));
                }
                compile_checks(body, flags, state, pattern)?;
            }
            Node::Assert { behind, body, at, .. } => {
                if *behind {
                    let (lo, hi) = width(body, state);
                    if lo > MAXCODE {
                        return Err(syntax(pattern, *at, "looks too much behind"));
                    }
                    if lo != hi {
                        return Err(syntax(pattern, *at, "look-behind requires fixed-width pattern"));
                    }
                }
                compile_checks(body, flags, state, pattern)?;
            }
            Node::Group { body, .. } | Node::Atomic { body, .. } => compile_checks(body, flags, state, pattern)?,
            Node::Branch(items) => {
                for it in items {
                    compile_checks(it, flags, state, pattern)?;
                }
            }
            Node::Conditional { yes, no, .. } => {
                compile_checks(yes, flags, state, pattern)?;
                if let Some(n) = no {
                    compile_checks(n, flags, state, pattern)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn is_start_anchor(node: &Node) -> bool {
    matches!(node, Node::At(Anchor::Beginning | Anchor::BeginningString, _))
}

fn is_end_anchor(node: &Node) -> bool {
    matches!(node, Node::At(Anchor::End | Anchor::EndString, _))
}

/// Under `re.fullmatch`, `^`/`\A` at the very start and `$`/`\Z` at the very end always
/// hold (`$` before a final newline still needs the match to end at the end): drop them.
/// Anchors anywhere else stay, and are refused when lowered.
fn strip_anchors(seq: &mut Seq, leading: bool) {
    let n = seq.len();
    let mut drop = Vec::new();
    for k in 0..n {
        let k = if leading { k } else { n - 1 - k };
        let anchor = if leading { is_start_anchor(&seq[k]) } else { is_end_anchor(&seq[k]) };
        if anchor {
            drop.push(k);
            continue;
        }
        match &mut seq[k] {
            Node::Group { body, .. } => strip_anchors(body, leading),
            Node::Branch(items) => items.iter_mut().for_each(|it| strip_anchors(it, leading)),
            _ => {}
        }
        break;
    }
    drop.sort_unstable();
    for k in drop.into_iter().rev() {
        seq.remove(k);
    }
}
