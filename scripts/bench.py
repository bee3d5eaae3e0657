#!/usr/bin/env python3
"""Side-by-side performance ratios (see docs/performance.md).

Every figure is whole processes: wall time from fork to reap and peak RSS
from wait4(). A and B run alternately (A B A B ...) after one warm-up
each; we print medians and the median of the pairwise ratios A/B, so
machine-speed drift hits both sides alike.

    scripts/bench.py [--runs N] [--shootdown PATH]
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.path.join(ROOT, "target", "bench")
TARGETS = ["power64", "power64le", "aarch64", "x86_64"]
AS = {
    "power64": ["powerpc64-linux-gnu-as", "-a64", "-mbig"],
    "power64le": ["powerpc64le-linux-gnu-as", "-a64", "-mlittle"],
    "aarch64": ["aarch64-linux-gnu-as"],
    "x86_64": ["as", "--64"],
    "riscv64": ["riscv64-linux-gnu-as"],
}


def run1(cmds):
    """Run commands one after another; (wall seconds, max peak RSS KiB).
    A command starting with "@" is set-up: run, but not timed."""
    total = 0.0
    peak = 0
    for c in cmds:
        timed = c[0] != "@"
        c = c if timed else c[1:]
        t0 = time.perf_counter()
        p = subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        t = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: {' '.join(c)}\n{p.stderr.read().decode()}")
        p.stderr.close()
        if timed:
            total += t
            peak = max(peak, ru.ru_maxrss)
    return total, peak


def measure(runs, a, b=None):
    """Alternate A and B; returns per-side lists and the pairwise ratios."""
    run1(a)
    if b:
        run1(b)
    ta, tb, ma, mb = [], [], [], []
    for _ in range(runs):
        t, m = run1(a)
        ta.append(t)
        ma.append(m)
        if b:
            t, m = run1(b)
            tb.append(t)
            mb.append(m)
    ratios = [x / y for x, y in zip(ta, tb)] if b else []
    return ta, tb, ma, mb, ratios


def ms(xs):
    return f"{statistics.median(xs) * 1e3:8.2f} ms (min {min(xs) * 1e3:.2f}, max {max(xs) * 1e3:.2f})"


def rdl_and_inv(n=200):
    """A 200-register map, as SystemRDL and as the equivalent spec."""
    rdl = ["addrmap regs200 {", "    default regwidth = 64;", "    default sw = rw;", "    default hw = r;"]
    inv = ["target power64le", "", "device blk {"]
    for i in range(n):
        rdl += [f"    reg {{",
                f"        field {{}} en[0:0];",
                f"        field {{}} mode[7:4];",
                f"        field {{}} addr[51:12];",
                f"    }} r{i} @ {i * 8:#x};"]
        inv += [f"    reg r{i} {i * 8:#x} u64 le",
                f"    field r{i}.en lsb0 0",
                f"    field r{i}.mode lsb0 4..7",
                f"    field r{i}.addr lsb0 12..51"]
    rdl.append("};")
    inv.append("}")
    return "\n".join(rdl) + "\n", "\n".join(inv) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--shootdown", default=os.path.join(ROOT, "target", "release", "shootdown"))
    ap.add_argument("--sizes", default="1000,10000,100000")
    args = ap.parse_args()
    sd = args.shootdown
    os.makedirs(B, exist_ok=True)
    print(f"runs per side: {args.runs} (after one warm-up); medians; whole processes\n")

    # (a) gen of every example for every target vs GNU as on the same .S.
    examples = sorted(glob.glob(os.path.join(ROOT, "examples", "*.inv")))
    out_a = os.path.join(B, "gen")
    shutil.rmtree(out_a, ignore_errors=True)
    # No --target: every spec for the targets its `target` lines name
    # (what generated/ holds; arm64_tlb_range is AArch64 only).
    # Fresh output directory every run would measure mkdir; `gen` rewrites
    # only changed files, so clear the outputs to make it write them all.
    gen = [sd, "gen", *examples, "--out", out_a]
    run1([gen])
    asm = []
    for s in sorted(glob.glob(os.path.join(out_a, "*.S"))):
        t = s.rsplit(".", 2)[1]
        asm.append([*AS[t], s, "-o", os.path.join(B, "as.o")])
    clear = ["@", "sh", "-c", f"rm -f {out_a}/*"]
    ta, tb, _, _, r = measure(args.runs, [clear, gen], asm)
    print(f"(a) gen of {len(examples)} examples for their targets ({len(asm)} .S + {len(examples)} .h)")
    print(f"    shootdown gen      {ms(ta)}")
    print(f"    GNU as x{len(asm):<3}        {ms(tb)}")
    print(f"    ratio gen/as       {statistics.median(r):.3f}  (goal < 0.2)\n")

    # (b) header generation vs PeakRDL-cheader on a 200-register map.
    rdl, inv = rdl_and_inv()
    rdl_path = os.path.join(B, "regs200.rdl")
    inv_path = os.path.join(B, "regs200.inv")
    open(rdl_path, "w").write(rdl)
    open(inv_path, "w").write(inv)
    # The library entry points only (no `peakrdl` CLI and its plugin
    # discovery): the cheapest way to run PeakRDL-cheader.
    peak_py = ("import sys\n"
               "from systemrdl import RDLCompiler\n"
               "from peakrdl_cheader.exporter import CHeaderExporter\n"
               "c = RDLCompiler(); c.compile_file(sys.argv[1]); root = c.elaborate()\n"
               "CHeaderExporter().export(root, sys.argv[2])\n")
    try:
        import peakrdl_cheader  # noqa: F401
        have_peak = True
    except ImportError:
        have_peak = False
    if not have_peak:
        print("(b) skipped: peakrdl-cheader not installed (pip install peakrdl-cheader)\n")
    else:
        out_b = os.path.join(B, "hdr")
        os.makedirs(out_b, exist_ok=True)
        a = [["@", "sh", "-c", f"rm -f {out_b}/regs200.*"],
             [sd, "gen", inv_path, "--target", "power64le", "--out", out_b]]
        b = [[sys.executable, "-c", peak_py, rdl_path, os.path.join(out_b, "regs200_rdl.h")]]
        ta, tb, _, _, r = measure(args.runs, a, b)
        print("(b) header for a 200-register, 600-field map")
        print(f"    shootdown gen      {ms(ta)}")
        print(f"    peakrdl c-header   {ms(tb)}")
        print(f"    speedup            {1 / statistics.median(r):.1f}x  (goal >= 100x, issue 17)\n")

    # (c) scaling on synthetic specs.
    print("(c) scaling: one spec of N operations (AVA/LAUNCH writes), power64le")
    prev = None
    for n in [int(x) for x in args.sizes.split(",")]:
        spec = os.path.join(B, f"synth_{n}.inv")
        with open(spec, "w") as f:
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "synth-spec.py"), str(n)],
                           stdout=f, check=True)
        out_c = os.path.join(B, f"synth_{n}")
        cmd = [[sd, "gen", spec, "--target", "power64le", "--out", out_c],
               ["@", "rm", "-rf", out_c]]
        runs = args.runs if n < 100000 else max(3, args.runs // 2)
        ta, _, ma, _, _ = measure(runs, cmd)
        t = statistics.median(ta)
        grow = f"  x{t / prev[1]:.1f} time for x{n // prev[0]} input" if prev else ""
        goal = "  (goal < 500 ms, issue 17)" if n == 100000 else ""
        print(f"    N={n:<7} {ms(ta)}  peak {max(ma) / 1024:.1f} MiB{grow}{goal}")
        prev = (n, t)


if __name__ == "__main__":
    main()
