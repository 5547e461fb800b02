//! The pattern check against a JavaScript engine's answers, and the tracker's reading of
//! JSON text.

use super::syntax::tests::read;
use super::syntax::RegexSyntax;
use super::*;
use crate::frontend::ast::ItemStarts;

/// Patterns and whether `new RegExp(p, "u")` accepts them (node 20; written by
/// `tools/gen_ecma_regex_cases.py`), shared with the Python tests.
const CASES: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus/ecma_regex.jsonl"));

#[test]
fn the_check_agrees_with_a_javascript_engine() {
    let mut n = 0;
    let mut wrong = Vec::new();
    for line in CASES.lines().filter(|l| !l.is_empty()) {
        let (p, valid): (String, bool) = serde_json::from_str(line).unwrap();
        n += 1;
        if (read(&p) == Some(true)) != valid {
            wrong.push(format!("{p:?}: engine {valid}, check {:?}", read(&p)));
        }
        // Viability: every prefix of a valid pattern is readable.
        if valid {
            let mut r = RegexSyntax::new();
            for (i, c) in p.chars().enumerate() {
                if !r.push_char(c as u32) {
                    wrong.push(format!("{p:?}: refused at character {i}"));
                    break;
                }
            }
        }
    }
    assert!(n > 1000, "{n} cases");
    assert!(wrong.is_empty(), "{} of {n} wrong:\n{}", wrong.len(), wrong[..wrong.len().min(30)].join("\n"));
}

#[test]
fn every_readable_prefix_has_a_completion() {
    for line in CASES.lines().filter(|l| !l.is_empty()) {
        let (p, _): (String, bool) = serde_json::from_str(line).unwrap();
        let mut r = RegexSyntax::new();
        let mut read_so_far = String::new();
        for c in p.chars() {
            if !r.push_char(c as u32) {
                break;
            }
            read_so_far.push(c);
            let rest: String = r.completion(1000).unwrap().iter().filter_map(|&c| char::from_u32(c)).collect();
            let whole = format!("{read_so_far}{rest}");
            assert_eq!(read(&whole), Some(true), "{read_so_far:?} + {rest:?}");
        }
    }
}

fn query_at(offsets: &'static [usize]) -> impl EntryQuery {
    struct At(&'static [usize]);
    impl EntryQuery for At {
        fn distinct_entry_at(&mut self, offset: usize, kind: Distinct) -> Result<bool> {
            Ok(kind == Distinct::Regex && self.0.contains(&offset))
        }

        fn value_lists_at(&mut self, _offset: usize) -> Result<ItemStarts> {
            Ok(ItemStarts::NONE)
        }

        fn json_region_at(&mut self, _offset: usize, _b: u8) -> Result<bool> {
            Ok(false)
        }
    }
    At(offsets)
}

#[test]
fn the_tracker_reads_json_text_and_rolls_back() {
    // A pattern string opens where the parser says, at byte 6.
    let mut t = RegexTexts::new();
    assert!(t.push_token(br#"{"p": ""#, &mut query_at(&[6])).unwrap());
    assert!(t.is_open());
    let mut q = query_at(&[]);
    assert!(t.push_token(br"(a\\d", &mut q).unwrap());
    // An unfinished pattern may not close, nor a quantifier follow `(`.
    assert!(!t.push_token(br#"""#, &mut q).unwrap());
    assert!(t.push_token(b")", &mut q).unwrap());
    assert_eq!(t.first_refusal(br#"\"x"}"#, &mut q).unwrap(), None);
    assert_eq!(t.first_refusal(br"]", &mut q).unwrap(), Some(0));
    assert!(t.push_token(br#""}"#, &mut q).unwrap());
    assert!(!t.is_open());
    t.rollback(2);
    assert!(t.is_open());
    assert_eq!(t.completion(1000), Some(b")".to_vec()));
    // Escapes are decoded: `\"` is a quote inside the pattern, `\u0001` a control
    // character (an atom), `\\` a backslash.
    let mut t = RegexTexts::new();
    assert!(t.push_token(br#""(\"""#, &mut query_at(&[0])).is_ok_and(|ok| !ok));
    assert!(t.push_token(br#""(\"\u0001\t)\\d""#, &mut query_at(&[0])).unwrap());
    assert!(!t.is_open());
    // A half-read character is refused where nothing it may become fits: in corral's
    // spelling of strings an escape is a quote, a backslash or a control character,
    // never the hex digit `\x` needs; a control character is an atom.
    let mut t = RegexTexts::new();
    assert!(t.push_token(br#""\\x"#, &mut query_at(&[0])).unwrap());
    assert_eq!(t.first_refusal(br"\u0041", &mut query_at(&[])).unwrap(), Some(0));
    assert_eq!(t.first_refusal(b"4f", &mut query_at(&[])).unwrap(), None);
    assert_eq!(t.first_refusal(b"4g", &mut query_at(&[])).unwrap(), Some(1));
    assert_eq!(t.first_refusal(br"4f\u001f", &mut query_at(&[])).unwrap(), None);
}

#[test]
fn completions_finish_a_half_read_character_first() {
    for (open, done) in [
        (&br#""a\"#[..], &br#""a\"""#[..]),
        (br#""\\x4"#, br#""\\x4f""#),
        (br#""[\u00"#, br#""[\u0000]""#),
        (b"\"(\xc3", "\"(\u{c0})\"".as_bytes()),
        (br#""(?<"#, br#""(?<=)""#),
    ] {
        let mut t = RegexTexts::new();
        assert!(t.push_token(open, &mut query_at(&[0])).unwrap(), "{:?}", String::from_utf8_lossy(open));
        let mut whole = open.to_vec();
        whole.extend(t.completion(1000).unwrap());
        whole.push(b'"');
        assert_eq!(whole, done, "{:?}", String::from_utf8_lossy(&whole));
        assert!(RegexTexts::new().push_token(&whole, &mut query_at(&[0])).unwrap());
    }
}

#[test]
fn rollback_undoes_tokens_that_close_and_open_strings() {
    let mut t = RegexTexts::new();
    assert!(t.push_token(br#"["(a"#, &mut query_at(&[1])).unwrap());
    // Closes `(a)`, opens the next string at byte 3 of the token, writes `[b`.
    assert!(t.push_token(br#")","[b"#, &mut query_at(&[3])).unwrap());
    assert_eq!(t.completion(100), Some(b"]".to_vec()));
    assert!(t.push_token(b"]", &mut query_at(&[])).unwrap());
    t.rollback(2);
    assert_eq!(t.completion(100), Some(b")".to_vec()));
    assert!(t.push_token(b"|c)", &mut query_at(&[])).unwrap());
    assert_eq!(t.completion(100), Some(Vec::new()));
    // A refused token changes nothing, here one that closes the string unfinished.
    let before = format!("{t:?}");
    assert!(!t.push_token(br#"(""#, &mut query_at(&[])).unwrap());
    assert_eq!(format!("{t:?}"), before);
}

#[test]
fn long_patterns_cost_no_copy_per_token() {
    // 20,000 nested groups, a token each: the undo log grows by a few entries per token,
    // and rolling all of them back leaves the string empty again.
    let mut t = RegexTexts::new();
    assert!(t.push_token(br#"""#, &mut query_at(&[0])).unwrap());
    for _ in 0..20_000 {
        assert!(t.push_token(b"(", &mut query_at(&[])).unwrap());
    }
    assert_eq!(t.completion(10), None, "20,000 closing parentheses are past the bound");
    assert_eq!(t.completion(20_000).map(|c| c.len()), Some(20_000));
    t.rollback(20_000);
    assert_eq!(t.completion(0), Some(Vec::new()));
}

#[test]
fn quote_tokens_that_cannot_break_a_pattern() {
    for (bytes, safe) in [
        (&br#"""#[..], true),
        (br#"":"#, true),
        (br#"a""#, true),
        (br#""]"#, false),
        (br#"",""#, true),
        (br#"")"#, false),
        (br#""*"#, false),
        (br#"(""#, true),
    ] {
        assert_eq!(quote_token_is_safe(bytes), safe, "{:?}", String::from_utf8_lossy(bytes));
    }
}

#[test]
fn the_walk_keeps_what_reading_keeps() {
    let mut t = RegexTexts::new();
    assert!(t.push_token(br#""[a-"#, &mut query_at(&[0])).unwrap());
    let words: Vec<&[u8]> = vec![b"z", b"z]", b"z]\"", b"Z", b"\\\\d", b"z]\",\"", b"\\u0041]"];
    for w in words {
        let mut walk = t.walk().unwrap();
        let pushed = w.iter().take_while(|&&b| walk.push_byte(b)).count();
        let read_ok = t.first_refusal(w, &mut query_at(&[])).unwrap().is_none();
        assert_eq!(pushed == w.len(), read_ok, "{:?}", String::from_utf8_lossy(w));
        walk.pop_bytes(pushed);
        assert_eq!(format!("{:?}", walk.syntax), format!("{:?}", t.walk().unwrap().syntax));
    }
}

/// A small deterministic generator for the property tests below.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn token(&mut self) -> Vec<u8> {
        const PIECES: &[&[u8]] = &[
            b"(",
            b")",
            b"[",
            b"]",
            b"{",
            b"}",
            b"a",
            b"1",
            b"0",
            b",",
            b"-",
            b"^",
            b"$",
            b"|",
            b"*",
            b"?",
            b"+",
            b".",
            b"\\\\",
            b"\\\\d",
            b"\\\\k<",
            b"\\\\p{L}",
            b"\\\\u",
            b"<",
            b">",
            b"n",
            b"\"",
            b"\\\"",
            b"\\n",
            b"\\u0001",
            b"\xc3",
            b"\xa9",
            b"\xe2\x82\xac",
            b"(?",
            b"(?<",
            b"=",
            b"!",
            b":",
            b"x",
            b"f",
        ];
        let n = 1 + self.next() % 3;
        (0..n).flat_map(|_| PIECES[(self.next() % PIECES.len() as u64) as usize].to_vec()).collect()
    }
}

#[test]
fn reading_ahead_rolling_back_and_walking_agree() {
    // Random token sequences inside one pattern string: `first_refusal` predicts
    // `push_token`, `rollback` restores the state exactly, and the trie walker accepts
    // exactly the tokens reading accepts.
    let mut rng = Lcg(7);
    for _ in 0..300 {
        let mut t = RegexTexts::new();
        assert!(t.push_token(b"\"", &mut query_at(&[0])).unwrap());
        let mut states = vec![format!("{t:?}")];
        for _ in 0..30 {
            let token = rng.token();
            let predicted = t.first_refusal(&token, &mut query_at(&[])).unwrap().is_none();
            if let Some(mut walk) = t.walk() {
                let pushed = token.iter().take_while(|&&b| walk.push_byte(b)).count();
                assert_eq!(pushed == token.len(), predicted, "{token:?} after {}", states.last().unwrap());
            }
            let read = t.push_token(&token, &mut query_at(&[])).unwrap();
            assert_eq!(read, predicted);
            if read {
                states.push(format!("{t:?}"));
            }
            if !t.is_open() {
                break;
            }
        }
        // Back one token at a time, through every state seen.
        while states.len() > 1 {
            states.pop();
            t.rollback(1);
            assert_eq!(&format!("{t:?}"), states.last().unwrap());
        }
    }
}
