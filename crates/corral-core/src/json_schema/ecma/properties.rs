//! Unicode property escapes of ECMAScript patterns in Unicode mode (`\p{...}`, `\P{...}`):
//! the code points of a property, from the Unicode tables of `regex-syntax`.
//!
//! Which names ECMAScript accepts, spelled exactly, is the list the pattern check of
//! `format: "regex"` keeps ([`crate::grammar::regex_text::is_property_body`]); the code
//! points come from `regex-syntax`: `General_Category=V` (`gc`), `Script=V` (`sc`),
//! `Script_Extensions=V` (`scx`), or a lone general category value or binary property. A
//! name ECMAScript accepts that those tables lack (a script of Unicode 17, `Script=Unknown`,
//! `Changes_When_NFKC_Casefolded`) is refused; surrogates (`Cs`) are no characters of the
//! UTF-8 text a JSON string decodes to, so that class is empty.

use regex_syntax::hir::{Class, HirKind};

use super::ranges::{normalize, Ranges};

/// The property names ECMAScript allows before `=`, and the `regex-syntax` name of each.
const KEYED: [(&str, &str); 6] =
    [("General_Category", "gc"), ("gc", "gc"), ("Script", "sc"), ("sc", "sc"), ("Script_Extensions", "scx"), ("scx", "scx")];

/// The names of the general category of surrogates (`Cs`), alone or keyed.
const SURROGATE: [&str; 6] = ["Cs", "Surrogate", "gc=Cs", "gc=Surrogate", "General_Category=Cs", "General_Category=Surrogate"];

/// The code points of property `name` (what stands between the braces), or why there is
/// no such property.
pub(super) fn property(name: &str) -> Result<Ranges, String> {
    if !crate::grammar::regex_text::is_property_body(name) {
        return Err(format!(
            "`{name}` is no Unicode property ECMAScript knows (names are spelled exactly: `L`, `Letter`, `Script=Greek`)"
        ));
    }
    // No character of UTF-8 text (what a JSON string decodes to) is a surrogate.
    if SURROGATE.contains(&name) {
        return Ok(Vec::new());
    }
    let spec = match name.split_once('=') {
        Some((key, value)) => match KEYED.iter().find(|(k, _)| *k == key) {
            Some((_, short)) => format!("{short}={value}"),
            None => return Err(format!("`{key}` is no Unicode property that takes a value")),
        },
        // A lone name is a general category value, else a binary property.
        None => match table(&format!("gc={name}")) {
            Some(set) => return Ok(set),
            None => name.to_string(),
        },
    };
    table(&spec).ok_or_else(|| format!("`{name}` is not in corral's Unicode tables"))
}

/// The code points `\p{spec}` stands for in `regex-syntax`, if it knows the property.
fn table(spec: &str) -> Option<Ranges> {
    let hir = regex_syntax::ParserBuilder::new().unicode(true).utf8(true).build().parse(&format!("\\p{{{spec}}}")).ok()?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => {
            Some(normalize(class.ranges().iter().map(|r| (r.start() as u32, r.end() as u32))))
        }
        // A property of one character (`Zl`: U+2028) is read as that character.
        HirKind::Literal(lit) => {
            let c = std::str::from_utf8(&lit.0).ok()?.chars().next()? as u32;
            Some(vec![(c, c)])
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_are_their_code_points_and_names_are_spelled_exactly() {
        let letters = property("L").expect("L");
        assert_eq!(property("Letter").expect("Letter"), letters);
        assert_eq!(property("General_Category=Letter").expect("gc"), letters);
        assert!(letters.iter().any(|&(lo, hi)| lo <= 'é' as u32 && 'é' as u32 <= hi));
        assert!(!letters.iter().any(|&(lo, hi)| lo <= '1' as u32 && '1' as u32 <= hi));
        let digits = property("digit").expect("digit is an alias of Nd");
        assert!(digits.iter().any(|&(lo, hi)| lo <= 0x09EA && 0x09EA <= hi)); // BENGALI DIGIT FOUR
        assert_eq!(property("Script=Greek").expect("sc"), property("sc=Grek").expect("sc short"));
        assert!(property("ASCII").expect("binary").iter().all(|&(_, hi)| hi < 0x80));
        for bad in ["l", "letter", "Greek", "Script=greek", "NotAProperty", "", "L=Lu", "gc=L=L"] {
            assert!(property(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_name_ecmascript_knows_has_code_points_here() {
        let missing: Vec<&str> =
            crate::grammar::regex_text::property_bodies().iter().copied().filter(|b| property(b).is_err()).collect();
        // What `regex-syntax`'s tables lack: the scripts of Unicode 17 (newer than they
        // are), the `Unknown` script, and `Changes_When_NFKC_Casefolded`.
        let newer = ["Berf", "Beria_Erfe", "Sidetic", "Sidt", "Tai_Yo", "Tayo", "Tolong_Siki", "Tols", "Unknown", "Zzzz"];
        let lacking = |b: &str| {
            b == "CWKCF" || b == "Changes_When_NFKC_Casefolded" || b.split_once('=').is_some_and(|(_, v)| newer.contains(&v))
        };
        let unexpected: Vec<&&str> = missing.iter().filter(|b| !lacking(b)).collect();
        assert!(unexpected.is_empty(), "{unexpected:?}");
        assert_eq!(missing.len(), 2 + 10 * 4, "{missing:?}");
        assert_eq!(property("Zl").expect("one character"), vec![(0x2028, 0x2028)]);
        assert_eq!(property("Cs").expect("surrogates"), Vec::new());
    }
}
