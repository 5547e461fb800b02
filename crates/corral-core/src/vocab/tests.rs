use super::*;

#[test]
fn tokens_with_a_prefix_are_the_trie_subtree() {
    let words: [&[u8]; 7] = [b"a", b"ab", b"abc", b"abd", b"b", b"ba", b"\xc3\xa9"];
    let mut tokens: Vec<Option<Vec<u8>>> = words.iter().map(|w| Some(w.to_vec())).collect();
    tokens.push(None);
    let v = Vocabulary::new(tokens, &[], &[7], None).unwrap();
    for prefix in [&b""[..], b"a", b"ab", b"abc", b"b", b"c", b"\xc3", b"abcd"] {
        let mut got: Vec<u32> = v.tokens_with_prefix(prefix).to_vec();
        got.sort_unstable();
        let want: Vec<u32> = (0..7).filter(|&i| words[i as usize].starts_with(prefix)).collect();
        assert_eq!(got, want, "{prefix:?}");
    }
}

/// Accepts any byte string that is a prefix of one of `words`.
struct PrefixOf {
    words: Vec<Vec<u8>>,
    buf: Vec<u8>,
}

impl ByteRecognizer for PrefixOf {
    fn push_byte(&mut self, byte: u8) -> bool {
        self.buf.push(byte);
        if self.words.iter().any(|w| w.starts_with(&self.buf)) {
            true
        } else {
            self.buf.pop();
            false
        }
    }
    fn pop_bytes(&mut self, n: usize) {
        let len = self.buf.len() - n;
        self.buf.truncate(len);
    }
}

fn vocab(tokens: &[&str]) -> Vocabulary {
    let mut t: Vec<Option<Vec<u8>>> = tokens.iter().map(|s| Some(s.as_bytes().to_vec())).collect();
    t.push(None); // eos
    let eos = t.len() as u32 - 1;
    Vocabulary::new(t, &[], &[eos], None).unwrap()
}

#[test]
fn trie_walk_matches_brute_force() {
    let toks = ["a", "ab", "abc", "b", "ba", "abc", "c", "bab", "x", "abd"];
    let v = vocab(&toks);
    for words in [vec!["abc"], vec!["ba", "x"], vec!["abdx"], vec![""]] {
        let mut rec = PrefixOf { words: words.iter().map(|w| w.as_bytes().to_vec()).collect(), buf: vec![] };
        let mut got = vec![];
        v.trie().walk(&mut rec, |t| got.push(t));
        got.sort();
        let mut want: Vec<u32> = (0..toks.len() as u32)
            .filter(|&i| words.iter().any(|w| w.as_bytes().starts_with(toks[i as usize].as_bytes())))
            .collect();
        want.sort();
        assert_eq!(got, want, "{words:?}");
        assert!(rec.buf.is_empty());
    }
}

#[test]
fn kinds_and_errors() {
    let v = Vocabulary::new(vec![Some(b"a".to_vec()), Some(b"".to_vec()), Some(b"<s>".to_vec())], &[2], &[2], Some(40)).unwrap();
    assert_eq!(v.kind(0), TokenKind::Normal);
    assert_eq!(v.kind(1), TokenKind::Missing);
    assert_eq!(v.kind(2), TokenKind::Eos);
    assert_eq!(v.kind(39), TokenKind::Missing);
    assert_eq!(v.mask_words(), 2);
    assert!(Vocabulary::new(vec![Some(b"a".to_vec())], &[], &[], None).is_err());
    assert!(Vocabulary::new(vec![Some(b"a".to_vec())], &[], &[5], None).is_err());
    assert!(Vocabulary::new(vec![Some(b"a".to_vec()); 4], &[], &[0], Some(2)).is_err());
}
