//! Output formats for CI: SARIF validated against the official SARIF 2.1.0 schema (rtm.5, as
//! shipped by Microsoft's @microsoft/jest-sarif, in tests/data/sarif/) and round-tripped
//! against the JSON diagnostics for every fixture; GitHub workflow commands.

mod common;

fn fixture_targets() -> Vec<String> {
    let root = common::root();
    let mut out = Vec::new();
    for e in std::fs::read_dir(root.join("fixtures")).unwrap().flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.extension().is_some_and(|x| x == "cu") || (p.is_dir() && name != "measured") {
            out.push(format!("fixtures/{name}"));
        }
    }
    out.sort();
    out
}

#[test]
fn sarif_is_valid_and_round_trips_every_fixture() {
    let root = common::root();
    let mut schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("tests/data/sarif/sarif-2.1.0-rtm.5.json")).unwrap(),
    )
    .unwrap();
    // Known erratum of rtm.5: the `language` patterns (of `run` and `toolComponent`) have a
    // stray `]`, which is not a valid regex; later errata write them as below. cudalint never
    // emits `language`; everything else is the schema as published.
    fn fix_language(v: &mut serde_json::Value, n: &mut usize) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if k == "pattern" && x == "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$" {
                        *x = serde_json::json!("^[a-zA-Z]{2}(-[a-zA-Z]{2})?$");
                        *n += 1;
                    } else {
                        fix_language(x, n);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| fix_language(x, n)),
            _ => {}
        }
    }
    let mut fixed = 0;
    fix_language(&mut schema, &mut fixed);
    assert_eq!(fixed, 2, "the erratum is where it is known to be");
    let validator = jsonschema::validator_for(&schema).expect("the SARIF schema compiles");
    // the validator bites: a level SARIF does not know is rejected
    let mut broken = common::json(&["check", "--format", "sarif", "fixtures/examples"]);
    broken["runs"][0]["results"][0]["level"] = serde_json::json!("severe");
    assert!(
        validator.iter_errors(&broken).next().is_some(),
        "a corrupted log must not validate"
    );
    let mut results_total = 0;
    for target in fixture_targets() {
        let sarif = common::json(&[
            "check",
            "--format",
            "sarif",
            "--show-unanalysed",
            "--fail-on",
            "never",
            &target,
        ]);
        let errors: Vec<String> = validator
            .iter_errors(&sarif)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{target}: SARIF does not validate:\n{}",
            errors.join("\n")
        );
        let json = common::all_findings(&target);
        let diags = json["diagnostics"].as_array().unwrap();
        let run = &sarif["runs"][0];
        let results = run["results"].as_array().unwrap();
        assert_eq!(
            results.len(),
            diags.len(),
            "{target}: one result per diagnostic"
        );
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        // a log is read elsewhere: each rule carries its page's text, and links only to a
        // published page, never to a file of this machine or an address nobody published
        for rule in rules {
            assert!(rule["help"]["markdown"]
                .as_str()
                .is_some_and(|m| m.contains("## What it does")));
            if let Some(uri) = rule.get("helpUri") {
                assert!(
                    uri.as_str().is_some_and(|u| u.starts_with("https://")),
                    "{uri}"
                );
            }
        }
        for (r, d) in results.iter().zip(diags) {
            assert_eq!(r["ruleId"], d["code"]);
            let idx = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[idx]["id"], d["code"], "ruleIndex points at the rule");
            let loc = &r["locations"][0]["physicalLocation"];
            assert_eq!(loc["region"]["startLine"], d["at"]["line"]);
            assert_eq!(
                loc["artifactLocation"]["uri"].as_str().unwrap(),
                d["at"]["file"].as_str().unwrap().trim_start_matches("./")
            );
            assert!(r["message"]["text"]
                .as_str()
                .unwrap()
                .starts_with(d["message"].as_str().unwrap()));
            let machine = d["fix"]["applicability"] == "machine-applicable";
            assert_eq!(
                r.get("fixes").is_some(),
                machine,
                "{target}: fixes only for machine-applicable edits"
            );
        }
        results_total += results.len();
    }
    assert!(
        results_total > 50,
        "the fixtures should produce findings, got {results_total}"
    );
    println!("SARIF validated for every fixture: {results_total} results");
}

#[test]
fn sarif_fix_replaces_the_padded_dimension() {
    let sarif = common::json(&[
        "check",
        "--format",
        "sarif",
        "fixtures/examples/tile_transpose.cu",
    ]);
    let r = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "CL301")
        .unwrap();
    let rep = &r["fixes"][0]["artifactChanges"][0]["replacements"][0];
    assert_eq!(rep["insertedContent"]["text"], "TILE_DIM + 1");
    assert_eq!(rep["deletedRegion"]["startLine"], 16);
    assert!(r["relatedLocations"]
        .as_array()
        .is_some_and(|l| !l.is_empty()));
}

#[test]
fn github_annotations_are_one_line_each_with_escaped_messages() {
    let r = common::run(&["check", "--format", "github", "fixtures/examples"]);
    assert_eq!(r.code, 1);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", r.stdout);
    for l in &lines {
        assert!(l.starts_with("::warning file=fixtures/examples/"), "{l}");
        assert!(
            l.contains(",line=") && l.contains(",endColumn=") && l.contains(",title=CL"),
            "{l}"
        );
        assert!(l.contains("%0A"), "multi-line messages are escaped: {l}");
    }
}
