//! x86-64 backend end to end: the generated `.S` assembles with plain
//! `gcc -c` to exactly the bytes the library computed (per function, by
//! symbol offset: `.p2align 4` pads between functions), the NPU2 ATSD
//! sequences run natively against fake big-endian NPU register blocks, and
//! the optimized code carries no fence (UC stores are ordered on x86).
//! Missing tools are failures, not skips.

use crate::support;

use shootdown::codegen::Style;
use shootdown::Target;
use std::collections::HashMap;
use std::process::Command;
use support::*;

const SPEC: &str = "examples/npu2_atsd.inv";

/// symbol -> (offset, size) in `.text`, from `nm -S`.
fn symbols(obj: &std::path::Path) -> HashMap<String, (usize, usize)> {
    let out = run(Command::new("nm").args(["-S", "--defined-only"]).arg(obj));
    let mut m = HashMap::new();
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [off, size, kind, name] = f[..] {
            if kind.eq_ignore_ascii_case("t") {
                let off = usize::from_str_radix(off, 16).unwrap();
                let size = usize::from_str_radix(size, 16).unwrap();
                m.insert(name.to_string(), (off, size));
            }
        }
    }
    m
}

#[test]
fn gcc_bytes_match_per_function() {
    for passes in ["all", "none"] {
        let (c, opts) = compile_spec(SPEC, Target::X86_64, passes);
        let asm = asm_text(&c, &opts);
        let dir = scratch(&format!("x86-codegen-{passes}"));
        let obj = assemble(Target::X86_64, &asm, &dir, "npu2_atsd");
        let text = text_bytes(Target::X86_64, &obj);
        let syms = symbols(&obj);
        assert_eq!(
            c.funcs.len(),
            4,
            "the three ATSD sequences and flush_all_mm"
        );
        for f in &c.funcs {
            let &(off, size) = syms
                .get(&f.symbol)
                .unwrap_or_else(|| panic!("{} not in {syms:?}", f.symbol));
            assert_eq!(size, f.bytes.len(), "{passes}: .size of {}", f.symbol);
            assert_eq!(
                &text[off..off + size],
                &f.bytes[..],
                "{passes}: bytes of {} differ from gcc's\n{asm}",
                f.symbol
            );
            // Offsets recorded per line agree with the encoding too.
            for l in f.insns() {
                assert!((l.offset as usize) < f.bytes.len(), "{}", l.text);
            }
        }
    }
}

#[test]
fn linux_style_uses_kernel_macros_and_assembles() {
    let (c, mut opts) = compile_spec(SPEC, Target::X86_64, "all");
    opts.style = Style::Linux;
    opts.spdx = Some("GPL-2.0-only".into());
    let asm = asm_text(&c, &opts);
    assert!(asm.contains("#include <linux/linkage.h>"), "{asm}");
    assert!(asm.contains("SYM_FUNC_START(invalidate_va)"), "{asm}");
    assert!(asm.contains("SYM_FUNC_END(invalidate_pid)"), "{asm}");
    assert!(asm.contains("/* SPDX-License-Identifier: GPL-2.0-only */"));
    // A stand-in linkage.h with the kernel's shape of these macros.
    let dir = scratch("x86-linux-style");
    std::fs::create_dir_all(dir.join("linux")).unwrap();
    std::fs::write(
        dir.join("linux/linkage.h"),
        "#define SYM_FUNC_START(n) .globl n; .p2align 4; .type n,@function; n:\n\
         #define SYM_FUNC_END(n) .size n,.-n\n\
         #define RET ret; int3\n",
    )
    .unwrap();
    let s = dir.join("k.S");
    std::fs::write(&s, &asm).unwrap();
    run(Command::new("gcc")
        .arg("-c")
        .arg("-I")
        .arg(&dir)
        .arg(&s)
        .arg("-o")
        .arg(dir.join("k.o")));
}

const HARNESS: &str = r#"
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include "npu2_atsd.h"

#define N 6
static uint64_t regs[N][3]; /* launch +0, ava +8, stat +0x10 */
static void *npus[N];
static int failures;

static void be(uint64_t v, unsigned char out[8])
{
	for (int i = 0; i < 8; i++)
		out[i] = (unsigned char)(v >> (56 - 8 * i));
}

static void reset(void)
{
	memset(regs, 0, sizeof(regs));
	for (int i = 0; i < N; i++)
		npus[i] = regs[i];
}

static void expect_reg(const char *what, int npu, int reg, uint64_t want_be, int written)
{
	unsigned char want[8], zero[8] = { 0 };
	be(want_be, want);
	const unsigned char *got = (const unsigned char *)&regs[npu][reg];
	const unsigned char *exp = written ? want : zero;
	if (memcmp(got, exp, 8) != 0) {
		printf("FAIL %s npu %d reg %d: got", what, npu, reg);
		for (int i = 0; i < 8; i++)
			printf(" %02x", got[i]);
		printf(", want");
		for (int i = 0; i < 8; i++)
			printf(" %02x", exp[i]);
		printf("\n");
		failures++;
	}
}

int main(void)
{
	static const unsigned long counts[] = { 0, 1, 6 };
	for (unsigned k = 0; k < 3; k++) {
		unsigned long n = counts[k];
		reset();
		long r = invalidate_va(npus, n, 1, 0x10010000);
		if (r != 0) {
			printf("FAIL invalidate_va n=%lu returned %ld\n", n, r);
			failures++;
		}
		for (int i = 0; i < N; i++) {
			int w = (unsigned long)i < n;
			expect_reg("va ava", i, 1, 0x10010000ull, w);
			expect_reg("va launch", i, 0, 0x0005400002000000ull, w);
			expect_reg("va stat", i, 2, 0, 0);
		}
	}

	reset();
	long r = invalidate_pid(npus, N, 1);
	if (r != 0) {
		printf("FAIL invalidate_pid returned %ld\n", r);
		failures++;
	}
	for (int i = 0; i < N; i++) {
		expect_reg("pid launch", i, 0, 0x000c000002000000ull, 1);
		expect_reg("pid ava", i, 1, 0, 0);
	}

	/* A busy NPU: the poll runs out of its bound. */
	reset();
	regs[3][2] = 0x0100000000000000ull;
	r = invalidate_va(npus, N, 1, 0x10010000);
	if (r != -110) {
		printf("FAIL busy invalidate_va returned %ld, want -110\n", r);
		failures++;
	}
	reset();
	regs[5][2] = 1;
	r = invalidate_pid(npus, N, 1);
	if (r != -110) {
		printf("FAIL busy invalidate_pid returned %ld, want -110\n", r);
		failures++;
	}

	printf("%s %d\n", failures ? "FAILURES" : "OK", failures);
	return failures != 0;
}
"#;

#[test]
fn npu2_atsd_runs_natively() {
    for passes in ["all", "none"] {
        let (c, opts) = compile_spec(SPEC, Target::X86_64, passes);
        let asm = asm_text(&c, &opts);
        let header = header_text(SPEC, &opts);
        let out = run_harness(
            Target::X86_64,
            &asm,
            &header,
            "npu2_atsd.h",
            HARNESS,
            &format!("x86-npu2-{passes}"),
        );
        assert!(out.contains("OK 0"), "{passes}: {out}\n{asm}");
    }
}

#[test]
fn ordered_uc_stores_need_no_fence() {
    let (c, _) = compile_spec(SPEC, Target::X86_64, "all");
    let stats = shootdown::emit::stats::collect(&c);
    let va = stats
        .iter()
        .find(|s| s.name == "invalidate_va")
        .expect("invalidate_va");
    assert!(va.barriers.is_empty(), "{va:?}");
    // With no barrier to hoist, AVA and LAUNCH stay fused in one loop:
    // 2 device stores, one instance-base load per loop (2 loops) and the
    // STAT loads (the poll's first read before its counter, and the
    // loop's).
    assert_eq!(va.stores, 2, "{va:?}");
    assert_eq!(va.loads, 4, "{va:?}");
    assert_eq!(va.invalidates, 0);
    let pid = stats.iter().find(|s| s.name == "invalidate_pid").unwrap();
    assert!(pid.barriers.is_empty(), "{pid:?}");
    assert_eq!(pid.stores, 1, "{pid:?}");
}
