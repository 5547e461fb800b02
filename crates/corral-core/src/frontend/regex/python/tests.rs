use super::*;

#[test]
fn case_tables_group_lower_cases_that_share_an_upper_case() {
    let t = case_tables();
    assert_eq!(t.fixes.get(&('s' as u32)), Some(&vec!['ſ' as u32]));
    assert_eq!(t.fixes.get(&('i' as u32)), Some(&vec!['ı' as u32]));
    let mut iota = t.fixes.get(&0x3B9).cloned().unwrap_or_default();
    iota.sort_unstable();
    assert_eq!(iota, vec![0x345, 0x1FBE]);
    assert_eq!(t.fixes.get(&0xFB05), Some(&vec![0xFB06]));
    assert!(!t.fixes.contains_key(&('a' as u32)));
    assert_eq!(unicode_lower(0x130), 'i' as u32);
    assert_eq!(unicode_lower(0x212A), 'k' as u32);
}

/// The tables scan only the characters regex-syntax's tables say change case: every
/// other case mapping involves a character those (older) tables do not know yet.
#[test]
fn case_tables_see_every_known_character() {
    let t = case_tables();
    let unassigned = property("Unassigned");
    let mut seen = 0;
    for ch in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let c = ch as u32;
        if let Some(l) = ch.to_lowercase().next().filter(|&l| l != ch) {
            let known = t.lowered.binary_search(&(c, l as u32)).is_ok();
            assert!(known || contains(&unassigned, c) || contains(&unassigned, l as u32), "lower case of U+{c:04X}");
            seen += usize::from(known);
        }
        if let Some(u) = ch.to_uppercase().next().filter(|&u| u != ch) {
            let known = t.uppered.binary_search(&(c, u as u32)).is_ok();
            assert!(known || contains(&unassigned, c) || contains(&unassigned, u as u32), "upper case of U+{c:04X}");
        }
    }
    assert_eq!(seen, t.lowered.len());
}

#[test]
fn python_int_reads_ascii_numbers() {
    assert_eq!(python_int(" +1_0 "), Some(10));
    assert_eq!(python_int("-2"), Some(-2));
    assert_eq!(python_int("1__0"), None);
    assert_eq!(python_int("x"), None);
}
