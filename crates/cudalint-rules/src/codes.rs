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

/// The published page of a rule's documentation, under the `repository` of this crate's
/// Cargo.toml when whoever builds cudalint sets one; none otherwise, rather than an address
/// that may not exist. SARIF and the CLI embed the text itself either way.
pub fn doc_url(code: &str) -> Option<String> {
    let repo = env!("CARGO_PKG_REPOSITORY").trim_end_matches('/');
    (!repo.is_empty()).then(|| format!("{repo}/blob/main/crates/cudalint-rules/docs/{code}.md"))
}

/// Where a reader on this machine finds a rule's page: the published one, else the Markdown
/// file of the source tree cudalint was built from while it is still there (`cargo install
/// --path`, a checkout), as a `file://` address.
pub fn doc_location(code: &str) -> Option<String> {
    doc_url(code).or_else(|| {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs")
            .join(format!("{code}.md"));
        file.is_file()
            .then(|| format!("file://{}", file.to_string_lossy()))
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_a_page_and_no_invented_address() {
        for r in RULES {
            let page = doc_location(r.code).expect("built from the source tree");
            assert!(page.ends_with(&format!("/{}.md", r.code)), "{page}");
            match doc_url(r.code) {
                // published: under the repository Cargo.toml names
                Some(url) => assert!(url.starts_with(env!("CARGO_PKG_REPOSITORY"))),
                None => assert!(page.starts_with("file://"), "{page}"),
            }
        }
    }
}
