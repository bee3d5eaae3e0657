use super::*;

#[test]
fn coverage_is_exact_and_does_not_wrap() {
    assert!(covers_range(
        0x1800,
        0x1000,
        &[(0x1000, 0x1000), (0x2000, 0x1000)]
    ));
    assert!(!covers_range(0x1800, 0x1000, &[(0x1000, 0x1000)]));
    assert!(!covers_range(0x1800, 0x1000, &[(0x2000, 0x1000)]));
    // start + size reaches past 2^64: no sized op covers the top.
    assert!(!covers_range(0x1_0000, u64::MAX, &[(0, 0x2_0000)]));
    assert!(!covers_range(
        u64::MAX - 0xfff,
        0x2000,
        &[(u64::MAX - 0xfff, 0x1000), (0, 0x1000)]
    ));
    // Ending exactly at 2^64 is covered by the top page.
    assert!(covers_range(
        u64::MAX - 0xfff,
        0x1000,
        &[(u64::MAX - 0xfff, 0x1000)]
    ));
}

/// The issue's reproducer: `cover ... single` asked for 2^64 - 1 bytes
/// from 0x10000 issues the flush-all (not one 64K ATSD at 0).
#[test]
fn wrapping_single_cover_flushes_all() {
    let src = std::fs::read_to_string("examples/npu2_atsd.inv").unwrap();
    let prog = crate::load("npu2_atsd.inv", &src).unwrap();
    let i = prog
        .seqs
        .iter()
        .position(|s| s.name == "invalidate_range")
        .unwrap();
    let mut w = World::default();
    w.counts.insert(0, 1);
    w.params = vec![1, 0x1_0000, u64::MAX];
    let o = run(&prog, &prog.seqs[i], &w).unwrap();
    assert_eq!(o.covers.len(), 1);
    assert_eq!((o.covers[0].flushes, o.covers[0].short), (1, false));
}

#[test]
fn npu_values_match_the_issue() {
    let src = std::fs::read_to_string("examples/npu2_atsd.inv").unwrap();
    let prog = crate::load("npu2_atsd.inv", &src).unwrap();
    let seq = &prog.seqs[0];
    let mut w = World::default();
    w.counts.insert(0, 6);
    w.params = vec![1, 0x1001_0000];
    let o = run(&prog, seq, &w).unwrap();
    let stores: Vec<u64> = o
        .accesses
        .iter()
        .filter_map(|(_, a)| match a {
            Access::Store { value, .. } => Some(*value),
            _ => None,
        })
        .collect();
    assert_eq!(stores.len(), 12);
    assert_eq!(stores[0], 0x1001_0000);
    assert_eq!(stores[1], 0x0005_4000_0200_0000);
    assert_eq!(o.ret, 0);
    // A STAT that never clears: the poll gives up with -110.
    w.reads.insert((0, 2), vec![1]);
    assert_eq!(run(&prog, seq, &w).unwrap().ret, -110);
}
