//! Escapes (inside and outside classes), character classes and flag groups, as CPython
//! reads them.

use super::*;
use crate::error::{Error, Result};

impl<'p> Parser<'p> {
    /// `\x`, `\u`, `\U` (after the letter): exactly `n` hex digits.
    pub(super) fn hex_escape(&mut self, letter: char, n: usize) -> Result<u32> {
        let digits = self.src.take_while(n, |c| c.is_ascii_hexdigit())?;
        let text = format!("\\{letter}{digits}");
        if digits.len() != n {
            return Err(self.src.error(&format!("incomplete escape {text}"), text.chars().count()));
        }
        let value = u32::from_str_radix(&digits, 16).unwrap_or(u32::MAX);
        if value > 0x10FFFF {
            return Err(self.src.error(&format!("bad escape {text}"), text.chars().count()));
        }
        Ok(value)
    }

    /// `\N{name}` (after the `N`): checked for shape only.
    pub(super) fn named_escape(&mut self) -> Result<Code> {
        if !self.src.eat('{')? {
            return Err(self.src.error("missing {", 0));
        }
        self.src.take_until('}', "character name")?;
        Ok(Code::Named)
    }

    pub(super) fn bad_escape(&self, text: &str) -> Error {
        let mut message = format!("bad escape {text}");
        if text == "\\p" || text == "\\P" {
            message.push_str(" (Python's re has no \\p{...} property classes; write an explicit class such as [a-zA-Z])");
        }
        self.src.error(&message, text.chars().count())
    }

    /// An escape inside a class.
    pub(super) fn class_escape(&mut self, e: char) -> Result<Code> {
        if let Some(v) = simple_escape(e, true) {
            return Ok(Code::Literal(v));
        }
        if let Some(c) = category_of(e) {
            return Ok(Code::Category(c));
        }
        match e {
            'x' => Ok(Code::Literal(self.hex_escape('x', 2)?)),
            'u' => Ok(Code::Literal(self.hex_escape('u', 4)?)),
            'U' => Ok(Code::Literal(self.hex_escape('U', 8)?)),
            'N' => self.named_escape(),
            c if is_octal(c) => {
                let more = self.src.take_while(2, is_octal)?;
                let text = format!("{c}{more}");
                let value = u32::from_str_radix(&text, 8).unwrap_or(u32::MAX);
                if value > 0o377 {
                    return Err(self.src.error(&format!("octal escape value \\{text} outside of range 0-0o377"), text.len() + 1));
                }
                Ok(Code::Literal(value))
            }
            c if c.is_ascii_alphanumeric() => Err(self.bad_escape(&format!("\\{c}"))),
            c => Ok(Code::Literal(c as u32)),
        }
    }

    /// An escape outside a class.
    pub(super) fn escape(&mut self, e: char) -> Result<Code> {
        match e {
            'A' => return Ok(Code::At(Anchor::BeginningString)),
            'Z' => return Ok(Code::At(Anchor::EndString)),
            'b' => return Ok(Code::At(Anchor::Boundary)),
            'B' => return Ok(Code::At(Anchor::NonBoundary)),
            _ => {}
        }
        if let Some(c) = category_of(e) {
            return Ok(Code::Category(c));
        }
        if let Some(v) = simple_escape(e, false) {
            return Ok(Code::Literal(v));
        }
        match e {
            'x' => Ok(Code::Literal(self.hex_escape('x', 2)?)),
            'u' => Ok(Code::Literal(self.hex_escape('u', 4)?)),
            'U' => Ok(Code::Literal(self.hex_escape('U', 8)?)),
            'N' => self.named_escape(),
            '0' => {
                let more = self.src.take_while(2, is_octal)?;
                Ok(Code::Literal(u32::from_str_radix(&format!("0{more}"), 8).unwrap_or(0)))
            }
            '1'..='9' => {
                // An octal escape (three octal digits) or a group reference (one or two digits).
                let mut digits = e.to_string();
                if let Some(Tok::Char(d)) = self.src.next {
                    if d.is_ascii_digit() {
                        self.src.advance()?;
                        digits.push(d);
                        if let Some(Tok::Char(t)) = self.src.next {
                            if is_octal(e) && is_octal(d) && is_octal(t) {
                                self.src.advance()?;
                                digits.push(t);
                                let value = u32::from_str_radix(&digits, 8).unwrap_or(u32::MAX);
                                if value > 0o377 {
                                    return Err(self.src.error(
                                        &format!("octal escape value \\{digits} outside of range 0-0o377"),
                                        digits.len() + 1,
                                    ));
                                }
                                return Ok(Code::Literal(value));
                            }
                        }
                    }
                }
                let group: usize = digits.parse().unwrap_or(usize::MAX);
                if group < self.state.groups() {
                    if !self.state.closed(group) {
                        return Err(self.src.error("cannot refer to an open group", digits.len() + 1));
                    }
                    self.check_lookbehind_group(group)?;
                    return Ok(Code::GroupRef(group));
                }
                Err(self.src.error(&format!("invalid group reference {group}"), digits.len()))
            }
            c if c.is_ascii_alphabetic() => Err(self.bad_escape(&format!("\\{c}"))),
            c => Ok(Code::Literal(c as u32)),
        }
    }

    /// A `[...]` set (after the `[` at `here`).
    pub(super) fn class(&mut self, here: usize) -> Result<(Node, u32)> {
        let unterminated = |s: &Self| syntax(s.src.pattern, here, "unterminated character set");
        let negate = self.src.eat('^')?;
        let mut set: Vec<SetItem> = Vec::new();
        let mut count = 0usize;
        loop {
            let at = self.src.tell();
            let Some(this) = self.src.get()? else { return Err(unterminated(self)) };
            if this == Tok::Char(']') && count > 0 {
                break;
            }
            count += 1;
            let code1 = match this {
                Tok::Esc(e) => self.class_escape(e)?,
                Tok::Char(c) => Code::Literal(c as u32),
            };
            if self.src.eat('-')? {
                let Some(that) = self.src.get()? else { return Err(unterminated(self)) };
                if that == Tok::Char(']') {
                    set.push(set_item(code1, at));
                    set.push(SetItem::Literal('-' as u32));
                    break;
                }
                let code2 = match that {
                    Tok::Esc(e) => self.class_escape(e)?,
                    Tok::Char(c) => Code::Literal(c as u32),
                };
                let bad = |s: &Self| {
                    let text = format!("bad character range {}-{}", this.text(), that.text());
                    s.src.error(&text, this.len() + 1 + that.len())
                };
                match (code1, code2) {
                    (Code::Literal(lo), Code::Literal(hi)) => {
                        if hi < lo {
                            return Err(bad(self));
                        }
                        set.push(SetItem::Range(lo, hi));
                    }
                    (Code::Literal(_) | Code::Named, Code::Literal(_) | Code::Named) => {
                        set.push(SetItem::Named(at));
                    }
                    _ => return Err(bad(self)),
                }
            } else {
                set.push(set_item(code1, at));
            }
        }
        let set = unique(set);
        let depth = 1 + u32::from(count >= 2);
        if let [SetItem::Literal(c)] = set[..] {
            return Ok((if negate { Node::NotLiteral(c) } else { Node::Literal(c) }, depth));
        }
        let mut items = set;
        if negate {
            items.insert(0, SetItem::Negate);
        }
        Ok((Node::In(items), depth))
    }

    /// Inline flags after `(?` (the first flag character `c` already read): None for
    /// global flags `(?aiLmsux)`, else the flags added and removed by `(?flags-flags:`.
    pub(super) fn flags(&mut self, mut c: Tok) -> Result<Option<(u32, u32)>> {
        let mut add = 0;
        let mut del = 0;
        let flag_char = |t: Tok| match t {
            Tok::Char(c) => flag_of(c),
            Tok::Esc(_) => None,
        };
        if c != Tok::Char('-') {
            loop {
                let flag = flag_char(c).unwrap_or(0);
                if flag == F_L {
                    return Err(self.src.error("bad inline flags: cannot use 'L' flag with a str pattern", 0));
                }
                add |= flag;
                if flag & TYPE_FLAGS != 0 && add & TYPE_FLAGS != flag {
                    return Err(self.src.error("bad inline flags: flags 'a', 'u' and 'L' are incompatible", 0));
                }
                let Some(next) = self.src.get()? else { return Err(self.src.error("missing -, : or )", 0)) };
                c = next;
                if matches!(c, Tok::Char(')' | '-' | ':')) {
                    break;
                }
                if flag_char(c).is_none() {
                    let alpha = matches!(c, Tok::Char(ch) if ch.is_alphabetic());
                    return Err(self.src.error(if alpha { "unknown flag" } else { "missing -, : or )" }, c.len()));
                }
            }
        }
        if c == Tok::Char(')') {
            self.state.flags |= add;
            return Ok(None);
        }
        if add & GLOBAL_FLAGS != 0 {
            return Err(self.src.error("bad inline flags: cannot turn on global flag", 1));
        }
        if c == Tok::Char('-') {
            let Some(next) = self.src.get()? else { return Err(self.src.error("missing flag", 0)) };
            c = next;
            if flag_char(c).is_none() {
                let alpha = matches!(c, Tok::Char(ch) if ch.is_alphabetic());
                return Err(self.src.error(if alpha { "unknown flag" } else { "missing flag" }, c.len()));
            }
            loop {
                let flag = flag_char(c).unwrap_or(0);
                if flag & TYPE_FLAGS != 0 {
                    return Err(self.src.error("bad inline flags: cannot turn off flags 'a', 'u' and 'L'", 0));
                }
                del |= flag;
                let Some(next) = self.src.get()? else { return Err(self.src.error("missing :", 0)) };
                c = next;
                if c == Tok::Char(':') {
                    break;
                }
                if flag_char(c).is_none() {
                    let alpha = matches!(c, Tok::Char(ch) if ch.is_alphabetic());
                    return Err(self.src.error(if alpha { "unknown flag" } else { "missing :" }, c.len()));
                }
            }
        }
        if del & GLOBAL_FLAGS != 0 {
            return Err(self.src.error("bad inline flags: cannot turn off global flag", 1));
        }
        if add & del != 0 {
            return Err(self.src.error("bad inline flags: flag turned on and off", 1));
        }
        Ok(Some((add, del)))
    }
}
