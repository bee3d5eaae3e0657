#!/usr/bin/env python3
"""Write a synthetic spec with N device register writes (operations).

    scripts/synth-spec.py N [PER_SEQ] > spec.inv

The NPU2 ATSD device of examples/npu2_atsd.inv; the writes are AVA/LAUNCH
pairs (`require ava before launch` gives each LAUNCH an edge) spread over
sequences of PER_SEQ operations (default 100), one dynamic `each` loop per
pair, the shape of the bundled sequences, repeated.
"""
import sys

n = int(sys.argv[1])
per = int(sys.argv[2]) if len(sys.argv) > 2 else 100
out = ["target power64le", "", "device npu {",
       "    instances dynamic max 6",
       "    reg launch 0x00 u64 be", "    reg ava 0x08 u64 be", "    reg stat 0x10 u64 be",
       "    field launch.prs msb0 13", "    field launch.ap msb0 15..17",
       "    field launch.pid msb0 24..38",
       "    require ava before launch", "}"]
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
print("\n".join(out))
