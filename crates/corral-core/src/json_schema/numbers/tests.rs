use regex_syntax::hir::Hir;

use super::*;
use crate::error::Error;
use crate::frontend::regex::compile_hir;
use crate::limits::Limits;

fn dec(text: &str) -> Decimal {
    Decimal::parse(text).unwrap_or_else(|| panic!("not a number: {text}"))
}

/// Does the language of `hir` hold each of `yes` and none of `no`?
fn check(hir: &Hir, yes: &[&str], no: &[&str]) {
    let dfa = compile_hir(hir, "test", &Limits::default()).expect("builds");
    for s in yes {
        assert!(dfa.matches(s.as_bytes()), "{s:?} should be in {hir}");
    }
    for s in no {
        assert!(!dfa.matches(s.as_bytes()), "{s:?} should not be in {hir}");
    }
}

fn limits() -> Limits {
    Limits::default()
}

#[test]
fn decimals_parse_json_numbers_exactly() {
    assert_eq!(dec("1.50"), dec("15e-1"));
    assert_eq!(dec("-0"), dec("0.000e5"));
    assert_eq!(dec("100"), dec("1E+2"));
    assert!(!dec("-0.0").is_negative());
    for bad in ["", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1.5.2", "0x10", " 1", "1 ", "NaN", "1e99999999999999999999"] {
        assert!(Decimal::parse(bad).is_none(), "{bad:?}");
    }
    let d = dec("-120.5000");
    assert_eq!((d.significant_digits(), d.exponent()), ("1205", -1));
    assert_eq!(dec("0.0001").split(), ("0".to_string(), "0001".to_string()));
    assert_eq!(dec("12e3").split(), ("12000".to_string(), String::new()));
    assert_eq!(dec("-12.034").split(), ("12".to_string(), "034".to_string()));
    assert_eq!(dec("5e-324").digit_span(), 325);
    assert_eq!(dec("1e308").digit_span(), 309);
    assert_eq!(Decimal::from_i64(i64::MIN).to_string(), "-9223372036854775808");
}

#[test]
fn decimals_order_and_round() {
    let sorted = ["-1e400", "-10", "-9.99", "-1", "-0.5", "0", "1e-300", "0.1", "0.12", "1", "1.0001", "9", "10", "1e30"];
    for pair in sorted.windows(2) {
        assert!(dec(pair[0]) < dec(pair[1]), "{} < {}", pair[0], pair[1]);
    }
    let cases =
        [("2.5", "2", "3"), ("-2.5", "-3", "-2"), ("0.1", "0", "1"), ("-0.1", "-1", "0"), ("7", "7", "7"), ("-9.5", "-10", "-9")];
    for (x, floor, ceil) in cases {
        assert_eq!(dec(x).floor(), dec(floor), "floor {x}");
        assert_eq!(dec(x).ceil(), dec(ceil), "ceil {x}");
    }
    assert_eq!(dec("-999999999999999999999999999999.5").floor(), dec("-1e30"));
    assert_eq!(dec("1.5e-300").to_string(), "1.5e-300");
    assert_eq!(dec("-12.5").to_string(), "-12.5");
}

#[test]
fn integer_ranges_at_their_boundaries() {
    let r = |lo: Option<&str>, hi: Option<&str>| int_range(lo.map(dec).as_ref(), hi.map(dec).as_ref(), &limits()).unwrap();
    check(&r(Some("0"), Some("0")).unwrap(), &["0"], &["-0", "1", "00"]);
    check(&r(Some("-10"), Some("-3")).unwrap(), &["-10", "-3", "-7"], &["-2", "-11", "0", "-0", "3"]);
    check(&r(Some("-5"), Some("12")).unwrap(), &["-5", "0", "9", "10", "12"], &["-0", "-6", "13", "05", "-05"]);
    check(&r(None, Some("-100")).unwrap(), &["-100", "-101", "-99999999999999999999999"], &["-99", "0", "100"]);
    check(&r(Some("199"), None).unwrap(), &["199", "200", "1000", "99999999999999999999999999999999"], &["198", "99", "0"]);
    check(&r(None, None).unwrap(), &["0", "-1", "123"], &["-0", "01", "1.0"]);
    assert!(r(Some("5"), Some("4")).is_none());
    // Non-integral bounds: the integers between them.
    check(&r(Some("-2.5"), Some("3.9")).unwrap(), &["-2", "3"], &["-3", "4"]);
    assert!(r(Some("0.1"), Some("0.9")).is_none());
    // Huge bounds (30+ digits).
    let big = "123456789012345678901234567890123";
    check(
        &r(Some(big), None).unwrap(),
        &[big, "123456789012345678901234567890124", "1000000000000000000000000000000000"],
        &["123456789012345678901234567890122", "99999999999999999999999999999999"],
    );
    check(
        &r(Some("-1e40"), Some("1e40")).unwrap(),
        &["10000000000000000000000000000000000000000", "-9"],
        &["10000000000000000000000000000000000000001", "-10000000000000000000000000000000000000001"],
    );
    // uint_range counts a negative lower bound as 0.
    check(&uint_range(&dec("-7"), Some(&dec("3")), &limits()).unwrap().unwrap(), &["0", "3"], &["-1", "4"]);
    assert!(uint_range(&dec("0"), Some(&dec("-1")), &limits()).unwrap().is_none());
}

#[test]
fn decimal_bounds_inclusive_and_strict() {
    let ge = |a: &str, strict| decimal_ge(&dec(a), strict, &limits()).unwrap();
    let le = |b: &str, strict| decimal_le(&dec(b), strict, &limits()).unwrap();
    check(&ge("0", false), &["0", "0.0", "5", "0.001"], &["-0", "-0.0", "-1", "1e5"]);
    check(&ge("0", true), &["0.001", "1"], &["0", "0.000", "-0.5"]);
    check(&le("0", false), &["0", "-0", "-0.0", "-5.5", "0.00"], &["0.001", "1"]);
    check(&le("0", true), &["-0.001", "-1"], &["0", "-0", "-0.0", "0.1"]);
    check(&ge("1.5", false), &["1.5", "1.50", "1.51", "2", "10.0"], &["1.49", "1.4999", "1", "-2"]);
    check(&ge("1.5", true), &["1.51", "1.500001", "2"], &["1.5", "1.5000", "1"]);
    check(&le("-1.5", false), &["-1.5", "-1.500", "-2", "-100.25"], &["-1.49", "-1", "0"]);
    check(&le("-1.5", true), &["-1.51", "-2"], &["-1.5", "-1.50", "-1.4"]);
    check(&ge("-2", true), &["-1.999", "-0", "0", "7.5"], &["-2", "-2.0", "-2.01"]);
    check(&le("2", true), &["1.999", "-3", "0"], &["2", "2.0", "2.01"]);
    // Fractional bounds with exponents, and a 30+ digit bound.
    check(&ge("1e-8", true), &["0.00000001000001", "0.1"], &["0.00000001", "0.000000009"]);
    check(&le("2.5e-12", false), &["0.0000000000025", "0.0000000000024999", "-1"], &["0.0000000000025001"]);
    let big = "972783798187987123879878123.18878137";
    check(&le(big, false), &[big, "972783798187987123879878123.188781369999", "1"], &["972783798187987123879878123.18878138"]);
    check(&ge(&format!("-{big}"), true), &["-972783798187987123879878123.18878136", "0"], &[&format!("-{big}")]);
}

#[test]
fn fixed_and_canonical_languages() {
    check(&number(), &["0", "-0", "1.5e+10", "-2E-3", "10"], &["01", "1.", ".5", "+1", "1e"]);
    check(&plain_number(), &["-0.5", "12"], &["1e5"]);
    check(&canonical_integer(), &["0", "-12"], &["-0", "012"]);
    check(&canonical_plain_float(), &["0.0", "1.0", "0.0001", "123456789012345.0", "1.25"], &["0.00001", "1.50", "1", "-0"]);
    check(&canonical_exp_float(), &["1e-05", "1.5e+16", "-2e+307"], &["1e+15", "1e-04", "1e+308", "1.0e+20"]);
    check(&canonical_exp_integral(), &["1e+16", "-1.5e+20"], &["1e-5"]);
    check(&canonical_number(), &["0", "-1", "0.5", "1e+16"], &["-0", "1e16"]);
    check(&canonical_plain_number(), &["0.5", "7"], &["1e+16"]);
    check(&integer(), &["-0", "5"], &["5.0"]);
    check(&uint(), &["0", "5"], &["-5"]);
}

#[test]
fn spellings_of_one_value() {
    let forms = |v: &str| canonical_forms(&dec(v), &limits()).unwrap();
    check(&forms("3"), &["3", "3.0", "3.000"], &["3.", "03", "-3", "3.01"]);
    check(&forms("3.50"), &["3.5", "3.50", "3.500"], &["3", "3.05"]);
    check(&forms("0"), &["0", "-0", "0.0", "-0.00"], &["00", "0.1"]);
    check(&forms("-1e-8"), &["-0.00000001", "-0.000000010"], &["0.00000001", "-1e-8"]);
    check(&forms("1e30"), &["1000000000000000000000000000000", "1000000000000000000000000000000.0"], &["1e30"]);
}

#[test]
fn multiples_of_steps() {
    let m = |step: &str| multiple_dfa(&dec(step), &limits()).unwrap();
    let accepts = |step: &str, yes: &[&str], no: &[&str]| {
        let dfa = m(step);
        yes.iter().for_each(|s| assert!(dfa.matches(s.as_bytes()), "{s} is a multiple of {step}"));
        no.iter().for_each(|s| assert!(!dfa.matches(s.as_bytes()), "{s} is not a multiple of {step}"));
    };
    accepts("0.01", &["0", "1", "-3.14", "2.50", "0.010"], &["0.001", "3.141", "0.015"]);
    accepts("1e-8", &["0.00000001", "5", "-0.12345678"], &["0.000000001", "0.123456789"]);
    accepts("3", &["0", "3", "-9", "12.0", "999"], &["1", "3.5", "10"]);
    accepts("0.5", &["1.5", "2", "-0.5", "3.50"], &["0.25", "1.2"]);
    accepts("5e2", &["0", "500", "1000.0", "-1500"], &["50", "250", "500.5"]);
    accepts("1.5", &["0", "1.5", "3", "4.5", "-6.00"], &["1", "2", "1.50001"]);
    // Steps past the cap (a large exponent makes m huge; many fraction digits make e large).
    for step in ["1e300", "0.123456789", "1e-5000", "4096"] {
        match multiple_dfa(&dec(step), &limits()) {
            Err(Error::LimitExceeded { limit: "max_multiple_states", .. }) => {}
            other => panic!("{step}: {other:?}"),
        }
    }
    let small = Limits { max_multiple_states: 30, ..Limits::default() };
    assert!(multiple_dfa(&dec("7"), &small).is_ok()); // 7·2 + 2 states
    assert!(multiple_dfa(&dec("0.07"), &small).is_ok()); // 7·4 + 2
    assert!(multiple_dfa(&dec("0.007"), &small).is_err()); // 7·5 + 2
    assert!(multiple_dfa(&dec("14"), &small).is_ok());
    assert!(multiple_dfa(&dec("15"), &small).is_err());
    for bad in ["0", "-2"] {
        assert!(matches!(multiple_dfa(&dec(bad), &limits()), Err(Error::InvalidArgument(_))), "{bad}");
    }
}

#[test]
fn long_bounds_fail_on_a_limit_instead_of_building() {
    // Nesting: one level per digit with an alternative.
    match decimal_ge(&dec("1e-300"), false, &limits()) {
        Err(Error::LimitExceeded { limit: "regex_nest_limit", .. }) => {}
        other => panic!("{other:?}"),
    }
    let deep = Limits { regex_nest_limit: 2000, ..Limits::default() };
    check(&decimal_ge(&dec("1e-300"), false, &deep).unwrap(), &["0.5"], &[]);
    // Digits: a bound of more digits than any automaton may have states fails before a
    // digit is written out (1e-1000000000 would be a billion of them).
    for text in ["1e-1000000000", "1e1000000000"] {
        let d = dec(text);
        let results = [
            decimal_ge(&d, false, &limits()).err(),
            decimal_le(&d, true, &limits()).err(),
            int_range(Some(&d), None, &limits()).err(),
            canonical_forms(&d, &limits()).err(),
        ];
        for r in results {
            assert!(matches!(r, Some(Error::LimitExceeded { limit: "max_dfa_states", .. })), "{text}: {r:?}");
        }
    }
    // The bounds of an f64 (schemas write them for "any double"): the trailing zeros of
    // `>=` and nines of `<=` bound nothing and cost no nesting.
    let max = format!("179769{}", "0".repeat(303));
    check(
        &decimal_ge(&dec("-1.79769e308"), false, &limits()).unwrap(),
        &["0", "-1", &format!("-{max}"), &format!("-179768{}.5", "9".repeat(303))],
        &[&format!("-179769{}1", "0".repeat(302)), &format!("-{max}.5"), &format!("-1{max}")],
    );
    check(
        &decimal_le(&dec("1.79769e308"), false, &limits()).unwrap(),
        &["0", &max, "-5"],
        &[&format!("179769{}1", "0".repeat(302)), &format!("{max}.1")],
    );
    check(
        &int_range(Some(&dec("-1.79769e308")), Some(&dec("1.79769e308")), &limits()).unwrap().unwrap(),
        &["0", "-7", &max, &format!("-{max}")],
        &[&format!("1{max}"), &format!("179770{}", "0".repeat(303))],
    );
    check(
        &int_range(Some(&dec("100")), Some(&dec("1999")), &limits()).unwrap().unwrap(),
        &["100", "999", "1000", "1999", "1500"],
        &["99", "2000", "2999"],
    );
    // Integers of 300 digits with no alternative per digit do build.
    check(
        &int_range(None, Some(&dec("1e300")), &limits()).unwrap().unwrap(),
        &["-5", &format!("1{}", "0".repeat(300))],
        &[&format!("1{}1", "0".repeat(299))],
    );
}
