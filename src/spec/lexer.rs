//! Tokens of the `.inv` spec language.
//!
//! Newlines are insignificant; statements are self-delimiting and `;` is
//! accepted as an optional separator so one-line bodies read naturally.

use super::diag::{Diag, Span};

/// A token; names borrow the spec text (a large spec has millions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok<'a> {
    Ident(&'a str),
    Int(u64),
    /// `$name`: a binding introduced by the generator (e.g. `$addr`).
    Dollar(&'a str),
    LBrace,
    LBracket,
    RBracket,
    RBrace,
    LParen,
    RParen,
    Comma,
    Colon,
    Semi,
    Dot,
    DotDot,
    Assign,
    EqEq,
    NotEq,
    Plus,
    Minus,
    Star,
    Amp,
    Pipe,
    Caret,
    Tilde,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    AndAnd,
    OrOr,
    Bang,
    Eof,
}

impl Tok<'_> {
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v) => format!("number {v}"),
            Tok::Dollar(s) => format!("`${s}`"),
            Tok::Eof => "end of file".into(),
            other => format!("`{}`", other.symbol()),
        }
    }

    fn symbol(&self) -> &'static str {
        match self {
            Tok::LBrace => "{",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::RBrace => "}",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Semi => ";",
            Tok::Dot => ".",
            Tok::DotDot => "..",
            Tok::Assign => "=",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Amp => "&",
            Tok::Pipe => "|",
            Tok::Caret => "^",
            Tok::Tilde => "~",
            Tok::Shl => "<<",
            Tok::Shr => ">>",
            Tok::Lt => "<",
            Tok::Gt => ">",
            Tok::Le => "<=",
            Tok::Ge => ">=",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Bang => "!",
            _ => "?",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Token<'a> {
    pub tok: Tok<'a>,
    pub span: Span,
}

/// Size suffixes accepted on integers: `64K`, `2M`, `1G`, `1500ns` is not an
/// integer suffix (units are parsed as a following identifier).
fn size_suffix(c: u8) -> Option<u64> {
    match c {
        b'K' => Some(1 << 10),
        b'M' => Some(1 << 20),
        b'G' => Some(1 << 30),
        b'T' => Some(1 << 40),
        _ => None,
    }
}

/// Longer names are certainly not register or sequence names; the bound
/// keeps messages that quote a name readable.
pub const MAX_IDENT: usize = 128;

/// Unit words that may follow a number directly (`1500ns`).
const UNITS: [&str; 3] = ["ns", "us", "ms"];

pub fn lex(src: &str) -> Result<Vec<Token<'_>>, Diag> {
    let b = src.as_bytes();
    // A UTF-8 byte order mark (Windows editors write one) is not text.
    let mut i = if src.starts_with('\u{feff}') { 3 } else { 0 };
    // Specs run a token per 3.5-5 bytes (indentation included): sized
    // for the densest, a large token vector is never re-copied (a copy
    // of a 5 MB spec's tokens doubled the lexer's memory and time).
    let mut out = Vec::with_capacity(src.len() / 3 + 1);
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' || c == b'#' {
            if let Some(end) = comment_end(b, i)? {
                i = end;
                continue;
            }
        }
        let (tok, end) = if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            name(src, i)?
        } else if c.is_ascii_digit() {
            number(src, i)?
        } else {
            symbol(src, i)?
        };
        out.push(Token {
            tok,
            span: Span::new(i, end - i),
        });
        i = end;
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(src.len(), 0),
    });
    Ok(out)
}

/// The end of the word (letters, digits, `_`) that goes on at `at`.
fn word_end(b: &[u8], at: usize) -> usize {
    let mut e = at;
    while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
        e += 1;
    }
    e
}

/// When a comment (`// ...`, `# ...`, `/* ... */`) starts at `i`: the
/// offset just past it (a line comment stops at its newline).
fn comment_end(b: &[u8], mut i: usize) -> Result<Option<usize>, Diag> {
    let c = b[i];
    if c == b'/' && b.get(i + 1) == Some(&b'/') || c == b'#' {
        while i < b.len() && b[i] != b'\n' {
            i += 1;
        }
        return Ok(Some(i));
    }
    if c == b'/' && b.get(i + 1) == Some(&b'*') {
        let start = i;
        i += 2;
        loop {
            if i + 1 >= b.len() {
                return Err(Diag::new(Span::new(start, 2), "unterminated block comment")
                    .label("comment starts here"));
            }
            if b[i] == b'*' && b[i + 1] == b'/' {
                return Ok(Some(i + 2));
            }
            i += 1;
        }
    }
    Ok(None)
}

/// A name or a `$binding` starting at `start`: its token and end.
fn name(src: &str, start: usize) -> Result<(Tok<'_>, usize), Diag> {
    let i = word_end(src.as_bytes(), start + 1);
    let text = &src[start..i];
    if text.len() > MAX_IDENT {
        return Err(Diag::new(
            Span::new(start, i - start),
            format!(
                "name is {} characters long, more than the limit of {MAX_IDENT}",
                text.len()
            ),
        )
        .label("this name"));
    }
    let tok = if let Some(name) = text.strip_prefix('$') {
        if name.is_empty() {
            return Err(Diag::new(
                Span::new(start, 1),
                "`$` must be followed by a name",
            ));
        }
        Tok::Dollar(name)
    } else {
        Tok::Ident(text)
    };
    Ok((tok, i))
}

/// A number starting at `start` (decimal, `0x` or `0b`, `_` between
/// digits, an optional size suffix): its token and end.
fn number(src: &str, start: usize) -> Result<(Tok<'_>, usize), Diag> {
    let b = src.as_bytes();
    let (mut value, mut i) = number_digits(src, start)?;
    if let Some(mult) = b.get(i).copied().and_then(size_suffix) {
        // A suffix only counts when it is not the start of a word (`64K`, not `64Kfoo`).
        if word_end(b, i + 1) == i + 1 {
            i += 1;
            value = value.checked_mul(mult).ok_or_else(|| {
                Diag::new(Span::new(start, i - start), "size does not fit in 64 bits")
            })?;
        }
    }
    // Letters glued to a number are a unit (`1500ns`) or a mistake
    // (`5Q`, `64Kfoo`): say so here rather than at the next token.
    let end = word_end(b, i);
    if end > i && !UNITS.contains(&&src[i..end]) {
        let suffix = &src[i..end];
        return Err(Diag::new(
            Span::new(start, end - start),
            format!(
                "number `{}` has an unknown suffix `{}`",
                &src[start..end].chars().take(40).collect::<String>(),
                suffix.chars().take(40).collect::<String>()
            ),
        )
        .label("unknown suffix")
        .help("sizes take K, M, G or T (64K); costs ns, us or ms (1500ns); otherwise put a space after the number"));
    }
    Ok((Tok::Int(value), i))
}

/// The radix prefix and digits of the number at `start`: its value and
/// the offset past the digits.
fn number_digits(src: &str, start: usize) -> Result<(u64, usize), Diag> {
    let b = src.as_bytes();
    let c = b[start];
    let (radix, digits_start) = if c == b'0' && matches!(b.get(start + 1), Some(b'x') | Some(b'X'))
    {
        (16, start + 2)
    } else if c == b'0' && matches!(b.get(start + 1), Some(b'b') | Some(b'B')) {
        (2, start + 2)
    } else {
        (10, start)
    };
    let mut i = digits_start;
    while i < b.len() && (b[i].is_ascii_hexdigit() || b[i] == b'_') {
        // Decimal numbers stop at a size suffix letter handled below.
        if radix == 10 && !b[i].is_ascii_digit() && b[i] != b'_' {
            break;
        }
        i += 1;
    }
    let raw = &src[digits_start..i];
    let digits: std::borrow::Cow<str> = if raw.contains('_') {
        raw.replace('_', "").into()
    } else {
        raw.into()
    };
    let span_num = Span::new(start, i - start);
    if digits.is_empty() {
        return Err(Diag::new(span_num, "number has no digits"));
    }
    let value = u64::from_str_radix(&digits, radix).map_err(|_| {
        Diag::new(
            span_num,
            "number does not fit in 64 bits or has invalid digits",
        )
    })?;
    Ok((value, i))
}

/// The two-character operators; a longer match wins over its first
/// character alone (`<<` over `<`).
const TWO_CHAR_SYMBOLS: [(&[u8; 2], Tok<'static>); 9] = [
    (b"..", Tok::DotDot),
    (b"==", Tok::EqEq),
    (b"!=", Tok::NotEq),
    (b"<<", Tok::Shl),
    (b">>", Tok::Shr),
    (b"<=", Tok::Le),
    (b">=", Tok::Ge),
    (b"&&", Tok::AndAnd),
    (b"||", Tok::OrOr),
];

/// An operator or punctuation at `i`: its token and end.
fn symbol(src: &str, i: usize) -> Result<(Tok<'_>, usize), Diag> {
    let rest = &src.as_bytes()[i..];
    match TWO_CHAR_SYMBOLS.iter().find(|(s, _)| rest.starts_with(*s)) {
        Some(&(_, tok)) => Ok((tok, i + 2)),
        None => Ok((one_char_symbol(src, i)?, i + 1)),
    }
}

/// The one-character operator or punctuation at `i`.
fn one_char_symbol(src: &str, i: usize) -> Result<Tok<'_>, Diag> {
    Ok(match src.as_bytes()[i] {
        b'{' => Tok::LBrace,
        b'[' => Tok::LBracket,
        b']' => Tok::RBracket,
        b'}' => Tok::RBrace,
        b'(' => Tok::LParen,
        b')' => Tok::RParen,
        b',' => Tok::Comma,
        b':' => Tok::Colon,
        b';' => Tok::Semi,
        b'.' => Tok::Dot,
        b'=' => Tok::Assign,
        b'+' => Tok::Plus,
        b'-' => Tok::Minus,
        b'*' => Tok::Star,
        b'&' => Tok::Amp,
        b'|' => Tok::Pipe,
        b'^' => Tok::Caret,
        b'~' => Tok::Tilde,
        b'!' => Tok::Bang,
        b'<' => Tok::Lt,
        b'>' => Tok::Gt,
        _ => {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(Diag::new(
                Span::new(i, ch.len_utf8()),
                format!("unexpected character `{}`", ch.escape_default()),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_and_suffixes() {
        assert_eq!(
            toks("0x10 64K 2M 1_000 0b101"),
            vec![
                Tok::Int(16),
                Tok::Int(65536),
                Tok::Int(2 << 20),
                Tok::Int(1000),
                Tok::Int(5),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn unit_after_number_is_an_identifier() {
        assert_eq!(
            toks("1500ns"),
            vec![Tok::Int(1500), Tok::Ident("ns"), Tok::Eof]
        );
    }

    #[test]
    fn unknown_suffixes_are_errors_at_the_number() {
        for (src, at) in [("d.a = 5Q", 6), ("64Kfoo", 0), ("0x10zz", 0), ("7_", 99)] {
            match lex(src) {
                Err(e) => assert_eq!(e.span.offset, at, "{src}: {e:?}"),
                Ok(t) => assert_eq!(at, 99, "{src}: {t:?}"),
            }
        }
        assert_eq!(toks("3us"), vec![Tok::Int(3), Tok::Ident("us"), Tok::Eof]);
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        assert_eq!(
            toks("\u{feff}target x"),
            vec![Tok::Ident("target"), Tok::Ident("x"), Tok::Eof]
        );
        // Only at the start.
        assert!(lex("a \u{feff}").is_err());
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(lex("0x1_0000_0000_0000_0000").is_err());
        assert!(lex("99999999999999999999").is_err());
        assert!(lex("20000000000T").is_err());
    }

    #[test]
    fn bad_char_and_comment() {
        assert!(lex("reg @").is_err());
        assert!(lex("/* open").is_err());
        assert_eq!(
            toks("a // c\n b"),
            vec![Tok::Ident("a"), Tok::Ident("b"), Tok::Eof]
        );
    }
}
