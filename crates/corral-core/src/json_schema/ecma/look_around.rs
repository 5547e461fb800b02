//! Patterns with assertions (look-around, word boundaries, anchors inside a branch) as
//! automata, through the automata layer's look-around construction
//! ([`crate::automata::look`]).
//!
//! Each assertion becomes a look-ahead or look-behind over the whole input:
//! * `(?=A)` / `(?!A)`: the rest of the input starts / does not start with a match of A;
//! * `(?<=B)` / `(?<!B)`: the input read so far ends / does not end with a match of B
//!   (any text, then B: ECMAScript look-behinds have no width limit);
//! * `^`: nothing has been read (a look-behind of the empty prefix); `$`: no character
//!   follows (a negative look-ahead of any character). Without the `m` flag, which JSON
//!   Schema patterns cannot set, these are the ends of the string;
//! * `\b`: the character before and the one after differ in being word characters
//!   (`[A-Za-z0-9_]`; none before the start or after the end): "behind is a word
//!   character and ahead is not, or the reverse". `\B` is the negation.
//!
//! The pieces between assertions are the pattern's own HIR compiled to DFAs. A
//! look-behind holding a look-ahead (or `$` or `\b`, which look ahead) would look past
//! the end of its own text; that one construct is refused.

use std::sync::Arc;

use regex_syntax::hir::{Hir, Repetition};

use super::{hir, ranges, Node};
use crate::automata::{Dfa, LookTree};
use crate::error::{Error, Result};
use crate::frontend::regex::compile_hir;
use crate::limits::Limits;

/// Refuses what the construction cannot build: a look-ahead (or `$`, or `\b`) inside a
/// look-behind (`inside_behind`: `node` is in one).
pub(super) fn check(node: &Node, pattern: &str, inside_behind: bool) -> Result<()> {
    let refuse = |what: &str, position: usize| {
        Err(Error::UnsupportedRegex {
            construct: format!("{what} inside a look-behind (it would look past the look-behind's own text)"),
            pattern: pattern.to_string(),
            position,
        })
    };
    match node {
        Node::Look { ahead: true, position, .. } if inside_behind => refuse("a look-ahead", *position),
        Node::Anchor { start: false, position } if inside_behind => refuse("`$`", *position),
        Node::Boundary { position, .. } if inside_behind => refuse("a word boundary", *position),
        Node::Look { ahead, body, .. } => check(body, pattern, inside_behind || !ahead),
        Node::Seq(items) | Node::Alt(items) => items.iter().try_for_each(|x| check(x, pattern, inside_behind)),
        Node::Repeat { item, .. } => check(item, pattern, inside_behind),
        Node::Chars(_) | Node::Anchor { .. } | Node::Boundary { .. } => Ok(()),
    }
}

/// The automata of a pattern's pieces, and the shared ones of the assertions.
struct Pieces<'c, F> {
    chars: &'c F,
    pattern: &'c str,
    limits: &'c Limits,
    /// "Any one character", "any text" and "a word character", built once.
    any_char: Arc<Dfa>,
    any_run: Arc<Dfa>,
    word: Arc<Dfa>,
}

impl<F: Fn(&[(u32, u32)]) -> Hir> Pieces<'_, F> {
    /// A leaf of `hir`'s language (Nothing when it has no string).
    fn leaf(&self, hir: &Hir) -> Result<LookTree> {
        crate::frontend::regex::look_leaf(hir, self.pattern, self.limits)
    }

    /// `node` as a tree: look-free parts as leaves, assertions as look-arounds.
    fn tree(&self, node: &Node) -> Result<LookTree> {
        if !super::has_assertion(node) {
            return self.leaf(&hir::node_hir(node, self.chars));
        }
        let boxed = |t: LookTree| Box::new(t);
        Ok(match node {
            Node::Seq(items) => LookTree::Seq(items.iter().map(|x| self.tree(x)).collect::<Result<_>>()?),
            Node::Alt(items) => LookTree::Alt(items.iter().map(|x| self.tree(x)).collect::<Result<_>>()?),
            Node::Repeat { item, min, max } => LookTree::Repeat(boxed(self.tree(item)?), *min, *max),
            Node::Anchor { start: true, .. } => LookTree::Behind(true, boxed(LookTree::Empty)),
            Node::Anchor { start: false, .. } => LookTree::Ahead(false, boxed(LookTree::Leaf(self.any_char.clone()))),
            Node::Look { ahead: true, positive, body, .. } => LookTree::Ahead(*positive, boxed(self.tree(body)?)),
            Node::Look { ahead: false, positive, body, .. } => {
                LookTree::Behind(*positive, boxed(LookTree::Seq(vec![LookTree::Leaf(self.any_run.clone()), self.tree(body)?])))
            }
            Node::Boundary { negated, .. } => LookTree::word_boundary(*negated, &self.any_run, &self.word),
            // (Sets hold no assertion: they were leaves above.)
            Node::Chars(_) => return Err(Error::Internal("a character set taken for an assertion".into())),
        })
    }
}

/// The DFA of the whole strings of `root` (a tree with assertions, already checked by
/// [`check`]), each character set built by `chars`. [`Error::EmptyLanguage`] when it
/// has none.
pub(super) fn dfa<F: Fn(&[(u32, u32)]) -> Hir>(root: &Node, chars: &F, pattern: &str, limits: &Limits) -> Result<Dfa> {
    let build = |hir: Hir| compile_hir(&hir, pattern, limits).map(Arc::new);
    let any = chars(&ranges::any());
    let pieces = Pieces {
        chars,
        pattern,
        limits,
        any_char: build(any.clone())?,
        any_run: build(Hir::repetition(Repetition { min: 0, max: None, greedy: true, sub: Box::new(any) }))?,
        word: build(chars(ranges::WORD))?,
    };
    pieces.tree(root)?.dfa(limits, &format!("the pattern {pattern:?}"))
}
