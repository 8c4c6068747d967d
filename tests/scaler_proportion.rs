//! The `proportion` scale type against Kivi: templates Kivi builds for its
//! cases when told not to scale freely, and the topologies it enumerates at
//! fast-find 0, 1 and 2 (`tests/data/scaler/proportion/cN/`).

use std::fs;

use kivi::scaler::{enumerate, EnumerationOptions, FastFind, ScaleType, Template, Topology};
use serde_json::{json, Value};

fn read(case: &str, file: &str) -> String {
    let path = format!("tests/data/scaler/proportion/{case}/{file}");
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn template_json(case: &str) -> Value {
    serde_json::from_str(&read(case, "template.json")).expect("valid JSON")
}

fn words(template: &Template, level: u8) -> Vec<String> {
    let options = EnumerationOptions {
        fast_find: FastFind::from_level(level).expect("a known level"),
        ..EnumerationOptions::default()
    };
    enumerate(template, &options)
        .iter()
        .map(Topology::to_string)
        .collect()
}

fn kivi_words(case: &str, level: u8) -> Vec<String> {
    read(case, &format!("enumeration-f{level}.txt"))
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn proportional_enumeration_matches_kivi_at_every_level() {
    for case in ["c4", "c6", "c8"] {
        let template = Template::from_json(&template_json(case)).expect("Kivi's template parses");
        assert_eq!(template.node_scale, ScaleType::Proportion);
        assert_eq!(template.deployment_scale, ScaleType::Proportion);
        for level in 0..=2 {
            assert_eq!(
                words(&template, level),
                kivi_words(case, level),
                "{case} -f {level}"
            );
        }
    }
}

#[test]
fn hpa_without_factor_is_rejected_but_enumerates_once_given_one() {
    let mut document = template_json("c3");
    let error = Template::from_json(&document).expect_err("no HPAfactor");
    assert_eq!(error.path, "userDefined.dTypes[0].HPAfactor");
    document["userDefined"]["dTypes"][0]["HPAfactor"] = json!(2);
    let template = Template::from_json(&document).expect("complete template");
    for level in 0..=2 {
        assert_eq!(
            words(&template, level),
            kivi_words("c3", level),
            "c3 -f {level}"
        );
    }
}
