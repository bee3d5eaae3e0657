//! Oracle: the GNU cross toolchain on the whole generated file. The `.S`
//! for `examples/npu2_atsd.inv` must assemble with plain `<triple>-gcc -c`
//! (no extra flags), and the object's `.text` must be exactly our encoder's
//! bytes laid out as GNU as lays them out: each function `.p2align 4`
//! aligned, the gap filled with `nop` (0x60000000 in target byte order).
//! Also the symbol sizes (and, for ELFv2, addresses) must match. A missing
//! tool is a failure, not a skip.

use crate::support;

use shootdown::Target;
use std::process::Command;
use support::*;

const SPEC: &str = "examples/npu2_atsd.inv";
const NOP: u32 = 0x6000_0000;
const FUNC_ALIGN: usize = 16;

/// Expected `.text`: our functions in order, each at the next multiple of
/// 16, padding made of nops; returns the bytes and each function's offset.
fn expected_layout(target: Target, funcs: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
    let nop = if target.big_endian() {
        NOP.to_be_bytes()
    } else {
        NOP.to_le_bytes()
    };
    let mut text = Vec::new();
    let mut offsets = Vec::new();
    for f in funcs {
        while text.len() % FUNC_ALIGN != 0 {
            text.extend_from_slice(&nop);
        }
        offsets.push(text.len());
        text.extend_from_slice(f);
    }
    (text, offsets)
}

/// `nm -S` rows of defined symbols: name -> (value, size).
fn nm_sizes(target: Target, obj: &std::path::Path) -> Vec<(String, u64, u64)> {
    let out = run(Command::new(tool(target, "nm")).arg("-S").arg(obj));
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4).then(|| {
                (
                    f[3].to_string(),
                    u64::from_str_radix(f[0], 16).unwrap(),
                    u64::from_str_radix(f[1], 16).unwrap(),
                )
            })
        })
        .collect()
}

fn hexdump(b: &[u8]) -> String {
    b.chunks(4)
        .enumerate()
        .map(|(i, w)| {
            let h: String = w.iter().map(|x| format!("{x:02x}")).collect();
            format!("{:#06x}: {h}\n", i * 4)
        })
        .collect()
}

fn check(target: Target, passes: &str) {
    let (c, opts) = compile_spec(SPEC, target, passes);
    let asm = asm_text(&c, &opts);
    assert!(
        !asm.contains("template error"),
        "template error in the .S:\n{asm}"
    );
    let dir = scratch(&format!("power-codegen-{target}-{passes}"));
    let obj = assemble(target, &asm, &dir, "npu2_atsd");
    let got = text_bytes(target, &obj);

    let funcs: Vec<&[u8]> = c.funcs.iter().map(|f| f.bytes.as_slice()).collect();
    assert_eq!(
        funcs.len(),
        4,
        "invalidate_va, invalidate_pid, invalidate_range, flush_all_mm"
    );
    let (want, offsets) = expected_layout(target, &funcs);
    if got != want {
        let first = got
            .iter()
            .zip(&want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        panic!(
            "{target} --passes {passes}: .text differs from our bytes at offset {first:#x} \
             (gnu {} bytes, ours {} bytes); object in {}\n--- gnu as ---\n{}--- ours ---\n{}",
            got.len(),
            want.len(),
            dir.display(),
            hexdump(&got),
            hexdump(&want)
        );
    }

    // Symbols: `.size` covers exactly the code; on ELFv2 the global symbol
    // is the code address. (On ELFv1 the global symbol is the .opd
    // descriptor; its `.size` is the code length as GCC emits it.)
    let syms = nm_sizes(target, &obj);
    for (f, off) in c.funcs.iter().zip(&offsets) {
        let (_, value, size) = syms
            .iter()
            .find(|(n, _, _)| *n == f.symbol)
            .unwrap_or_else(|| panic!("{} not in nm output: {syms:?}", f.symbol));
        assert_eq!(
            *size as usize,
            f.bytes.len(),
            "{target}: size of {}",
            f.symbol
        );
        if target == Target::Power64le {
            assert_eq!(*value as usize, *off, "{target}: address of {}", f.symbol);
        }
    }
    eprintln!(
        "{target} --passes {passes}: .text {} bytes, functions at {offsets:?}, sizes {:?}",
        got.len(),
        c.funcs.iter().map(|f| f.bytes.len()).collect::<Vec<_>>()
    );
}

#[test]
fn power64_all_assembles_to_our_bytes() {
    check(Target::Power64, "all");
}

#[test]
fn power64_none_assembles_to_our_bytes() {
    check(Target::Power64, "none");
}

#[test]
fn power64le_all_assembles_to_our_bytes() {
    check(Target::Power64le, "all");
}

#[test]
fn power64le_none_assembles_to_our_bytes() {
    check(Target::Power64le, "none");
}

/// The layout model itself: nop padding in target byte order.
#[test]
fn layout_pads_with_target_order_nops() {
    let (be, off) = expected_layout(Target::Power64, &[&[1, 2, 3, 4], &[5, 6, 7, 8]]);
    assert_eq!(off, [0, 16]);
    assert_eq!(&be[4..8], &[0x60, 0, 0, 0]);
    assert_eq!(be.len(), 20);
    let (le, _) = expected_layout(Target::Power64le, &[&[1, 2, 3, 4], &[5, 6, 7, 8]]);
    assert_eq!(&le[4..8], &[0, 0, 0, 0x60]);
}
