//! Diagnostics that point into the spec text.
//!
//! Every error the tool reports about a spec carries a byte span; rendering
//! goes through miette so the user sees `file:line:col` and a caret.

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode, SourceSpan};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash, serde::Serialize)]
pub struct Span {
    pub offset: usize,
    pub len: usize,
}

impl Span {
    pub fn new(offset: usize, len: usize) -> Self {
        Span { offset, len }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        let start = self.offset.min(other.offset);
        let end = (self.offset + self.len).max(other.offset + other.len);
        Span::new(start, end - start)
    }
}

/// One problem found in a spec (or while lowering it for a target).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diag {
    pub message: String,
    pub span: Span,
    pub label: Option<String>,
    pub help: Option<String>,
    /// Secondary locations, e.g. the earlier definition of a duplicate.
    pub related: Vec<(Span, String)>,
}

impl Diag {
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Diag {
            message: message.into(),
            span,
            label: None,
            help: None,
            related: Vec::new(),
        }
    }
    /// A name used but never declared: `unknown WHAT `NAME``.
    pub fn undeclared(span: Span, what: &str, name: &str) -> Self {
        Diag::new(span, format!("unknown {what} `{name}`")).label("not declared")
    }
    pub fn label(mut self, l: impl Into<String>) -> Self {
        self.label = Some(l.into());
        self
    }
    pub fn help(mut self, h: impl Into<String>) -> Self {
        self.help = Some(h.into());
        self
    }
    pub fn related(mut self, span: Span, l: impl Into<String>) -> Self {
        self.related.push((span, l.into()));
        self
    }

    /// 1-based line and column of the primary span in `src`.
    pub fn line_col(&self, src: &str) -> (usize, usize) {
        line_col(src, self.span.offset)
    }

    /// Attach the source so miette can render it.
    pub fn with_source(self, name: &str, src: &str) -> SpecError {
        SpecError {
            diag: self,
            src: NamedSource::new(name, src.to_string()),
        }
    }
}

pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = &src.as_bytes()[..offset];
    // Line breaks are `\n`, `\r\n` and a lone `\r` (classic Mac files).
    let is_break = |i: usize| {
        before[i] == b'\n' || before[i] == b'\r' && src.as_bytes().get(i + 1) != Some(&b'\n')
    };
    let line = (0..before.len()).filter(|&i| is_break(i)).count() + 1;
    let line_start = (0..before.len())
        .rev()
        .find(|&i| is_break(i))
        .map(|p| p + 1)
        .unwrap_or(0);
    // Columns count characters, not bytes, as editors do (which do not
    // show a byte order mark either).
    let text = String::from_utf8_lossy(&before[line_start..]);
    let col = text
        .strip_prefix('\u{feff}')
        .unwrap_or(&text)
        .chars()
        .count()
        + 1;
    (line, col)
}

/// `src` with every lone `\r` made a `\n` (same length: spans still fit),
/// so that miette, which breaks lines only at `\n`, shows the right line.
pub fn unix_breaks(src: &str) -> std::borrow::Cow<'_, str> {
    let b = src.as_bytes();
    if !(0..b.len()).any(|i| b[i] == b'\r' && b.get(i + 1) != Some(&b'\n')) {
        return src.into();
    }
    let mut out = b.to_vec();
    for i in 0..b.len() {
        if b[i] == b'\r' && b.get(i + 1) != Some(&b'\n') {
            out[i] = b'\n';
        }
    }
    String::from_utf8(out)
        .unwrap_or_else(|_| src.to_string())
        .into()
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A diagnostic with the source miette renders it against: the whole
/// spec, or the one-line excerpt of a line too long to show whole.
#[derive(Debug)]
pub struct SpecError<S = NamedSource<String>> {
    pub diag: Diag,
    pub src: S,
}

impl<S> fmt::Display for SpecError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diag.message)
    }
}

impl<S: fmt::Debug> std::error::Error for SpecError<S> {}

impl<S: SourceCode + fmt::Debug> Diagnostic for SpecError<S> {
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.src)
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.diag
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let primary = LabeledSpan::new_primary_with_span(
            Some(self.diag.label.clone().unwrap_or_else(|| "here".into())),
            SourceSpan::new(self.diag.span.offset.into(), self.diag.span.len),
        );
        let others = self.diag.related.iter().map(|(s, l)| {
            LabeledSpan::new_with_span(Some(l.clone()), SourceSpan::new(s.offset.into(), s.len))
        });
        Some(Box::new(std::iter::once(primary).chain(others)))
    }
}

/// Render a diagnostic as plain text (no colours): a `file:line:col: error:`
/// header that editors and CI logs can jump to, then miette's snippet.
pub fn render(name: &str, src: &str, diag: &Diag) -> String {
    let (line, col) = diag.line_col(src);
    let src = &*unix_breaks(src);
    let mut out = format!("{name}:{line}:{col}: error: {}\n", diag.message);
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_context_lines(1);
    let mut snippet = String::new();
    if needs_excerpt(src, diag) {
        // miette pads with `{:width$}`, whose width is a u16: a column past
        // 65535 panics inside it, and a 100,000-character line would be
        // printed whole. Show a window of the primary line instead.
        let (ex, primary) = Excerpt::around(name, src, diag.span);
        let mut d = Diag {
            span: primary,
            related: Vec::new(),
            ..diag.clone()
        };
        for (s, l) in &diag.related {
            let (rl, rc) = line_col(src, s.offset);
            d.help = Some(match d.help {
                Some(h) => format!("{h}\n{l}: {name}:{rl}:{rc}"),
                None => format!("{l}: {name}:{rl}:{rc}"),
            });
        }
        let err = SpecError { diag: d, src: ex };
        if handler.render_report(&mut snippet, &err).is_ok() {
            out.push_str(&snippet);
        }
        return out;
    }
    // miette shows no snippet for an empty source; one empty line still
    // gets the caret.
    let err = diag
        .clone()
        .with_source(name, if src.is_empty() { "\n" } else { src });
    if handler.render_report(&mut snippet, &err).is_ok() {
        out.push_str(&snippet);
    }
    out
}

/// Lines and spans longer than this are shown as a window.
const MAX_SNIPPET: usize = 240;
/// Characters of context on each side of a clipped span.
const WINDOW: usize = 60;

/// Byte range of the line holding `offset` (without its line break).
fn line_range(src: &str, offset: usize) -> (usize, usize) {
    let b = src.as_bytes();
    let offset = offset.min(b.len());
    let start = b[..offset]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1);
    let end = b[offset..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| offset + p);
    (start, end)
}

/// Would miette's snippet (one line of context) hold a long line or span?
fn needs_excerpt(src: &str, diag: &Diag) -> bool {
    let spans = std::iter::once(diag.span).chain(diag.related.iter().map(|(s, _)| *s));
    spans.into_iter().any(|s| {
        if s.len > MAX_SNIPPET {
            return true;
        }
        let (start, end) = line_range(src, s.offset);
        // The line, the one before and the one after.
        let before = line_range(src, start.saturating_sub(1));
        let after = line_range(src, (end + 1).min(src.len()));
        [(start, end), before, after]
            .iter()
            .any(|&(a, b)| b - a > MAX_SNIPPET)
    })
}

/// A window of one line of the spec that reports its real line and column
/// to miette (so the `[file:line:col]` and the gutter stay true).
struct Excerpt {
    name: String,
    text: String,
    /// 0-based line of the window in the spec.
    line: usize,
    /// Characters of that line before the window's first character.
    col: usize,
}

impl Excerpt {
    /// The window around `span` and the span's place in it.
    fn around(name: &str, src: &str, span: Span) -> (Excerpt, Span) {
        let floor = |mut i: usize| {
            while !src.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let ceil = |mut i: usize| {
            while i < src.len() && !src.is_char_boundary(i) {
                i += 1;
            }
            i.min(src.len())
        };
        let off = span.offset.min(src.len());
        let (ls, le) = line_range(src, off);
        let end = floor((off + span.len.min(WINDOW)).min(le));
        let from = floor(off.saturating_sub(WINDOW).max(ls));
        let to = ceil((end + WINDOW).min(le));
        let mut text = String::new();
        let mut col = src[ls..from].chars().count();
        if from > ls {
            text.push('…');
            col -= 1;
        }
        let at = text.len() + (off - from);
        text.push_str(&src[from..to]);
        if to < le {
            text.push('…');
        }
        let line = src.as_bytes()[..ls].iter().filter(|&&c| c == b'\n').count();
        let ex = Excerpt {
            name: name.to_string(),
            text,
            line,
            col,
        };
        (ex, Span::new(at, end.max(off) - off))
    }
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let inner = self.text.as_str().read_span(span, before, after)?;
        // The window is one line: its column is the characters before the
        // span plus those cut off in front (miette would count bytes).
        let at = span.offset().min(self.text.len());
        let col = self.text[..at].chars().count() + self.col;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.line,
            col,
            inner.line_count(),
        )))
    }
}

impl std::fmt::Debug for Excerpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let src = "ab\ncd\nef";
        assert_eq!(line_col(src, 0), (1, 1));
        assert_eq!(line_col(src, 4), (2, 2));
        assert_eq!(line_col(src, 8), (3, 3));
    }

    /// miette panicked on columns past 65535 ("Formatting argument out of
    /// range"); long lines and spans are shown as a window.
    #[test]
    fn long_lines_render_a_window() {
        let src = format!("{}@\n", " ".repeat(70_000));
        let d = Diag::new(Span::new(70_000, 1), "unexpected character `@`");
        let r = render("x.inv", &src, &d);
        assert!(r.starts_with("x.inv:1:70001: error:"), "{r}");
        assert!(r.contains("[x.inv:1:70001]"), "{r}");
        assert!(r.contains('@') && r.contains('…') && r.len() < 1000, "{r}");
        let id = "a".repeat(100_000);
        let src = format!("seq s() {{\n  d.{id}.x = 1\n}}\n");
        let d = Diag::new(Span::new(14 + id.len() + 1, 1), "no register `x`")
            .related(Span::new(0, 3), "the sequence");
        let r = render("y.inv", &src, &d);
        assert!(r.starts_with("y.inv:2:100006: error:"), "{r}");
        assert!(r.contains("[y.inv:2:100006]"), "{r}");
        assert!(r.contains("the sequence: y.inv:1:1"), "{r}");
        assert!(r.len() < 1000, "{r}");
        let d = Diag::new(Span::new(14, id.len()), "long");
        let r = render("y.inv", &src, &d);
        assert!(r.contains("[y.inv:2:5]") && r.len() < 1000, "{r}");
    }

    #[test]
    fn lone_carriage_returns_break_lines() {
        let src = "device d {\r  reg a 0x3 u64 be\r}\r";
        assert_eq!(line_col(src, 13), (2, 3));
        let r = render("t.inv", src, &Diag::new(Span::new(13, 3), "x"));
        assert!(r.starts_with("t.inv:2:3: error: x"), "{r}");
        assert!(r.contains(" 2 │   reg a"), "{r}");
        assert_eq!(line_col("a\r\nb", 3), (2, 1));
        assert_eq!(line_col("\u{feff}ab", 4), (1, 2));
    }

    #[test]
    fn render_has_location_and_caret() {
        let src = "device x {\n  reg a 0x3 u64 be\n}\n";
        let d = Diag::new(Span::new(19, 3), "misaligned").label("offset");
        let r = render("t.inv", src, &d);
        assert!(r.starts_with("t.inv:2:9: error: misaligned"), "{r}");
        assert!(
            r.contains("───") || r.contains('^') || r.contains('┬'),
            "{r}"
        );
    }
}
