//! x86-64 (SysV).

pub mod barriers;
