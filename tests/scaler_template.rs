//! Malformed templates are rejected with the JSON path and a fix, never a panic.

use std::fs;

use kivi::scaler::{FastFind, Template};
use serde_json::{json, Value};

fn c3() -> Value {
    let text = fs::read_to_string("cases/c3/template.json").expect("the C3 template");
    serde_json::from_str(&text).expect("valid JSON")
}

/// Breaks one field of a valid template.
type Breakage = fn(&mut Value);

fn rejection(document: &Value) -> (String, String) {
    let error = Template::from_json(document).expect_err("malformed");
    assert!(!error.fix.is_empty());
    assert!(error.to_string().starts_with(&error.path));
    (error.path, error.problem)
}

#[test]
fn the_c3_template_reads_as_kivi_wrote_it() {
    let template = Template::from_json(&c3()).expect("valid");
    assert_eq!(template.node_types.len(), 2);
    assert_eq!(template.deployment_types.len(), 1);
    assert_eq!(template.max_pods_per_node, Some(7));
    let deployment = &template.deployment_types[0];
    assert_eq!((deployment.min_size, deployment.max_size), (0, 24));
    assert_eq!(deployment.hpa_factor, Some(2));
    assert!(deployment.hpa_enabled);
}

#[test]
fn each_malformed_field_is_named() {
    let cases: Vec<(Breakage, &str)> = vec![
        (
            |d| d["userDefined"]["nodesTypes"][1]["maxSize"] = json!(-1),
            "userDefined.nodesTypes[1].maxSize",
        ),
        (
            |d| d["userDefined"]["dTypes"][0]["minSize"] = json!("two"),
            "userDefined.dTypes[0].minSize",
        ),
        (
            |d| d["userDefined"]["nodesScaleType"] = json!("linear"),
            "userDefined.nodesScaleType",
        ),
        (
            |d| d["userDefined"]["dTypes"] = json!({}),
            "userDefined.dTypes",
        ),
        (
            |d| d["userDefined"]["nodesTypes"][0]["template"] = json!(3),
            "userDefined.nodesTypes[0].template",
        ),
        (
            |d| d["userDefined"]["dTypes"][0]["template"]["hpaSpec"] = json!({}),
            "userDefined.dTypes[0].template.hpaSpec.isEnabled",
        ),
        (
            |d| {
                d["userDefined"]
                    .as_object_mut()
                    .unwrap()
                    .remove("max_pod_per_node");
            },
            "userDefined.max_pod_per_node",
        ),
        (
            |d| {
                d.as_object_mut().unwrap().remove("userDefined");
            },
            "userDefined",
        ),
        (|d| d["setup"] = json!([]), "setup"),
        (|d| d["userCommand"] = json!("create"), "userCommand"),
        (
            |d| {
                d["userDefined"]["nodesScaleType"] = json!("proportion");
                d["userDefined"]["nodesTypes"][0]["proportion"] = json!(0);
            },
            "userDefined.nodesTypes[0].proportion",
        ),
    ];
    for (break_it, path) in cases {
        let mut document = c3();
        break_it(&mut document);
        assert_eq!(rejection(&document).0, path);
    }
    assert_eq!(rejection(&json!([])).0, "$");
}

#[test]
fn fast_find_levels_are_kivis() {
    for level in 0..=3 {
        assert_eq!(FastFind::from_level(level).map(FastFind::level), Ok(level));
    }
    assert!(FastFind::from_level(4).is_err());
}

/// #46 row 4: `HPAfactor` 0 would make an enabled HPA's maxReplicas 0, so it is refused there;
/// a deployment type whose HPA is disabled never uses the factor, and keeps loading with it.
#[test]
fn hpa_factor_zero_is_refused_only_where_the_hpa_is_enabled() {
    let mut document = c3();
    document["userDefined"]["dTypes"][0]["HPAfactor"] = json!(0);
    assert_eq!(
        rejection(&document),
        (
            "userDefined.dTypes[0].HPAfactor".to_string(),
            "0 makes the HPA's maxReplicas 0, below its minReplicas".to_string()
        )
    );
    document["userDefined"]["dTypes"][0]["template"]["hpaSpec"]["isEnabled"] = json!(0);
    let template = Template::from_json(&document).expect("the factor of a disabled HPA is unused");
    let deployment = &template.deployment_types[0];
    assert_eq!(
        (deployment.hpa_enabled, deployment.hpa_factor),
        (false, Some(0))
    );
}
