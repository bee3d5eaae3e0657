//! `device NAME { ... }`: instances, mapping, registers, fields and
//! ordering requirements; and the `lsb0|msb0 A..B` bit ranges fields and
//! record fields share.

use super::Parser;
use crate::spec::ast::*;
use crate::spec::diag::{Diag, Span};
use crate::spec::lexer::Tok;

impl Parser<'_> {
    pub(super) fn device(&mut self) -> Result<Device, Diag> {
        self.expect_kw("device")?;
        let name = self.ident("a device name")?;
        self.expect(Tok::LBrace)?;
        let mut d = Device {
            name,
            instances: None,
            mapping: None,
            regs: Vec::new(),
            fields: Vec::new(),
            requires: Vec::new(),
        };
        loop {
            self.skip_semis();
            if self.eat(&Tok::RBrace) {
                break;
            }
            let kw = self.ident("`instances`, `mapping`, `reg`, `field`, `require` or `}`")?;
            match kw.name.as_str() {
                "instances" => {
                    let inst = self.instances(kw.span)?;
                    if d.instances.is_some() {
                        return Err(Diag::new(kw.span, "`instances` given twice"));
                    }
                    d.instances = Some(inst);
                }
                "mapping" => {
                    let m = self.ident("a mapping (e.g. nGnRE)")?;
                    if d.mapping.is_some() {
                        return Err(
                            Diag::new(kw.span, "`mapping` given twice").label("second `mapping`")
                        );
                    }
                    d.mapping = Some(m);
                }
                "reg" => d.regs.push(self.reg(kw.span)?),
                "field" => d.fields.push(self.field(kw.span)?),
                "require" => d.requires.push(self.require(kw.span)?),
                _ => {
                    return Err(
                        Diag::new(kw.span, format!("unknown device item `{}`", kw.name))
                            .label("expected `instances`, `mapping`, `reg`, `field` or `require`"),
                    )
                }
            }
        }
        Ok(d)
    }

    /// After `instances` (at `kw`): `N` or `dynamic max N`.
    fn instances(&mut self, kw: Span) -> Result<Instances, Diag> {
        Ok(if self.eat_kw("dynamic") {
            self.expect_kw("max")?;
            let (max, s) = self.int("the maximum instance count")?;
            Instances::Dynamic {
                max,
                span: kw.to(s),
            }
        } else {
            let (count, s) = self.int("an instance count or `dynamic`")?;
            Instances::Fixed {
                count,
                span: kw.to(s),
            }
        })
    }

    /// After `reg` (at `kw`): `NAME OFFSET u8|u16|u32|u64 be|le`.
    fn reg(&mut self, kw: Span) -> Result<Reg, Diag> {
        let name = self.ident("a register name")?;
        let (offset, offset_span) = self.int("the register offset")?;
        let ty = self.ident("a register width (u8, u16, u32, u64)")?;
        let width = match ty.name.as_str() {
            "u8" => 8,
            "u16" => 16,
            "u32" => 32,
            "u64" => 64,
            _ => {
                return Err(Diag::new(ty.span, "unknown register width")
                    .label("expected u8, u16, u32 or u64"))
            }
        };
        let endian = self
            .eat_one_of(&[("be", Endian::Big), ("le", Endian::Little)])
            .ok_or_else(|| self.unexpected("`be` or `le`"))?;
        let span = kw.to(self.prev_span());
        Ok(Reg {
            name,
            offset,
            offset_span,
            width,
            width_span: ty.span,
            endian,
            span,
        })
    }

    /// After `field` (at `kw`): `REG.NAME lsb0|msb0 A[..B]`.
    fn field(&mut self, kw: Span) -> Result<Field, Diag> {
        let reg = self.ident("a register name")?;
        self.expect(Tok::Dot)?;
        let name = self.ident("a field name")?;
        let (numbering, first, last, fs, ls) = self.bits()?;
        Ok(Field {
            reg,
            name,
            numbering,
            first,
            last,
            bits_span: fs.to(ls),
            span: kw.to(ls),
        })
    }

    /// After `require` (at `kw`): `REG before REG [any]`.
    fn require(&mut self, kw: Span) -> Result<Require, Diag> {
        let before = self.ident("a register name")?;
        self.expect_kw("before")?;
        let after = self.ident("a register name")?;
        let scope = if self.eat_kw("any") {
            Scope::AnyInstance
        } else {
            Scope::SameInstance
        };
        Ok(Require {
            before,
            after,
            scope,
            span: kw.to(self.prev_span()),
        })
    }

    /// `lsb0|msb0 A[..B]`: a field's numbering and bits (with spans).
    pub(super) fn bits(&mut self) -> Result<(Numbering, u64, u64, Span, Span), Diag> {
        let numbering = self
            .eat_one_of(&[("msb0", Numbering::Msb0), ("lsb0", Numbering::Lsb0)])
            .ok_or_else(|| self.unexpected("`msb0` or `lsb0`"))?;
        let (first, fs) = self.int("a bit number")?;
        let (last, ls) = if self.eat(&Tok::DotDot) {
            self.int("the last bit number")?
        } else {
            (first, fs)
        };
        Ok((numbering, first, last, fs, ls))
    }
}
