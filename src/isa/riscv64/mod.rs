//! RISC-V RV64 (LP64, RV64GC without compressed forms; Svinval).
//!
//! Cut like the other targets: `insn` (instructions; in it `regs`,
//! `imms` (typed immediates), `text` and `encode` (machine code, branch
//! relaxation)), `lower` (LIR -> instructions, ABI) and `mem` (its loads,
//! stores, spills and reservations), `barriers` (the RVWMO table and
//! memory model), `emit` (what the code generation driver asks of the
//! target, and the file template), `syntax` (how a spec writes its
//! instructions), `oracles` (capstone, litmus, emulator).

crate::isa::skeleton!();
pub mod decode;
mod mem;

crate::isa::one_target! {
    Riscv64: "riscv64", "riscv64-linux-gnu",
    set_cmp: true,
    branch_compares_registers: true,
}
