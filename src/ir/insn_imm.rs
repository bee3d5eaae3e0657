//! Immediate fields of CPU invalidation instructions: the forms live with
//! the parser that reads them (`crate::spec::insn_imm`); the IR's
//! expressions are the operands folded into an instruction's name.

pub use crate::spec::insn_imm::{fold, name_with, split};

impl crate::spec::insn_imm::Operand for super::Expr {
    fn as_const(&self) -> Option<u64> {
        super::Expr::as_const(self)
    }
}
