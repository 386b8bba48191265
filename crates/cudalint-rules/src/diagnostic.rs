//! The one diagnostic type every frontend renders.

use serde::{Deserialize, Serialize};
use std::ops::Range;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
    pub fn parse(s: &str) -> Option<Severity> {
        Some(match s {
            "info" | "note" => Severity::Info,
            "warning" => Severity::Warning,
            "error" => Severity::Error,
            _ => return None,
        })
    }
}

/// A position in a file, byte range plus the 1-based line and column of its start and end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub file: String,
    pub bytes: Range<usize>,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    pub at: Position,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Safe to apply without review.
    MachineApplicable,
    /// A sketch for a person: not applied automatically.
    DisplayOnly,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    pub at: Position,
    pub replacement: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    pub title: String,
    pub applicability: Applicability,
    pub edits: Vec<Edit>,
    /// Code a person adapts (corner turning, structure of arrays); not an edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sketch: Option<String>,
}

/// The predicted cost behind a finding, per warp request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub sectors_per_request: Option<f64>,
    pub ideal_sectors_per_request: Option<f64>,
    pub wavefronts_per_request: Option<f64>,
    pub ideal_wavefronts_per_request: Option<f64>,
    pub block: [i64; 3],
    /// The access's estimated excess traffic per launch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<ImpactFigures>,
}

/// What an access's waste weighs in a launch: Nsight Compute's excessive sectors (global)
/// or excessive wavefronts (shared) of its source line, predicted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImpactFigures {
    /// `sectors` (global) or `wavefronts` (shared).
    #[serde(deserialize_with = "crate::impact::deserialize_unit")]
    pub unit: Name,
    /// Excess units of one warp request: the cost minus the ideal.
    pub excess_per_request: f64,
    /// Warps of a block with a lane on at the access (a mean over the loop's iterations where
    /// its condition switches warps off from one to the next).
    pub warps_per_block: f64,
    /// How many times one warp executes it (the enclosing loops' trip counts).
    pub executions_per_warp: f64,
    /// Blocks per launch; absent when the launch's grid is not known, and the figures are
    /// then per block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<i64>,
    /// Warp requests per launch (per block without `blocks`).
    pub requests: f64,
    /// Excess units per launch (per block without `blocks`).
    pub excess: f64,
    /// The excess in bytes (32 per sector, 128 per wavefront), so that global and shared
    /// accesses rank together.
    pub excess_bytes: f64,
    /// Share of its kernel's estimated excess bytes, 0 to 1.
    pub share_of_kernel: f64,
    /// The trip counts and grid the estimate takes, and where they come from.
    pub assumptions: Vec<String>,
}

/// A name from a fixed table (rule codes and names, spaces, ops, classes). An alias, so that
/// serde's derive does not take the field for one borrowed from its input: it is read back
/// through a lookup in its table.
pub type Name = &'static str;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    #[serde(deserialize_with = "crate::codes::deserialize_code")]
    pub code: Name,
    #[serde(deserialize_with = "crate::codes::deserialize_name")]
    pub name: Name,
    pub severity: Severity,
    pub message: String,
    pub at: Position,
    pub kernel: String,
    /// Related places: the lane-dependent term, the array's declaration, the launch.
    pub labels: Vec<Label>,
    /// The numbers: lanes and addresses, the block shape assumed, runtime values assumed.
    pub notes: Vec<String>,
    pub fix: Option<Fix>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
}
