//! URI references as JSON Schema uses them (`$id`, `$ref`): split into parts, resolved
//! against a base by RFC 3986 §5.2, and split at the fragment.
//!
//! Only the parts of RFC 3986 that resolution needs are here: a reference is split by the
//! regular expression of its appendix B (every string splits, so a malformed reference
//! is found by the checks of [`check`], not by the splitting), and dot segments are
//! removed as §5.2.4 says. Unlike the resolution of some URL libraries, every scheme is
//! hierarchical here (`urn:` and `tag:` bases resolve fragments and paths too), which is
//! what JSON Schema's identifiers need.

/// The five parts of a URI reference (RFC 3986 appendix B). `None` for a part that is
/// absent, `Some("")` for one that is present and empty (`http://h?` has an empty query).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parts<'a> {
    scheme: Option<&'a str>,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

/// Splits a reference into its parts.
fn split(r: &str) -> Parts<'_> {
    let (rest, fragment) = match r.find('#') {
        Some(i) => (&r[..i], Some(&r[i + 1..])),
        None => (r, None),
    };
    let (rest, query) = match rest.find('?') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    // A scheme is letters, digits, `+`, `-`, `.` before the first `:`, with no `/` before it.
    let scheme_end = rest.find([':', '/']).filter(|&i| i > 0 && rest.as_bytes()[i] == b':');
    let (scheme, rest) = match scheme_end {
        Some(i) if is_scheme(&rest[..i]) => (Some(&rest[..i]), &rest[i + 1..]),
        _ => (None, rest),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            (Some(&after[..end]), &after[end..])
        }
        None => (None, rest),
    };
    Parts { scheme, authority, path, query, fragment }
}

fn is_scheme(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// Why a string is not a URI reference, if it is not one. Only what would make its
/// resolution ambiguous is refused: a `[` or `]` that does not enclose the IP literal of
/// an authority (`http://[`). Other characters a strict URI would percent-encode (spaces,
/// `{`, `}` in a JSON pointer to an OpenAPI path) are read as they are written, as
/// validators do.
pub fn check(r: &str) -> Result<(), String> {
    let parts = split(r);
    let host = parts.authority.map(|a| a.rsplit_once('@').map_or(a, |(_, h)| h));
    let literal_ok = |h: &str| match h.strip_prefix('[') {
        Some(rest) => rest.find(']').is_some_and(|j| !rest[..j].contains('[') && !rest[j + 1..].contains(['[', ']'])),
        None => !h.contains(['[', ']']),
    };
    if host.is_some_and(|h| !literal_ok(h)) {
        return Err("`[` and `]` may only enclose the IP literal of a host".into());
    }
    Ok(())
}

/// Resolves `reference` against the absolute `base` (RFC 3986 §5.2.2, strict: a
/// reference with a scheme is taken as it is).
pub fn resolve(base: &str, reference: &str) -> String {
    let b = split(base);
    let r = split(reference);
    let (scheme, authority, path, query);
    if r.scheme.is_some() {
        scheme = r.scheme;
        authority = r.authority;
        path = remove_dot_segments(r.path);
        query = r.query;
    } else {
        scheme = b.scheme;
        if r.authority.is_some() {
            authority = r.authority;
            path = remove_dot_segments(r.path);
            query = r.query;
        } else {
            authority = b.authority;
            if r.path.is_empty() {
                path = b.path.to_string();
                query = r.query.or(b.query);
            } else {
                path =
                    if r.path.starts_with('/') { remove_dot_segments(r.path) } else { remove_dot_segments(&merge(&b, r.path)) };
                query = r.query;
            }
        }
    }
    compose(scheme, authority, &path, query, r.fragment)
}

/// RFC 3986 §5.2.3: a relative path joined to the base's directory.
fn merge(base: &Parts<'_>, path: &str) -> String {
    if base.authority.is_some() && base.path.is_empty() {
        return format!("/{path}");
    }
    match base.path.rfind('/') {
        Some(i) => format!("{}{path}", &base.path[..=i]),
        None => path.to_string(),
    }
}

/// RFC 3986 §5.2.4: `.` and `..` segments interpreted and removed.
fn remove_dot_segments(path: &str) -> String {
    let mut input = path;
    let mut out = String::with_capacity(path.len());
    while !input.is_empty() {
        if let Some(rest) = input.strip_prefix("../").or_else(|| input.strip_prefix("./")) {
            input = rest;
        } else if input.starts_with("/./") {
            input = &input[2..];
        } else if input == "/." {
            input = "/";
        } else if input.starts_with("/../") || input == "/.." {
            input = if input == "/.." { "/" } else { &input[3..] };
            let cut = out.rfind('/').unwrap_or(0);
            out.truncate(cut);
        } else if input == "." || input == ".." {
            input = "";
        } else {
            let start = usize::from(input.starts_with('/'));
            let end = input[start..].find('/').map_or(input.len(), |i| i + start);
            out.push_str(&input[..end]);
            input = &input[end..];
        }
    }
    out
}

fn compose(scheme: Option<&str>, authority: Option<&str>, path: &str, query: Option<&str>, fragment: Option<&str>) -> String {
    let mut s = String::new();
    if let Some(x) = scheme {
        s.push_str(x);
        s.push(':');
    }
    if let Some(x) = authority {
        s.push_str("//");
        s.push_str(x);
    }
    s.push_str(path);
    if let Some(x) = query {
        s.push('?');
        s.push_str(x);
    }
    if let Some(x) = fragment {
        s.push('#');
        s.push_str(x);
    }
    s
}

/// The URI without its fragment, and the fragment (`""` when there is none or it is
/// empty: JSON Schema treats `a#` as `a`).
pub fn split_fragment(uri: &str) -> (&str, &str) {
    match uri.find('#') {
        Some(i) => (&uri[..i], &uri[i + 1..]),
        None => (uri, ""),
    }
}

/// A URI fragment's percent-encoding decoded (a JSON pointer in a fragment may encode
/// any character; bytes that do not form UTF-8 are kept as U+FFFD).
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).and_then(|&c| hex(c)), b.get(i + 2).and_then(|&c| hex(c))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3986 §5.4's examples, normal and abnormal.
    #[test]
    fn resolves_the_examples_of_rfc_3986() {
        let base = "http://a/b/c/d;p?q";
        let cases = [
            ("g:h", "g:h"),
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("g#s", "http://a/b/c/g#s"),
            ("g?y#s", "http://a/b/c/g?y#s"),
            (";x", "http://a/b/c/;x"),
            ("g;x", "http://a/b/c/g;x"),
            ("g;x?y#s", "http://a/b/c/g;x?y#s"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("../../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            (".g", "http://a/b/c/.g"),
            ("g..", "http://a/b/c/g.."),
            ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"),
            ("./g/.", "http://a/b/c/g/"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
            ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
            ("g;x=1/../y", "http://a/b/c/y"),
            ("g?y/./x", "http://a/b/c/g?y/./x"),
            ("g#s/../x", "http://a/b/c/g#s/../x"),
            ("http:g", "http:g"),
        ];
        for (r, want) in cases {
            assert_eq!(resolve(base, r), want, "{r}");
        }
    }

    #[test]
    fn non_web_schemes_resolve_too() {
        assert_eq!(resolve("urn:uuid:deadbeef-1234", "#/$defs/bar"), "urn:uuid:deadbeef-1234#/$defs/bar");
        assert_eq!(resolve("urn:uuid:deadbeef-1234#x", "#foo"), "urn:uuid:deadbeef-1234#foo");
        assert_eq!(resolve("tag:example.com,2000:a/b", "c.json"), "tag:example.com,2000:a/c.json");
        assert_eq!(resolve("https://corral.invalid/schema.json", "urn:x"), "urn:x");
    }

    #[test]
    fn splits_fragments_and_decodes_them() {
        assert_eq!(split_fragment("http://x/y#/a/b"), ("http://x/y", "/a/b"));
        assert_eq!(split_fragment("http://x/y#"), ("http://x/y", ""));
        assert_eq!(split_fragment("http://x/y"), ("http://x/y", ""));
        assert_eq!(percent_decode("/a%25b/%C3%A9/%22"), "/a%b/é/\"");
        assert_eq!(percent_decode("100%"), "100%");
    }

    #[test]
    fn checks_references() {
        for ok in ["", "#", "#/a/b", "http://h/a?b#c", "http://[::1]:80/x", "urn:uuid:1", "é.json", "a b", "#/paths/~1u~1{id}"] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for bad in ["http://[", "http://[::1", "http://h]/", "http://[::1]]/"] {
            assert!(check(bad).is_err(), "{bad}");
        }
    }
}
