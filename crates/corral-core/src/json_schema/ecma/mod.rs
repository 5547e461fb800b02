//! ECMAScript regular expressions (JSON Schema's `pattern` and the keys of
//! `patternProperties`) as a small AST over code points, and their languages as
//! regex-syntax HIR.
//!
//! A pattern is read with Unicode semantics (as with the `u` flag: a class is a set of
//! code points, `\u{...}` escapes, surrogate pairs joined), refusing what a regular
//! language cannot express (backreferences) and property escapes with the position of
//! the construct. Look-aheads right after a leading `^` are split off first
//! ([`leading_lookaheads`]): the translator intersects the languages of the parts. Any
//! other assertion (look-around, `\b`, an anchor inside a branch) is built by
//! `look_around`, through the automata layer's look-around construction.
//!
//! [`search_language`] is what `pattern` means (the strings in which the pattern finds a
//! match, `RegExp.test`); [`full_language`] is the strings the pattern matches whole (how
//! `format` patterns are read). A [`Language`] is built as HIR two ways:
//! * over the value's *JSON encoding* ([`Language::json_hir`]), what the model writes
//!   between the quotes. The encoding is the canonical one that
//!   `json.dumps(..., ensure_ascii=False)` produces: characters appear raw except `"`,
//!   `\` and the C0 controls, which have exactly one escape each. One encoding per string
//!   is what keeps `minLength`/`maxLength` exact: a character is one encoded unit;
//! * over the decoded value ([`Language::value_hir`]), to check a concrete string (an
//!   `enum` member, a property name) with a [`ValueMatcher`].

use regex_syntax::hir::Hir;

use crate::automata::Dfa;
use crate::error::{Error, Result};
use crate::limits::Limits;

mod hir;
mod look_around;
mod lookahead;
mod parser;
mod properties;
mod ranges;
#[cfg(test)]
mod tests;

pub use hir::{json_any_char_hir, json_char_hir, value_char_hir};
pub use lookahead::{leading_lookaheads, Lookaheads};
pub use ranges::{complement, intersect, normalize, Ranges, MAX_CODE_POINT};

/// A pattern read into its parts. Groups are not nodes: a group is its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// One character from a set (normalized: see [`normalize`]; empty: no character).
    Chars(Ranges),
    /// The items one after the other (none: the empty string).
    Seq(Vec<Node>),
    /// Any one of the branches.
    Alt(Vec<Node>),
    /// `item` repeated `min` to `max` times (`max` None: no upper bound).
    Repeat {
        /// What is repeated.
        item: Box<Node>,
        /// The fewest copies.
        min: u32,
        /// The most copies, if bounded.
        max: Option<u32>,
    },
    /// `^` (`start`) or `$`, at character `position` of the pattern.
    Anchor {
        /// `^` rather than `$`.
        start: bool,
        /// Character offset in the pattern.
        position: usize,
    },
    /// A look-around group: `(?=`, `(?!`, `(?<=` or `(?<!`.
    Look {
        /// A look-ahead rather than a look-behind.
        ahead: bool,
        /// `=` rather than `!`.
        positive: bool,
        /// The group's contents.
        body: Box<Node>,
        /// Character offset of the group in the pattern.
        position: usize,
    },
    /// `\b` (or, `negated`, `\B`): a word boundary, ASCII words (`[A-Za-z0-9_]`) as in
    /// Unicode mode without the `i` flag.
    Boundary {
        /// `\B` rather than `\b`.
        negated: bool,
        /// Character offset in the pattern.
        position: usize,
    },
}

impl Node {
    /// The empty string.
    fn empty() -> Node {
        Node::Seq(Vec::new())
    }
}

/// Reads an ECMAScript pattern into its [`Node`]s, anchors still in place.
///
/// [`Error::RegexSyntax`] for an invalid pattern and [`Error::UnsupportedRegex`] for a
/// construct no regular language expresses, both with the character offset of the
/// problem; [`Error::LimitExceeded`] past `limits.max_pattern_bytes` or past
/// `limits.regex_nest_limit` nested groups and repetitions.
pub fn parse(pattern: &str, limits: &Limits) -> Result<Node> {
    if pattern.len() > limits.max_pattern_bytes {
        return Err(Error::LimitExceeded {
            limit: "max_pattern_bytes",
            value: limits.max_pattern_bytes,
            context: format!("a pattern of {} bytes", pattern.len()),
        });
    }
    parser::Reader::new(pattern, limits.regex_nest_limit).parse()
}

/// The language of a pattern: its [`Node`]s, with the anchors at the ends of its
/// branches applied; any other assertion (an anchor inside, look-around, a word
/// boundary) is left in place and makes the language one built by
/// the look-around construction (`ecma::look_around`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Language {
    pattern: String,
    root: Node,
    /// Does `root` hold assertions?
    assertions: bool,
}

/// The strings in which `pattern` finds a match (`RegExp.test`, what JSON Schema's
/// `pattern` means): each top-level branch not anchored at an end may have any characters
/// on that side. Errors as [`parse`] gives them, and [`Error::UnsupportedRegex`] for a
/// look-ahead, `$` or word boundary inside a look-behind.
pub fn search_language(pattern: &str, limits: &Limits) -> Result<Language> {
    let tree = parse(pattern, limits)?;
    if !has_look_around(&tree) {
        if let Some(root) = anchored_search(tree.clone()) {
            return Ok(Language { pattern: pattern.to_string(), root, assertions: false });
        }
    }
    look_around::check(&tree, pattern, false)?;
    // Any text on both sides, the anchors read where they stand.
    let root = Node::Seq(vec![any_run(), tree, any_run()]);
    Ok(Language { pattern: pattern.to_string(), root, assertions: true })
}

/// Any run of characters.
fn any_run() -> Node {
    Node::Repeat { item: Box::new(Node::Chars(ranges::any())), min: 0, max: None }
}

/// The search language of `tree` (no look-around in it) by stripping the anchors at the
/// ends of its top-level branches; None when an anchor stands anywhere else.
fn anchored_search(tree: Node) -> Option<Node> {
    let branches = match tree {
        Node::Alt(items) => items,
        tree => vec![tree],
    };
    // Branches anchored alike share their unanchored ends: `.*(em|ex|ch).*`, not
    // `.*em.*|.*ex.*|.*ch.*`, whose subset construction remembers which branches have
    // matched (2ⁿ states for n branches) although the language is the same.
    let mut groups: Vec<((bool, bool), Vec<Node>)> = Vec::new();
    for branch in branches {
        let (node, start, end) = strip_anchors(branch);
        if has_assertion(&node) {
            return None;
        }
        match groups.iter_mut().find(|(anchors, _)| *anchors == (start, end)) {
            Some((_, nodes)) => nodes.push(node),
            None => groups.push(((start, end), vec![node])),
        }
    }
    let mut out = Vec::with_capacity(groups.len());
    for ((start, end), mut nodes) in groups {
        let mut items = Vec::with_capacity(3);
        if !start {
            items.push(any_run());
        }
        items.push(if nodes.len() == 1 { nodes.remove(0) } else { Node::Alt(nodes) });
        if !end {
            items.push(any_run());
        }
        out.push(Node::Seq(items));
    }
    Some(if out.len() == 1 { out.remove(0) } else { Node::Alt(out) })
}

/// The strings `pattern` matches as a whole (how `format` patterns are read): no
/// assertion may appear at all. Errors as [`search_language`] gives them, and
/// [`Error::UnsupportedRegex`] for an assertion.
pub fn full_language(pattern: &str, limits: &Limits) -> Result<Language> {
    let root = parse(pattern, limits)?;
    check_no_anchor(&root, pattern)?;
    Ok(Language { pattern: pattern.to_string(), root, assertions: false })
}

/// Does `node` hold a look-around group or a word boundary?
fn has_look_around(node: &Node) -> bool {
    match node {
        Node::Look { .. } | Node::Boundary { .. } => true,
        Node::Seq(items) | Node::Alt(items) => items.iter().any(has_look_around),
        Node::Repeat { item, .. } => has_look_around(item),
        Node::Chars(_) | Node::Anchor { .. } => false,
    }
}

/// Does `node` hold any assertion?
fn has_assertion(node: &Node) -> bool {
    match node {
        Node::Anchor { .. } | Node::Look { .. } | Node::Boundary { .. } => true,
        Node::Seq(items) | Node::Alt(items) => items.iter().any(has_assertion),
        Node::Repeat { item, .. } => has_assertion(item),
        Node::Chars(_) => false,
    }
}

/// Is `node` an anchor (`^` when `start`, else `$`)?
fn is_anchor(node: Option<&Node>, start: bool) -> bool {
    matches!(node, Some(Node::Anchor { start: s, .. }) if *s == start)
}

/// Applies the `^`/`$` at the ends of a top-level branch: the branch without them, and
/// whether it is anchored at its start and at its end. A branch that is one group of
/// alternatives all anchored the same way (`^(a|b)$`, `(^a|^b)`) counts as anchored.
fn strip_anchors(branch: Node) -> (Node, bool, bool) {
    let mut items = match branch {
        Node::Seq(items) => items,
        other => vec![other],
    };
    let lead = items.iter().take_while(|n| is_anchor(Some(n), true)).count();
    items.drain(..lead);
    let trail = items.iter().rev().take_while(|n| is_anchor(Some(n), false)).count();
    items.truncate(items.len() - trail);
    let (mut start, mut end) = (lead > 0, trail > 0);
    if let [Node::Alt(alts)] = items.as_slice() {
        let mut branches: Vec<Vec<Node>> = alts
            .iter()
            .map(|b| match b {
                Node::Seq(v) => v.clone(),
                other => vec![other.clone()],
            })
            .collect();
        if !start && branches.iter().all(|b| is_anchor(b.first(), true)) {
            branches.iter_mut().for_each(|b| drop(b.remove(0)));
            start = true;
        }
        if !end && branches.iter().all(|b| is_anchor(b.last(), false)) {
            branches.iter_mut().for_each(|b| drop(b.pop()));
            end = true;
        }
        items = vec![Node::Alt(branches.into_iter().map(Node::Seq).collect())];
    }
    (Node::Seq(items), start, end)
}

/// Refuses the first assertion in `node` (left to right).
fn check_no_anchor(node: &Node, pattern: &str) -> Result<()> {
    let refuse =
        |construct: String, position: usize| Err(Error::UnsupportedRegex { construct, pattern: pattern.to_string(), position });
    match node {
        Node::Anchor { start, position } => {
            refuse(format!("anchor `{}` in a whole-string pattern", if *start { '^' } else { '$' }), *position)
        }
        Node::Look { position, .. } => refuse("look-around in a whole-string pattern".into(), *position),
        Node::Boundary { position, .. } => refuse("a word boundary in a whole-string pattern".into(), *position),
        Node::Seq(items) | Node::Alt(items) => items.iter().try_for_each(|x| check_no_anchor(x, pattern)),
        Node::Repeat { item, .. } => check_no_anchor(item, pattern),
        Node::Chars(_) => Ok(()),
    }
}

impl Language {
    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The language's nodes (assertions among them only when
    /// [`Language::has_assertions`]).
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// Does the language need the look-around construction (`ecma::look_around`) (its HIR would not say it)?
    pub fn has_assertions(&self) -> bool {
        self.assertions
    }

    /// The canonical JSON encodings (without the quotes) of the language's strings; for
    /// a language without assertions.
    pub fn json_hir(&self) -> Hir {
        hir::node_hir(&self.root, &json_char_hir)
    }

    /// The language's strings, decoded (a match of the whole string); for a language
    /// without assertions.
    pub fn value_hir(&self) -> Hir {
        hir::node_hir(&self.root, &value_char_hir)
    }

    /// The automaton of the canonical JSON encodings (as [`Language::json_hir`]), for
    /// any language. [`Error::EmptyLanguage`] when it has no string.
    pub fn json_dfa(&self, limits: &Limits) -> Result<Dfa> {
        if !self.assertions {
            return crate::frontend::regex::compile_hir(&self.json_hir(), &self.pattern, limits);
        }
        look_around::dfa(&self.root, &json_char_hir, &self.pattern, limits)
    }

    /// The automaton of the decoded strings, for any language.
    fn value_dfa(&self, limits: &Limits) -> Result<Dfa> {
        if !self.assertions {
            return crate::frontend::regex::compile_hir(&self.value_hir(), &self.pattern, limits);
        }
        look_around::dfa(&self.root, &value_char_hir, &self.pattern, limits)
    }

    /// A matcher of decoded strings against the language, its DFA built under `limits`.
    pub fn value_matcher(&self, limits: &Limits) -> Result<ValueMatcher> {
        match self.value_dfa(limits) {
            Ok(dfa) => Ok(ValueMatcher { dfa: Some(dfa) }),
            Err(Error::EmptyLanguage { .. }) => Ok(ValueMatcher { dfa: None }),
            Err(e) => Err(e),
        }
    }
}

/// Tells whether a decoded string is in a [`Language`] (see [`Language::value_matcher`]).
#[derive(Debug, Clone)]
pub struct ValueMatcher {
    /// The DFA of the language; None when it has no string at all.
    dfa: Option<Dfa>,
}

impl ValueMatcher {
    /// Is the whole of `s` a string of the language? (For a [`search_language`], whether
    /// the pattern finds a match in `s`.)
    pub fn is_match(&self, s: &str) -> bool {
        self.dfa.as_ref().is_some_and(|d| d.matches(s.as_bytes()))
    }
}
