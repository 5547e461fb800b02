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

/// The walk of the tokens longer than a depth visits exactly the nodes deeper than it that
/// the recognizer reads (the tokens there with them), and the trie's counts of such nodes
/// and tokens match a scan, at every depth.
#[test]
fn walk_of_longer_tokens_matches_brute_force() {
    let toks = ["a", "ab", "abc", "abcd", "abcde", "b", "ba", "bab", "babab", "x", "xyzzyx", "abd", "é", "ééé"];
    let v = vocab(&toks);
    let trie = v.trie();
    let max = toks.iter().map(|t| t.len()).max().unwrap();
    assert_eq!(trie.max_depth(), max);
    for depth in 0..=max + 1 {
        let mut longer: Vec<u32> = trie.tokens_longer_than(depth).to_vec();
        longer.sort_unstable();
        let want: Vec<u32> = (0..toks.len() as u32).filter(|&i| toks[i as usize].len() > depth).collect();
        assert_eq!(longer, want, "tokens longer than {depth}");
        // Nodes on a path to a longer token: its prefixes (as strings) of 1 ..= len bytes.
        let mut paths: Vec<&[u8]> = Vec::new();
        for t in toks.iter().filter(|t| t.len() > depth) {
            paths.extend((1..=t.len()).map(|k| &t.as_bytes()[..k]));
        }
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(trie.nodes_reaching_deeper(depth), paths.len(), "nodes reaching deeper than {depth}");
        for words in [vec!["abcde"], vec!["babab", "x"], vec!["xyzzyxq", "ééé"], vec![""]] {
            let mut rec = PrefixOf { words: words.iter().map(|w| w.as_bytes().to_vec()).collect(), buf: vec![] };
            let (mut got, mut visited) = (vec![], 0);
            trie.walk_nodes_deeper(depth, &mut rec, |r, node, tokens| {
                assert!(trie.node_depth(node) > depth && r.buf.len() == trie.node_depth(node));
                visited += 1;
                got.extend_from_slice(tokens);
            });
            got.sort_unstable();
            let want: Vec<u32> = (0..toks.len() as u32)
                .filter(|&i| {
                    let t = toks[i as usize].as_bytes();
                    t.len() > depth && words.iter().any(|w| w.as_bytes().starts_with(t))
                })
                .collect();
            assert_eq!(got, want, "{words:?} deeper than {depth}");
            let nodes = paths.iter().filter(|p| p.len() > depth && words.iter().any(|w| w.as_bytes().starts_with(p))).count();
            assert_eq!(visited, nodes, "{words:?} nodes deeper than {depth}");
            assert!(rec.buf.is_empty());
        }
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

/// The string-safe tokens holding a byte of a set, whether a byte's tokens are set one by
/// one (rare bytes) or OR-ed as a mask (common ones): against a plain scan, for sets of
/// rare and common bytes, with and without every byte from 0x80 up.
#[test]
fn safe_tokens_holding_equals_a_scan() {
    use crate::vocab::slices::is_string_safe_fragment;
    let mut words: Vec<String> = Vec::new();
    for a in ["a", "b", "e", " ", "%", "é", "ab", "x"] {
        for b in ["", "a", " ", "b", "-", "#", "ü", "\"", "ee"] {
            words.push(format!("{a}{b}"));
            words.push(format!("{b}{a}{a}"));
        }
    }
    words.push("~q".into()); // bytes held by one token: set one by one
    words.sort();
    words.dedup();
    let v = vocab(&words.iter().map(String::as_str).collect::<Vec<_>>());
    let rare = v.safe_ids_with_rare_byte();
    assert!(rare[b'~' as usize].is_some() && rare[b'a' as usize].is_none(), "both kinds of byte are present");
    let mut sets: Vec<Vec<u8>> = vec![b"~".to_vec(), b"a".to_vec(), b"a~%".to_vec(), b" -eq".to_vec(), b"bx\"#".to_vec()];
    sets.push((0x80..=0xff).collect());
    sets.push([b"~a".as_slice(), &(0x80..=0xffu8).collect::<Vec<_>>()].concat());
    for set in sets {
        let mut bits = [0u64; 4];
        for &b in &set {
            bits[(b >> 6) as usize] |= 1 << (b & 63);
        }
        let got = v.safe_tokens_holding(&bits);
        for id in 0..v.size() as u32 {
            let t = v.token_bytes(id);
            let want = !t.is_empty() && is_string_safe_fragment(t) && t.iter().any(|b| set.contains(b));
            assert_eq!(got[(id >> 5) as usize] >> (id & 31) & 1 == 1, want, "set {set:?} token {t:?}");
        }
    }
}
