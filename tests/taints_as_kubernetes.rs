//! Taints and tolerations matched as Kubernetes matches them (#46, row 6): key, value, effect
//! and operator all count, and the scheduler keeps pods off nodes whose NoSchedule or NoExecute
//! taints they do not tolerate. The inputs are the audit's (`tests/data/audit/`); each is
//! checked under both tie-breaks, and the eviction loop an untolerated NoExecute taint used to
//! give (the scheduler placing the pod, the taint manager evicting it) is gone.

use crate::support::cli;

use cli::{kivi, kivi_with_stdin, stdout};

const NO_EXECUTE_NODES: &str = "tests/data/audit/b24-node-noexecute-no-toleration.yaml";
const NO_EXECUTE_TYPE: &str = "tests/data/audit/b04c-taint-noexecute.yaml";
const VALUE_MISMATCH: &str = "tests/data/audit/b23-node-taint-value-mismatch.yaml";
const EQUAL_KEY_VALUE: &str = "tests/data/audit/b18-toleration-equal-kv-taint.yaml";
const EXISTS_KEY: &str = "tests/data/audit/b22-toleration-exists-key.yaml";

/// kube-scheduler's reason for two nodes tainted `dedicated=gpu` the pod does not tolerate.
const TWO_TAINTED: &str =
    "0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}.";

/// `kivi check FILE EXTRA…` under each tie-break: every exit code is `code`; the outputs.
fn check(file: &str, extra: &[&str], code: i32) -> Vec<String> {
    ["lowest", "any"]
        .iter()
        .map(|tie_break| {
            let mut args = vec!["check", file, "--tie-break", tie_break];
            args.extend_from_slice(extra);
            let output = kivi(&args);
            let text = stdout(&output);
            assert_eq!(
                output.status.code(),
                Some(code),
                "{args:?}\n{text}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            text
        })
        .collect()
}

/// The uniform JSON `kivi dump FILE --original` builds.
fn dump(file: &str) -> serde_json::Value {
    let output = kivi(&["dump", file, "--original"]);
    assert_eq!(output.status.code(), Some(0));
    serde_json::from_slice(&output.stdout).expect("dump prints JSON")
}

#[test]
fn an_untolerated_no_execute_taint_keeps_pods_off_every_node() {
    for (file, extra) in [
        (NO_EXECUTE_NODES, &[][..]),
        (NO_EXECUTE_TYPE, &["--original"]),
    ] {
        for text in check(file, extra, 1) {
            assert!(text.contains(TWO_TAINTED), "{file}\n{text}");
            assert!(
                text.contains("Violating intent(s): pod_always_schedulable"),
                "{text}"
            );
        }
        let mut looping = vec!["--loop"];
        looping.extend_from_slice(extra);
        let output = kivi(&[&["check", file][..], &looping].concat());
        assert_eq!(output.status.code(), Some(0), "{file}: {}", stdout(&output));
        assert!(
            stdout(&output).contains("No eviction loop"),
            "no pod is placed, so none is evicted: {}",
            stdout(&output)
        );
    }
}

#[test]
fn a_no_execute_taint_type_is_untolerated_in_every_topology_of_the_sweep() {
    for text in check(NO_EXECUTE_TYPE, &[], 1) {
        assert!(text.contains("Minimal violating topology"), "{text}");
    }
}

#[test]
fn a_toleration_of_another_value_does_not_tolerate_the_taint() {
    for text in check(VALUE_MISMATCH, &[], 1) {
        assert!(text.contains(TWO_TAINTED), "{text}");
    }
    let document = dump(VALUE_MISMATCH);
    assert_eq!(
        document["setup"]["nodes"][0]["taint"],
        serde_json::json!(["dedicated=gpu:NoSchedule"])
    );
    assert_eq!(
        document["setup"]["podTemplates"][0]["toleration"],
        serde_json::json!(["dedicated=batch:NoSchedule"])
    );
}

#[test]
fn an_equal_toleration_of_the_key_and_value_tolerates_the_taint() {
    for extra in [&[][..], &["--original"]] {
        for text in check(EQUAL_KEY_VALUE, extra, 0) {
            assert!(text.contains("No failure is found!"), "{text}");
        }
    }
    let template = &dump(EQUAL_KEY_VALUE)["setup"]["podTemplates"][0];
    assert_eq!(
        template["toleration"],
        serde_json::json!(["dedicated=gpu:NoSchedule"])
    );
}

#[test]
fn an_exists_toleration_of_the_key_tolerates_any_value() {
    for extra in [&[][..], &["--original"]] {
        for text in check(EXISTS_KEY, extra, 0) {
            assert!(text.contains("No failure is found!"), "{text}");
        }
    }
    let template = &dump(EXISTS_KEY)["setup"]["podTemplates"][0];
    assert_eq!(
        template["toleration"],
        serde_json::json!([{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}])
    );
}

#[test]
fn tolerations_and_taints_the_api_server_refuses_are_input_errors() {
    let text =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(EXISTS_KEY))
            .unwrap();
    for (from, to, message) in [
        (
            "operator: Exists, effect",
            "operator: Exists, value: gpu, effect",
            "Deployment/web: spec.tolerations[0]: operator Exists takes no value",
        ),
        (
            "{key: dedicated, operator: Exists",
            "{operator: Equal",
            "spec.tolerations[0]: a toleration without a key must have operator Exists",
        ),
        (
            "operator: Exists, effect: NoSchedule}",
            "operator: Exists, effect: NoSchedule, tolerationSeconds: 30}",
            "spec.tolerations[0]: tolerationSeconds is set but the effect is not NoExecute",
        ),
        (
            "dedicated=gpu:NoSchedule",
            "dedicated=gpu:NoRun",
            "nodesTypes[0].template.taints[0]: effect `NoRun` is not one Kubernetes knows",
        ),
    ] {
        assert!(text.contains(from), "{from}");
        let output = kivi_with_stdin(&["check", "-"], Some(&text.replace(from, to)));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{to}: {stderr}");
        assert!(stderr.contains(message), "{to}: {stderr}");
    }
}
