//! Unicode sets with Python's meaning: `\\d \\w \\s` (the interpreter's sets when given),
//! categories, identifier classes, and Python's case folding tables.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex_syntax::hir::{self, Class, ClassUnicode, ClassUnicodeRange, Hir};

use crate::util::hash::FastMap;

pub(super) fn class_of(ranges: impl IntoIterator<Item = (u32, u32)>) -> ClassUnicode {
    let mut out = ClassUnicode::empty();
    for (a, b) in ranges {
        // Surrogates are not characters of UTF-8 text: cut them out.
        let pieces = [(a, b.min(0xD7FF)), (a.max(0xE000), b)];
        for (lo, hi) in pieces {
            if lo > hi {
                continue;
            }
            if let (Some(lo), Some(hi)) = (char::from_u32(lo), char::from_u32(hi)) {
                out.push(ClassUnicodeRange::new(lo, hi));
            }
        }
    }
    out
}

pub(super) fn contains(class: &ClassUnicode, c: u32) -> bool {
    let ranges = class.ranges();
    let i = ranges.partition_point(|r| (r.end() as u32) < c);
    i < ranges.len() && (ranges[i].start() as u32) <= c
}

pub(super) fn union(mut a: ClassUnicode, b: &ClassUnicode) -> ClassUnicode {
    a.union(b);
    a
}

pub(super) fn complement(mut a: ClassUnicode) -> ClassUnicode {
    a.negate();
    a
}

/// A Unicode property class by regex-syntax's tables (`\p{name}`).
pub(super) fn property(name: &str) -> ClassUnicode {
    let hir = regex_syntax::ParserBuilder::new().build().parse(&format!("\\p{{{name}}}"));
    match hir.as_ref().map(|h| h.kind()) {
        Ok(hir::HirKind::Class(Class::Unicode(c))) => c.clone(),
        _ => ClassUnicode::empty(),
    }
}

pub(super) fn identifier_classes() -> &'static (ClassUnicode, ClassUnicode) {
    static IDS: OnceLock<(ClassUnicode, ClassUnicode)> = OnceLock::new();
    IDS.get_or_init(|| (property("XID_Start"), property("XID_Continue")))
}

/// `\d \w \s` of Unicode mode when the interpreter's sets are not given.
pub(super) fn default_unicode_categories() -> &'static [ClassUnicode; 3] {
    static SETS: OnceLock<[ClassUnicode; 3]> = OnceLock::new();
    SETS.get_or_init(|| {
        let digit = property("Nd");
        // str.isalnum(): letters and numbers; and `_`.
        let word = union(union(property("L"), &property("N")), &class_of([(0x5F, 0x5F)]));
        // str.isspace().
        let space = class_of([
            (0x09, 0x0D),
            (0x1C, 0x20),
            (0x85, 0x85),
            (0xA0, 0xA0),
            (0x1680, 0x1680),
            (0x2000, 0x200A),
            (0x2028, 0x2029),
            (0x202F, 0x202F),
            (0x205F, 0x205F),
            (0x3000, 0x3000),
        ]);
        [digit, word, space]
    })
}

/// Case mappings as CPython's `re` uses them: the first character of the full lower or
/// upper case mapping (CPython's `_PyUnicode_ToLowercase`/`ToUppercase`), and the
/// lower-case characters that share an upper case (CPython's `re._casefix`).
pub(super) struct CaseTables {
    /// `(c, lower(c))` for every `c` with `lower(c) != c`, by `c`.
    pub(super) lowered: Vec<(u32, u32)>,
    /// `(c, upper(c))` for every `c` with `upper(c) != c`, by `c`.
    pub(super) uppered: Vec<(u32, u32)>,
    /// The first members of `lowered`.
    pub(super) lowered_class: ClassUnicode,
    /// Characters with a case (`lower(c) != c or upper(c) != c`).
    pub(super) cased: ClassUnicode,
    /// For a lower-case character, the other lower-case characters with its upper case.
    pub(super) fixes: FastMap<u32, Vec<u32>>,
}

pub(super) fn case_tables() -> &'static CaseTables {
    static TABLES: OnceLock<CaseTables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut lowered = Vec::new();
        let mut uppered = Vec::new();
        // Lower-case characters (lower(c) == c) by their full upper-case mapping.
        let mut by_upper: BTreeMap<Vec<char>, Vec<u32>> = BTreeMap::new();
        // Only characters that change under a case mapping can have one (a character
        // that is its own upper case joins a group below).
        let candidates = union(property("Changes_When_Lowercased"), &property("Changes_When_Uppercased"));
        for ch in candidates.iter().flat_map(|r| r.start()..=r.end()) {
            let lower = ch.to_lowercase().next().unwrap_or(ch);
            let mut up = ch.to_uppercase();
            let upper = up.next().unwrap_or(ch);
            if lower != ch {
                lowered.push((ch as u32, lower as u32));
            }
            if upper != ch {
                uppered.push((ch as u32, upper as u32));
            }
            if lower == ch && (upper != ch || up.len() > 0) {
                let mut key = vec![upper];
                key.extend(up);
                by_upper.entry(key).or_default().push(ch as u32);
            }
        }
        // A character that is its own upper case joins the lower-case ones mapping to it.
        for (key, members) in by_upper.iter_mut() {
            if let [k] = key[..] {
                let c = k as u32;
                if !members.contains(&c) && k.to_lowercase().eq([k]) && k.to_uppercase().eq([k]) {
                    members.push(c);
                }
            }
        }
        let mut fixes: FastMap<u32, Vec<u32>> = FastMap::default();
        for members in by_upper.values().filter(|m| m.len() > 1) {
            for &m in members {
                fixes.insert(m, members.iter().copied().filter(|&x| x != m).collect());
            }
        }
        let lowered_class = class_of(lowered.iter().map(|&(c, _)| (c, c)));
        let cased = union(lowered_class.clone(), &class_of(uppered.iter().map(|&(c, _)| (c, c))));
        CaseTables { lowered, uppered, lowered_class, cased, fixes }
    })
}

pub(super) fn unicode_lower(c: u32) -> u32 {
    char::from_u32(c).and_then(|ch| ch.to_lowercase().next()).map_or(c, |l| l as u32)
}

pub(super) fn ascii_lower(c: u32) -> u32 {
    if (0x41..=0x5A).contains(&c) {
        c + 0x20
    } else {
        c
    }
}

pub(super) fn ascii_cased(c: u32) -> bool {
    c < 0x80 && (c as u8).is_ascii_alphabetic()
}

/// The characters `c` whose lower case (`unicode`: Unicode's, else ASCII's) is in `m`.
pub(super) fn lower_preimage(m: &ClassUnicode, unicode: bool) -> ClassUnicode {
    if unicode {
        let t = case_tables();
        let mut out = m.clone();
        out.difference(&t.lowered_class);
        let extra = t.lowered.iter().filter(|&&(_, l)| contains(m, l)).map(|&(c, _)| (c, c));
        union(out, &class_of(extra))
    } else {
        let mut out = m.clone();
        out.difference(&class_of([(0x41, 0x5A)]));
        let extra = (0x41..=0x5A).filter(|&c| contains(m, c + 0x20)).map(|c| (c, c));
        union(out, &class_of(extra))
    }
}

/// One character of a set, as HIR (a literal when it is a single character).
pub(super) fn chars(set: ClassUnicode) -> Hir {
    Hir::class(Class::Unicode(set))
}
