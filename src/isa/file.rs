//! What every target's `.S` file template is given (built by
//! `emit::asm`), and how a template is rendered.

/// One function as the file templates see it.
pub struct FuncView {
    pub symbol: String,
    /// Every line preceded by a newline (one string: large specs have
    /// millions of lines).
    pub body: String,
    /// Kernel headers its patched feature tests need (`--style linux`).
    pub includes: Vec<&'static str>,
}

/// Render a file template into a string sized for it up front: the bodies
/// are most of the file, and growing a many-megabyte string by doubling
/// copied it several times over.
pub fn render_sized(t: &impl askama::Template, v: &FileView) -> Result<String, askama::Error> {
    let size: usize = v
        .funcs
        .iter()
        .map(|f| f.body.len() + 4 * f.symbol.len() + 256)
        .sum();
    let mut out = String::with_capacity(size + 1024);
    t.render_into(&mut out)?;
    Ok(out)
}

/// What every target's file template gets.
pub struct FileView<'a> {
    pub banner: String,
    pub spdx: Option<&'a str>,
    pub linux: bool,
    pub funcs: Vec<FuncView>,
    /// `.arch`/`.machine` level the functions need, if any.
    pub arch: Option<&'static str>,
    /// Kernel headers for the kernel's patching of feature tests.
    pub includes: Vec<&'static str>,
}
