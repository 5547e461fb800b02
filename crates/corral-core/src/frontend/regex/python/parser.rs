//! CPython's parser, step by step: alternations, sequences with their repetitions,
//! groups (named, scoped flags, look-around, conditionals), with CPython's messages and
//! positions.

use std::collections::BTreeMap;

use super::*;
use crate::error::{Error, Result};
use crate::util::hash::FastMap;

/// The parse state CPython keeps: flags and groups.
pub(super) struct State {
    pub(super) flags: u32,
    pub(super) names: FastMap<String, usize>,
    /// The width of each closed group (index 0: the whole pattern, never closed).
    pub(super) widths: Vec<Option<(u128, u128)>>,
    /// While inside a look-behind: the number of groups when it opened.
    pub(super) lookbehind_groups: Option<usize>,
    /// Conditional groups by number, with the position of their first use.
    pub(super) condition_refs: BTreeMap<u64, usize>,
}

impl State {
    pub(super) fn groups(&self) -> usize {
        self.widths.len()
    }

    pub(super) fn closed(&self, gid: usize) -> bool {
        gid < self.groups() && self.widths[gid].is_some()
    }
}

pub(super) struct Parser<'p> {
    pub(super) src: Source<'p>,
    pub(super) state: State,
    /// Nesting of groups now, bounded by the nest limit (recursion depth).
    pub(super) open: u32,
    pub(super) nest_limit: u32,
}

/// What a parsed sequence is, with its nesting depth as regex-syntax counts it (a
/// concatenation or alternation of two or more items, a group, a repetition and a class
/// each add one level).
pub(super) struct Parsed {
    pub(super) seq: Seq,
    pub(super) depth: u32,
}

/// What [`Parser::group`] read: None for a comment; else the node (None for global
/// flags), its depth, and whether the rest of the sequence is verbose.
pub(super) type GroupParse = Option<(Option<Node>, u32, bool)>;

/// What a group's `(?...)` prefix made of it (CPython's `capture`, `atomic`, `name`,
/// `add_flags` and `del_flags`).
struct GroupKind {
    capture: bool,
    atomic: bool,
    name: Option<String>,
    add: u32,
    del: u32,
}

impl GroupKind {
    /// A plain `(...)`: a numbered group.
    const CAPTURING: GroupKind = GroupKind { capture: true, atomic: false, name: None, add: 0, del: 0 };

    /// `(?:...)`: no number, no flags.
    const NON_CAPTURING: GroupKind = GroupKind { capture: false, ..GroupKind::CAPTURING };
}

/// The items of a sequence being read, with the nesting depth of each as regex-syntax
/// counts it.
struct Items {
    seq: Seq,
    depths: Vec<u32>,
}

impl Items {
    /// Appends `node`, whose depth is `depth`.
    fn push(&mut self, node: Node, depth: u32) {
        self.seq.push(node);
        self.depths.push(depth);
    }

    /// The sequence, its groups without a number or flags dissolved into it, and its depth.
    fn finish(self) -> Parsed {
        let mut out = Seq::with_capacity(self.seq.len());
        for node in self.seq {
            match node {
                Node::Group { group: None, add: 0, del: 0, body } => out.extend(body),
                other => out.push(other),
            }
        }
        let depth = self.depths.iter().copied().max().unwrap_or(0) + u32::from(self.depths.len() >= 2);
        Parsed { seq: out, depth }
    }
}

impl<'p> Parser<'p> {
    pub(super) fn check_lookbehind_group(&self, gid: usize) -> Result<()> {
        if let Some(lb) = self.state.lookbehind_groups {
            if !self.state.closed(gid) {
                return Err(self.src.error("cannot refer to an open group", 0));
            }
            if gid >= lb {
                return Err(self.src.error("cannot refer to group defined in the same lookbehind subpattern", 0));
            }
        }
        Ok(())
    }

    pub(super) fn check_group_name(&self, name: &str, offset: usize) -> Result<()> {
        if !is_identifier(name) {
            return Err(self.src.error(&format!("bad character in group name {name:?}"), name.chars().count() + offset));
        }
        Ok(())
    }

    /// Alternatives separated by `|` (CPython's `_parse_sub`).
    pub(super) fn alternation(&mut self, verbose: bool, nested: u32) -> Result<Parsed> {
        let mut verbose = verbose;
        let mut items: Vec<Seq> = Vec::new();
        let mut depth = 0;
        loop {
            let first = nested == 0 && items.is_empty();
            let p = self.sequence(verbose, nested + 1, first)?;
            depth = depth.max(p.depth);
            items.push(p.seq);
            if !self.src.eat('|')? {
                break;
            }
            if nested == 0 {
                verbose = self.state.flags & F_X != 0;
            }
        }
        if items.len() == 1 {
            return Ok(Parsed { seq: items.pop().unwrap_or_default(), depth });
        }
        let depth = depth + 1;
        let mut out = Seq::new();
        // A prefix common to every alternative moves out of them.
        loop {
            if items.iter().any(|it| it.is_empty()) {
                break;
            }
            if !items.iter().all(|it| same_node(&it[0], &items[0][0])) {
                break;
            }
            let head = items[0][0].clone();
            for it in &mut items {
                it.remove(0);
            }
            out.push(head);
        }
        // Alternatives of single characters or sets become one set.
        let mut set = Vec::new();
        let all_sets = items.iter().all(|it| {
            if it.len() != 1 {
                return false;
            }
            match &it[0] {
                Node::Literal(c) => {
                    set.push(SetItem::Literal(*c));
                    true
                }
                Node::In(av) if av.first() != Some(&SetItem::Negate) => {
                    set.extend(av.iter().cloned());
                    true
                }
                _ => false,
            }
        });
        if all_sets {
            out.push(Node::In(unique(set)));
        } else {
            out.push(Node::Branch(items));
        }
        Ok(Parsed { seq: out, depth })
    }

    /// A sequence of items up to `|`, `)` or the end (CPython's `_parse`).
    pub(super) fn sequence(&mut self, verbose: bool, nested: u32, first: bool) -> Result<Parsed> {
        let mut verbose = verbose;
        let mut items = Items { seq: Seq::new(), depths: Vec::new() };
        while let Some(this) = self.src.next {
            if this == Tok::Char('|') || this == Tok::Char(')') {
                break;
            }
            let start = self.src.tell();
            self.src.advance()?;
            if verbose && self.skip_verbose(this)? {
                continue;
            }
            match this {
                Tok::Esc(e) => items.push(self.escape_node(e, start)?, 0),
                Tok::Char(c) if !is_special(c) => items.push(Node::Literal(c as u32), 0),
                Tok::Char('[') => {
                    let (node, depth) = self.class(start)?;
                    items.push(node, depth);
                }
                Tok::Char(q @ ('*' | '+' | '?' | '{')) => self.repeat(q, start, &mut items)?,
                Tok::Char('.') => items.push(Node::Any, 0),
                Tok::Char('(') => {
                    let at_start = first && items.seq.is_empty();
                    if let Some((node, depth, now_verbose)) = self.group(start, verbose, nested, at_start)? {
                        // Global flags leave no node but still count as an item for the depth.
                        if let Some(node) = node {
                            items.seq.push(node);
                        }
                        items.depths.push(depth);
                        verbose = now_verbose;
                    }
                }
                Tok::Char('^') => items.push(Node::At(Anchor::Beginning, start), 0),
                Tok::Char('$') => items.push(Node::At(Anchor::End, start), 0),
                // Every special character is handled above; anything else is itself.
                Tok::Char(c) => items.push(Node::Literal(c as u32), 0),
            }
        }
        Ok(items.finish())
    }

    /// Verbose mode: skips the whitespace or `#` comment that `this` starts (true), or
    /// leaves `this` to be read as an item (false).
    fn skip_verbose(&mut self, this: Tok) -> Result<bool> {
        match this {
            Tok::Char(c) if is_verbose_space(c) => Ok(true),
            Tok::Char('#') => {
                while !matches!(self.src.get()?, None | Some(Tok::Char('\n'))) {}
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// The node of the escape `\e` at `start` outside a class (CPython's `_escape`).
    fn escape_node(&mut self, e: char, start: usize) -> Result<Node> {
        Ok(match self.escape(e)? {
            Code::Literal(c) => Node::Literal(c),
            Code::Category(c) => Node::In(vec![SetItem::Category(c)]),
            Code::At(a) => Node::At(a, start),
            Code::GroupRef(g) => Node::GroupRef { group: g, named: false, at: start },
            Code::Named => Node::Named(start),
        })
    }

    /// The repetition `*`, `+`, `?` or `{m,n}` (first character `q`, at `start`) of the
    /// last item, with CPython's checks; a `{` that is no repetition is a literal.
    fn repeat(&mut self, q: char, start: usize, items: &mut Items) -> Result<()> {
        let here = self.src.tell();
        let (min, max) = match q {
            '?' => (0, Some(1)),
            '*' => (0, None),
            '+' => (1, None),
            _ => match self.braces(start, here)? {
                Some(counts) => counts,
                None => {
                    items.push(Node::Literal('{' as u32), 0);
                    return Ok(());
                }
            },
        };
        let offset = self.src.tell() - here + 1;
        match items.seq.last() {
            None | Some(Node::At(..)) => return Err(self.src.error("nothing to repeat", offset)),
            Some(Node::Repeat { .. }) => return Err(self.src.error("multiple repeat", offset)),
            _ => {}
        }
        let item = items.seq.pop().unwrap_or(Node::Any);
        // A group without a number or flags is repeated as its body.
        let body = match item {
            Node::Group { group: None, add: 0, del: 0, body } => body,
            other => vec![other],
        };
        let kind = self.repeat_kind()?;
        items.seq.push(Node::Repeat { min, max, kind, body, at: start });
        if let Some(d) = items.depths.last_mut() {
            *d += 1;
        }
        Ok(())
    }

    /// The counts of `{m}`, `{m,}`, `{,n}` or `{m,n}` after its `{` (at `start`; `here`
    /// just after it), or None when the brace is a literal (the source then rewound to
    /// `here`, as CPython does).
    fn braces(&mut self, start: usize, here: usize) -> Result<Option<(u32, Option<u32>)>> {
        if self.src.next_is('}') {
            return Ok(None);
        }
        let lo = self.src.take_while(usize::MAX, |c| c.is_ascii_digit())?;
        let hi = if self.src.eat(',')? { self.src.take_while(usize::MAX, |c| c.is_ascii_digit())? } else { lo.clone() };
        if !self.src.eat('}')? {
            self.src.seek(here)?;
            return Ok(None);
        }
        let count = |digits: &str| -> Result<u64> {
            let v = digits.parse::<u64>().unwrap_or(u64::MAX);
            if v >= MAXREPEAT {
                return Err(syntax(self.src.pattern, start, "the repetition number is too large"));
            }
            Ok(v)
        };
        let min = if lo.is_empty() { 0 } else { count(&lo)? };
        let max = if hi.is_empty() { None } else { Some(count(&hi)?) };
        if max.is_some_and(|m| m < min) {
            return Err(self.src.error("min repeat greater than max repeat", self.src.tell() - here));
        }
        Ok(Some((min as u32, max.map(|m| m as u32))))
    }

    /// How a repetition takes its copies: a `?` after it makes it lazy, a `+` possessive.
    fn repeat_kind(&mut self) -> Result<RepeatKind> {
        Ok(if self.src.eat('?')? {
            RepeatKind::Lazy
        } else if self.src.eat('+')? {
            RepeatKind::Possessive
        } else {
            RepeatKind::Greedy
        })
    }

    pub(super) fn enter(&mut self) -> Result<()> {
        self.open += 1;
        if self.open > self.nest_limit {
            return Err(Error::LimitExceeded {
                limit: "regex_nest_limit",
                value: self.nest_limit as usize,
                context: "the nesting depth of the regex".to_string(),
            });
        }
        Ok(())
    }

    pub(super) fn close_paren(&mut self, start: usize) -> Result<()> {
        if !self.src.eat(')')? {
            return Err(self.src.error("missing ), unterminated subpattern", self.src.tell() - start));
        }
        Ok(())
    }

    /// A group after the `(` at `start`, by the kind its `(?...)` prefix names (see
    /// [`GroupParse`] for what it gives).
    pub(super) fn group(&mut self, start: usize, verbose: bool, nested: u32, at_start: bool) -> Result<GroupParse> {
        if !self.src.eat('?')? {
            return self.group_body(start, verbose, nested, GroupKind::CAPTURING);
        }
        let Some(c) = self.src.get()? else { return Err(self.src.error("unexpected end of pattern", 0)) };
        match c {
            Tok::Char('P') => self.p_group(start, verbose, nested),
            Tok::Char(':') => self.group_body(start, verbose, nested, GroupKind::NON_CAPTURING),
            Tok::Char('#') => {
                self.comment_group(start)?;
                Ok(None)
            }
            Tok::Char(k @ ('=' | '!' | '<')) => self.lookaround(k, start, verbose, nested).map(Some),
            Tok::Char('(') => self.conditional(start, verbose, nested).map(Some),
            Tok::Char('>') => self.group_body(start, verbose, nested, GroupKind { atomic: true, ..GroupKind::NON_CAPTURING }),
            Tok::Char(f) if flag_of(f).is_some() || f == '-' => match self.flags(c)? {
                None => self.global_flags(start, at_start),
                Some((add, del)) => self.group_body(start, verbose, nested, GroupKind { add, del, ..GroupKind::NON_CAPTURING }),
            },
            other => Err(self.src.error(&format!("unknown extension ?{}", other.text()), other.len() + 1)),
        }
    }

    /// A named group `(?P<name>...)` or a named backreference `(?P=name)`, after `(?P`.
    fn p_group(&mut self, start: usize, verbose: bool, nested: u32) -> Result<GroupParse> {
        if self.src.eat('<')? {
            let n = self.src.take_until('>', "group name")?;
            self.check_group_name(&n, 1)?;
            return self.group_body(start, verbose, nested, GroupKind { name: Some(n), ..GroupKind::CAPTURING });
        }
        if self.src.eat('=')? {
            return Ok(Some((Some(self.named_backref(start)?), 0, verbose)));
        }
        let Some(c) = self.src.get()? else { return Err(self.src.error("unexpected end of pattern", 0)) };
        Err(self.src.error(&format!("unknown extension ?P{}", c.text()), c.len() + 2))
    }

    /// The backreference `(?P=name)` at `start`, after its `(?P=`: the group must be
    /// known and closed.
    fn named_backref(&mut self, start: usize) -> Result<Node> {
        let n = self.src.take_until(')', "group name")?;
        self.check_group_name(&n, 1)?;
        let len = n.chars().count() + 1;
        let Some(&gid) = self.state.names.get(&n) else {
            return Err(self.src.error(&format!("unknown group name {n:?}"), len));
        };
        if !self.state.closed(gid) {
            return Err(self.src.error("cannot refer to an open group", len));
        }
        self.check_lookbehind_group(gid)?;
        Ok(Node::GroupRef { group: gid, named: true, at: start })
    }

    /// Skips a comment group `(?#...)` (opened at `start`) after its `(?#`.
    fn comment_group(&mut self, start: usize) -> Result<()> {
        loop {
            if self.src.next.is_none() {
                return Err(self.src.error("missing ), unterminated comment", self.src.tell() - start));
            }
            if self.src.get()? == Some(Tok::Char(')')) {
                return Ok(());
            }
        }
    }

    /// A look-ahead `(?=...)`/`(?!...)` or look-behind `(?<=...)`/`(?<!...)`, after `(?`
    /// and its `k`.
    fn lookaround(&mut self, k: char, start: usize, verbose: bool, nested: u32) -> Result<(Option<Node>, u32, bool)> {
        let (mut behind, mut positive) = (false, k == '=');
        if k == '<' {
            let Some(c) = self.src.get()? else { return Err(self.src.error("unexpected end of pattern", 0)) };
            if !matches!(c, Tok::Char('=' | '!')) {
                return Err(self.src.error(&format!("unknown extension ?<{}", c.text()), c.len() + 2));
            }
            behind = true;
            positive = c == Tok::Char('=');
        }
        // Only the outermost look-behind marks where its groups begin.
        let outer = self.state.lookbehind_groups;
        if behind && outer.is_none() {
            self.state.lookbehind_groups = Some(self.state.groups());
        }
        self.enter()?;
        let p = self.alternation(verbose, nested + 1)?;
        self.open -= 1;
        if behind && outer.is_none() {
            self.state.lookbehind_groups = None;
        }
        self.close_paren(start)?;
        Ok((Some(Node::Assert { behind, positive, body: p.seq, at: start }), p.depth + 1, verbose))
    }

    /// Global flags `(?aiLmsux)` (at `start`, already added to the state): allowed only at
    /// the start of the pattern; they may turn verbose mode on for the rest of it.
    fn global_flags(&self, start: usize, at_start: bool) -> Result<GroupParse> {
        if !at_start {
            return Err(self.src.error("global flags not at the start of the expression", self.src.tell() - start));
        }
        Ok(Some((None, 0, self.state.flags & F_X != 0)))
    }

    /// The body of a group opened at `start` and its `)`: a numbered (and maybe named)
    /// group, a non-capturing group with scoped flags, or an atomic group.
    fn group_body(&mut self, start: usize, verbose: bool, nested: u32, kind: GroupKind) -> Result<GroupParse> {
        let group = if kind.capture { Some(self.open_group(kind.name)?) } else { None };
        let sub_verbose = (verbose || kind.add & F_X != 0) && kind.del & F_X == 0;
        self.enter()?;
        let p = self.alternation(sub_verbose, nested + 1)?;
        self.open -= 1;
        self.close_paren(start)?;
        if let Some(gid) = group {
            self.state.widths[gid] = Some(width(&p.seq, &self.state));
        }
        let node = if kind.atomic {
            Node::Atomic { body: p.seq, at: start }
        } else {
            Node::Group { group, add: kind.add, del: kind.del, body: p.seq }
        };
        Ok(Some((Some(node), p.depth + 1, verbose)))
    }

    /// Numbers a new group, under its `name` if it has one (CPython's `opengroup`).
    fn open_group(&mut self, name: Option<String>) -> Result<usize> {
        let gid = self.state.groups();
        self.state.widths.push(None);
        if gid as u64 >= MAXGROUPS {
            return Err(self.src.error("too many groups", 0));
        }
        if let Some(n) = name {
            if let Some(&old) = self.state.names.get(&n) {
                let msg = format!("redefinition of group name {n:?} as group {gid}; was group {old}");
                return Err(self.src.error(&msg, n.chars().count() + 1));
            }
            self.state.names.insert(n, gid);
        }
        Ok(gid)
    }

    /// A conditional group `(?(id)yes|no)` after its `(?(`.
    pub(super) fn conditional(&mut self, start: usize, verbose: bool, nested: u32) -> Result<(Option<Node>, u32, bool)> {
        let name = self.src.take_until(')', "group name")?;
        let len = name.chars().count() + 1;
        let group: u64 = if is_identifier(&name) {
            match self.state.names.get(&name) {
                Some(&g) => g as u64,
                None => return Err(self.src.error(&format!("unknown group name {name:?}"), len)),
            }
        } else {
            let bad = |s: &Self| s.src.error(&format!("bad character in group name {name:?}"), len);
            match python_int(&name) {
                Some(n) if n >= 0 => n as u64,
                Some(_) => return Err(bad(self)),
                // Python's int() reads more than ASCII digits; what it reads is not checked here.
                None if !name.is_ascii() => u64::MAX,
                None => return Err(bad(self)),
            }
        };
        if group == u64::MAX {
            // An id only Python's int() can read: a valid conditional or not, it is refused.
            let p = self.conditional_branches(start, verbose, nested)?;
            return Ok((Some(Node::Conditional { yes: p.0, no: p.1, at: start }), p.2, verbose));
        }
        if !is_identifier(&name) {
            if group == 0 {
                return Err(self.src.error("bad group number", len));
            }
            if group >= MAXGROUPS {
                return Err(self.src.error(&format!("invalid group reference {group}"), len));
            }
            let at = self.src.tell() - len;
            self.state.condition_refs.entry(group).or_insert(at);
        }
        self.check_lookbehind_group(group as usize)?;
        let p = self.conditional_branches(start, verbose, nested)?;
        Ok((Some(Node::Conditional { yes: p.0, no: p.1, at: start }), p.2, verbose))
    }

    pub(super) fn conditional_branches(&mut self, start: usize, verbose: bool, nested: u32) -> Result<(Seq, Option<Seq>, u32)> {
        self.enter()?;
        let yes = self.sequence(verbose, nested + 1, false)?;
        let mut depth = yes.depth;
        let no = if self.src.eat('|')? {
            let no = self.sequence(verbose, nested + 1, false)?;
            if self.src.next_is('|') {
                return Err(self.src.error("conditional backref with more than two branches", 0));
            }
            depth = depth.max(no.depth);
            Some(no.seq)
        } else {
            None
        };
        self.open -= 1;
        self.close_paren(start)?;
        Ok((yes.seq, no, depth + 2))
    }
}
