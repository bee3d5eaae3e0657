//! The `e6500_tcd_lock` example's scenarios.

use super::*;

const CPU255: &str = "the lock byte holds cpu + 1: the kernel's `stbcx.` of 256 stores 0 \
                      (a lock that reads free); no e6500 system has 255 cpus, and the \
                      example says so with `assume cpu < 255`: neither side defines this call";

pub(super) fn e6500_tcd_lock(src: &str) -> Vec<Build> {
    let layout = (!src.contains("acquire tcd[0]")).then_some(
        "the example's tlb_core_data is not the kernel's (issue 12 section 4: the kernel \
         has the lock at byte 0, esel_next at byte 1)",
    );
    vec![Build {
        pins: vec![],
        why: "no threshold",
        scenarios: vec![lock(), unlock(), next_esel(layout)],
    }]
}

/// struct tlb_core_data in the kernel's layout: lock, esel_next,
/// esel_max, esel_first.
fn tcd(next: u8) -> [u8; 4] {
    [0u8, next, 4, 0]
}

fn esel(layout: Option<&'static str>, label: &str, next: u8) -> Input {
    let i = Input::new(label, &[("cpu", 1)])
        .mem("tcd", &tcd(next))
        .mem("mas0", &[0; 8]);
    match layout {
        Some(why) => i.differs(why),
        None => i,
    }
}

fn lock() -> Scenario {
    Scenario {
        name: "tcd_lock",
        kernel: "tlb_low_64e.S tlb_miss_common_e6500 lock (Linux 6.1)",
        ref_fn: "ref_tcd_lock",
        args: &[Arg::Mem("lock"), Arg::Int("cpu")],
        calls: &[Call {
            seq: "tcd_lock",
            bind: NONE,
        }],
        inputs: vec![
            Input::new("free", &[("cpu", 5)]).mem("lock", &[0, 0, 0, 0]),
            Input::new("held by this cpu", &[("cpu", 5)]).mem("lock", &[6, 0, 0, 0]),
            Input::new("cpu 0, free", &[("cpu", 0)]).mem("lock", &[0, 9, 9, 9]),
            Input::new("cpu 254 (owner 255, the largest)", &[("cpu", 254)])
                .mem("lock", &[0, 0, 0, 0]),
            Input::new("cpu 255 (owner 256)", &[("cpu", 255)])
                .mem("lock", &[0, 0, 0, 0])
                .outside(CPU255),
            Input::new("held by cpu 1, released after two reads", &[("cpu", 5)])
                .mem("lock", &[2, 0, 0, 0])
                .mem_reads("lock", 0, &[2, 0]),
        ],
    }
}

fn unlock() -> Scenario {
    Scenario {
        name: "tcd_unlock",
        kernel: "tlb_low_64e.S tlb_unlock_e6500 (Linux 6.1)",
        ref_fn: "ref_tcd_unlock",
        args: &[Arg::Mem("lock"), Arg::Int("token")],
        calls: &[Call {
            seq: "tcd_unlock",
            bind: NONE,
        }],
        inputs: vec![
            Input::new("owner", &[("token", 0)]).mem("lock", &[6, 1, 2, 3]),
            Input::new("nested holder", &[("token", 1)]).mem("lock", &[6, 1, 2, 3]),
        ],
    }
}

/// `layout`: why the example's tlb_core_data differs from the kernel's, if it does.
fn next_esel(layout: Option<&'static str>) -> Scenario {
    Scenario {
        name: "tcd_next_esel",
        kernel: "tlb_low_64e.S tlb_miss_common_e6500 esel_next (Linux 6.1)",
        ref_fn: "ref_tcd_next_esel",
        args: &[Arg::Mem("tcd"), Arg::Mem("mas0"), Arg::Int("cpu")],
        calls: &[Call {
            seq: "tcd_next_esel",
            bind: NONE,
        }],
        inputs: [
            vec![
                esel(layout, "esel_next 0", 0),
                esel(layout, "esel_next 3 wraps", 3),
                // n = 4, n ^ esel_max = 1: only n == esel_max wraps.
                esel(layout, "esel_next 3 of esel_max 5", 3).mem("tcd", &[0, 3, 5, 1]),
                Input::new("cpu 254 (owner 255)", &[("cpu", 254)])
                    .mem("tcd", &tcd(1))
                    .mem("mas0", &[0; 8]),
                Input::new("cpu 255 (owner 256)", &[("cpu", 255)])
                    .mem("tcd", &tcd(1))
                    .mem("mas0", &[0; 8])
                    .outside(CPU255),
                // Held by another cpu (lock value 2) while cpu 5 asks.
                Input::new("held by cpu 1, released after two reads", &[("cpu", 5)])
                    .mem("tcd", &[2, 2, 4, 0])
                    .mem_reads("tcd", 0, &[2, 0])
                    .mem("mas0", &[0; 8]),
                esel(layout, "held by this cpu (a nested handler)", 2)
                    .mem("tcd", &[2, 2, 4, 0])
                    .mem_reads("tcd", 0, &[2, 0])
                    .differs(
                        "the kernel's handler finds its own cpu + 1 in the lock, \
                         neither takes nor releases it; the example's tcd_next_esel \
                         has no `held` and waits for the lock to read 0 (here after \
                         two reads), then takes and releases it",
                    ),
            ],
            // While the example has its own layout, inputs in that
            // layout too (esel_next at byte 0, the lock at byte 3).
            match layout {
                Some(why) => vec![
                    Input::new("example layout, esel_next 2", &[("cpu", 1)])
                        .mem("tcd", &[2, 0, 0, 0])
                        .mem("mas0", &[0; 8])
                        .outside(why),
                    Input::new("example layout, esel_next 3 wraps", &[("cpu", 6)])
                        .mem("tcd", &[3, 0, 0, 0])
                        .mem("mas0", &[0; 8])
                        .outside(why),
                    Input::new("example layout, held by cpu 1, released", &[("cpu", 6)])
                        .mem("tcd", &[1, 0, 0, 2])
                        .mem_reads("tcd", 3, &[2, 0])
                        .mem("mas0", &[0; 8])
                        .outside(why),
                ],
                None => vec![],
            },
        ]
        .concat(),
    }
}
