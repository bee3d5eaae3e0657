//! The barrier tables' shape and handle are IR vocabulary
//! ([`crate::ir::barrier`]); each target's table is in its own directory.

pub use crate::ir::barrier::*;
pub(crate) use crate::ir::barrier::{all_access_and, device_access_and, insns, normal_access_and};
