//! What the ISAs' `emit.rs` files write alike, written once: the view a
//! `.S` file template is rendered from, and the [`Codegen`] of an ISA
//! whose instructions encode in one call and print themselves.
//!
//! [`Codegen`]: super::codegen::Codegen

/// `struct $name`, askama's view of the template `templates/$path`: the
/// file as [`FileView`](super::file::FileView) `v`, then the ISA's own
/// `field`s (POWER's ABI). Rendered with
/// [`render_sized`](super::file::render_sized).
macro_rules! file_template {
    ($name:ident, $path:literal $(, $field:ident: $ty:ty)* $(,)?) => {
        #[derive(askama::Template)]
        #[template(path = $path, escape = "none")]
        struct $name<'a> {
            v: &'a $crate::isa::file::FileView<'a>,
            $($field: $ty,)*
        }
    };
}
pub(crate) use file_template;

/// [`Codegen`](super::codegen::Codegen) for `$isa` from its skeleton
/// modules: `lower::lower` gives the instructions (the machine changes
/// nothing), `insn::assemble` encodes them, each prints itself
/// (`Insn::text`) whatever the style and says the architecture level it
/// needs (`Insn::needs_arch`); `relax` rewrites far branches first.
macro_rules! printed_codegen {
    ($isa:ty $(, relax: $relax:path)?) => {
        impl $crate::isa::codegen::Codegen for $isa {
            type Insn = super::insn::Insn;
            type Error = $crate::isa::assembler::EncodeError;

            fn lower(
                &self,
                f: &$crate::lir::Func,
                alloc: &$crate::lir::regalloc::Allocation,
                _: $crate::isa::Machine,
            ) -> Result<$crate::isa::codegen::Insns<Self::Insn>, $crate::isa::error::LowerError> {
                Ok(super::lower::lower(f, alloc)?.insns)
            }

            $(
                fn relax(
                    &self,
                    insns: $crate::isa::codegen::Insns<Self::Insn>,
                    next_label: $crate::isa::assembler::Label,
                ) -> Result<$crate::isa::codegen::Insns<Self::Insn>, Self::Error> {
                    $relax(insns, next_label)
                }
            )?

            fn assemble(
                &self,
                insns: &[Self::Insn],
                _: $crate::isa::style::Style,
                name: $crate::isa::codegen::LabelName,
            ) -> Result<$crate::isa::codegen::Code, Self::Error> {
                let asm = super::insn::assemble(insns)?;
                Ok($crate::isa::codegen::Code::printed(asm, insns, |i| i.text(name)))
            }

            fn needs_arch(
                &self,
                insns: &[Self::Insn],
                _: $crate::isa::Machine,
            ) -> Option<&'static str> {
                $crate::isa::codegen::newest_arch(insns, <Self::Insn>::needs_arch)
            }
        }
    };
}
pub(crate) use printed_codegen;
