//! The grammar AST that every grammar syntax (corral EBNF, GBNF, Lark) parses into, and
//! that front-ends building a grammar directly (the JSON Schema translator) construct.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use regex_syntax::hir::Hir;

use crate::automata::Dfa;

/// A 1-based line and column in the grammar text (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1, in characters.
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A regular piece of a grammar: compiled to one byte DFA.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Term {
    /// A literal string (matched as its UTF-8 bytes).
    Literal(String),
    /// A regex in Python `re` syntax (character classes and `.` are parsed into this too).
    Regex(String),
    /// A regular language built directly as a regex-syntax HIR (over Unicode scalar values
    /// or bytes), never written as text: what a front-end computes rather than parses.
    Hir(HirTerm),
    /// A regular language already built as a DFA (by a front-end that had to build it to
    /// decide something, such as whether an intersection is empty), under a canonical
    /// name its builder gives (equal names, equal languages).
    Dfa(DfaTerm),
}

impl Term {
    /// The term as Python `re` source; None for a [`Term::Hir`] or [`Term::Dfa`], which have
    /// none.
    pub fn regex_source(&self) -> Option<String> {
        match self {
            Term::Literal(s) => Some(regex_syntax::escape(s)),
            Term::Regex(r) => Some(format!("(?:{r})")),
            Term::Hir(_) | Term::Dfa(_) => None,
        }
    }
}

/// A regular language as a regex-syntax [`Hir`], shared, with a canonical name: equal
/// names, equal languages (the name is the HIR's printed form, so that terms are compared
/// and hashed without walking their trees). The name is printed when first asked for:
/// most terms a front-end builds are merged with their neighbours, and only the merged
/// piece is named.
#[derive(Clone)]
pub struct HirTerm {
    hir: Arc<Hir>,
    key: Arc<OnceLock<Box<str>>>,
}

impl HirTerm {
    /// The term of `hir`.
    pub fn new(hir: Hir) -> HirTerm {
        HirTerm { hir: Arc::new(hir), key: Arc::default() }
    }

    /// The language.
    pub fn hir(&self) -> &Hir {
        &self.hir
    }

    /// The language, shared (no copy of the tree).
    pub fn shared_hir(&self) -> Arc<Hir> {
        self.hir.clone()
    }

    /// The canonical name (regex-syntax's printing of the HIR).
    pub fn key(&self) -> &str {
        self.key.get_or_init(|| self.hir.to_string().into())
    }

    /// The canonical name if it was already printed.
    pub fn key_if_printed(&self) -> Option<&str> {
        self.key.get().map(|k| &**k)
    }

    /// Where the tree is shared: terms with equal addresses are one language (equal
    /// languages may have different addresses). Compares terms without printing them.
    pub fn address(&self) -> usize {
        Arc::as_ptr(&self.hir) as usize
    }
}

/// A regular language as a built [`Dfa`], shared, with the canonical name its builder
/// gives it (two terms with equal names must have equal languages).
#[derive(Clone)]
pub struct DfaTerm {
    dfa: Arc<Dfa>,
    key: Arc<str>,
}

impl DfaTerm {
    /// The term of `dfa`, named `key` (see the type's docs).
    pub fn new(dfa: Arc<Dfa>, key: String) -> DfaTerm {
        DfaTerm { dfa, key: key.into() }
    }

    /// The automaton.
    pub fn dfa(&self) -> &Arc<Dfa> {
        &self.dfa
    }

    /// The canonical name.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl fmt::Debug for DfaTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DfaTerm({:?})", self.key)
    }
}

impl PartialEq for DfaTerm {
    fn eq(&self, other: &DfaTerm) -> bool {
        self.key == other.key
    }
}

impl Eq for DfaTerm {}

impl Hash for DfaTerm {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

impl fmt::Debug for HirTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HirTerm({:?})", self.key())
    }
}

impl PartialEq for HirTerm {
    fn eq(&self, other: &HirTerm) -> bool {
        Arc::ptr_eq(&self.hir, &other.hir) || self.key() == other.key()
    }
}

impl Eq for HirTerm {}

impl Hash for HirTerm {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

/// A grammar expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Matches the empty string.
    Empty,
    /// A terminal piece.
    Term {
        /// The piece.
        term: Term,
        /// Where it is written.
        pos: Pos,
    },
    /// A reference to a rule.
    Ref {
        /// The rule's name.
        name: String,
        /// Where it is written.
        pos: Pos,
    },
    /// Concatenation.
    Seq(Vec<Expr>),
    /// Alternation.
    Alt(Vec<Expr>),
    /// `e{min,max}` (`max` None = unbounded); `?`, `*`, `+` are special cases.
    Repeat {
        /// What is repeated.
        expr: Box<Expr>,
        /// Least number of repetitions.
        min: u32,
        /// Most (None: no bound).
        max: Option<u32>,
        /// Where the operator is written.
        pos: Pos,
    },
    /// `except!(e)`: any string (of whole UTF-8 characters) that contains no match of the
    /// regular expression `e`.
    Except {
        /// The excluded terminals (must be regular).
        expr: Box<Expr>,
        /// Where it is written.
        pos: Pos,
    },
    /// `and!(e1, e2, ...)`: the strings matched by every argument (all regular).
    And {
        /// The arguments (two or more).
        exprs: Vec<Expr>,
        /// Where it is written.
        pos: Pos,
    },
    /// `not!(e)`: any string of whole UTF-8 characters that the regular `e` does not match.
    Not {
        /// The complemented expression.
        expr: Box<Expr>,
        /// Where it is written.
        pos: Pos,
    },
    /// `perm!{min,max}(sep, e1, e2?, e3*, e4+)`: entries in any order, separated by `sep`
    /// (`""`: none), each plain entry exactly once, `?` at most once, `*` any number of
    /// times, `+` at least once; `{min,max}` bounds the number of entries in all. The
    /// language of a JSON object whose keys may come in any order (see `cfg::perm`).
    Perm {
        /// The separator between entries (`Expr::Empty`: none).
        sep: Box<Expr>,
        /// The entries.
        entries: Vec<PermEntry>,
        /// Least number of entries in all.
        min: u32,
        /// Most (None: no bound).
        max: Option<u32>,
        /// Where it is written.
        pos: Pos,
    },
}

/// One entry of a [`Expr::Perm`].
#[derive(Debug, Clone, PartialEq)]
pub struct PermEntry {
    /// What the entry matches (never the empty string).
    pub expr: Expr,
    /// Must it appear?
    pub required: bool,
    /// May it appear more than once?
    pub repeat: bool,
    /// Must its occurrences be distinct JSON values? No grammar can say so (a list of
    /// free strings, none repeated, is not context-free): the matcher keeps them distinct
    /// at run time, as it keeps object keys (see [`crate::grammar::distinct_keys`]). The
    /// JSON Schema translator sets it on the one entry of a `uniqueItems` array whose
    /// items take unboundedly many values, and marks the strings of `format: "regex"`
    /// ([`Distinct::Regex`]) the same way.
    pub distinct: Distinct,
}

/// How the occurrences of a `perm!` entry are checked at run time, beside the parser:
/// kept distinct, or read as regular expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Distinct {
    /// Not at all: the list's state says how often the entry may appear.
    #[default]
    No,
    /// Every occurrence is a JSON string, compared by its text.
    Strings,
    /// Every occurrence is a JSON array whose items are compared as JSON values (`1`
    /// equals `1.0`, objects whatever their key order). The array is told apart from
    /// other arrays the parser may expect at the same place by its first item: one that
    /// starts with a byte of [`ItemStarts`] (an array with no item has nothing to keep
    /// distinct).
    Values(ItemStarts),
    /// Not kept distinct: every occurrence is a JSON string whose text must be an
    /// ECMAScript regular expression (see [`crate::grammar::regex_text`]).
    Regex,
    /// Not kept distinct: every occurrence is a JSON value inside other text (a
    /// structural tag's arguments, a `%json` in a grammar). The check of distinct keys
    /// and items reads the output as JSON only inside such values (see
    /// [`crate::grammar::distinct_keys`]).
    Json,
}

impl Distinct {
    /// Is the entry checked at run time at all (kept one symbol, so that the parser can
    /// tell where it starts)?
    pub fn any(self) -> bool {
        self != Distinct::No
    }

    /// Are the entry's occurrences kept distinct from each other?
    pub fn keeps_distinct(self) -> bool {
        matches!(self, Distinct::Strings | Distinct::Values(_))
    }

    /// Is it a list of distinct values ([`Distinct::Values`])?
    pub fn is_values(self) -> bool {
        matches!(self, Distinct::Values(_))
    }
}

/// The kinds of JSON value an item may be, as the bytes that start them: `n`, `t`/`f`, a
/// digit or `-`, `"`, `[`, `{`. A set of the six kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ItemStarts(u8);

impl ItemStarts {
    /// No value.
    pub const NONE: ItemStarts = ItemStarts(0);
    /// `null`.
    pub const NULL: ItemStarts = ItemStarts(1);
    /// `true`, `false`.
    pub const BOOL: ItemStarts = ItemStarts(2);
    /// Numbers.
    pub const NUMBER: ItemStarts = ItemStarts(4);
    /// Strings.
    pub const STRING: ItemStarts = ItemStarts(8);
    /// Arrays.
    pub const ARRAY: ItemStarts = ItemStarts(16);
    /// Objects.
    pub const OBJECT: ItemStarts = ItemStarts(32);
    /// Every value.
    pub const ALL: ItemStarts = ItemStarts(63);

    /// The kind of value that byte `b` starts (none for a byte that starts no JSON value).
    pub fn of_byte(b: u8) -> ItemStarts {
        match b {
            b'n' => ItemStarts::NULL,
            b't' | b'f' => ItemStarts::BOOL,
            b'-' | b'0'..=b'9' => ItemStarts::NUMBER,
            b'"' => ItemStarts::STRING,
            b'[' => ItemStarts::ARRAY,
            b'{' => ItemStarts::OBJECT,
            _ => ItemStarts::NONE,
        }
    }

    /// May a value of these kinds start with byte `b`?
    pub fn admits(self, b: u8) -> bool {
        self.0 & ItemStarts::of_byte(b).0 != 0
    }

    /// Both sets' kinds.
    pub fn or(self, other: ItemStarts) -> ItemStarts {
        ItemStarts(self.0 | other.0)
    }

    /// Do the two sets share a kind?
    pub fn meets(self, other: ItemStarts) -> bool {
        self.0 & other.0 != 0
    }

    /// Is the set empty?
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl Expr {
    /// The expressions directly inside this one (no allocation: grammar walks call this
    /// for every node).
    pub fn children(&self) -> Children<'_> {
        match self {
            Expr::Empty | Expr::Term { .. } | Expr::Ref { .. } => Children { first: None, list: [].iter(), entries: [].iter() },
            Expr::Seq(v) | Expr::Alt(v) | Expr::And { exprs: v, .. } => {
                Children { first: None, list: v.iter(), entries: [].iter() }
            }
            Expr::Repeat { expr, .. } | Expr::Except { expr, .. } | Expr::Not { expr, .. } => {
                Children { first: Some(expr), list: [].iter(), entries: [].iter() }
            }
            Expr::Perm { sep, entries, .. } => Children { first: Some(sep), list: [].iter(), entries: entries.iter() },
        }
    }

    /// Calls `f` on the name of every rule this expression refers to, which it may change.
    pub fn visit_refs_mut(&mut self, f: &mut impl FnMut(&mut String)) {
        match self {
            Expr::Ref { name, .. } => f(name),
            Expr::Seq(v) | Expr::Alt(v) | Expr::And { exprs: v, .. } => v.iter_mut().for_each(|e| e.visit_refs_mut(f)),
            Expr::Repeat { expr, .. } | Expr::Except { expr, .. } | Expr::Not { expr, .. } => expr.visit_refs_mut(f),
            Expr::Perm { sep, entries, .. } => {
                sep.visit_refs_mut(f);
                entries.iter_mut().for_each(|e| e.expr.visit_refs_mut(f));
            }
            Expr::Empty | Expr::Term { .. } => {}
        }
    }

    /// Does a `perm!` appear in this expression?
    pub fn has_perm(&self) -> bool {
        matches!(self, Expr::Perm { .. }) || self.children().any(Expr::has_perm)
    }
}

/// The expressions directly inside one (see [`Expr::children`]): a boxed one, then a
/// list, then a `perm!`'s entries.
pub struct Children<'a> {
    first: Option<&'a Expr>,
    list: std::slice::Iter<'a, Expr>,
    entries: std::slice::Iter<'a, PermEntry>,
}

impl<'a> Iterator for Children<'a> {
    type Item = &'a Expr;

    fn next(&mut self) -> Option<&'a Expr> {
        self.first.take().or_else(|| self.list.next()).or_else(|| self.entries.next().map(|e| &e.expr))
    }
}

impl Expr {
    /// Where the expression starts, if known.
    pub fn pos(&self) -> Option<Pos> {
        match self {
            Expr::Empty => None,
            Expr::Term { pos, .. }
            | Expr::Ref { pos, .. }
            | Expr::Repeat { pos, .. }
            | Expr::Except { pos, .. }
            | Expr::And { pos, .. }
            | Expr::Not { pos, .. }
            | Expr::Perm { pos, .. } => Some(*pos),
            Expr::Seq(v) | Expr::Alt(v) => v.iter().find_map(|e| e.pos()),
        }
    }
}

/// One rule definition `name ::= expr`.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleDef {
    /// The rule's name.
    pub name: String,
    /// Its body.
    pub expr: Expr,
    /// Where the name is written.
    pub pos: Pos,
    /// Lark's terminal definitions (UPPERCASE) must be regular: they become one DFA.
    pub is_terminal: bool,
}

/// A parsed grammar text, before validation and lowering.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GrammarAst {
    /// The rules, in source order. A name may be defined several times (alternatives).
    pub rules: Vec<RuleDef>,
    /// Expressions that may appear between any two tokens (Lark's `%ignore`).
    pub ignore: Vec<Expr>,
    /// Lark semantics: only TERMINAL definitions are tokens; rules stay rules even when
    /// they are not recursive, so that `%ignore`d text may appear between their tokens.
    pub lark_tokens: bool,
    /// Definitions pulled in by `%import` (never reported as unused).
    pub imported: Vec<String>,
    /// Findings of the syntax front-end that do not stop the grammar (a GBNF rule defined
    /// again, say), reported with the lowering's warnings.
    pub warnings: Vec<String>,
    /// The tokens the grammar names (`<[id]>`, `<think>`): see `frontend::tokens`.
    pub tokens: crate::vocab::TokenRefs,
    /// The JSON Schemas written inside the grammar (`%json {...}`), in order: the `k`-th
    /// stands where the grammar references the rule [`EmbeddedSchema::rule_name`]`(k)`,
    /// which the JSON Schema layer defines (see `json_schema::embed`).
    pub schemas: Vec<EmbeddedSchema>,
}

/// A JSON Schema written inside a grammar (`%json {...}` in Lark and corral EBNF).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddedSchema {
    /// The schema's JSON text.
    pub text: String,
    /// Where `%json` is written.
    pub pos: Pos,
}

impl EmbeddedSchema {
    /// The prefix of every rule an embedded schema's grammar defines.
    pub const PREFIX: &'static str = "%json#";

    /// The rule that stands for the `k`-th embedded schema.
    pub fn rule_name(k: usize) -> String {
        format!("{}{k}", Self::PREFIX)
    }

    /// Is `name` a rule inside an embedded schema's grammar (not the rule standing for the
    /// whole value)? Such rules keep JSON's own layout: Lark's `%ignore` is not put
    /// between their tokens.
    pub fn is_inner_rule(name: &str) -> bool {
        name.starts_with(Self::PREFIX) && name.contains('/')
    }

    /// The expression a parser leaves where `%json {text}` is written, recording the
    /// schema in `schemas`.
    pub fn reference(schemas: &mut Vec<EmbeddedSchema>, text: String, pos: Pos) -> Expr {
        let name = Self::rule_name(schemas.len());
        schemas.push(EmbeddedSchema { text, pos });
        Expr::Ref { name, pos }
    }
}

impl GrammarAst {
    /// The grammar in Lark's syntax, for checking corral against an independent parser
    /// in tests. Rules become `r0`, `r1`, ...; every terminal piece becomes a regex.
    /// `except!`, `and!` and `not!` have no Lark equivalent and are an error.
    pub fn to_lark(&self, start: &str) -> std::result::Result<String, String> {
        let mut names: Vec<&str> = Vec::new();
        for r in &self.rules {
            if !names.contains(&r.name.as_str()) {
                names.push(r.name.as_str());
            }
        }
        let id = |n: &str| names.iter().position(|x| *x == n).map(|i| format!("r{i}"));
        let start_id = id(start).ok_or_else(|| format!("no rule `{start}`"))?;
        let mut out = format!("start: {start_id}\n");
        for (i, name) in names.iter().enumerate() {
            let alts: Vec<String> = self
                .rules
                .iter()
                .filter(|r| r.name == *name)
                .map(|r| lark_expr(&r.expr, &id))
                .collect::<std::result::Result<_, _>>()?;
            out.push_str(&format!("r{i}: {}\n", alts.join("\n    | ")));
        }
        Ok(out)
    }
}

fn lark_expr(e: &Expr, id: &dyn Fn(&str) -> Option<String>) -> std::result::Result<String, String> {
    Ok(match e {
        Expr::Empty => String::new(),
        Expr::Term { term, .. } => {
            let src = term.regex_source().ok_or("a HIR or DFA term has no Lark text")?;
            let src = src.replace('/', "\\/").replace('\n', "\\n").replace('\r', "\\r");
            format!("/{src}/")
        }
        Expr::Ref { name, .. } => id(name).ok_or_else(|| format!("undefined rule `{name}`"))?,
        Expr::Seq(items) => {
            let parts: Vec<String> = items.iter().map(|x| lark_expr(x, id)).collect::<std::result::Result<_, _>>()?;
            parts.into_iter().filter(|p| !p.is_empty()).map(|p| format!("({p})")).collect::<Vec<_>>().join(" ")
        }
        Expr::Alt(items) => {
            let parts: Vec<String> = items.iter().map(|x| lark_expr(x, id)).collect::<std::result::Result<_, _>>()?;
            let nonempty: Vec<String> = parts.iter().filter(|p| !p.is_empty()).cloned().collect();
            let body = nonempty.iter().map(|p| format!("({p})")).collect::<Vec<_>>().join(" | ");
            if nonempty.len() < parts.len() {
                format!("({body})?")
            } else {
                format!("({body})")
            }
        }
        Expr::Repeat { expr, min, max, .. } => {
            let inner = lark_expr(expr, id)?;
            if inner.is_empty() {
                return Ok(String::new());
            }
            let inner = format!("({inner})");
            match (min, max) {
                (0, Some(1)) => format!("{inner}?"),
                (0, None) => format!("{inner}*"),
                (1, None) => format!("{inner}+"),
                (0, Some(0)) => String::new(),
                (m, None) => format!("{inner} ~ {m} {inner}*"),
                (0, Some(n)) => format!("({inner} ~ 1..{n})?"),
                (m, Some(n)) if m == n => format!("{inner} ~ {m}"),
                (m, Some(n)) => format!("{inner} ~ {m}..{n}"),
            }
        }
        Expr::Except { .. } => return Err("except! has no Lark equivalent".into()),
        Expr::And { .. } => return Err("and! has no Lark equivalent".into()),
        Expr::Not { .. } => return Err("not! has no Lark equivalent".into()),
        Expr::Perm { .. } => return Err("perm! has no Lark equivalent".into()),
    })
}
