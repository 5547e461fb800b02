//! Small generators driven by fuzz input: vocabularies, regexes and EBNF grammars over a
//! tiny alphabet (so that random tokens and random grammars meet often), and the check
//! that an error says where.

use corral_core::{Error, Vocabulary};

use crate::check::Chooser;

/// The id of the EOS token in [`byte_vocab`].
pub const BYTE_VOCAB_EOS: u32 = 256;

/// Ids 0..=255 are the single bytes, 256 is EOS, then the `extra` tokens.
pub fn byte_vocab(extra: &[Vec<u8>]) -> Vocabulary {
    let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    tokens.push(None);
    tokens.extend(extra.iter().map(|t| Some(t.clone())));
    Vocabulary::new(tokens, &[], &[BYTE_VOCAB_EOS], None).expect("the byte vocabulary is valid")
}

/// The bytes random tokens are made of: ASCII that the generated grammars use, and the
/// pieces of `é` (C3 A9), `ê` (C3 AA) and `€` (E2 82 AC), so tokens end mid-character.
const TOKEN_BYTES: &[u8] = b"abcx01.,()[] \"\\\n\xc3\xa9\xaa\xe2\x82\xac";

/// A small random vocabulary: up to 40 tokens of 1-4 bytes from [`TOKEN_BYTES`] (with all
/// single bytes when `c` says so, so that every grammar can be followed), missing ids,
/// special ids, one or two EOS ids anywhere, and sometimes padding past the tokens.
pub fn small_vocab(c: &mut dyn Chooser) -> Vocabulary {
    small_vocab_over(c, TOKEN_BYTES)
}

/// [`small_vocab`] with tokens made of `alphabet`'s bytes.
pub fn small_vocab_over(c: &mut dyn Chooser, alphabet: &[u8]) -> Vocabulary {
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    if c.pick(2) == 0 {
        tokens.extend(alphabet.iter().map(|&b| Some(vec![b])));
    }
    for _ in 0..c.pick(40) {
        match c.pick(12) {
            0 => tokens.push(None),
            1 => tokens.push(Some(b"\xc3\xa9".to_vec())),
            _ => {
                let len = 1 + c.pick(4);
                tokens.push(Some((0..len).map(|_| alphabet[c.pick(alphabet.len())]).collect()));
            }
        }
    }
    // Shuffle a little, so that byte tokens are not always the low ids.
    for i in (1..tokens.len()).rev() {
        if c.pick(3) == 0 {
            let j = c.pick(i + 1);
            tokens.swap(i, j);
        }
    }
    let size = tokens.len() + 1 + c.pick(40);
    let mut eos = vec![c.pick(size) as u32];
    if c.pick(4) == 0 {
        eos.push(c.pick(size) as u32);
    }
    let specials: Vec<u32> = (0..c.pick(3)).map(|_| c.pick(size) as u32).filter(|t| !eos.contains(t)).collect();
    Vocabulary::new(tokens, &specials, &eos, Some(size)).expect("a generated vocabulary is valid")
}

/// A random regex over the alphabet of [`TOKEN_BYTES`], `depth` levels deep at most: its
/// Python `re` text, and the same language in the `regex` crate's syntax (the texts differ
/// only where the dialects do: Python's `\w` is letters, all numbers and `_`; its `\s`
/// also holds the separators U+001C..U+001F).
pub fn regex(c: &mut dyn Chooser, depth: u32) -> (String, String) {
    const ATOMS: &[&str] = &["a", "b", "c", "x", "é", "€", "\\.", "0", " ", "\\(", "\"", "\\\\"];
    const CLASSES: &[(&str, &str)] = &[
        ("[ab]", "[ab]"),
        ("[^a]", "[^a]"),
        ("[a-c]", "[a-c]"),
        ("\\d", "\\d"),
        (".", "."),
        ("[é-ê]", "[é-ê]"),
        ("[^é]", "[^é]"),
        ("\\s", "[\\s\\x1c-\\x1f]"),
        ("\\w", "[\\p{L}\\p{N}_]"),
        ("[ab0-1]", "[ab0-1]"),
    ];
    let leaf = depth == 0 || c.pick(3) == 0;
    if leaf {
        return if c.pick(3) == 0 {
            let (py, rs) = CLASSES[c.pick(CLASSES.len())];
            (py.to_string(), rs.to_string())
        } else {
            let a = ATOMS[c.pick(ATOMS.len())];
            (a.to_string(), a.to_string())
        };
    }
    let d = depth - 1;
    let wrap = |(py, rs): (String, String), f: &dyn Fn(&str) -> String| (f(&py), f(&rs));
    match c.pick(8) {
        0 | 1 => {
            let parts: Vec<(String, String)> = (0..2 + c.pick(2)).map(|_| regex(c, d)).collect();
            (parts.iter().map(|p| p.0.as_str()).collect(), parts.iter().map(|p| p.1.as_str()).collect())
        }
        2 => {
            let (a, b) = (regex(c, d), regex(c, d));
            (format!("(?:{}|{})", a.0, b.0), format!("(?:{}|{})", a.1, b.1))
        }
        3 => wrap(regex(c, d), &|r| format!("(?:{r})*")),
        4 => wrap(regex(c, d), &|r| format!("(?:{r})+")),
        5 => wrap(regex(c, d), &|r| format!("(?:{r})?")),
        6 => {
            let m = c.pick(3);
            let n = m + c.pick(3);
            wrap(regex(c, d), &|r| format!("(?:{r}){{{m},{n}}}"))
        }
        _ => wrap(regex(c, d), &|r| format!("(?i:{r})")),
    }
}

/// A random corral EBNF grammar: 1-4 rules `r0 ..`, each a union of sequences of strings,
/// classes, `/regex/`s, references to any rule (so recursion is common) and quantified
/// groups. May be invalid (a rule that produces no finite string): that is an error to
/// report cleanly.
pub fn ebnf(c: &mut dyn Chooser) -> String {
    let rules = 1 + c.pick(4);
    let mut out = String::new();
    for r in 0..rules {
        let alts = 1 + c.pick(3);
        let body: Vec<String> = (0..alts).map(|_| ebnf_seq(c, rules, 2)).collect();
        out.push_str(&format!("r{r} ::= {} ;\n", body.join(" | ")));
    }
    out
}

fn ebnf_seq(c: &mut dyn Chooser, rules: usize, depth: u32) -> String {
    let n = c.pick(4);
    let items: Vec<String> = (0..n).map(|_| ebnf_item(c, rules, depth)).collect();
    if items.is_empty() {
        "\"\"".to_string()
    } else {
        items.join(" ")
    }
}

fn ebnf_item(c: &mut dyn Chooser, rules: usize, depth: u32) -> String {
    const STRINGS: &[&str] = &["\"a\"", "\"b\"", "\"ab\"", "\"(\"", "\")\"", "\"é\"", "\",\"", "\"\"", "\"x\\n\""];
    const CLASSES: &[&str] = &["[a-c]", "[^a]", "[0-1]", "[é€]", "[ \\n]"];
    match c.pick(if depth == 0 { 4 } else { 7 }) {
        0 => STRINGS[c.pick(STRINGS.len())].to_string(),
        1 => CLASSES[c.pick(CLASSES.len())].to_string(),
        2 => format!("r{}", c.pick(rules)),
        3 => format!("/{}/", regex(c, 2).0.replace('/', "\\/")),
        4 => format!("({})", ebnf_seq(c, rules, depth - 1)),
        5 => {
            let q = ["?", "*", "+", "{2}", "{0,2}", "{1,}"][c.pick(6)];
            format!("({} | {}){q}", ebnf_seq(c, rules, depth - 1), ebnf_seq(c, rules, depth - 1))
        }
        _ => {
            let ops = ["except!(\"b\")", "not!(\"a\")", "and!(/[a-c]+/, not!(\"ab\"))"];
            ops[c.pick(ops.len())].to_string()
        }
    }
}

/// The bytes of the tokens for [`json_objects`].
pub const JSON_BYTES: &[u8] = b"{}[]\":,1abx\\";

/// A random corral EBNF grammar of JSON-like values (`1`, arrays, objects) whose object
/// keys come from a random small key language (infinite, often with finite residuals:
/// `abc|x+`), with random bounds on the number of members: for grammars with distinct keys.
/// Also says whether every half-written key has infinitely many endings.
pub fn json_objects(c: &mut dyn Chooser) -> (String, bool) {
    const KEYS: &[&str] = &["a", "b", "ab", "abc", "x+", "[ab]*", "[ab]{0,2}", "a[bx]?", "x*", r"\\\\", r#"\\""#, "", "[abx]+"];
    // One infinite alternative at least: an object whose keys come from a finite class
    // and that used them all is the one case the distinct-keys check does not foresee
    // (the JSON Schema translator names the keys of such classes instead).
    const INFINITE: &[&str] = &["x+", "[ab]*", "[abx]+", "ab(x|b)*"];
    let mut alts: Vec<&str> = (0..c.pick(3)).map(|_| KEYS[c.pick(KEYS.len())]).collect();
    alts.push(INFINITE[c.pick(INFINITE.len())]);
    let lo = c.pick(4);
    let more = match c.pick(3) {
        0 => "*".to_string(),
        1 => format!("{{{lo},}}"),
        _ => format!("{{{lo},{}}}", lo + c.pick(3)),
    };
    let value = ["\"1\"", "\"1\" | o", "\"1\" | o | \"[\" (v (\",\" v)*)? \"]\""][c.pick(3)];
    let text = format!(
        "start ::= o ;\no ::= \"{{\" (m (\",\" m){more})? \"}}\" ;\nm ::= \"\\\"\" /(?:{})/ \"\\\"\" \":\" v ;\nv ::= {value} ;\n",
        alts.join("|")
    );
    (text, alts.len() == 1)
}

/// Checks that an error on `text` says where, within the text: a regex error's character
/// position is at most the pattern's length; a grammar error's line and column are in the
/// text (0 meaning "no single place").
pub fn check_error(e: &Error, text: &str) {
    let msg = e.to_string();
    assert!(!msg.is_empty(), "an empty error message");
    match e {
        Error::RegexSyntax { position, pattern, .. } | Error::UnsupportedRegex { position, pattern, .. } => {
            let chars = pattern.chars().count();
            assert!(*position <= chars, "error position {position} past the pattern's {chars} characters: {e:?}");
        }
        Error::Grammar { line, col, .. } => {
            if *line > 0 {
                let lines: Vec<&str> = text.split('\n').collect();
                assert!((*line as usize) <= lines.len(), "error line {line} past the text's {} lines: {e:?}", lines.len());
                let width = lines[*line as usize - 1].chars().count();
                assert!((*col as usize) <= width + 1, "error column {col} past line {line}'s {width} characters: {e:?}");
            }
        }
        Error::Vocabulary(_) | Error::InvalidArgument(_) => panic!("a grammar text gave a vocabulary/argument error: {e:?}"),
        Error::LimitExceeded { .. } | Error::EmptyLanguage { .. } => {}
        // A `%json {...}` schema's own error says where the schema is written.
        Error::Schema { message, .. } => assert!(message.starts_with("%json at "), "{e:?}"),
        Error::SchemaLimit { context, .. } => assert!(context.starts_with("%json at "), "{e:?}"),
        other => panic!("an unexpected kind of error for a grammar text: {other:?}"),
    }
}
