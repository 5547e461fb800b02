//! Python patterns with assertions (look-around, `\b`, `\B`, anchors away from the ends)
//! as automata, through the automata layer's look-around construction
//! ([`crate::automata::look`]), with CPython's meaning under the flags where each stands:
//!
//! * `(?=A)` / `(?!A)`: the rest of the text starts / does not start with a match of A;
//!   `(?<=B)` / `(?<!B)`: the text so far ends / does not end with a match of B (CPython
//!   has already required B to have a fixed width);
//! * `\A` and `\Z`: the start and the end of the text; `^` is `\A`, or under `re.M` also
//!   right after a `\n`; `$` is the end or right before a final `\n`, or under `re.M`
//!   right before any `\n`;
//! * `\b`: the characters on either side differ in being word characters (`\w` under
//!   the flags in force: Unicode unless `re.A`); `\B` is the negation. One choice where
//!   CPython versions differ: `\B` holds in the empty text, as from Python 3.14 (earlier
//!   versions fail it there).
//!
//! The text is the whole output (`re.fullmatch`). Pieces between assertions are lowered
//! to HIR as usual and built as DFAs. A look-behind that holds a look-ahead (or `$`,
//! `\Z`, `\b`, `\B`) would look past its own text; that one construct is refused.

use std::sync::Arc;

use regex_syntax::hir::{self, ClassUnicode, Hir, Repetition};

use super::*;
use crate::automata::{Dfa, LookTree};
use crate::error::{Error, Result};
use crate::frontend::regex::compile_hir;
use crate::limits::Limits;

/// Does `seq` hold an assertion anywhere?
pub(super) fn has_assertion(seq: &[Node]) -> bool {
    seq.iter().any(|node| match node {
        Node::At(..) | Node::Assert { .. } => true,
        Node::Repeat { body, .. } | Node::Group { body, .. } | Node::Atomic { body, .. } => has_assertion(body),
        Node::Branch(items) => items.iter().any(|it| has_assertion(it)),
        _ => false,
    })
}

/// Is `node` (or anything in it) something that looks ahead: a look-ahead, `$`, `\Z`,
/// `\b` or `\B`? Its position when it is.
fn looks_ahead(seq: &[Node]) -> Option<usize> {
    seq.iter().find_map(|node| match node {
        Node::At(Anchor::End | Anchor::EndString | Anchor::Boundary | Anchor::NonBoundary, at) => Some(*at),
        Node::Assert { behind: false, at, .. } => Some(*at),
        Node::Assert { body, .. } | Node::Repeat { body, .. } | Node::Group { body, .. } | Node::Atomic { body, .. } => {
            looks_ahead(body)
        }
        Node::Branch(items) => items.iter().find_map(|it| looks_ahead(it)),
        _ => None,
    })
}

/// The shared pieces of the assertions.
struct Shared {
    any_char: Arc<Dfa>,
    any_run: Arc<Dfa>,
    newline: Arc<Dfa>,
}

impl Lowering<'_> {
    /// The DFA of a pattern that holds assertions (see the module docs).
    pub(crate) fn look_dfa(&self, mut pat: Pattern, limits: &Limits) -> Result<Dfa> {
        strip_anchors(&mut pat.seq, true);
        strip_anchors(&mut pat.seq, false);
        let any = Hir::class(hir_class_any());
        let build = |hir: Hir| compile_hir(&hir, self.pattern, limits).map(Arc::new);
        let shared = Shared {
            any_char: build(any.clone())?,
            any_run: build(Hir::repetition(Repetition { min: 0, max: None, greedy: true, sub: Box::new(any) }))?,
            newline: build(Hir::literal(*b"\n"))?,
        };
        let tree = self.look_seq(&pat.seq, pat.flags, &shared, limits)?;
        tree.dfa(limits, &format!("the regex /{}/", self.pattern))
    }

    /// A leaf of `hir`'s language (Nothing when it has none).
    fn look_leaf(&self, hir: Hir, limits: &Limits) -> Result<LookTree> {
        crate::frontend::regex::look_leaf(&hir, self.pattern, limits)
    }

    /// `seq` as a tree: runs of nodes without assertions as one leaf each.
    fn look_seq(&self, seq: &[Node], flags: u32, shared: &Shared, limits: &Limits) -> Result<LookTree> {
        let mut items = Vec::new();
        let mut run: Vec<Hir> = Vec::new();
        for node in seq {
            if has_assertion(std::slice::from_ref(node)) {
                if !run.is_empty() {
                    items.push(self.look_leaf(Hir::concat(std::mem::take(&mut run)), limits)?);
                }
                items.push(self.look_node(node, flags, shared, limits)?);
            } else {
                run.push(self.node(node, flags)?);
            }
        }
        if !run.is_empty() {
            items.push(self.look_leaf(Hir::concat(run), limits)?);
        }
        Ok(LookTree::Seq(items))
    }

    /// One node that holds an assertion.
    fn look_node(&self, node: &Node, flags: u32, shared: &Shared, limits: &Limits) -> Result<LookTree> {
        let boxed = Box::new;
        let end = || LookTree::Ahead(false, boxed(LookTree::Leaf(shared.any_char.clone())));
        let newline = || LookTree::Leaf(shared.newline.clone());
        Ok(match node {
            Node::At(Anchor::BeginningString, _) => LookTree::Behind(true, boxed(LookTree::Empty)),
            Node::At(Anchor::Beginning, _) if flags & F_M == 0 => LookTree::Behind(true, boxed(LookTree::Empty)),
            Node::At(Anchor::Beginning, _) => LookTree::Behind(
                true,
                boxed(LookTree::Alt(vec![LookTree::Empty, LookTree::ends_with(&shared.any_run, &shared.newline)])),
            ),
            Node::At(Anchor::EndString, _) => end(),
            Node::At(Anchor::End, _) if flags & F_M == 0 => {
                LookTree::Ahead(true, boxed(LookTree::Seq(vec![LookTree::Repeat(boxed(newline()), 0, Some(1)), end()])))
            }
            Node::At(Anchor::End, _) => LookTree::Ahead(true, boxed(LookTree::Alt(vec![newline(), end()]))),
            Node::At(kind @ (Anchor::Boundary | Anchor::NonBoundary), _) => {
                let word = self.set(&[SetItem::Category(Category::Word)], flags & !F_I);
                let word = Arc::new(compile_hir(&Hir::class(hir::Class::Unicode(word)), self.pattern, limits)?);
                LookTree::word_boundary(*kind == Anchor::NonBoundary, &shared.any_run, &word)
            }
            Node::Assert { behind: false, positive, body, .. } => {
                LookTree::Ahead(*positive, boxed(self.look_seq(body, flags, shared, limits)?))
            }
            Node::Assert { behind: true, positive, body, .. } => {
                if let Some(at) = looks_ahead(body) {
                    return Err(unsupported(self.pattern, at, "look-ahead, $, \\Z or \\b inside a look-behind"));
                }
                let prefix =
                    LookTree::Seq(vec![LookTree::Leaf(shared.any_run.clone()), self.look_seq(body, flags, shared, limits)?]);
                LookTree::Behind(*positive, boxed(prefix))
            }
            Node::Repeat { min, max, kind, body, at } => {
                if *kind == RepeatKind::Possessive {
                    return Err(unsupported(self.pattern, *at, "possessive quantifier (*+, ++, ?+, {m,n}+)"));
                }
                LookTree::Repeat(boxed(self.look_seq(body, flags, shared, limits)?), *min, *max)
            }
            Node::Group { add, del, body, .. } => {
                // CPython: a type flag (a, u) replaces the other type flags.
                let base = if add & TYPE_FLAGS != 0 { flags & !TYPE_FLAGS } else { flags };
                self.look_seq(body, (base | add) & !del, shared, limits)?
            }
            Node::Branch(items) => {
                LookTree::Alt(items.iter().map(|it| self.look_seq(it, flags, shared, limits)).collect::<Result<_>>()?)
            }
            // The rest (atomic groups, conditionals) is refused by the HIR lowering.
            other => {
                self.node(other, flags)?;
                return Err(Error::Internal("an unsupported construct was not refused".into()));
            }
        })
    }
}

/// Every code point.
fn hir_class_any() -> hir::Class {
    hir::Class::Unicode(ClassUnicode::new([hir::ClassUnicodeRange::new('\0', char::MAX)]))
}
