//! How emitted code is spelled for its consumer: plain GNU as, or the
//! Linux kernel's assembly macros. Each target's text and the features'
//! dispatch read it.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Style {
    /// Plain GNU as: assembles with `<triple>-gcc -c`, no kernel headers.
    #[default]
    Plain,
    /// Linux kernel style: `ppc_asm.h`/`linkage.h` macros, bare registers.
    Linux,
}
