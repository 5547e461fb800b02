//! Grammar symbols: a terminal or a nonterminal in one `u32`.

/// A grammar symbol: a terminal (high bit set) or a nonterminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(u32);

const TERMINAL_BIT: u32 = 1 << 31;

impl Sym {
    /// Terminal `i`.
    pub fn t(i: u32) -> Sym {
        Sym(i | TERMINAL_BIT)
    }
    /// Nonterminal `i`.
    pub fn n(i: u32) -> Sym {
        Sym(i)
    }
    /// Is it a terminal?
    #[inline]
    pub fn is_terminal(self) -> bool {
        self.0 & TERMINAL_BIT != 0
    }
    /// The raw encoding (terminals have the high bit set).
    #[inline]
    pub fn raw(self) -> u32 {
        self.0
    }
    /// The terminal or nonterminal index.
    #[inline]
    pub fn index(self) -> u32 {
        self.0 & !TERMINAL_BIT
    }
}
