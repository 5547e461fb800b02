"""The JSON Schema ``format`` patterns of corral-core (``corral_core::json_schema::formats``).

Each pattern (over the decoded string, Python ``re`` syntax, ``re.fullmatch`` meaning) is
checked against every string case of the official JSON Schema Test Suite's
``optional/format/<format>.json`` (drafts 2020-12, 7 and 4), against hand-written cases taken
from the RFCs, against brute-force oracles where the space is small, for staying inside the
regex syntax subset that the translator renders formats from, and against corral's own regex
engine.
"""

from __future__ import annotations

import calendar
import ipaddress
import json
import random
import re
import uuid
from pathlib import Path

import pytest

from corral import _core

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO.parent / "shared" / "data" / "json-schema-test-suite" / "tests"
DRAFTS = ("draft2020-12", "draft7", "draft4")

# name -> the pattern over the decoded value; name -> what the pattern does not enforce.
FORMAT_PATTERNS: dict[str, str] = {name: pattern for name, pattern, _ in _core._format_patterns() if pattern is not None}
FORMAT_GAPS: dict[str, str] = {name: gap for name, _, gap in _core._format_patterns() if gap is not None}
COMPILED = {name: re.compile(pattern) for name, pattern in FORMAT_PATTERNS.items()}


def _leap_second_times() -> str:
    """Local times hh:mm:60 together with the offsets that put them at 23:59:60 UTC.

    A leap second is valid only when the time converted to UTC is 23:59:60 (RFC 3339 5.7 and
    the test suite). For a local time L (minutes after midnight) and numeric offset O (minutes,
    signed) that means L - O = 23:59 (mod 24 h). Each local minute has exactly one positive and
    one negative offset in -23:59..+23:59 that work (both 00:00 for L = 23:59, which also takes
    Z; both 12:00 for L = 11:59).
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
            offsets = rf"[+\-]{p}" if p == n else rf"\+{p}|-{n}"
            if local == 23 * 60 + 59:  # already UTC: Z works too
                offsets = "[Zz]|" + offsets
            leaves.append(rf"{m:02d}:60(?:\.[0-9]+)?(?:{offsets})")
        hours.append(f"{h:02d}:(?:" + "|".join(leaves) + ")")
    return "(?:" + "|".join(hours) + ")"


# The exact RFC 3339 full-time, every valid leap second included (an oracle: the ``time``
# format accepts leap seconds only in UTC spelling, a documented gap, since the exact set
# costs about 23,000 automaton states).
EXACT_TIME = rf"(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:[Zz]|[+\-](?:[01][0-9]|2[0-3]):[0-5][0-9])|{_leap_second_times()})"


def matches(fmt: str, s: str) -> bool:
    return COMPILED[fmt].fullmatch(s) is not None


# ------------------------------------------------------------------ the syntax subset

_META = set(r"\.^$*+?()[]{}|-")


def subset_violations(pattern: str) -> list[str]:
    """Constructs outside the strict subset our regex parser accepts (empty list: fine).

    Allowed: literal characters; backslash-escaped metacharacters; \\d; classes [...] with
    ranges, a leading ^, and escapes (\\d, escaped punctuation, \\uXXXX) inside; groups (...) and
    (?:...); alternation; greedy ? * + {m} {m,} {m,n}.
    """
    bad: list[str] = []
    i, n = 0, len(pattern)
    after_atom = False  # whether a quantifier may follow here
    after_quant = False  # a quantifier was just read (a second one would be lazy/possessive)
    depth = 0
    while i < n:
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1 : i + 2]
            if e == "d" or e in _META:
                i += 2
                after_atom, after_quant = True, False
                continue
            bad.append(f"escape \\{e} at {i}")
            i += 2
            continue
        if c == "[":
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                bad.append(f"unescaped ] first in class at {i}")
            items = 0
            while j < n and pattern[j] != "]":
                d = pattern[j]
                if d == "\\":
                    e = pattern[j + 1 : j + 2]
                    if e == "u" and re.fullmatch("[0-9A-Fa-f]{4}", pattern[j + 2 : j + 6]):
                        cp = int(pattern[j + 2 : j + 6], 16)
                        if 0xD800 <= cp <= 0xDFFF:
                            bad.append(f"surrogate \\u{cp:04x} in class at {j}")
                        j += 6
                    elif e == "d" or (e in _META or e == "]"):
                        j += 2
                    else:
                        bad.append(f"escape \\{e} in class at {j}")
                        j += 2
                    items += 1
                    continue
                if d == "[":
                    bad.append(f"unescaped [ inside class at {j}")
                if pattern[j : j + 2] in ("--", "&&", "~~", "||"):
                    bad.append(f"set-operation lookalike {pattern[j:j+2]!r} in class at {j}")
                if 0xD800 <= ord(d) <= 0xDFFF:
                    bad.append(f"surrogate in class at {j}")
                j += 1
                items += 1
            if j >= n:
                bad.append(f"unterminated class at {i}")
            if items == 0:
                bad.append(f"empty class at {i}")
            i = j + 1
            after_atom, after_quant = True, False
            continue
        if c == "(":
            if pattern[i + 1 : i + 2] == "?":
                if pattern[i + 2 : i + 3] != ":":
                    bad.append(f"group kind {pattern[i:i+3]!r} at {i}")
                i += 3
            else:
                i += 1
            depth += 1
            after_atom = after_quant = False
            continue
        if c == ")":
            depth -= 1
            if depth < 0:
                bad.append(f"unbalanced ) at {i}")
            i += 1
            after_atom, after_quant = True, False
            continue
        if c == "|":
            i += 1
            after_atom = after_quant = False
            continue
        if c in "?*+{":
            if c == "{":
                m = re.match(r"\{([0-9]+)(,([0-9]*))?\}", pattern[i:])
                if not m:
                    bad.append(f"literal {{ (unescaped) at {i}")
                    i += 1
                    after_atom, after_quant = True, False
                    continue
                lo = int(m.group(1))
                hi = m.group(3)
                if hi and int(hi) < lo:
                    bad.append(f"bad bounds {m.group(0)} at {i}")
                length = len(m.group(0))
            else:
                length = 1
            if after_quant:
                bad.append(f"lazy/possessive quantifier {c!r} at {i}")
            elif not after_atom:
                bad.append(f"quantifier {c!r} with nothing to repeat at {i}")
            i += length
            after_atom, after_quant = False, True
            continue
        if c in ".^$":
            bad.append(f"{c!r} outside a class at {i}")
        elif c in "}]":
            bad.append(f"unescaped {c!r} outside a class at {i}")
        elif 0xD800 <= ord(c) <= 0xDFFF:
            bad.append(f"surrogate at {i}")
        i += 1
        after_atom, after_quant = True, False
    if depth != 0:
        bad.append("unbalanced parentheses")
    return bad


@pytest.mark.parametrize("fmt", sorted(FORMAT_PATTERNS))
def test_pattern_is_in_the_strict_subset(fmt):
    pattern = FORMAT_PATTERNS[fmt]
    assert subset_violations(pattern) == []
    # The coarse forbidden-substring list as well (belt and braces).
    for bad in (r"\w", r"\W", r"\s", r"\S", r"\b", r"\B", r"\A", r"\Z", "(?=", "(?!", "(?<", "(?P", "(?i"):
        assert bad not in pattern, bad
    re.compile(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        "a.b", r"\w+", r"\s", r"a\b", "^a", "a$", "(?=a)a", "(?!b)a", "(?<=a)b", "(?P<x>a)",
        "a*?", "a+?", "a??", "a{2}?", "a*+", "(?i)a", r"(a)\1", r"\x41", "[[a]", "a{", "a]",
        "[]a]", "(a", "a)", "*a",
    ],
)
def test_subset_checker_rejects(pattern):
    assert subset_violations(pattern) != []


@pytest.mark.parametrize(
    "pattern",
    [r"a\.b", r"[^/~]*", r"[0-9]{1,4}", r"(?:a|b)+", r"[\u00a0-\ud7ff]", r"\d[\d\-]", "[ä-ö]x{2,}", r"\[\]"],
)
def test_subset_checker_accepts(pattern):
    assert subset_violations(pattern) == []


# ------------------------------------------------------------------ the official test suite

# Cases where the pattern knowingly disagrees with the suite (all listed in FORMAT_GAPS).
_PUNYCODE = "A-label is not Punycode-decoded (IDNA2008 validity of the U-label is not checked)"
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("hostname", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk."
     "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk."
     "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk."
     "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk.com"):
        "total length over 253 is not enforced (only the 63-octet label limit is)",
    ("hostname", "xn--X"): _PUNYCODE,
    ("hostname", "xn--07jt112bpxg.xn--9t4b11yi5a"): _PUNYCODE,
    ("hostname", "xn--hello-txk"): _PUNYCODE,
    ("hostname", "xn--hello-zed"): _PUNYCODE,
    ("hostname", "xn--hello-6bf"): _PUNYCODE,
    ("hostname", "xn--chb89f"): _PUNYCODE,
    ("hostname", "xn--07jceefgh4c"): _PUNYCODE,
    ("hostname", "xn--al-0ea"): _PUNYCODE,
    ("hostname", "xn--l-fda"): _PUNYCODE,
    ("hostname", "xn--la-0ea"): _PUNYCODE,
    ("hostname", "xn--l-gda"): _PUNYCODE,
    ("hostname", "xn--S-jib3p"): _PUNYCODE,
    ("hostname", "xn--wva3j"): _PUNYCODE,
    ("hostname", "xn--A-2hc5h"): _PUNYCODE,
    ("hostname", "xn--5db1e"): _PUNYCODE,
    ("hostname", "xn--A-2hc8h"): _PUNYCODE,
    ("hostname", "xn--5db3e"): _PUNYCODE,
    ("hostname", "xn--defabc-k64e"): _PUNYCODE,
    ("hostname", "xn--vek"): _PUNYCODE,
    ("hostname", "xn--ngb6iyr"): _PUNYCODE,
    ("hostname", "xn--11b2er09f"): _PUNYCODE,
    ("hostname", "xn--02b508i"): _PUNYCODE,
    ("hostname", "XN--aa---o47jg78q"): _PUNYCODE,
}


def _suite_cases():
    cases = []
    if not SUITE.is_dir():
        return cases
    for draft in DRAFTS:
        for fmt in sorted(FORMAT_PATTERNS):
            path = SUITE / draft / "optional" / "format" / f"{fmt}.json"
            if not path.exists():
                continue
            for group in json.loads(path.read_text(encoding="utf-8")):
                if group["schema"].get("format") != fmt:
                    continue
                for test in group["tests"]:
                    if not isinstance(test["data"], str):
                        continue  # non-strings are valid for every format
                    cases.append(
                        pytest.param(
                            fmt, test["data"], test["valid"], test["description"],
                            id=f"{draft}-{fmt}-{ascii(test['data'])[1:-1][:60]}",
                        )
                    )
    return cases


SUITE_CASES = _suite_cases()


def test_suite_is_present():
    # The suite lives in ../shared/data; without it the cases below would silently vanish.
    assert SUITE_CASES, f"JSON Schema Test Suite not found at {SUITE}"


@pytest.mark.parametrize("fmt,data,valid,description", SUITE_CASES)
def test_suite_case(fmt, data, valid, description):
    got = matches(fmt, data)
    if fmt in ("time", "date-time") and ":60" in data and valid and not _utc_leap_spelling(data):
        assert not got, "leap seconds outside UTC spelling are a documented gap"
        return
    if (fmt, data) in EXCEPTIONS:
        assert fmt in FORMAT_GAPS, "an exception must be documented in FORMAT_GAPS"
        assert got != valid, f"stale EXCEPTIONS entry (the pattern now agrees): {description}"
        return
    assert got == valid, description


def test_every_exception_is_a_suite_case():
    in_suite = {(p.values[0], p.values[1]) for p in SUITE_CASES}
    assert set(EXCEPTIONS) <= in_suite


def test_every_format_has_suite_cases():
    covered = {p.values[0] for p in SUITE_CASES}
    assert covered == set(FORMAT_PATTERNS)


def test_gaps_name_known_formats():
    assert set(FORMAT_GAPS) <= set(FORMAT_PATTERNS)


# ------------------------------------------------------------------ hand-written cases (RFCs)

HAND_CASES: dict[str, tuple[list[str], list[str]]] = {
    # RFC 3339 section 5.6 / 5.8 and the Gregorian calendar.
    "date": (
        ["1985-04-12", "1996-12-19", "2000-02-29", "2400-02-29", "1600-02-29", "2004-02-29", "0000-02-29",
         "9999-12-31", "0000-01-01", "2023-04-30", "2023-11-30"],
        ["1900-02-29", "2023-02-29", "1985-4-12", "1985-04-12T00:00:00Z", "85-04-12", "1985/04/12",
         "1985-02-30", "1985-06-31", "1985-09-31", "1985-04-31", "19850412", "1985-04-1a"],
    ),
    "time": (
        ["23:20:50.52Z", "16:39:57-08:00", "00:00:00Z", "23:59:59.999+23:59", "00:00:00-23:59",
         "23:59:60Z", "23:59:60.5z", "23:59:60+00:00", "23:59:60-00:00", "00:00:60+00:01",
         "00:59:60+01:00", "12:29:60+12:30", "11:59:60-12:00", "00:00:60-23:59", "23:58:60+23:59",
         "22:59:60-01:00", "11:59:60+12:00", "11:59:60-12:00"],
        ["23:20:50", "24:00:00Z", "23:60:00Z", "23:59:61Z", "23:59:60+01:00", "00:59:60-01:00",
         "12:00:60Z", "23:59:60+00:01", "23:59:60-00:01", "00:00:60+00:00", "23:59:60.Z",
         "23:59:59.Z", "23:59:59+2400", "T23:59:59Z", "23:59:59+24:00", "1:02:03Z", "23:59:60", "11:59:60Z", "11:59:60+00:00"],
    ),
    "date-time": (
        ["1985-04-12T23:20:50.52Z", "1996-12-19T16:39:57-08:00", "1990-12-31T23:59:60Z",
         "1990-12-31T15:59:60-08:00", "1937-01-01T12:00:27.87+00:20", "2000-02-29t00:00:00z",
         "1998-12-31T23:59:60.000+00:00"],
        ["1985-04-12 23:20:50.52Z", "1985-04-12T23:20:50.52", "1990-12-31T15:59:60+08:00",
         "2001-02-29T00:00:00Z", "1985-04-12T23:20:50.52ZZ", "1985-04-12", "23:20:50Z",
         "1985-04-12TT23:20:50Z"],
    ),
    # RFC 3339 Appendix A.
    "duration": (
        ["P1Y", "P1Y2M", "P1Y2M3D", "P1Y2M3DT4H5M6S", "P3W", "PT1H", "PT1H1M", "PT1H1M1S", "PT1M1S", "PT1S",
         "P1D", "P1DT1S", "P1MT1H", "P0W", "PT00000S"],
        ["P", "PT", "P1W1D", "P1H", "PT1Y", "P1.5Y", "P1Y1Y", "PT1S1M", "P1M1Y", "p1d", "P1DT", "P1S",
         "1Y", "PT1H1S", "P1YT1H1S"],
    ),
    # RFC 5321 section 4.1.2 / 4.1.3 (Mailbox).
    "email": (
        ["simple@example.com", "very.common@example.com", "x@example.com", "a!#$%&'*+-/=?^_`{|}~z@example.com",
         "user@localhost", '"a\\"b"@example.com', '"\\\\"@example.com', '""@example.com',
         "user@[192.168.2.1]", "user@[001.002.003.004]", "user@[IPv6:2001:db8::1]", "user@[ipv6:::]",
         "user@[IPv6:1:2:3:4:5:6:7:8]", "user@[IPv6:1:2:3:4:5:6:1.2.3.4]", "user@[IPv6:::ffff:1.2.3.4]",
         "user@[IPv6:1:2:3:4::1.2.3.4]", "user@[IPv6:1:2:3::4:5:6]", "1@2.3", "user@a-b.c"],
        ["Abc.example.com", "A@b@c@example.com", "a\"b(c)d,e:f;g<h>i[j\\k]l@example.com",
         "just\"not\"right@example.com", "user@-example.com", "user@example-.com", "user@.example.com",
         "user@example..com", "user@[256.1.1.1]", "user@[IPv6:1:2:3:4:5:6:7::]", "user@[IPv6:1::2::3]",
         "user@[IPv6:1:2:3:4:5::1.2.3.4]", "user@[1.2.3]", "user@[tag:content]", "user@exa_mple.com",
         '"a"b"@example.com', '"a\\"@example.com', "us er@example.com", "user@example.com.",
         "ü@example.com", "user@exämple.com", "(comment)user@example.com"],
    ),
    # RFC 6531 / 6532.
    "idn-email": (
        ["用户@例子.广告", "अजय@डाटा.भारत", "квіточка@пошта.укр", "θσερ@εχαμπλε.ψομ", "Dörte@Sörensen.example.com",
         '"ü ü"@example.com', "user@[IPv6:::1]", "user@xn--bcher-kva.example"],
        ["user@-ü.com", "user@ü-.com", "user@exa mple.com", "ü..ü@example.com", "user@例子。广告",
         "user@", "@例子.广告", "a@b@c"],
    ),
    # RFC 1123 section 2.1, RFC 952.
    "hostname": (
        ["example", "EXAMPLE.COM", "a", "1", "123.example", "xn--bcher-kva.example", "a-1.b-2.c-3", "a" * 63,
         ".".join(["a" * 63] * 3)],
        ["a" * 64, "ex ample.com", "exa_mple.com", "-a.com", "a-.com", "a..b", "例子.广告", "*.example.com",
         "example.com:80", "@"],
    ),
    # RFC 2673 dotted-quad, RFC 3986 dec-octet.
    "ipv4": (
        ["1.2.3.4", "0.0.0.0", "255.255.255.255", "249.250.199.100", "99.9.10.0"],
        ["01.2.3.4", "1.2.3.04", "1.2.3", "1.2.3.4.5", "256.0.0.0", "1.2.3.-1", "1..3.4", "a.b.c.d", "300.1.1.1",
         "1.2.3.4/32", "00.0.0.0"],
    ),
    # RFC 4291 section 2.2, RFC 3986 IPv6address.
    "ipv6": (
        ["ABCD:EF01:2345:6789:ABCD:EF01:2345:6789", "2001:DB8:0:0:8:800:200C:417A", "2001:DB8::8:800:200C:417A",
         "FF01::101", "::1", "::", "0:0:0:0:0:0:13.1.68.3", "0:0:0:0:0:FFFF:129.144.52.38", "::13.1.68.3",
         "::FFFF:129.144.52.38", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1::8", "1:2:3:4:5::255.255.255.255"],
        ["1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "1:2:3:4:5:6::1.2.3.4",
         "1:2:3:4:5:6:7:1.2.3.4", "1:::2", "1:2", "::1.2.3", "::1.2.3.4:5", "g::1", "::1.2.3.04",
         "12345::1", " ::1", ":1::", "1::2:"],
    ),
    # RFC 3986 sections 1.1.2 and 3.
    "uri": (
        ["ftp://ftp.is.co.za/rfc/rfc1808.txt", "http://www.ietf.org/rfc/rfc2396.txt",
         "ldap://[2001:db8::7]/c=GB?objectClass?one", "mailto:John.Doe@example.com",
         "news:comp.infosystems.www.servers.unix", "tel:+1-816-555-1212", "telnet://192.0.2.16:80/",
         "urn:oasis:names:specification:docbook:dtd:xml:4.1.2", "foo://example.com:8042/over/there?name=ferret#nose",
         "a:", "a+b-c.d:x", "http://[v7.a:b]/", "http://[::ffff:1.2.3.4]/", "http://host:/", "http://u:p@h:1/",
         "file:///etc/hosts", "x:?#", "x://", "http://%41%42/"],
        ["", "//example.com", "1a:b", "http://[::1/", "http://[1.2.3.4]/", "http://a b/", "http://host:8a/",
         "http://h/%", "http://h/%g0", "x:#a#b", "http://h/a b", "http://[vg.a]/", "http://[v1.]/",
         "http://ex{a}mple/", "ü:x", "http://h/ü"],
    ),
    # RFC 3986 sections 4.2 and 5.4 (every example reference there is valid).
    "uri-reference": (
        ["g:h", "g", "./g", "g/", "/g", "//g", "?y", "g?y", "#s", "g#s", "g?y#s", ";x", "g;x", "g;x?y#s", "",
         ".", "./", "..", "../", "../g", "../..", "../../", "../../g", "../../../g", "/./g", "/../g", "g.",
         ".g", "g..", "..g", "./../g", "./g/.", "g/./h", "g/../h", "g;x=1/./y", "g;x=1/../y", "g?y/./x",
         "g?y/../x", "g#s/./x", "g#s/../x", "http:g", "./a:b", "a/b:c", "//[::1]:80/x", "%41"],
        ["a:b:c d", "1:x", "a b", "//h:x/", "#a#b", "%4", "[::1]", "/a[b]", "\\", "a\"b", "<a>"],
    ),
    # RFC 3987.
    "iri": (
        ["http://www.example.org/red%09ros\u00e9#red", "http://example.com/\u7d05/\u6d77?\u6f22=\u5b57#\u8a9e",
         "http://r\u00e9sum\u00e9.example.org", "urn:x:\U00020000", "http://h/?\ue000", "mailto:\u00fc@example.com",
         "http://\u00fc:\u00fc@\u00fc/"],
        ["http://h/#\ue000", "http://h/\ue000", "http://h/\u00a0\u0001", "http://h/\ufff0", "\u00fc:x",
         "http://h/\u3000 x", "//h/x", "http://h/\ud7ff\u0000"],
    ),
    "iri-reference": (
        ["\u00fc", "//\u00fc/", "#\u00fc", "?\U000f0000", "\u00fc/a:b", "", "http://\u00fc/?\ue000#\u00fc"],
        ["\u00fc:b:c d", "#\ue000", "a b", "1:\u00fc", "\ufffe", "\u0085"],
    ),
    # RFC 6570 sections 1.2 and 2.
    "uri-template": (
        ["http://example.com/~{username}/", "http://example.com/dictionary/{term:1}/{term}",
         "http://example.com/search{?q,lang}", "{var}", "{+path}/here", "{#x,hello,y}", "X{.list*}",
         "{/var:1,var}", "{;x,y,empty}", "{?x,y,undef}", "?fixed=yes{&x}", "{var:30}", "{list*}",
         "{keys*}", "{+path:6}/here", "{x_y}", "{a.b.c}", "%7Bx%7D", "{v:9999}", "\u00e9{x}"],
        ["{", "}", "{x", "x}", "{{x}}", "{x y}", "{.x.}", "{x:}", "{x:a}", "{x**}", "{=x}", "{!x}",
         "{@x}", "{|x}", "{x-y}", "<{x}>", "a\\b", "a^b", "a|b", "{x:12345}", "%zz", "a\"b"],
    ),
    # RFC 4122 / 9562 string representation.
    "uuid": (
        ["f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
         "ffffffff-ffff-ffff-ffff-ffffffffffff"],
        ["{f81d4fae-7dec-11d0-a765-00a0c91e6bf6}", "f81d4fae7dec11d0a76500a0c91e6bf6", "f81d4fae-7dec-11d0-a765",
         "g81d4fae-7dec-11d0-a765-00a0c91e6bf6", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6 "],
    ),
    # RFC 6901 section 5.
    "json-pointer": (
        ["", "/foo", "/foo/0", "/", "/a~1b", "/c%d", "/e^f", "/g|h", "/i\\j", "/k\"l", "/ ", "/m~0n",
         "/~01", "/\U0001f600", "/a/~1/~0/"],
        ["foo", "~0", "/~", "/~2", "/a~", "/~a", "#/foo", " /"],
    ),
    # draft-handrews-relative-json-pointer.
    "relative-json-pointer": (
        ["0", "1", "0#", "1#", "10/a", "0/", "3/a~1b/~0", "42#"],
        ["", "#", "00", "01", "-0", "0#/", "0a", "/0", "0~1", "1 ", "0##"],
    ),
}


def _hand_params():
    for fmt, (good, bad) in HAND_CASES.items():
        for s in good:
            yield pytest.param(fmt, s, True, id=f"{fmt}-valid-{ascii(s)[1:-1][:50]}")
        for s in bad:
            yield pytest.param(fmt, s, False, id=f"{fmt}-invalid-{ascii(s)[1:-1][:50]}")


@pytest.mark.parametrize("fmt,data,valid", list(_hand_params()))
def test_hand_case(fmt, data, valid):
    if fmt in ("time", "date-time") and ":60" in data and valid and not _utc_leap_spelling(data):
        assert not matches(fmt, data), "leap seconds outside UTC spelling are a documented gap"
        assert re.fullmatch(EXACT_TIME, data.split("T")[-1].split("t")[-1])
        return
    assert matches(fmt, data) == valid


def test_every_format_has_hand_cases():
    assert set(HAND_CASES) == set(FORMAT_PATTERNS)


# ------------------------------------------------------------------ brute-force oracles


def test_date_feb_29_every_year():
    for y in range(10000):
        leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
        assert matches("date", f"{y:04d}-02-29") == leap, y
        assert matches("date", f"{y:04d}-02-28"), y
        assert not matches("date", f"{y:04d}-02-30"), y


@pytest.mark.parametrize("year", [1, 1900, 1999, 2000, 2023, 2024, 9999])
def test_date_every_month_day(year):
    for mo in range(100):
        for d in range(100):
            valid = 1 <= mo <= 12 and 1 <= d <= calendar.monthrange(year, mo)[1]
            assert matches("date", f"{year:04d}-{mo:02d}-{d:02d}") == valid, (year, mo, d)


def _leap_second_ok(h: int, m: int, sign: int, oh: int, om: int) -> bool:
    """Oracle: hh:mm:60 with offset sign*(oh:om) is 23:59:60 UTC."""
    return (h * 60 + m - sign * (oh * 60 + om)) % 1440 == 23 * 60 + 59


def _utc_leap_spelling(text: str) -> bool:
    return re.search(r"23:59:60(\.[0-9]+)?([Zz]|[+-]00:00)$", text) is not None


def test_exact_time_leap_seconds_against_oracle():
    rx = re.compile(EXACT_TIME)
    for h in range(24):
        for m in range(60):
            assert (rx.fullmatch(f"{h:02d}:{m:02d}:60Z") is not None) == (h == 23 and m == 59)
            for sign, ch in ((1, "+"), (-1, "-")):
                # The one right offset for this sign, then every hour with the right minute
                # and every minute with the right hour.
                right = (sign * (h * 60 + m - 1439)) % 1440
                rh, rm = divmod(right, 60)
                assert _leap_second_ok(h, m, sign, rh, rm)
                candidates = {(oh, rm) for oh in range(24)} | {(rh, om) for om in range(60)}
                for oh, om in candidates:
                    s = f"{h:02d}:{m:02d}:60{ch}{oh:02d}:{om:02d}"
                    assert (rx.fullmatch(s) is not None) == _leap_second_ok(h, m, sign, oh, om), s


def test_time_random_against_oracle():
    rng = random.Random(1234)
    for _ in range(20000):
        h, m, s = rng.randrange(26), rng.randrange(62), rng.randrange(62)
        frac = rng.choice(["", ".5", ".123456789", "."])
        kind = rng.randrange(3)
        if kind == 0:
            off, sign, oh, om = rng.choice("Zz"), 1, 0, 0
        else:
            sign = 1 if kind == 1 else -1
            oh, om = rng.randrange(25), rng.randrange(61)
            off = f"{'+' if sign > 0 else '-'}{oh:02d}:{om:02d}"
        text = f"{h:02d}:{m:02d}:{s:02d}{frac}{off}"
        valid = h < 24 and m < 60 and s <= 60 and frac != "." and oh < 24 and om < 60
        if valid and s == 60:
            valid = _leap_second_ok(h, m, sign, oh, om) and _utc_leap_spelling(text)
        assert matches("time", text) == valid, text
        assert matches("date-time", f"2016-12-31T{text}") == valid, text


def test_ipv4_every_octet_spelling():
    spellings = {str(i) for i in range(1000)} | {f"{i:02d}" for i in range(100)} | {f"{i:03d}" for i in range(1000)}
    for s in spellings:
        valid = s == str(int(s)) and int(s) <= 255
        assert matches("ipv4", f"{s}.1.{s}.1") == valid, s
        assert matches("ipv6", f"::{s}.1.1.{s}") == valid, s


def _python_ipv6(s: str) -> bool:
    if "%" in s or "/" in s:
        return False  # scope ids (accepted by ipaddress) are not part of the format
    try:
        ipaddress.IPv6Address(s)
    except ValueError:
        return False
    return True


def test_ipv6_random_against_ipaddress():
    rng = random.Random(99)
    atoms = ["0", "1", "ab", "ffff", "FFFF", "12345", "g", "", "1.2.3.4", "255.255.255.255", "1.2.3", "01.2.3.4"]
    for _ in range(30000):
        parts = [rng.choice(atoms[:7]) for _ in range(rng.randrange(1, 10))]
        if rng.random() < 0.3:
            parts[-1] = rng.choice(atoms[8:])
        if rng.random() < 0.7:
            i = rng.randrange(len(parts) + 1)
            parts[i:i] = [""]  # an empty part: "::" (or a stray ":")
        s = ":".join(parts)
        assert matches("ipv6", s) == _python_ipv6(s), s


def _rfc5321_ipv6(s: str) -> bool:
    """Oracle for RFC 5321 IPv6-addr: IPv6-full / IPv6-comp / IPv6v4-full / IPv6v4-comp."""
    hexgroup = re.compile("[0-9A-Fa-f]{1,4}")
    full, most = 8, 6  # groups in the full form; most groups around a "::" (it stands for >= 2)
    text = s
    if "." in s:
        i = s.rfind(":")
        octets = s[i + 1 :].split(".")
        if i < 0 or len(octets) != 4:
            return False
        if not all(re.fullmatch("[0-9]{1,3}", o) and int(o) <= 255 for o in octets):  # Snum
            return False
        text = s[: i + 1] if s[: i + 1].endswith("::") else s[:i]
        full, most = 6, 4
    if text.count("::") > 1:
        return False
    if "::" in text:
        left, right = text.split("::")
        groups = (left.split(":") if left else []) + (right.split(":") if right else [])
        return len(groups) <= most and all(hexgroup.fullmatch(g) for g in groups)
    groups = text.split(":")
    return len(groups) == full and all(hexgroup.fullmatch(g) for g in groups)


def test_email_ipv6_literal_random_against_oracle():
    rng = random.Random(7)
    atoms = ["0", "1", "ab", "ffff", "12345", "g", "1.2.3.4", "001.2.3.255", "256.1.1.1"]
    for _ in range(20000):
        parts = [rng.choice(atoms[:6]) for _ in range(rng.randrange(1, 10))]
        if rng.random() < 0.4:
            parts.append(rng.choice(atoms[6:]))
        if rng.random() < 0.7:
            i = rng.randrange(len(parts) + 1)
            parts[i:i] = [""]
        s = ":".join(parts)
        assert matches("email", f"a@[IPv6:{s}]") == _rfc5321_ipv6(s), s


def test_uuid_random():
    rng = random.Random(5)
    for _ in range(2000):
        u = uuid.UUID(int=rng.getrandbits(128))
        assert matches("uuid", str(u))
        assert matches("uuid", str(u).upper())
        assert not matches("uuid", u.hex)
        assert not matches("uuid", u.urn)


def test_hostname_label_lengths():
    for n in range(1, 70):
        assert matches("hostname", "a" * n) == (n <= 63), n
        assert matches("hostname", "b." + "a" * n + ".c") == (n <= 63), n
        assert matches("hostname", "a" + "-" * (n - 2) + "a" if n >= 2 else "a") == (n <= 63), n


# ------------------------------------------------------------------ corral's own regex engine


def test_corral_regex_engine_agrees():
    """corral's Rust regex front end parses every pattern and agrees with Python's re."""
    import corral
    vocab = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])
    cases = [(p.values[0], p.values[1]) for p in SUITE_CASES]
    cases += [(fmt, s) for fmt, (good, bad) in HAND_CASES.items() for s in good + bad]
    compiled = {fmt: corral.compile(corral.Grammar.regex(p), vocab) for fmt, p in FORMAT_PATTERNS.items()}
    for fmt, s in cases:
        assert compiled[fmt].matches(s.encode("utf-8", "surrogatepass")) == matches(fmt, s), (fmt, s)


# ------------------------------------------------------------------ character classes per RFC position

_ALPHA = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_DIGIT = set("0123456789")
_UNRESERVED = _ALPHA | _DIGIT | set("-._~")
_SUB_DELIMS = set("!$&'()*+,;=")
# Characters that end or start another URI part (RFC 3986 gen-delims) or that need a
# following pair (a backslash in a quoted string): a one-character probe cannot judge them.
_DELIMITERS = set(":/?#[]@") | {"\\"}
_PROBES = [chr(c) for c in range(0x00, 0x80)] + ["\u00a0", "\u00e9", "\ue000", "\ufffe", "\U0001f600", "\U000f0000"]

_UCSCHAR_PROBES = {"\u00a0", "\u00e9", "\U0001f600"}  # RFC 3987 ucschar among the probes
_IPRIVATE_PROBES = {"\ue000", "\U000f0000"}
# RFC 6570 section 2.1 literals with the verified erratum 6937 (%x26-3B: the apostrophe).
_TEMPLATE_LITERALS = (
    {"!"} | {chr(c) for c in range(0x23, 0x25)} | {chr(c) for c in range(0x26, 0x3C)} | {"="}
    | {chr(c) for c in range(0x3F, 0x5C)} | {"]", "_"} | {chr(c) for c in range(0x61, 0x7B)} | {"~"}
    | _UCSCHAR_PROBES | _IPRIVATE_PROBES
)

_POSITIONS = [
    # (format, template with {c}, the characters its RFC allows there)
    ("uri", "http://h/a{c}b", _UNRESERVED | _SUB_DELIMS),
    ("uri", "http://h/?a{c}b", _UNRESERVED | _SUB_DELIMS),
    ("uri", "http://h/#a{c}b", _UNRESERVED | _SUB_DELIMS),
    ("uri", "http://u{c}v@h/", _UNRESERVED | _SUB_DELIMS),
    ("uri", "http://a{c}b/", _UNRESERVED | _SUB_DELIMS),
    ("uri", "s{c}t:x", _ALPHA | _DIGIT | set("+-.")),
    ("iri", "http://h/a{c}b", _UNRESERVED | _SUB_DELIMS | _UCSCHAR_PROBES),
    ("iri", "http://h/?a{c}b", _UNRESERVED | _SUB_DELIMS | _UCSCHAR_PROBES | _IPRIVATE_PROBES),
    ("iri", "http://h/#a{c}b", _UNRESERVED | _SUB_DELIMS | _UCSCHAR_PROBES),
    ("iri", "http://a{c}b/", _UNRESERVED | _SUB_DELIMS | _UCSCHAR_PROBES),
    ("uri-template", "a{c}b", _TEMPLATE_LITERALS),
    ("hostname", "a{c}b", _ALPHA | _DIGIT | {"-", "."}),
    ("email", "a{c}b@example.com", _ALPHA | _DIGIT | set("!#$%&'*+-/=?^_`{|}~.")),
    ("email", '"a{c}b"@example.com', {chr(c) for c in range(0x20, 0x7F)} - {'"'}),
    ("idn-email", "a{c}b@example.com", _ALPHA | _DIGIT | set("!#$%&'*+-/=?^_`{|}~.") | {p for p in _PROBES if ord(p) >= 0x80}),
    ("json-pointer", "/a{c}b", set(_PROBES) - {"~"}),
]


@pytest.mark.parametrize("fmt,template,allowed", _POSITIONS, ids=[f"{f}-{t}" for f, t, _ in _POSITIONS])
def test_character_classes_follow_the_rfc(fmt, template, allowed):
    for c in _PROBES:
        if c in _DELIMITERS and fmt != "json-pointer":
            continue
        assert matches(fmt, template.format(c=c)) == (c in allowed), (fmt, template, ascii(c))
