"""Regular expressions for JSON Schema ``format`` values.

``FORMAT_PATTERNS[name]`` is a pattern whose ``re.fullmatch`` over the (decoded) string value
accepts exactly the strings the format allows, as judged by the official JSON Schema Test
Suite (``optional/format`` of drafts 4, 7 and 2020-12) and the RFCs it follows. Where a pattern
cannot be exact, ``FORMAT_GAPS[name]`` says what it does not enforce (it then accepts a few
strings the format forbids). Formats that no regular expression can express (``regex``) and
formats that would need all of Unicode's IDNA tables (``idn-hostname``) are absent.

Every pattern sticks to a small syntax subset, because it is parsed by our own regex parser
and transformed: literal characters (non-ASCII ones are written as the characters
themselves, never as escapes), backslash-escaped punctuation, ``\\d`` (not used: ``[0-9]``
instead), character classes with ranges and ``^`` negation, groups ``(...)``/``(?:...)``,
alternation, and the greedy quantifiers ``? * + {m} {m,} {m,n}``. No ``.``, ``\\w``, ``\\s``,
``\\b``, anchors, lookaround, backreferences, flags, named groups or lazy quantifiers.

Choices where the RFCs leave room (each is a subset of what the RFC allows, so a string
generated from the pattern is always valid):

* ``duration``: designators are upper case only (RFC 5234 makes ABNF literals
  case-insensitive, so ``p1d`` is arguably valid; ISO 8601 and validators use upper case).
* ``uri-template``: the operators RFC 6570 reserves for future extensions (``= , ! @ |``)
  are rejected (they have no defined expansion).
* ``email``: ``General-address-literal`` (``[tag:content]``) is rejected: RFC 5321 requires
  its tag to be IANA-registered, and ``IPv6`` is the only registered one.
* ``hostname``/``email``: labels are at most 63 octets (DNS, RFC 1034/1123).
* ``relative-json-pointer``: draft-handrews-relative-json-pointer-01 (the one JSON Schema
  2020-12 cites), without the later draft's index manipulation (``0+1``).
"""

from __future__ import annotations


def _r(lo: int, hi: int) -> str:
    """A class range from code point `lo` to `hi`, written with the literal characters."""
    return chr(lo) + "-" + chr(hi)


# ---------------------------------------------------------------- shared building blocks

# Every non-ASCII scalar value (no surrogates): RFC 6532 UTF8-non-ascii.
_NON_ASCII = _r(0x80, 0xD7FF) + _r(0xE000, 0x10FFFF)

# RFC 3987 ucschar and iprivate.
_UCSCHAR = (
    _r(0xA0, 0xD7FF)
    + _r(0xF900, 0xFDCF)
    + _r(0xFDF0, 0xFFEF)
    + "".join(_r(p << 16, (p << 16) | 0xFFFD) for p in range(1, 14))  # U+10000..U+DFFFD
    + _r(0xE1000, 0xEFFFD)
)
_IPRIVATE = _r(0xE000, 0xF8FF) + _r(0xF0000, 0xFFFFD) + _r(0x100000, 0x10FFFD)

# RFC 3986 dec-octet: 0-255 without leading zeros.
_DEC_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = rf"{_DEC_OCTET}(?:\.{_DEC_OCTET}){{3}}"

_H16 = "[0-9A-Fa-f]{1,4}"


def _rfc3986_ipv6(ipv4: str) -> str:
    """RFC 3986 IPv6address (the RFC 4291 text form), with `ipv4` as the dotted quad."""
    h = _H16
    ls32 = f"(?:{h}:{h}|{ipv4})"

    def upto(n: int) -> str:  # [ *n( h16 ":" ) h16 ]
        return f"(?:(?:{h}:){{0,{n}}}{h})?" if n else f"(?:{h})?"

    alts = [
        f"(?:{h}:){{6}}{ls32}",
        f"::(?:{h}:){{5}}{ls32}",
        f"{upto(0)}::(?:{h}:){{4}}{ls32}",
        f"{upto(1)}::(?:{h}:){{3}}{ls32}",
        f"{upto(2)}::(?:{h}:){{2}}{ls32}",
        f"{upto(3)}::{h}:{ls32}",
        f"{upto(4)}::{ls32}",
        f"{upto(5)}::{h}",
        f"{upto(6)}::",
    ]
    return "(?:" + "|".join(alts) + ")"


_IPV6 = _rfc3986_ipv6(_IPV4)

# RFC 1123 host name label: letters, digits, hyphens; no hyphen first or last; 1-63 octets.
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = rf"{_LABEL}(?:\.{_LABEL})*"

# ---------------------------------------------------------------- RFC 3339 date and time

_YEAR = "[0-9]{4}"
# Month-day pairs valid in every year: 01-28 in any month, 29-30 outside February,
# 31 in the 31-day months.
_MONTH_DAY = (
    "(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    "|(?:0[13-9]|1[0-2])-(?:29|30)"
    "|(?:0[13578]|1[02])-31)"
)
# Gregorian leap years among 0000-9999: divisible by 4 and not by 100, or divisible by 400.
_LEAP_YEAR = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
_FULL_DATE = f"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"

_HOUR = "(?:[01][0-9]|2[0-3])"
_MINUTE = "[0-5][0-9]"
_SECFRAC = r"(?:\.[0-9]+)?"
_OFFSET = rf"(?:[Zz]|[+\-]{_HOUR}:{_MINUTE})"


def _leap_second_times() -> str:
    """Local times hh:mm:60 together with the offsets that put them at 23:59:60 UTC.

    A leap second is valid only when the time converted to UTC is 23:59:60 (RFC 3339 5.7 and
    the test suite). For a local time L (minutes after midnight) and numeric offset O (minutes,
    signed) that means L - O = 23:59 (mod 24 h). Each local minute has exactly one positive and
    one negative offset in -23:59..+23:59 that work (both 00:00 for L = 23:59, which also takes
    Z; both 12:00 for L = 11:59). The local time comes before the offset in the string, so the
    pairs are spelled out: 1440 local minutes, each with its own two offsets. (This is what
    makes ``time`` and ``date-time`` the largest patterns, about 23,000 DFA states.)
    """
    hours = []
    for h in range(24):
        leaves = []
        for m in range(60):
            local = h * 60 + m
            plus = (local + 1) % 1440  # offset O = L - 23:59 = L + 1 minute (mod 24 h)
            minus = (1439 - local) % 1440  # offset -O' with O' = 23:59 - L
            p = f"{plus // 60:02d}:{plus % 60:02d}"
            n = f"{minus // 60:02d}:{minus % 60:02d}"
            if p == n:  # 23:59 local (+00:00 or -00:00) or 11:59 local (+12:00 or -12:00)
                offsets = rf"[+\-]{p}"
            else:
                offsets = rf"\+{p}|-{n}"
            if local == 23 * 60 + 59:  # already UTC: Z works too
                offsets = "[Zz]|" + offsets
            leaves.append(f"{m:02d}:60{_SECFRAC}(?:{offsets})")
        hours.append(f"{h:02d}:(?:" + "|".join(leaves) + ")")
    return "(?:" + "|".join(hours) + ")"


# Leap seconds only as 23:59:60 in UTC spelling (Z or +/-00:00): the exact set (every local
# time with the offset that makes it 23:59:60 UTC, _leap_second_times) costs ~23,000 DFA
# states, which would make every date-time schema slow to compile. See FORMAT_GAPS.
_FULL_TIME = rf"(?:{_HOUR}:{_MINUTE}:[0-5][0-9]{_SECFRAC}{_OFFSET}|23:59:60{_SECFRAC}(?:[Zz]|[+\-]00:00))"
EXACT_TIME = f"(?:{_HOUR}:{_MINUTE}:[0-5][0-9]{_SECFRAC}{_OFFSET}|{_leap_second_times()})"
_DATE_TIME = f"{_FULL_DATE}[Tt]{_FULL_TIME}"

# RFC 3339 Appendix A duration (ISO 8601 subset): no fractions, no signs.
_N = "[0-9]+"
_DUR_TIME = f"T(?:{_N}H(?:{_N}M(?:{_N}S)?)?|{_N}M(?:{_N}S)?|{_N}S)"
_DUR_DATE = f"(?:{_N}D|{_N}M(?:{_N}D)?|{_N}Y(?:{_N}M(?:{_N}D)?)?)(?:{_DUR_TIME})?"
_DURATION = f"P(?:{_DUR_DATE}|{_DUR_TIME}|{_N}W)"

# ---------------------------------------------------------------- RFC 5321 / 6531 e-mail

_ATEXT_CHARS = r"A-Za-z0-9!#$%&'*+\-/=?\^_`{|}~"
# qtextSMTP (%d32-33 / %d35-91 / %d93-126) and quoted-pairSMTP ("\" %d32-126).
_QTEXT_CHARS = r" !#-\[\]-~"
_QPAIR = r"\\[ -~]"

# IPv4-address-literal: Snum is 1*3DIGIT with a value of 0-255 (leading zeros allowed).
_SNUM = "(?:25[0-5]|2[0-4][0-9]|[01][0-9]{2}|[0-9]{1,2})"
_IPV4_LIT = rf"{_SNUM}(?:\.{_SNUM}){{3}}"


def _groups(lo: int, hi: int) -> str:
    """Between `lo` and `hi` (1 <= lo <= hi) h16 groups joined by ":"."""
    h = _H16
    if hi == 1:
        return h
    if lo == hi == 2:
        return f"{h}:{h}"
    more = f"{{{lo - 1}}}" if lo == hi else f"{{{lo - 1},{hi - 1}}}"
    return f"{h}(?::{h}){more}"


def _rfc5321_ipv6() -> str:
    """RFC 5321 IPv6-addr: full, or compressed with "::" standing for at least 2 groups."""

    def comp(max_groups: int, tail: str) -> str:
        # IPv6-comp (tail "") or IPv6v4-comp (tail an IPv4 literal): k groups, "::", at most
        # max_groups - k groups (followed by ":" when a tail follows), then the tail.
        alts = []
        for k in range(max_groups + 1):
            left = _groups(k, k) if k else ""
            rest = max_groups - k
            right = ""
            if rest:
                right = f"(?:{_groups(1, rest)}:)?" if tail else f"(?:{_groups(1, rest)})?"
            alts.append(f"{left}::{right}{tail}")
        return "(?:" + "|".join(alts) + ")"

    full = _groups(8, 8)
    v4_full = f"{_groups(6, 6)}:{_IPV4_LIT}"
    return "(?:" + "|".join([full, comp(6, ""), v4_full, comp(4, _IPV4_LIT)]) + ")"


_ADDRESS_LITERAL = rf"\[(?:{_IPV4_LIT}|[Ii][Pp][Vv]6:{_rfc5321_ipv6()})\]"


def _mailbox(atext: str, qtext: str, domain: str) -> str:
    local = rf'(?:[{atext}]+(?:\.[{atext}]+)*|"(?:[{qtext}]|{_QPAIR})*")'
    return f"{local}@(?:{domain}|{_ADDRESS_LITERAL})"


_EMAIL = _mailbox(_ATEXT_CHARS, _QTEXT_CHARS, _HOSTNAME)

# RFC 6531: atext and qtextSMTP gain UTF8-non-ascii; sub-domain gains U-label. A U-label is
# approximated by letters, digits, hyphens and non-ASCII characters other than controls,
# NBSP and the IDNA full stops (U+3002, U+FF0E, U+FF61); see FORMAT_GAPS.
_ULABEL_CHARS = (
    "A-Za-z0-9" + _r(0xA1, 0x3001) + _r(0x3003, 0xD7FF) + _r(0xE000, 0xFF0D) + _r(0xFF0F, 0xFF60)
    + _r(0xFF62, 0x10FFFF)
)
_IDN_LABEL = rf"[{_ULABEL_CHARS}](?:[{_ULABEL_CHARS}\-]{{0,61}}[{_ULABEL_CHARS}])?"
_IDN_EMAIL = _mailbox(
    _ATEXT_CHARS + _NON_ASCII, _QTEXT_CHARS + _NON_ASCII, rf"{_IDN_LABEL}(?:\.{_IDN_LABEL})*"
)

# ---------------------------------------------------------------- RFC 3986 / 3987 URI, IRI

_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = "%[0-9A-Fa-f]{2}"


def _uri_patterns(iunreserved: str, iprivate: str) -> tuple[str, str]:
    """(absolute URI, URI reference) for RFC 3986 (`iunreserved` = unreserved, no
    `iprivate`) or RFC 3987 (ucschar added to unreserved, iprivate allowed in the query)."""
    u, s = iunreserved, _SUB_DELIMS

    def chars(extra: str) -> str:  # *( [u s extra] / pct-encoded ) building block
        return f"(?:[{u}{s}{extra}]|{_PCT})"

    pchar = chars(":@")
    userinfo = f"{chars(':')}*"
    ipvfuture = rf"[Vv][0-9A-Fa-f]+\.[{_UNRESERVED}{s}:]+"
    # IPv4address is a subset of reg-name, so host = IP-literal / reg-name is the same set.
    host = rf"(?:\[(?:{_IPV6}|{ipvfuture})\]|{chars('')}*)"
    authority = f"(?:{userinfo}@)?{host}(?::[0-9]*)?"
    segment = f"{pchar}*"
    path_abempty = f"(?:/{segment})*"
    path_absolute = f"/(?:{pchar}+(?:/{segment})*)?"
    path_rootless = f"{pchar}+(?:/{segment})*"
    path_noscheme = f"{chars('@')}+(?:/{segment})*"
    query = f"(?:[{u}{s}:@/?{iprivate}]|{_PCT})*"
    fragment = f"(?:[{u}{s}:@/?]|{_PCT})*"
    tail = rf"(?:\?{query})?(?:#{fragment})?"
    scheme = r"[A-Za-z][A-Za-z0-9+\-.]*"
    absolute = f"{scheme}:(?://{authority}{path_abempty}|{path_absolute}|{path_rootless})?{tail}"
    relative = f"(?://{authority}{path_abempty}|{path_absolute}|{path_noscheme})?{tail}"
    return absolute, f"(?:{absolute}|{relative})"


_URI, _URI_REFERENCE = _uri_patterns(_UNRESERVED, "")
_IRI, _IRI_REFERENCE = _uri_patterns(_UNRESERVED + _UCSCHAR, _IPRIVATE)

# ---------------------------------------------------------------- RFC 6570 URI Template

# literals, as corrected by the verified RFC 6570 erratum 6937: %x21 / %x23-24 / %x26-3B / %x3D /
# %x3F-5B / %x5D / %x5F / %x61-7A / %x7E / ucschar / iprivate / pct-encoded. The published text
# leaves "'" (%x27) out, which contradicts the RFC's own examples (section 3.2.1 writes
# '{var}'); the erratum puts it back, and the JSON Schema Test Suite follows it ("an
# apostrophe in a literal is valid").
_TEMPLATE_LITERAL = r"!#$&-;=?-\[\]_a-z~" + _UCSCHAR + _IPRIVATE
_VARCHAR = f"(?:[A-Za-z0-9_]|{_PCT})"
_VARSPEC = rf"{_VARCHAR}(?:\.?{_VARCHAR})*(?::[1-9][0-9]{{0,3}}|\*)?"
_EXPRESSION = rf"\{{[+#./;?&]?{_VARSPEC}(?:,{_VARSPEC})*\}}"
_URI_TEMPLATE = f"(?:[{_TEMPLATE_LITERAL}]|{_PCT}|{_EXPRESSION})*"

# ---------------------------------------------------------------- RFC 6901 JSON Pointer

_JSON_POINTER = "(?:/(?:[^/~]|~[01])*)*"
_RELATIVE_JSON_POINTER = f"(?:0|[1-9][0-9]*)(?:#|{_JSON_POINTER})"

# ---------------------------------------------------------------- the tables

FORMAT_PATTERNS: dict[str, str] = {
    "date": _FULL_DATE,
    "time": _FULL_TIME,
    "date-time": _DATE_TIME,
    "duration": _DURATION,
    "email": _EMAIL,
    "idn-email": _IDN_EMAIL,
    "hostname": _HOSTNAME,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uri": _URI,
    "uri-reference": _URI_REFERENCE,
    "iri": _IRI,
    "iri-reference": _IRI_REFERENCE,
    "uri-template": _URI_TEMPLATE,
    "uuid": "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}",
    "json-pointer": _JSON_POINTER,
    "relative-json-pointer": _RELATIVE_JSON_POINTER,
}

_LEAP = (
    "Leap seconds are accepted only as 23:59:60 with offset Z or +/-00:00; a leap second "
    "written in another offset (e.g. 15:59:60-08:00) is valid but rejected. The exact set is "
    "EXACT_TIME (about 23,000 DFA states)."
)

FORMAT_GAPS: dict[str, str] = {
    "time": _LEAP,
    "date-time": _LEAP,
    "hostname": (
        "The total length limit (253 characters) is not enforced: only the 63-octet label "
        "limit is (an exact length-bounded pattern would need thousands of states). A-labels "
        "('xn--' labels) are not Punycode-decoded, so those that decode to something IDNA2008 "
        "forbids are accepted."
    ),
    "email": (
        "The RFC 5321 size limits (local part 64 octets, domain 255 octets) are not enforced."
    ),
    "idn-email": (
        "The RFC 5321 size limits are not enforced. U-labels in the domain are checked only "
        "loosely (letters, digits, hyphens and non-ASCII characters other than controls, NBSP "
        "and the IDNA full stops; no hyphen first or last; at most 63 characters): IDNA2008 "
        "code point validity, contextual rules, Bidi rules and NFC are not checked, and "
        "A-labels are not Punycode-decoded."
    ),
}
