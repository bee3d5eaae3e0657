#!/usr/bin/env python3
"""Write a synthetic spec.

    scripts/synth-spec.py N [PER_SEQ] > spec.inv
    scripts/synth-spec.py --shape SHAPE [--bytes 8M] > spec.inv

The first form: the NPU2 ATSD device of examples/npu2_atsd.inv and N
register writes, AVA/LAUNCH pairs (`require ava before launch` gives each
LAUNCH an edge) spread over sequences of PER_SEQ operations (default 100),
one dynamic `each` loop per pair, the shape of the bundled sequences,
repeated.

The second form: a valid spec of about BYTES (default 8 MiB, the input
limit) that is large in one dimension (docs/performance.md, "8 MiB specs"):

  devices     many small devices, each with a register and a field
  registers   one device with as many registers as fit
  fields      one device, 64 one-bit fields per register
  sequences   one device, many one-write sequences
  statements  one device, sequences of 256 statements (the limit) each
  records     one queue, as many 16-byte command records as fit
  queues      one device, as many queues on it as fit (each its own
              producer register), one sequence using the first
"""
import sys

ATSD = ["target power64le", "", "device npu {",
        "    instances dynamic max 6",
        "    reg launch 0x00 u64 be", "    reg ava 0x08 u64 be", "    reg stat 0x10 u64 be",
        "    field launch.prs msb0 13", "    field launch.ap msb0 15..17",
        "    field launch.pid msb0 24..38",
        "    require ava before launch", "}"]


def ops(n, per):
    out = list(ATSD)
    done = 0
    s = 0
    while done < n:
        k = min(per, n - done)
        out.append(f"seq s{s}(pid: u64, va: u64) {{")
        for i in range(0, k, 2):
            out.append("    each npu {")
            out.append(f"        npu.ava = va + {i * 4096}")
            if i + 1 < k:
                out.append("        npu.launch = { prs: 1, ap: 5, pid: pid }")
            out.append("    }")
        out.append("    each npu { poll npu.stat == 0 limit 100000 else return -110 }")
        out.append("}")
        done += k
        s += 1
    return "\n".join(out) + "\n"


def shape(name, limit):
    parts = ["target aarch64\n"]
    size = len(parts[0])

    def add(text):
        nonlocal size
        if size + len(text) > limit:
            return False
        parts.append(text)
        size += len(text)
        return True

    dev = "device d {\n    instances dynamic max 8\n"
    if name == "devices":
        i = 0
        # One sequence touches the first device so the spec generates code.
        add("seq s(x: u64) { each d0 { d0.a = x } }\n")
        while add(f"device d{i} {{\n    instances dynamic max 8\n    reg a 0x0 u64 le\n"
                  f"    field a.f lsb0 0..3\n}}\n"):
            i += 1
        return "".join(parts)
    if name == "registers":
        add(dev)
        i = 0
        # Leave room for the closing brace and one sequence.
        tail = "}\nseq s(x: u64) { each d { d.r0 = x } }\n"
        while add(f"    reg r{i} {i * 8:#x} u64 le\n") and size + 64 < limit - len(tail):
            i += 1
        parts.append(tail)
        return "".join(parts)
    if name == "fields":
        add(dev)
        tail = "}\nseq s(x: u64) { each d { d.r0 = x } }\n"
        i = 0
        while size + 2000 < limit - len(tail):
            add(f"    reg r{i} {i * 8:#x} u64 le\n")
            for b in range(64):
                add(f"    field r{i}.f{b} lsb0 {b}\n")
            i += 1
        parts.append(tail)
        return "".join(parts)
    if name == "sequences":
        add(dev + "    reg a 0x0 u64 le\n    reg b 0x8 u64 le\n    require a before b\n}\n")
        i = 0
        while add(f"seq s{i}(x: u64) {{ each d {{ d.a = x; d.b = {i} }} }}\n"):
            i += 1
        return "".join(parts)
    if name == "statements":
        add(dev + "    reg a 0x0 u64 le\n    reg b 0x8 u64 le\n    require a before b\n}\n")
        i = 0
        while True:
            body = "".join(f"    d.a = x + {j}\n" if j % 2 == 0 else f"    d.b = x ^ {j}\n"
                           for j in range(255))
            text = f"seq s{i}(x: u64) {{\n  each d {{\n{body}  }}\n}}\n"
            if not add(text):
                break
            i += 1
        return "".join(parts)
    if name == "records":
        add("device d {\n    reg prod 0x0 u32 le\n    reg cons 0x4 u32 le\n"
            "    require stores before prod\n}\n"
            "queue q on d {\n    entry 16 le\n    prod prod\n    cons cons\n"
            "    index wrap\n    full limit 10\n}\n"
            "seq s(x: u64) {\n    enqueue q r0 { a: x }\n    issue q\n}\n")
        i = 0
        while add(f"record r{i} 16 {{\n    field op lsb0 0..7 = {i % 256}\n"
                  f"    field a lsb0 64..127\n}}\n"):
            i += 1
        return "".join(parts)
    if name == "queues":
        head = "device d {\n    reg cons 0x0 u32 le\n"
        regs = []
        qs = []
        i = 0
        # Each queue: a producer register, and the queue itself.
        budget = limit - 400
        used = len(head)
        while True:
            r = f"    reg p{i} {8 + i * 4:#x} u32 le\n"
            q = (f"queue q{i} on d {{\n    entry 16 le\n    prod p{i}\n    cons cons\n"
                 f"    index wrap\n    full limit 10\n}}\n")
            if used + len(r) + len(q) > budget:
                break
            regs.append(r)
            qs.append(q)
            used += len(r) + len(q)
            i += 1
        add(head + "".join(regs) + "    require stores before p0\n}\n")
        add("record c 16 {\n    field op lsb0 0..7 = 1\n    field a lsb0 64..127\n}\n")
        for q in qs:
            parts.append(q)
        parts.append("seq s(x: u64) {\n    enqueue q0 c { a: x }\n    issue q0\n}\n")
        return "".join(parts)
    sys.exit(f"unknown shape {name}")


def parse_bytes(s):
    mult = {"K": 1 << 10, "M": 1 << 20}.get(s[-1:], 1)
    return int(s.rstrip("KM")) * mult


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "--shape":
        limit = 8 << 20
        if len(a) > 3 and a[2] == "--bytes":
            limit = parse_bytes(a[3])
        sys.stdout.write(shape(a[1], limit))
    else:
        n = int(a[0])
        per = int(a[1]) if len(a) > 1 else 100
        sys.stdout.write(ops(n, per))
