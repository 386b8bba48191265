//! cudalint's rules and the check function every frontend (CLI, LSP) calls: facts from the
//! analysis in, [`Diagnostic`]s out. Frontends only render.

pub mod build_files;
pub mod cache;
pub mod check;
pub mod codes;
pub mod compile_commands;
pub mod config;
mod configured_headers;
pub mod diagnostic;
mod found;
pub mod impact;
mod include_context;
pub mod incremental;
mod kernel_cache;
mod project_headers;
mod relocate;
pub mod rules;
pub mod suppress;
pub mod warp_lanes;
pub mod warp_map;
pub mod workspace;

pub use cache::{check_cached, Cache, CacheStats};
pub use check::{check, AccessRecord, Accesses, FileReport, Input, Progress, Settings, Step};
pub use codes::{Rule, RULES};
pub use diagnostic::{Applicability, Diagnostic, Edit, Fix, Label, Position, Severity};
