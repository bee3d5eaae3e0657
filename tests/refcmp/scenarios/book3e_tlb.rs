//! The `book3e_tlb` example's scenarios.

use super::*;

const VA: &[Arg] = &[
    Arg::Int("address"),
    Arg::Int("pid"),
    Arg::Int("tsize"),
    Arg::Int("ind"),
];

/// Book III-E tlb_low.S: every function on the edges of its fields and
/// fixed-seed random registers (upper words included: the kernel's
/// rlwinm/rlwimi read the low word, its C callers pass unsigned ints).
pub(super) fn book3e_tlb() -> Vec<Build> {
    let (va_inputs, pid_inputs) = inputs();
    vec![Build {
        pins: vec![],
        why: "no threshold",
        scenarios: vec![
            Scenario {
                name: "tlbil_pid",
                kernel: "tlb_low.S _tlbil_pid (Linux 6.1, CONFIG_PPC_BOOK3E_64)",
                ref_fn: "ref_tlbil_pid",
                args: &[Arg::Int("pid")],
                calls: one("tlbil_pid"),
                inputs: pid_inputs.clone(),
            },
            Scenario {
                name: "tlbil_pid_noind",
                kernel: "tlb_low.S _tlbil_pid_noind (Linux 6.1, CONFIG_PPC_BOOK3E_64)",
                ref_fn: "ref_tlbil_pid_noind",
                args: &[Arg::Int("pid")],
                calls: one("tlbil_pid_noind"),
                inputs: pid_inputs,
            },
            Scenario {
                name: "tlbil_all",
                kernel: "tlb_low.S _tlbil_all (Linux 6.1, CONFIG_PPC_BOOK3E_64)",
                ref_fn: "ref_tlbil_all",
                args: &[],
                calls: one("tlbil_all"),
                inputs: vec![Input::new("no arguments", &[])],
            },
            Scenario {
                name: "tlbil_va",
                kernel: "tlb_low.S _tlbil_va (Linux 6.1, CONFIG_PPC_BOOK3E_64)",
                ref_fn: "ref_tlbil_va",
                args: VA,
                calls: one("tlbil_va"),
                inputs: va_inputs.clone(),
            },
            Scenario {
                name: "tlbivax_bcast",
                kernel: "tlb_low.S _tlbivax_bcast (Linux 6.1, CONFIG_PPC_BOOK3E_64)",
                ref_fn: "ref_tlbivax_bcast",
                args: VA,
                calls: one("tlbivax_bcast"),
                inputs: va_inputs,
            },
        ],
    }]
}

/// The inputs of the VA and of the PID functions: the edges, then
/// fixed-seed random registers.
fn inputs() -> (Vec<Input>, Vec<Input>) {
    let mut x = 0x5eed_b00c_3e65_0001u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut va_inputs = vec![
        Input::new(
            "4K page, pid 0x2a5",
            &[
                ("address", 0x1000_3000),
                ("pid", 0x2a5),
                ("tsize", 2),
                ("ind", 0),
            ],
        ),
        Input::new(
            "indirect entry, every pid bit",
            &[
                ("address", 0xc000_0000_0123_4000),
                ("pid", 0xffff_ffff),
                ("tsize", 0x1f),
                ("ind", 1),
            ],
        ),
        Input::new(
            "ind 2 (low word non-zero, SIND 0)",
            &[("address", 0), ("pid", 1), ("tsize", 0x20), ("ind", 2)],
        ),
        Input::new(
            "zeros",
            &[("address", 0), ("pid", 0), ("tsize", 0), ("ind", 0)],
        ),
    ];
    let mut pid_inputs = vec![
        Input::new("pid 0 (the kernel's own)", &[("pid", 0)]),
        Input::new("pid 0x3fff (MAS6_SPID_MASK)", &[("pid", 0x3fff)]),
        Input::new("pid 0xffff_ffff", &[("pid", 0xffff_ffff)]),
    ];
    for k in 0..12 {
        let (a, p, t, i) = (next(), next(), next(), next());
        let narrow = |v: u64| if k % 2 == 0 { v & 0xffff_ffff } else { v };
        va_inputs.push(Input::new(
            format!("random {k}"),
            &[
                ("address", a),
                ("pid", narrow(p)),
                ("tsize", narrow(t) % if k % 3 == 0 { 32 } else { u64::MAX }),
                ("ind", narrow(i) % if k % 3 == 1 { 2 } else { u64::MAX }),
            ],
        ));
        pid_inputs.push(Input::new(format!("random {k}"), &[("pid", narrow(p))]));
    }
    (va_inputs, pid_inputs)
}

fn one(seq: &'static str) -> &'static [Call] {
    match seq {
        "tlbil_pid" => &[Call {
            seq: "tlbil_pid",
            bind: NONE,
        }],
        "tlbil_pid_noind" => &[Call {
            seq: "tlbil_pid_noind",
            bind: NONE,
        }],
        "tlbil_all" => &[Call {
            seq: "tlbil_all",
            bind: NONE,
        }],
        "tlbil_va" => &[Call {
            seq: "tlbil_va",
            bind: NONE,
        }],
        _ => &[Call {
            seq: "tlbivax_bcast",
            bind: NONE,
        }],
    }
}
