//! Valid specs of about `bytes` that are large in one dimension (the
//! shapes of `scripts/synth-spec.py --shape`; docs/performance.md).

#![allow(dead_code)]

pub const SHAPES: [&str; 7] = [
    "devices",
    "registers",
    "fields",
    "sequences",
    "statements",
    "records",
    "queues",
];

pub fn shape(name: &str, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 4096);
    s.push_str("target aarch64\n");
    match name {
        "devices" => devices(&mut s, bytes),
        "registers" => registers(&mut s, bytes),
        "fields" => fields(&mut s, bytes),
        "sequences" => sequences(&mut s, bytes),
        "statements" => statements(&mut s, bytes),
        "records" => records(&mut s, bytes),
        "queues" => queues(&mut s, bytes),
        _ => panic!("unknown shape {name}"),
    }
    s
}

const DEV: &str = "device d {\n    instances dynamic max 8\n";

/// Whether `more` bytes still fit in `bytes`.
fn fits(s: &str, bytes: usize, more: usize) -> bool {
    s.len() + more <= bytes
}

/// Many one-register devices.
fn devices(s: &mut String, bytes: usize) {
    s.push_str("seq s(x: u64) { each d0 { d0.a = x } }\n");
    let mut i = 0;
    loop {
        let t = format!(
            "device d{i} {{\n    instances dynamic max 8\n    reg a 0x0 u64 le\n    field a.f lsb0 0..3\n}}\n"
        );
        if !fits(s, bytes, t.len()) {
            break;
        }
        s.push_str(&t);
        i += 1;
    }
}

/// One device with many registers.
fn registers(s: &mut String, bytes: usize) {
    s.push_str(DEV);
    let tail = "}\nseq s(x: u64) { each d { d.r0 = x } }\n";
    let mut i = 0;
    loop {
        let t = format!("    reg r{i} {:#x} u64 le\n", i * 8);
        if !fits(s, bytes, t.len() + tail.len()) {
            break;
        }
        s.push_str(&t);
        i += 1;
    }
    s.push_str(tail);
}

/// One device with many registers of 64 one-bit fields.
fn fields(s: &mut String, bytes: usize) {
    s.push_str(DEV);
    let tail = "}\nseq s(x: u64) { each d { d.r0 = x } }\n";
    let mut i = 0;
    while fits(s, bytes, 2000 + tail.len()) {
        s.push_str(&format!("    reg r{i} {:#x} u64 le\n", i * 8));
        for b in 0..64 {
            s.push_str(&format!("    field r{i}.f{b} lsb0 {b}\n"));
        }
        i += 1;
    }
    s.push_str(tail);
}

/// Many two-statement sequences.
fn sequences(s: &mut String, bytes: usize) {
    s.push_str(DEV);
    s.push_str("    reg a 0x0 u64 le\n    reg b 0x8 u64 le\n    require a before b\n}\n");
    let mut i = 0;
    loop {
        let t = format!("seq s{i}(x: u64) {{ each d {{ d.a = x; d.b = {i} }} }}\n");
        if !fits(s, bytes, t.len()) {
            break;
        }
        s.push_str(&t);
        i += 1;
    }
}

/// Many sequences of 255 statements each.
fn statements(s: &mut String, bytes: usize) {
    s.push_str(DEV);
    s.push_str("    reg a 0x0 u64 le\n    reg b 0x8 u64 le\n    require a before b\n}\n");
    let body: String = (0..255)
        .map(|j| {
            if j % 2 == 0 {
                format!("    d.a = x + {j}\n")
            } else {
                format!("    d.b = x ^ {j}\n")
            }
        })
        .collect();
    let mut i = 0;
    loop {
        let t = format!("seq s{i}(x: u64) {{\n  each d {{\n{body}  }}\n}}\n");
        if !fits(s, bytes, t.len()) {
            break;
        }
        s.push_str(&t);
        i += 1;
    }
}

/// Many queue records.
fn records(s: &mut String, bytes: usize) {
    s.push_str(
        "device d {\n    reg prod 0x0 u32 le\n    reg cons 0x4 u32 le\n    require stores before prod\n}\n\
         queue q on d {\n    entry 16 le\n    prod prod\n    cons cons\n    index wrap\n    full limit 10\n}\n\
         seq s(x: u64) {\n    enqueue q r0 { a: x }\n    issue q\n}\n",
    );
    let mut i = 0;
    loop {
        let t = format!(
            "record r{i} 16 {{\n    field op lsb0 0..7 = {}\n    field a lsb0 64..127\n}}\n",
            i % 256
        );
        if !fits(s, bytes, t.len()) {
            break;
        }
        s.push_str(&t);
        i += 1;
    }
}

/// Many queues, each its own producer register of one device.
fn queues(s: &mut String, bytes: usize) {
    let (mut regs, mut queues) = (String::new(), String::new());
    let mut i = 0;
    loop {
        let r = format!("    reg p{i} {:#x} u32 le\n", 8 + i * 4);
        let q = format!(
            "queue q{i} on d {{\n    entry 16 le\n    prod p{i}\n    cons cons\n    index wrap\n    full limit 10\n}}\n"
        );
        if !fits(
            s,
            bytes,
            regs.len() + queues.len() + r.len() + q.len() + 400,
        ) {
            break;
        }
        regs.push_str(&r);
        queues.push_str(&q);
        i += 1;
    }
    s.push_str("device d {\n    reg cons 0x0 u32 le\n");
    s.push_str(&regs);
    s.push_str("    require stores before p0\n}\n");
    s.push_str("record c 16 {\n    field op lsb0 0..7 = 1\n    field a lsb0 64..127\n}\n");
    s.push_str(&queues);
    s.push_str("seq s(x: u64) {\n    enqueue q0 c { a: x }\n    issue q0\n}\n");
}
