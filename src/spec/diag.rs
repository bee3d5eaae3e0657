//! Diagnostics that point into the spec text.
//!
//! Every error the tool reports about a spec carries a byte span; rendering
//! goes through miette so the user sees `file:line:col` and a caret.

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceSpan};
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
    let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map(|p| p + 1)
        .unwrap_or(0);
    // Columns count characters, not bytes, as editors do.
    let col = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, col)
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A diagnostic together with its source, ready for miette.
#[derive(Debug)]
pub struct SpecError {
    pub diag: Diag,
    pub src: NamedSource<String>,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diag.message)
    }
}

impl std::error::Error for SpecError {}

impl Diagnostic for SpecError {
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
    let mut out = format!("{name}:{line}:{col}: error: {}\n", diag.message);
    // miette shows no snippet for an empty source; one empty line still
    // gets the caret.
    let err = diag
        .clone()
        .with_source(name, if src.is_empty() { "\n" } else { src });
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_context_lines(1);
    let mut snippet = String::new();
    if handler.render_report(&mut snippet, &err).is_ok() {
        out.push_str(&snippet);
    }
    out
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
