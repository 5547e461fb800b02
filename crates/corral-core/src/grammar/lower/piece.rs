//! A regular piece of a grammar as a regex-syntax HIR (never as regex text), with the
//! structural measures the lowering decides by: whether a piece becomes one terminal,
//! whether a regular grammar becomes one DFA, and whether a rule's piece is kept whole for
//! the rules that use it.
//!
//! Pieces are combined with regex-syntax's own constructors (`Hir::concat`,
//! `Hir::alternation`, `Hir::repetition`), so a piece's language never depends on how a
//! text would have been quoted or grouped, and no piece has a size limit of its own: a
//! piece too heavy to keep is left to grammar structure by the caller (see
//! `Lowering::is_heavy`).

use std::fmt;
use std::sync::{Arc, OnceLock};

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Repetition};

use crate::frontend::ast::HirTerm;

/// A class weighs what the text of a short one takes (`[a-z]`: 2 bytes and 3 per range)
/// up to this cap, the text of `[A-Za-z0-9_]`: however many ranges it has, a class is one
/// position of the automaton, one step per character (Python's `\w` is hundreds of
/// ranges and two bytes of text; escapes such as `\u005b` in generated text are one
/// character). Calibrated on the regex terms of the corpus grammars, the JSON Schema
/// translator's output for the benchmark and test-suite schemas, and the prebuilt format
/// patterns (644 regexes): the median weight is 0.97 of the text's (10% of them under
/// 0.62, 10% over 1.8, mostly generated text with long escapes, or `(?i)` letters, which
/// are classes); 23 of them fall on the other side of 150, none of 1,000.
const CLASS_WEIGHT_CAP: usize = 12;

/// The structural measures of a piece (computed once, when the piece is made).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Measure {
    /// A size comparable to the length of the piece's regex text (see [`Measure::of`]):
    /// literals by their bytes, a class as one position (at most [`CLASS_WEIGHT_CAP`]),
    /// repetition and alternation operators by the bytes they would take to write.
    pub(super) weight: usize,
    /// Nesting depth: the longest chain of concatenations, unions, repetitions and
    /// groups inside one another (a literal or class alone is 0); for a combination of
    /// pieces, one more than its deepest part (see [`Piece::combine`]).
    pub(super) depth: usize,
    /// The largest bound of a counted repetition (`x{m,n}` counts `max(m, n)`; `x*` 0,
    /// `x+` 1, `x?` 1).
    pub(super) largest_count: u32,
}

impl Measure {
    /// The measures of `hir`, by one walk over it.
    pub(super) fn of(hir: &Hir) -> Measure {
        let children: &[Hir] = match hir.kind() {
            HirKind::Concat(v) | HirKind::Alternation(v) => v,
            HirKind::Repetition(r) => std::slice::from_ref(&*r.sub),
            HirKind::Capture(c) => std::slice::from_ref(&*c.sub),
            HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => &[],
        };
        let mut m = Measure { weight: own_weight(hir), depth: 0, largest_count: own_count(hir) };
        for c in children {
            let cm = Measure::of(c);
            m.weight = m.weight.saturating_add(cm.weight);
            m.depth = m.depth.max(cm.depth + 1);
            m.largest_count = m.largest_count.max(cm.largest_count);
        }
        m
    }

    /// An upper bound of the measures of the concatenation (`seq`) or union of pieces
    /// measuring `parts`, known before it is built (regex-syntax may merge literals or
    /// classes, which only lowers the real ones).
    pub(super) fn combined(parts: &[Measure], seq: bool) -> Measure {
        let separators = if seq { 0 } else { parts.len().saturating_sub(1) };
        Measure {
            weight: parts.iter().fold(separators, |w, m| w.saturating_add(m.weight)),
            depth: parts.iter().map(|m| m.depth).max().unwrap_or(0) + 1,
            largest_count: parts.iter().map(|m| m.largest_count).max().unwrap_or(0),
        }
    }
}

/// What a node weighs besides its children (see [`Measure::weight`]).
fn own_weight(hir: &Hir) -> usize {
    match hir.kind() {
        HirKind::Empty | HirKind::Concat(_) => 0,
        HirKind::Literal(l) => l.0.len(),
        HirKind::Class(Class::Unicode(c)) => class_weight(c.ranges().len()),
        HirKind::Class(Class::Bytes(c)) => class_weight(c.ranges().len()),
        HirKind::Look(_) => 1,
        HirKind::Repetition(r) => operator_weight(r.min, r.max),
        // `(` and `)`: lowering's own groups do not exist in a HIR.
        HirKind::Capture(_) => 2,
        HirKind::Alternation(v) => v.len().saturating_sub(1),
    }
}

/// A class of `ranges` ranges (see [`CLASS_WEIGHT_CAP`]).
fn class_weight(ranges: usize) -> usize {
    (2 + 3 * ranges).min(CLASS_WEIGHT_CAP)
}

/// The bytes of a repetition operator: `?`, `*`, `+`, `{m}`, `{m,}` or `{m,n}`.
fn operator_weight(min: u32, max: Option<u32>) -> usize {
    let digits = |n: u32| n.checked_ilog10().unwrap_or(0) as usize + 1;
    match (min, max) {
        (0, Some(1)) | (0, None) | (1, None) => 1,
        (m, Some(n)) if m == n => 2 + digits(m),
        (m, None) => 3 + digits(m),
        (m, Some(n)) => 3 + digits(m) + digits(n),
    }
}

/// The count of a repetition node (0 for anything else).
fn own_count(hir: &Hir) -> u32 {
    match hir.kind() {
        HirKind::Repetition(r) => r.min.max(r.max.unwrap_or(0)),
        _ => 0,
    }
}

/// A regular piece: a HIR leaf (a regex term, a literal, a front-end's HIR term) or a
/// concatenation, union or repetition of pieces, with its measures (see [`Measure`]) and
/// a canonical key (equal keys, equal languages). A combination's HIR is put together only
/// when something needs it (its automaton, its key): a grammar's rules combine their
/// pieces, rule after rule, and most combinations never become one automaton (they are
/// too heavy, or a front-end keeps every property apart), so copying the parts' trees at
/// every step would be wasted. A leaf that is exactly one regex as the user wrote it keeps
/// that text, by which prebuilt automata are looked up (see
/// [`crate::frontend::regex::prebuilt`]) and which is a cheaper key than a printed HIR.
#[derive(Clone)]
pub(super) struct Piece(Arc<Inner>);

struct Inner {
    shape: Shape,
    measure: Measure,
    /// Does the piece match the empty string?
    nullable: bool,
    /// A combination's HIR, put together from the parts when first asked for.
    built: OnceLock<Hir>,
    key: OnceLock<Box<str>>,
}

enum Shape {
    /// A HIR of its own (and the regex text it was parsed from, if any).
    Leaf(Arc<Hir>, Option<Box<str>>),
    /// A concatenation (true) or union of the parts.
    Combined(Vec<Piece>, bool),
    /// The part repeated `min` to `max` (None: unbounded) times.
    Repeat(Piece, u32, Option<u32>),
}

impl Piece {
    fn leaf(hir: Arc<Hir>, src: Option<&str>, key: Option<Box<str>>) -> Piece {
        let measure = Measure::of(&hir);
        let nullable = hir.properties().minimum_len() == Some(0);
        let key_cell = OnceLock::new();
        if let Some(k) = key {
            let _ = key_cell.set(k);
        }
        let shape = Shape::Leaf(hir, src.map(Box::from));
        Piece(Arc::new(Inner { shape, measure, nullable, built: OnceLock::new(), key: key_cell }))
    }

    fn node(shape: Shape, measure: Measure, nullable: bool) -> Piece {
        Piece(Arc::new(Inner { shape, measure, nullable, built: OnceLock::new(), key: OnceLock::new() }))
    }

    /// The piece of a HIR built by lowering.
    pub(super) fn new(hir: Hir) -> Piece {
        Piece::leaf(Arc::new(hir), None, None)
    }

    /// The piece of regex `src` as the user wrote it, parsed into `hir`.
    pub(super) fn regex(hir: Arc<Hir>, src: &str) -> Piece {
        Piece::leaf(hir, Some(src), None)
    }

    /// A literal string (its UTF-8 bytes).
    pub(super) fn literal(s: &str) -> Piece {
        Piece::new(Hir::literal(s.as_bytes()))
    }

    /// The empty string.
    pub(super) fn empty() -> Piece {
        Piece::new(Hir::empty())
    }

    /// A front-end's HIR term, shared (its printed form, if already made, is reused as the
    /// key; else the key is printed when needed, as for any HIR).
    pub(super) fn hir_term(term: &HirTerm) -> Piece {
        Piece::leaf(term.shared_hir(), None, term.key_if_printed().map(hir_key))
    }

    /// The concatenation (`seq`) or union of `parts` (one part is itself). Its measures are
    /// [`Measure::combined`]'s: the weight and count exactly, the depth one more than its
    /// deepest part (so it bounds how deep pieces nest inside one another too).
    pub(super) fn combine(parts: &[Piece], seq: bool) -> Piece {
        if let [one] = parts {
            return one.clone();
        }
        let measure = Measure::combined(&parts.iter().map(Piece::measure).collect::<Vec<_>>(), seq);
        let nullable = if seq { parts.iter().all(Piece::matches_empty) } else { parts.iter().any(Piece::matches_empty) };
        Piece::node(Shape::Combined(parts.to_vec(), seq), measure, nullable)
    }

    /// This piece repeated `min` to `max` (None: unbounded) times.
    pub(super) fn repeat(&self, min: u32, max: Option<u32>) -> Piece {
        let m = self.measure();
        let measure = Measure {
            weight: m.weight.saturating_add(operator_weight(min, max)),
            depth: m.depth + 1,
            largest_count: m.largest_count.max(min.max(max.unwrap_or(0))),
        };
        Piece::node(Shape::Repeat(self.clone(), min, max), measure, min == 0 || self.matches_empty())
    }

    /// The strings that contain a match of this piece: `.*piece.*` over whole characters.
    pub(super) fn contained(&self) -> Piece {
        let any = Hir::class(Class::Unicode(ClassUnicode::new([ClassUnicodeRange::new('\0', char::MAX)])));
        let any_star = Piece::new(Hir::repetition(Repetition { min: 0, max: None, greedy: true, sub: Box::new(any) }));
        Piece::combine(&[any_star.clone(), self.clone(), any_star], true)
    }

    /// The language (a combination's HIR is put together now, once).
    pub(super) fn hir(&self) -> &Hir {
        match &self.0.shape {
            Shape::Leaf(hir, _) => hir,
            Shape::Combined(parts, seq) => self.0.built.get_or_init(|| {
                let hirs: Vec<Hir> = parts.iter().map(|p| p.hir().clone()).collect();
                if *seq {
                    Hir::concat(hirs)
                } else {
                    Hir::alternation(hirs)
                }
            }),
            Shape::Repeat(sub, min, max) => self.0.built.get_or_init(|| {
                Hir::repetition(Repetition { min: *min, max: *max, greedy: true, sub: Box::new(sub.hir().clone()) })
            }),
        }
    }

    /// The regex text the piece was parsed from, when it is one regex as written.
    pub(super) fn src(&self) -> Option<&str> {
        match &self.0.shape {
            Shape::Leaf(_, src) => src.as_deref(),
            _ => None,
        }
    }

    /// The structural measures.
    pub(super) fn measure(&self) -> Measure {
        self.0.measure
    }

    /// Does the piece match no string at all? (Only a leaf can: lowering combines no void
    /// piece.)
    pub(super) fn is_void(&self) -> bool {
        matches!(self.0.shape, Shape::Leaf(..)) && self.hir().properties().minimum_len().is_none()
    }

    /// Does the piece match the empty string?
    pub(super) fn matches_empty(&self) -> bool {
        self.0.nullable
    }

    /// A canonical name: equal keys, equal languages. The text of a regex as written
    /// (`r` and its length first) or of a literal string (`l`), else the HIR's printed
    /// form (`h` and its length first, as regex-syntax prints a HIR so that it reads back
    /// as the same HIR). The length keeps a key that is part of a longer key (an
    /// operator's, a merged run's) unambiguous, and the kinds never equal each other.
    pub(super) fn key(&self) -> &str {
        self.0.key.get_or_init(|| {
            let text = match self.hir().kind() {
                HirKind::Literal(l) => std::str::from_utf8(&l.0).ok(),
                _ => None,
            };
            match (self.src(), text) {
                (Some(src), _) => format!("r{}:{src}", src.len()).into(),
                (None, Some(text)) => format!("l{}:{text}", text.len()).into(),
                (None, None) => hir_key(&self.hir().to_string()),
            }
        })
    }
}

/// The key of a HIR printed as `printed` (see [`Piece::key`]).
fn hir_key(printed: &str) -> Box<str> {
    format!("h{}:{printed}", printed.len()).into()
}

impl fmt::Debug for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.src() {
            Some(src) => write!(f, "Piece(/{src}/)"),
            None => write!(f, "Piece({})", self.hir()),
        }
    }
}
