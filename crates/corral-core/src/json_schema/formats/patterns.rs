//! The `format` patterns over a decoded string value, built from the RFCs' grammars
//! piece by piece. Each is a pattern in a small syntax subset (literal characters,
//! non-ASCII ones as themselves; backslash-escaped punctuation; classes with ranges and
//! `^`; groups; alternation; greedy `? * + {m} {m,} {m,n}`). What the translator renders
//! from a pattern is the key of its automaton in the prebuilt table: a changed pattern
//! needs the table written again (`tools/prebuild_formats.py`).
//!
//! Choices where the RFCs leave room (each a subset of what the RFC allows, so a string
//! generated from the pattern is always valid): `duration` designators are upper case;
//! `uri-template` rejects the operators RFC 6570 reserves (`= , ! @ |`); `email` rejects
//! the general address literal (`[tag:content]`, whose tag must be IANA-registered, and
//! `IPv6` is the only one); `hostname` and `email` labels are at most 63 octets;
//! `relative-json-pointer` is draft-handrews-relative-json-pointer-01 (the one JSON Schema
//! 2020-12 cites), without the later index manipulation (`0+1`).

/// A class range from code point `lo` to `hi`, written with the literal characters.
fn range(lo: u32, hi: u32) -> String {
    let ch = |cp| char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER);
    format!("{}-{}", ch(lo), ch(hi))
}

/// Every non-ASCII scalar value (no surrogates): RFC 6532 UTF8-non-ascii.
fn non_ascii() -> String {
    range(0x80, 0xD7FF) + &range(0xE000, 0x10FFFF)
}

/// RFC 3987 ucschar.
fn ucschar() -> String {
    let planes: String = (1..14u32).map(|p| range(p << 16, (p << 16) | 0xFFFD)).collect();
    [range(0xA0, 0xD7FF), range(0xF900, 0xFDCF), range(0xFDF0, 0xFFEF), planes, range(0xE1000, 0xEFFFD)].concat()
}

/// RFC 3987 iprivate.
fn iprivate() -> String {
    [range(0xE000, 0xF8FF), range(0xF0000, 0xFFFFD), range(0x100000, 0x10FFFD)].concat()
}

/// RFC 3986 dec-octet: 0-255 without leading zeros.
const DEC_OCTET: &str = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";

/// RFC 3986 IPv4address.
fn ipv4() -> String {
    format!(r"{DEC_OCTET}(?:\.{DEC_OCTET}){{3}}")
}

const H16: &str = "[0-9A-Fa-f]{1,4}";

/// RFC 3986 IPv6address (the RFC 4291 text form), with `ipv4` as the dotted quad.
fn rfc3986_ipv6(ipv4: &str) -> String {
    let h = H16;
    let ls32 = format!("(?:{h}:{h}|{ipv4})");
    // [ *n( h16 ":" ) h16 ]
    let upto = |n: u32| if n > 0 { format!("(?:(?:{h}:){{0,{n}}}{h})?") } else { format!("(?:{h})?") };
    let alts = [
        format!("(?:{h}:){{6}}{ls32}"),
        format!("::(?:{h}:){{5}}{ls32}"),
        format!("{}::(?:{h}:){{4}}{ls32}", upto(0)),
        format!("{}::(?:{h}:){{3}}{ls32}", upto(1)),
        format!("{}::(?:{h}:){{2}}{ls32}", upto(2)),
        format!("{}::{h}:{ls32}", upto(3)),
        format!("{}::{ls32}", upto(4)),
        format!("{}::{h}", upto(5)),
        format!("{}::", upto(6)),
    ];
    format!("(?:{})", alts.join("|"))
}

/// RFC 1123 host name label: letters, digits, hyphens; no hyphen first or last; 1-63 octets.
const LABEL: &str = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";

fn hostname() -> String {
    format!(r"{LABEL}(?:\.{LABEL})*")
}

/// RFC 3339 full-date. Month-day pairs valid in every year (01-28 in any month, 29-30
/// outside February, 31 in the 31-day months), or February 29 of a Gregorian leap year.
fn full_date() -> String {
    let month_day = "(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)";
    let leap_year = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)";
    format!("(?:[0-9]{{4}}-{month_day}|{leap_year}-02-29)")
}

const HOUR: &str = "(?:[01][0-9]|2[0-3])";
const MINUTE: &str = "[0-5][0-9]";
const SECFRAC: &str = r"(?:\.[0-9]+)?";

/// RFC 3339 full-time; leap seconds only as 23:59:60 in UTC spelling (Z or ±00:00), see
/// [`super::gap`].
fn full_time() -> String {
    let offset = format!(r"(?:[Zz]|[+\-]{HOUR}:{MINUTE})");
    format!(r"(?:{HOUR}:{MINUTE}:[0-5][0-9]{SECFRAC}{offset}|23:59:60{SECFRAC}(?:[Zz]|[+\-]00:00))")
}

/// RFC 3339 Appendix A duration (ISO 8601 subset): no fractions, no signs.
fn duration() -> String {
    let n = "[0-9]+";
    let time = format!("T(?:{n}H(?:{n}M(?:{n}S)?)?|{n}M(?:{n}S)?|{n}S)");
    let date = format!("(?:{n}D|{n}M(?:{n}D)?|{n}Y(?:{n}M(?:{n}D)?)?)(?:{time})?");
    format!("P(?:{date}|{time}|{n}W)")
}

/// RFC 5321 atext, as class members.
const ATEXT_CHARS: &str = r"A-Za-z0-9!#$%&'*+\-/=?\^_`{|}~";
/// qtextSMTP (%d32-33 / %d35-91 / %d93-126), as class members.
const QTEXT_CHARS: &str = r" !#-\[\]-~";
/// quoted-pairSMTP ("\" %d32-126).
const QPAIR: &str = r"\\[ -~]";
/// IPv4-address-literal's Snum: 1*3DIGIT with a value of 0-255 (leading zeros allowed).
const SNUM: &str = "(?:25[0-5]|2[0-4][0-9]|[01][0-9]{2}|[0-9]{1,2})";

fn ipv4_literal() -> String {
    format!(r"{SNUM}(?:\.{SNUM}){{3}}")
}

/// Between `lo` and `hi` (1 <= lo <= hi) h16 groups joined by ":".
fn groups(lo: u32, hi: u32) -> String {
    let h = H16;
    if hi == 1 {
        return h.to_string();
    }
    if lo == 2 && hi == 2 {
        return format!("{h}:{h}");
    }
    let more = if lo == hi { format!("{{{}}}", lo - 1) } else { format!("{{{},{}}}", lo - 1, hi - 1) };
    format!("{h}(?::{h}){more}")
}

/// IPv6-comp (`tail` empty) or IPv6v4-comp (`tail` an IPv4 literal): k groups, "::", at
/// most `max_groups - k` groups (followed by ":" when a tail follows), then the tail.
fn compressed(max_groups: u32, tail: &str) -> String {
    let alts: Vec<String> = (0..=max_groups)
        .map(|k| {
            let left = if k > 0 { groups(k, k) } else { String::new() };
            let rest = max_groups - k;
            let right = match (rest, tail.is_empty()) {
                (0, _) => String::new(),
                (_, false) => format!("(?:{}:)?", groups(1, rest)),
                (_, true) => format!("(?:{})?", groups(1, rest)),
            };
            format!("{left}::{right}{tail}")
        })
        .collect();
    format!("(?:{})", alts.join("|"))
}

/// RFC 5321 IPv6-addr: full, or compressed with "::" standing for at least 2 groups.
fn rfc5321_ipv6() -> String {
    let v4 = ipv4_literal();
    let alts = [groups(8, 8), compressed(6, ""), format!("{}:{v4}", groups(6, 6)), compressed(4, &v4)];
    format!("(?:{})", alts.join("|"))
}

fn address_literal() -> String {
    format!(r"\[(?:{}|[Ii][Pp][Vv]6:{})\]", ipv4_literal(), rfc5321_ipv6())
}

/// A mailbox: a dot-string or quoted local part, `@`, a domain or an address literal.
fn mailbox(atext: &str, qtext: &str, domain: &str) -> String {
    let local = format!(r#"(?:[{atext}]+(?:\.[{atext}]+)*|"(?:[{qtext}]|{QPAIR})*")"#);
    format!("{local}@(?:{domain}|{})", address_literal())
}

fn email() -> String {
    mailbox(ATEXT_CHARS, QTEXT_CHARS, &hostname())
}

/// RFC 6531: atext and qtextSMTP gain UTF8-non-ascii; sub-domain gains U-label, which is
/// approximated by letters, digits, hyphens and non-ASCII characters other than controls,
/// NBSP and the IDNA full stops (U+3002, U+FF0E, U+FF61).
fn idn_email() -> String {
    let ranges = [(0xA1, 0x3001), (0x3003, 0xD7FF), (0xE000, 0xFF0D), (0xFF0F, 0xFF60), (0xFF62, 0x10FFFF)];
    let u: String = std::iter::once(String::from("A-Za-z0-9")).chain(ranges.iter().map(|&(a, b)| range(a, b))).collect();
    let label = format!(r"[{u}](?:[{u}\-]{{0,61}}[{u}])?");
    let (atext, qtext) = (format!("{ATEXT_CHARS}{}", non_ascii()), format!("{QTEXT_CHARS}{}", non_ascii()));
    mailbox(&atext, &qtext, &format!(r"{label}(?:\.{label})*"))
}

const UNRESERVED: &str = r"A-Za-z0-9\-._~";
const SUB_DELIMS: &str = r"!$&'()*+,;=";
const PCT: &str = "%[0-9A-Fa-f]{2}";

/// (absolute URI, URI reference) for RFC 3986 (`iunreserved` = unreserved, no `iprivate`)
/// or RFC 3987 (ucschar added to unreserved, iprivate allowed in the query).
fn uri_patterns(iunreserved: &str, iprivate: &str) -> (String, String) {
    let (u, s) = (iunreserved, SUB_DELIMS);
    let chars = |extra: &str| format!("(?:[{u}{s}{extra}]|{PCT})");
    let pchar = chars(":@");
    let userinfo = format!("{}*", chars(":"));
    let ipvfuture = format!(r"[Vv][0-9A-Fa-f]+\.[{UNRESERVED}{s}:]+");
    // IPv4address is a subset of reg-name, so host = IP-literal / reg-name is the same set.
    let host = format!(r"(?:\[(?:{}|{ipvfuture})\]|{}*)", rfc3986_ipv6(&ipv4()), chars(""));
    let authority = format!("(?:{userinfo}@)?{host}(?::[0-9]*)?");
    let segment = format!("{pchar}*");
    let path_abempty = format!("(?:/{segment})*");
    let path_absolute = format!("/(?:{pchar}+(?:/{segment})*)?");
    let path_rootless = format!("{pchar}+(?:/{segment})*");
    let path_noscheme = format!("{}+(?:/{segment})*", chars("@"));
    let query = format!("(?:[{u}{s}:@/?{iprivate}]|{PCT})*");
    let fragment = format!("(?:[{u}{s}:@/?]|{PCT})*");
    let tail = format!(r"(?:\?{query})?(?:#{fragment})?");
    let scheme = r"[A-Za-z][A-Za-z0-9+\-.]*";
    let absolute = format!("{scheme}:(?://{authority}{path_abempty}|{path_absolute}|{path_rootless})?{tail}");
    let relative = format!("(?://{authority}{path_abempty}|{path_absolute}|{path_noscheme})?{tail}");
    let reference = format!("(?:{absolute}|{relative})");
    (absolute, reference)
}

/// RFC 6570 URI Template. Literals as corrected by the verified erratum 6937 (the
/// published text leaves `'` out, against the RFC's own examples; the JSON Schema Test
/// Suite follows the erratum).
fn uri_template() -> String {
    let literal = format!(r"!#$&-;=?-\[\]_a-z~{}{}", ucschar(), iprivate());
    let varchar = format!("(?:[A-Za-z0-9_]|{PCT})");
    let varspec = format!(r"{varchar}(?:\.?{varchar})*(?::[1-9][0-9]{{0,3}}|\*)?");
    let expression = format!(r"\{{[+#./;?&]?{varspec}(?:,{varspec})*\}}");
    format!("(?:[{literal}]|{PCT}|{expression})*")
}

/// RFC 6901 JSON Pointer.
const JSON_POINTER: &str = "(?:/(?:[^/~]|~[01])*)*";

/// The pattern of format `name` over the decoded value, None for a name without one.
pub(super) fn value_pattern(name: &str) -> Option<String> {
    Some(match name {
        "date" => full_date(),
        "time" => full_time(),
        "date-time" => format!("{}[Tt]{}", full_date(), full_time()),
        "duration" => duration(),
        "email" => email(),
        "idn-email" => idn_email(),
        "hostname" => hostname(),
        "ipv4" => ipv4(),
        "ipv6" => rfc3986_ipv6(&ipv4()),
        "uri" => uri_patterns(UNRESERVED, "").0,
        "uri-reference" => uri_patterns(UNRESERVED, "").1,
        "iri" => uri_patterns(&format!("{UNRESERVED}{}", ucschar()), &iprivate()).0,
        "iri-reference" => uri_patterns(&format!("{UNRESERVED}{}", ucschar()), &iprivate()).1,
        "uri-template" => uri_template(),
        "uuid" => "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}".to_string(),
        "json-pointer" => JSON_POINTER.to_string(),
        "relative-json-pointer" => format!("(?:0|[1-9][0-9]*)(?:#|{JSON_POINTER})"),
        _ => return None,
    })
}
