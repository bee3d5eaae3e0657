//! Where an `order` applies (issue 42): inside `if feature X` only to the
//! CPUs of that arm (the variant with X fixed off is the spec without
//! it), and inside a run-time `if` not at all: a spanned error.

use shootdown::codegen::Options;
use shootdown::features::Selection;
use shootdown::Target;

const SCOPED: &str = "target aarch64\nfeature strict\nseq s(p: ptr u64, x: u64) {\n  if feature strict {\n    order stores before invalidates\n  }\n  p[0] = x\n  tlbi vale1is, x\n}\n";
const WITHOUT: &str = "target aarch64\nfeature strict\nseq s(p: ptr u64, x: u64) {\n  if feature strict {\n  }\n  p[0] = x\n  tlbi vale1is, x\n}\n";
const ALWAYS: &str = "target aarch64\nfeature strict\nseq s(p: ptr u64, x: u64) {\n  order stores before invalidates\n  if feature strict {\n  }\n  p[0] = x\n  tlbi vale1is, x\n}\n";

fn bytes(src: &str, strict: Option<bool>) -> Vec<u8> {
    let prog = shootdown::load("o.inv", src).unwrap();
    let opts = Options {
        features: Selection {
            fixed: strict
                .map(|on| ("strict".to_string(), on))
                .into_iter()
                .collect(),
            suffix: false,
        },
        ..Options::default()
    };
    let prog = shootdown::codegen::resolve(&prog, &opts).into_owned();
    let c = shootdown::compile(&prog, Target::Aarch64, &opts).unwrap();
    c.funcs[0].bytes.clone()
}

#[test]
fn an_order_in_a_feature_arm_applies_to_that_variant_only() {
    assert_eq!(bytes(SCOPED, Some(false)), bytes(WITHOUT, Some(false)));
    assert_eq!(bytes(SCOPED, Some(true)), bytes(ALWAYS, Some(true)));
    assert_ne!(bytes(SCOPED, Some(true)), bytes(WITHOUT, Some(true)));
    // Tested at run time, the one function serves both CPUs: the order
    // holds (the CPUs without the feature pay its barrier too).
    assert_eq!(bytes(SCOPED, None), bytes(ALWAYS, None));
}

#[test]
fn an_order_in_a_run_time_if_is_an_error_at_the_order() {
    let src = "target aarch64\nseq s(p: ptr u64, x: u64) {\n  if x == 1 {\n    order stores before invalidates\n  }\n  p[0] = x\n  tlbi vale1is, x\n}\n";
    let d = shootdown::load("o.inv", src).unwrap_err();
    assert!(
        d.message.contains("`order` inside a run-time `if`"),
        "{}",
        d.message
    );
    assert_eq!(&src[d.span.offset..d.span.offset + 5], "order");
}
