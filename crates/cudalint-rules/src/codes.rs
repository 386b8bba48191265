//! Every rule code, in one table. Codes are never reused: CL0xx suppressions and
//! configuration, CL1xx could not analyse, CL2xx global memory, CL3xx shared memory.

use crate::diagnostic::Severity;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
    /// The rule's documentation (what it does, why is this bad, example, fix), Markdown.
    pub doc: &'static str,
    /// Off in `check` unless asked for; always listed by `audit`.
    pub default_enabled: bool,
}

pub const RULES: &[Rule] = &[
    Rule {
        code: "CL001",
        name: "suppression-without-reason",
        severity: Severity::Warning,
        summary: "a cudalint-ignore comment gives no reason",
        doc: include_str!("../docs/CL001.md"),
        default_enabled: true,
    },
    Rule {
        code: "CL002",
        name: "unused-suppression",
        severity: Severity::Warning,
        summary: "a cudalint-ignore comment suppresses nothing",
        doc: include_str!("../docs/CL002.md"),
        default_enabled: true,
    },
    Rule {
        code: "CL101",
        name: "kernel-not-analysed",
        severity: Severity::Info,
        summary: "a kernel could not be analysed",
        doc: crate::rules::not_analysed::KERNEL_DOC,
        default_enabled: false,
    },
    Rule {
        code: "CL102",
        name: "access-not-analysed",
        severity: Severity::Info,
        summary: "a memory access could not be modelled as a function of the lane",
        doc: crate::rules::not_analysed::ACCESS_DOC,
        default_enabled: false,
    },
    Rule {
        code: "CL201",
        name: "uncoalesced-global-access",
        severity: Severity::Warning,
        summary: "a warp's global access touches at least twice the sectors it needs",
        doc: crate::rules::uncoalesced_global::DOC,
        default_enabled: true,
    },
    Rule {
        code: "CL202",
        name: "array-of-structs-field-access",
        severity: Severity::Warning,
        summary: "a global access reads one field of an array of structs",
        doc: crate::rules::aos_field::DOC,
        default_enabled: true,
    },
    Rule {
        code: "CL203",
        name: "misaligned-global-access",
        severity: Severity::Info,
        summary: "contiguous lanes start inside a sector and touch one more",
        doc: crate::rules::misaligned_global::DOC,
        default_enabled: true,
    },
    Rule {
        code: "CL204",
        name: "data-dependent-global-access",
        severity: Severity::Info,
        summary: "a gather or scatter through an index read from memory",
        doc: crate::rules::data_dependent::DOC,
        default_enabled: true,
    },
    Rule {
        code: "CL301",
        name: "shared-bank-conflict",
        severity: Severity::Warning,
        summary: "lanes of a warp hit one shared-memory bank at different words",
        doc: crate::rules::bank_conflict::DOC,
        default_enabled: true,
    },
];

pub fn rule(code: &str) -> Option<&'static Rule> {
    let upper = code.to_ascii_uppercase();
    RULES.iter().find(|r| r.code == upper || r.name == code)
}

pub fn doc_url(code: &str) -> String {
    format!("https://github.com/cudalint/cudalint/blob/main/crates/cudalint-rules/docs/{code}.md")
}

/// A code read back from a serialized diagnostic (the results cache): only codes of this table.
pub(crate) fn deserialize_code<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<&'static str, D::Error> {
    from_table(d, |r| r.code)
}

/// A rule name read back from a serialized diagnostic.
pub(crate) fn deserialize_name<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<&'static str, D::Error> {
    from_table(d, |r| r.name)
}

fn from_table<'de, D: serde::Deserializer<'de>>(
    d: D,
    field: fn(&Rule) -> &'static str,
) -> Result<&'static str, D::Error> {
    let s = <std::borrow::Cow<str> as serde::Deserialize>::deserialize(d)?;
    RULES
        .iter()
        .map(field)
        .find(|f| *f == s)
        .ok_or_else(|| serde::de::Error::custom(format!("no rule {s}")))
}
