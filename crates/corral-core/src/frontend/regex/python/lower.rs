//! The intermediate form → a regex-syntax HIR, each node with CPython's meaning under
//! the flags in force where it stands.

use regex_syntax::hir::{self, ClassUnicode, Hir};

use super::*;
use crate::error::Result;
use crate::frontend::regex::PerlClasses;
use crate::util::hash::FastMap;

/// Turns a parsed pattern into regex-syntax's HIR with CPython's meaning.
pub(crate) struct Lowering<'a> {
    pub(crate) pattern: &'a str,
    pub(crate) classes: Option<&'a PerlClasses>,
    /// The characters each case-insensitive literal matches, by (literal, flags): a long
    /// `(?i)` text repeats its letters.
    pub(crate) folded: std::cell::RefCell<FastMap<(u32, u32), ClassUnicode>>,
}

impl Lowering<'_> {
    pub(crate) fn lower(&self, mut pat: Pattern) -> Result<Hir> {
        strip_anchors(&mut pat.seq, true);
        strip_anchors(&mut pat.seq, false);
        self.seq(&pat.seq, pat.flags)
    }

    pub(super) fn seq(&self, seq: &[Node], flags: u32) -> Result<Hir> {
        let mut out = Vec::with_capacity(seq.len());
        for node in seq {
            out.push(self.node(node, flags)?);
        }
        Ok(Hir::concat(out))
    }

    pub(super) fn node(&self, node: &Node, flags: u32) -> Result<Hir> {
        let refuse = |at: usize, what: &str| Err(unsupported(self.pattern, at, what));
        Ok(match node {
            Node::Literal(c) => chars(self.literal(*c, flags)),
            Node::NotLiteral(c) => chars(complement(self.literal(*c, flags))),
            Node::In(items) => {
                if let Some(at) = items.iter().find_map(|i| if let SetItem::Named(at) = i { Some(*at) } else { None }) {
                    return refuse(at, "named character escape \\N{...} (write the character or \\uXXXX)");
                }
                chars(self.set(items, flags))
            }
            Node::Any => {
                let all = class_of([(0, 0x10FFFF)]);
                chars(if flags & F_S != 0 { all } else { complement(class_of([(0x0A, 0x0A)])) })
            }
            Node::At(kind, at) => {
                return refuse(
                    *at,
                    match kind {
                        Anchor::Beginning | Anchor::BeginningString => "start anchor (^ or \\A) not at the start of the pattern",
                        Anchor::End | Anchor::EndString => "end anchor ($ or \\Z) not at the end of the pattern",
                        Anchor::Boundary | Anchor::NonBoundary => "word-boundary assertion (\\b or \\B)",
                    },
                )
            }
            Node::Repeat { min, max, kind, body, at } => {
                if *kind == RepeatKind::Possessive {
                    return refuse(*at, "possessive quantifier (*+, ++, ?+, {m,n}+)");
                }
                let sub = self.seq(body, flags)?;
                Hir::repetition(hir::Repetition { min: *min, max: *max, greedy: true, sub: Box::new(sub) })
            }
            Node::Group { add, del, body, .. } => {
                // CPython: a type flag (a, u) replaces the other type flags.
                let base = if add & TYPE_FLAGS != 0 { flags & !TYPE_FLAGS } else { flags };
                self.seq(body, (base | add) & !del)?
            }
            Node::Branch(items) => {
                let mut alts = Vec::with_capacity(items.len());
                for it in items {
                    alts.push(self.seq(it, flags)?);
                }
                Hir::alternation(alts)
            }
            Node::Assert { behind: false, at, .. } => return refuse(*at, "look-ahead (?=...) / (?!...)"),
            Node::Assert { behind: true, at, .. } => return refuse(*at, "look-behind (?<=...) / (?<!...)"),
            Node::Atomic { at, .. } => return refuse(*at, "atomic group (?>...)"),
            Node::GroupRef { named: true, at, .. } => return refuse(*at, "named backreference (?P=name)"),
            Node::GroupRef { named: false, at, .. } => return refuse(*at, "backreference (\\1 ... \\99)"),
            Node::Conditional { at, .. } => return refuse(*at, "conditional group (?(id)yes|no)"),
            Node::Named(at) => return refuse(*at, "named character escape \\N{...} (write the character or \\uXXXX)"),
        })
    }

    pub(super) fn category(&self, cat: Category, unicode: bool) -> ClassUnicode {
        let (base, negated) = match cat {
            Category::Digit => (0, false),
            Category::NotDigit => (0, true),
            Category::Word => (1, false),
            Category::NotWord => (1, true),
            Category::Space => (2, false),
            Category::NotSpace => (2, true),
        };
        let set = if unicode {
            match self.classes {
                Some(c) => {
                    let given = [&c.digit, &c.word, &c.space][base];
                    class_of(given.iter().map(|&(a, b)| (a as u32, b as u32)))
                }
                None => default_unicode_categories()[base].clone(),
            }
        } else {
            match base {
                0 => class_of([(0x30, 0x39)]),
                1 => class_of([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]),
                _ => class_of([(0x09, 0x0D), (0x20, 0x20)]),
            }
        };
        if negated {
            complement(set)
        } else {
            set
        }
    }

    /// The characters a literal `c` matches under `flags`.
    pub(super) fn literal(&self, c: u32, flags: u32) -> ClassUnicode {
        if flags & F_I == 0 {
            return class_of([(c, c)]);
        }
        if flags & F_U == 0 {
            if !ascii_cased(c) {
                return class_of([(c, c)]);
            }
            return lower_preimage(&class_of([(ascii_lower(c), ascii_lower(c))]), false);
        }
        let t = case_tables();
        if !contains(&t.cased, c) {
            return class_of([(c, c)]);
        }
        if let Some(set) = self.folded.borrow().get(&(c, flags)) {
            return set.clone();
        }
        let lo = unicode_lower(c);
        let mut targets = vec![(lo, lo)];
        if let Some(f) = t.fixes.get(&lo) {
            targets.extend(f.iter().map(|&x| (x, x)));
        }
        let set = lower_preimage(&class_of(targets), true);
        self.folded.borrow_mut().insert((c, flags), set.clone());
        set
    }

    /// The characters a set matches under `flags`, as CPython's compiled set does: under
    /// IGNORECASE, members are lower-cased (with the shared upper cases added) and the
    /// input character is lower-cased before the test, except that members outside the
    /// Basic Multilingual Plane are kept as written (a range: tested on the character and
    /// its upper case) and categories are tested as they are.
    pub(super) fn set(&self, items: &[SetItem], flags: u32) -> ClassUnicode {
        let ignore = flags & F_I != 0;
        let unicode = flags & F_U != 0;
        let mut m = ClassUnicode::empty();
        let mut negate = false;
        let mut cased = false;
        for item in items {
            match *item {
                SetItem::Negate => negate = true,
                SetItem::Named(_) => {}
                SetItem::Category(cat) => m = union(m, &self.category(cat, unicode)),
                SetItem::Literal(c) if !ignore => m = union(m, &class_of([(c, c)])),
                SetItem::Range(a, b) if !ignore => m = union(m, &class_of([(a, b)])),
                SetItem::Literal(c) => {
                    let lo = if unicode { unicode_lower(c) } else { ascii_lower(c) };
                    if lo >= 0x10000 {
                        cased = true;
                        m = union(m, &class_of([(c, c)]));
                    } else {
                        m = union(m, &class_of([(lo, lo)]));
                        if unicode {
                            if let Some(f) = case_tables().fixes.get(&lo) {
                                m = union(m, &class_of(f.iter().map(|&x| (x, x))));
                            }
                        }
                        cased |= if unicode { contains(&case_tables().cased, c) } else { ascii_cased(c) };
                    }
                }
                SetItem::Range(a, b) => {
                    let bmp_end = b.min(0xFFFF);
                    if a <= bmp_end {
                        let image = self.lowered_range(a, bmp_end, unicode);
                        if unicode {
                            let fixes = &case_tables().fixes;
                            let extra: Vec<(u32, u32)> = fixes
                                .iter()
                                .filter(|(k, _)| contains(&image, **k))
                                .flat_map(|(_, v)| v.iter().map(|&x| (x, x)))
                                .collect();
                            m = union(m, &class_of(extra));
                        }
                        m = union(m, &image);
                    }
                    if b >= 0x10000 {
                        // CPython tests such a range on the (lowered) character and its upper case.
                        cased = true;
                        let up = case_tables().uppered.iter().filter(|&&(_, u)| (a..=b).contains(&u)).map(|&(c, _)| (c, c));
                        m = union(m, &union(class_of([(a, b)]), &class_of(up)));
                    } else {
                        let range = class_of([(a, b)]);
                        cased |= if unicode {
                            let mut r = range;
                            r.intersect(&case_tables().cased);
                            !r.ranges().is_empty()
                        } else {
                            (a..=b).any(ascii_cased)
                        };
                    }
                }
            }
        }
        if negate {
            m = complement(m);
        }
        if ignore && cased {
            lower_preimage(&m, unicode)
        } else {
            m
        }
    }

    /// The lower cases of the characters `a..=b`.
    pub(super) fn lowered_range(&self, a: u32, b: u32, unicode: bool) -> ClassUnicode {
        let range = class_of([(a, b)]);
        if unicode {
            let t = case_tables();
            let mut out = range;
            out.difference(&t.lowered_class);
            let from = t.lowered.partition_point(|&(c, _)| c < a);
            let moved = t.lowered[from..].iter().take_while(|&&(c, _)| c <= b).map(|&(_, l)| (l, l));
            union(out, &class_of(moved))
        } else {
            let mut out = range;
            out.difference(&class_of([(0x41, 0x5A)]));
            let moved = (a.max(0x41)..=b.min(0x5A)).map(|c| (c + 0x20, c + 0x20));
            union(out, &class_of(moved))
        }
    }
}
