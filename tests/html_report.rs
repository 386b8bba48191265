//! `audit --format html` in a real browser: the report of `fixtures/` is loaded by headless
//! Chromium (Debian's `chromium`, which `.ci/run` installs), and the DOM after load must hold
//! one kernel section per kernel the JSON audit reports, in the `--sort impact` order, and one
//! warp picture per priced access (but data-dependent ones, whose addresses are not known),
//! on a cold run and again on a warm one (pictures from the
//! results cache). The page has no script, so the browser has nothing to log; its log is
//! still checked for console errors. On CI (`CI` set) a missing Chromium fails the test;
//! elsewhere the test says so and passes.

mod common;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn on_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// `why` on CI is a failure; here, the test is skipped with the reason printed.
fn missing(why: &str) {
    assert!(!on_ci(), "{why} (CI is set, so this is a failure)");
    eprintln!("skipped: {why}");
}

fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let ok = Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(PathBuf::from(name));
        }
    }
    None
}

type Kernel = (String, String, u64);

fn kernel_of(v: &Value, name: &str, file: &str, line: &str) -> Kernel {
    (
        v[name].as_str().unwrap_or("").to_string(),
        v[file].as_str().unwrap_or("").to_string(),
        v[line].as_u64().unwrap_or(0),
    )
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The value of attribute `name` in an element's opening tag.
fn attr(tag: &str, name: &str) -> String {
    let pat = format!(" {name}=\"");
    let Some(i) = tag.find(&pat) else {
        return String::new();
    };
    let rest = &tag[i + pat.len()..];
    unescape(&rest[..rest.find('"').unwrap_or(rest.len())])
}

/// The kernel sections of a page, in order.
fn sections(dom: &str) -> Vec<Kernel> {
    dom.match_indices("<details class=\"k\"")
        .map(|(i, _)| {
            let tag = &dom[i..i + dom[i..].find('>').unwrap_or(0)];
            (
                attr(tag, "data-kernel"),
                attr(tag, "data-file"),
                attr(tag, "data-line").parse().unwrap_or(0),
            )
        })
        .collect()
}

fn pictures(dom: &str) -> usize {
    dom.matches("<svg class=\"warp\"").count()
}

fn audit_html(cache: &Path) -> String {
    let cache = cache.to_str().unwrap();
    let r = common::run(&[
        "audit",
        "--format",
        "html",
        "--cache-dir",
        cache,
        "--quiet",
        "fixtures/",
    ]);
    assert!(
        r.stdout.starts_with("<!DOCTYPE html>"),
        "no page (exit {}):\n{}",
        r.code,
        r.stderr
    );
    r.stdout
}

#[test]
fn the_html_report_in_a_browser() {
    let dir = std::env::temp_dir().join(format!("cudalint-html-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cache = dir.join("cache");

    // what the report must show, from the JSON audits
    let audit = common::json(&["audit", "--format", "json", "--no-cache", "fixtures/"]);
    let accesses = audit["accesses"].as_array().expect("accesses");
    let kernels: BTreeSet<Kernel> = accesses
        .iter()
        .map(|a| kernel_of(a, "kernel", "kernel_file", "kernel_line"))
        .collect();
    // priced: with sector or wavefront figures; a data-dependent access is priced at its
    // worst case without the lanes' addresses, so it has no picture
    let priced = accesses
        .iter()
        .filter(|a| !a["sectors_per_request"].is_null() || !a["wavefronts_per_request"].is_null())
        .filter(|a| a["class"] != "data-dependent")
        .count();
    let ranked: Vec<Kernel> = common::json(&[
        "audit",
        "--format",
        "json",
        "--sort",
        "impact",
        "--no-cache",
        "fixtures/",
    ])["kernels"]
        .as_array()
        .expect("ranked kernels")
        .iter()
        .map(|k| kernel_of(k, "kernel", "file", "line"))
        .collect();
    assert!(!ranked.is_empty() && priced > 0);

    // cold, then warm from the results cache: the same page, pictures included
    let cold = audit_html(&cache);
    let warm = audit_html(&cache);
    assert_eq!(
        pictures(&cold),
        priced,
        "a picture per priced access (cold)"
    );
    assert_eq!(
        pictures(&warm),
        priced,
        "a picture per priced access (warm, from the cache)"
    );
    // the warp after a proven padding, drawn where CL301 offers one: conflict-free
    let paddings = common::json(&["check", "--format", "json", "--no-cache", "fixtures/"])
        ["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| {
            d["code"] == "CL301"
                && d["fix"]["title"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("pad the innermost dimension"))
        })
        .count();
    // a picture drawn before is a `<use>` of the first one's group: read through it
    let group = |id: &str| -> &str {
        let open = format!("<g id=\"{id}\">");
        let at = cold.find(&open).map_or(cold.len(), |i| i + open.len());
        &cold[at..at + cold[at..].find("</g>").unwrap_or(0)]
    };
    let padded: Vec<&str> = cold
        .split("<svg class=\"warp pad\"")
        .skip(1)
        .map(|p| &p[..p.find("</svg>").unwrap_or(p.len())])
        .map(|p| match p.find("<use href=\"#w") {
            Some(i) => {
                let id = &p[i + "<use href=\"#".len()..];
                group(&id[..id.find('"').unwrap_or(0)])
            }
            None => p,
        })
        .collect();
    assert!(
        padded.iter().all(|p| p.contains("class=\"e\"")),
        "a padded picture draws its lanes"
    );
    assert!(paddings > 0);
    assert_eq!(
        padded.len(),
        paddings,
        "a picture after the padding for every padding CL301 proves"
    );
    assert!(
        padded.iter().all(|p| !p.contains("class=\"xl\"")),
        "a padded warp has no conflicting lanes"
    );
    assert!(
        cold == warm,
        "the warm run's page differs from the cold one"
    );
    assert!(
        !cold.contains("<script") && !cold.contains("http://") && !cold.contains("https://"),
        "the page must be self-contained"
    );
    let page = dir.join("report.html");
    std::fs::write(&page, &warm).unwrap();

    let Some(chromium) = chromium() else {
        missing("chromium is not installed (apt-get install chromium)");
        return;
    };
    let url = format!("file://{}", page.display());
    let out = Command::new(&chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(["--dump-dom", &url])
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed:\n{log}");
    for line in log.lines() {
        assert!(
            !line.contains("Uncaught") && !line.contains(":CONSOLE("),
            "the page logged: {line}"
        );
    }

    let shown = sections(&dom);
    assert_eq!(
        shown.len(),
        kernels.len(),
        "a section per kernel of the JSON audit"
    );
    assert_eq!(
        shown.iter().cloned().collect::<BTreeSet<_>>(),
        kernels,
        "the same kernels as the JSON audit"
    );
    assert_eq!(
        &shown[..ranked.len()],
        &ranked[..],
        "ranked kernels first, in the --sort impact order"
    );
    assert_eq!(pictures(&dom), priced, "a picture per priced access");
    assert!(
        dom.contains("class=\"xl\""),
        "the bank-conflict fixtures have conflicting lanes"
    );

    // and it renders
    let png = dir.join("report.png");
    let out = Command::new(&chromium)
        .args(["--headless=new", "--no-sandbox", "--disable-gpu"])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", png.display()))
        .args(["--window-size=1280,2000", &url])
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
    assert!(
        bytes.len() > 20_000,
        "a near-empty screenshot: {} bytes",
        bytes.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
