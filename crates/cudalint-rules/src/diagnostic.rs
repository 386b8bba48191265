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
