//! AT&T text of encoded instructions, through iced's `GasFormatter`.

use std::cell::RefCell;
use std::rc::Rc;

use iced_x86::{Formatter, GasFormatter, Instruction, OpKind, SymbolResolver, SymbolResult};

/// Symbol resolver that names the branch target of the instruction being
/// formatted (set through the shared cell right before formatting).
struct BranchName(Rc<RefCell<Option<String>>>);

impl SymbolResolver for BranchName {
    fn symbol(
        &mut self,
        instruction: &Instruction,
        operand: u32,
        _instruction_operand: Option<u32>,
        address: u64,
        _address_size: u32,
    ) -> Option<SymbolResult<'_>> {
        let is_branch = matches!(
            instruction.try_op_kind(operand),
            Ok(OpKind::NearBranch64 | OpKind::NearBranch32 | OpKind::NearBranch16)
        );
        if !is_branch {
            return None;
        }
        let name = self.0.borrow().clone()?;
        Some(SymbolResult::with_string(address, name))
    }
}

/// GNU-as AT&T text of encoded instructions, branch targets by name.
pub(super) struct Printer {
    /// The branch target's name of the instruction being formatted.
    target: Rc<RefCell<Option<String>>>,
    fmt: GasFormatter,
}

impl Printer {
    pub(super) fn new() -> Printer {
        let target = Rc::new(RefCell::new(None::<String>));
        let mut fmt = GasFormatter::with_options(Some(Box::new(BranchName(target.clone()))), None);
        fmt.options_mut().set_uppercase_hex(false);
        Printer { target, fmt }
    }

    /// `ins` as text, its branch operand (if any) printed as `target`.
    pub(super) fn text(&mut self, ins: &Instruction, target: Option<String>) -> String {
        *self.target.borrow_mut() = target;
        let mut s = String::new();
        self.fmt.format(ins, &mut s);
        // iced emits LOCK before the 0x66 operand-size prefix, GNU
        // as orders `lock cmpxchg %ax,..` as 66 F0.  Writing the
        // prefix as its own statement (`lock; ...`, as Linux does)
        // makes as emit F0 first, matching iced's bytes.
        if let Some(rest) = s.strip_prefix("lock ").filter(|_| ins.has_lock_prefix()) {
            s = format!("lock; {rest}");
        }
        s
    }
}
