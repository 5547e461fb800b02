//! CPython's intermediate form of a pattern (what `sre_parse` builds and `sre_compile`
//! reads): nodes, sets, categories, anchors, and the width of a node.

use super::*;

/// `\d \s \w` and their negations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Category {
    Digit,
    NotDigit,
    Space,
    NotSpace,
    Word,
    NotWord,
}

/// Zero-width assertions CPython calls `AT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Anchor {
    /// `^`
    Beginning,
    /// `\A`
    BeginningString,
    /// `$`
    End,
    /// `\Z`
    EndString,
    /// `\b`
    Boundary,
    /// `\B`
    NonBoundary,
}

/// One member of a character set, as CPython keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SetItem {
    Negate,
    Literal(u32),
    Range(u32, u32),
    Category(Category),
    /// A `\N{...}` escape: a character corral cannot name (no Unicode name table).
    Named(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RepeatKind {
    Greedy,
    Lazy,
    Possessive,
}

/// CPython's intermediate form of a pattern (positions are character offsets).
#[derive(Debug, Clone)]
pub(super) enum Node {
    Literal(u32),
    NotLiteral(u32),
    In(Vec<SetItem>),
    Any,
    At(Anchor, usize),
    /// `max` None: unbounded.
    Repeat {
        min: u32,
        max: Option<u32>,
        kind: RepeatKind,
        body: Seq,
        at: usize,
    },
    Group {
        group: Option<usize>,
        add: u32,
        del: u32,
        body: Seq,
    },
    Branch(Vec<Seq>),
    Assert {
        behind: bool,
        /// `=` rather than `!`.
        positive: bool,
        body: Seq,
        at: usize,
    },
    Atomic {
        body: Seq,
        at: usize,
    },
    GroupRef {
        group: usize,
        named: bool,
        at: usize,
    },
    Conditional {
        yes: Seq,
        no: Option<Seq>,
        at: usize,
    },
    /// `\N{...}` outside a class.
    Named(usize),
}

pub(super) type Seq = Vec<Node>;

/// CPython's `(op, av)` equality, used to find the common prefix of alternatives: nodes
/// holding a subpattern compare by identity there, so they never match.
pub(super) fn same_node(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Literal(x), Node::Literal(y)) | (Node::NotLiteral(x), Node::NotLiteral(y)) => x == y,
        (Node::In(x), Node::In(y)) => x == y,
        (Node::Any, Node::Any) => true,
        (Node::At(x, _), Node::At(y, _)) => x == y,
        (Node::GroupRef { group: x, .. }, Node::GroupRef { group: y, .. }) => x == y,
        _ => false,
    }
}

/// Keeps the first of equal items, in order.
pub(super) fn unique(items: Vec<SetItem>) -> Vec<SetItem> {
    let mut out: Vec<SetItem> = Vec::with_capacity(items.len());
    for it in items {
        if !out.contains(&it) {
            out.push(it);
        }
    }
    out
}

/// What an escape stands for.
pub(super) enum Code {
    Literal(u32),
    Category(Category),
    At(Anchor),
    GroupRef(usize),
    /// `\N{...}`.
    Named,
}

pub(super) fn category_of(c: char) -> Option<Category> {
    Some(match c {
        'd' => Category::Digit,
        'D' => Category::NotDigit,
        's' => Category::Space,
        'S' => Category::NotSpace,
        'w' => Category::Word,
        'W' => Category::NotWord,
        _ => return None,
    })
}

pub(super) fn set_item(code: Code, at: usize) -> SetItem {
    match code {
        Code::Literal(c) => SetItem::Literal(c),
        Code::Category(c) => SetItem::Category(c),
        Code::Named => SetItem::Named(at),
        // Class escapes are never anchors or references.
        Code::At(_) | Code::GroupRef(_) => SetItem::Named(at),
    }
}

/// CPython's `getwidth`: the least and greatest length of what `seq` matches.
pub(super) fn width(seq: &[Node], state: &State) -> (u128, u128) {
    let (mut lo, mut hi) = (0u128, 0u128);
    for node in seq {
        let (i, j) = match node {
            Node::Branch(items) => {
                let mut i = MAXWIDTH;
                let mut j = 0;
                for it in items {
                    let (l, h) = width(it, state);
                    i = i.min(l);
                    j = j.max(h);
                }
                (i, j)
            }
            Node::Atomic { body, .. } | Node::Group { body, .. } => width(body, state),
            Node::Repeat { min, max, body, .. } => {
                let (i, j) = width(body, state);
                let hi_add = match max {
                    None if j > 0 => MAXWIDTH,
                    None => 0,
                    Some(m) => j * *m as u128,
                };
                lo = lo.saturating_add(i * *min as u128);
                hi = hi.saturating_add(hi_add);
                continue;
            }
            Node::Literal(_) | Node::NotLiteral(_) | Node::In(_) | Node::Any | Node::Named(_) => (1, 1),
            Node::GroupRef { group, .. } => state.widths.get(*group).copied().flatten().unwrap_or((0, 0)),
            Node::Conditional { yes, no, .. } => {
                let (mut i, mut j) = width(yes, state);
                match no {
                    Some(n) => {
                        let (l, h) = width(n, state);
                        i = i.min(l);
                        j = j.max(h);
                    }
                    None => i = 0,
                }
                (i, j)
            }
            Node::At(..) | Node::Assert { .. } => (0, 0),
        };
        lo = lo.saturating_add(i);
        hi = hi.saturating_add(j);
    }
    (lo.min(MAXWIDTH), hi.min(MAXWIDTH))
}
