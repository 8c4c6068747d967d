//! The reports CI systems read: SARIF 2.1.0 (code scanning: GitHub, GitLab, Azure DevOps) and
//! JUnit XML (test reports), built from kivi's own JSON reports of a single check, a sweep or
//! an eviction-loop search, so the three formats cannot disagree.
//!
//! SARIF: the tool is `kivi` with one rule per intent (and `eviction_loop`); each violated
//! intent is a result at error level whose message says what failed and where (the
//! topology, the pod that cannot be scheduled and why, each node's rejection), located at the
//! manifest of the deployment it concerns (the unschedulable pod's, else the last one the
//! trace names) when the input is manifests, else in the input file, with the counterexample
//! as a code flow: one thread-flow location per trace line, with the controller's reason. An incomplete
//! search is a warning notification of the invocation, not a result.
//!
//! JUnit: one test suite per input; a single check has one test case per intent, failing with
//! the counterexample when violated; a sweep has one test case per decided topology, and one
//! per violated intent of each violating topology; an incomplete check is a skipped case.

use super::escape_markup as escape;
use crate::engine::Unchecked;
use serde_json::{json, Value};
use std::fmt::Write;

/// The rule id of an eviction loop (`--loop`).
const EVICTION_LOOP: &str = "eviction_loop";

/// One failure found, ready for either format.
struct Finding {
    /// The intent violated, or [`EVICTION_LOOP`].
    rule: String,
    /// Where in a sweep (`None` for a single check).
    topology: Option<String>,
    /// One line saying what failed.
    message: String,
    /// The counterexample, one trace line each.
    trace: Vec<String>,
    /// The manifest of the deployment it concerns, when the report knows where it is.
    manifest: Option<Manifest>,
}

/// A deployment's manifest: its name, file and line.
struct Manifest {
    name: String,
    file: String,
    line: u64,
}

/// The deployment a counterexample concerns: the unschedulable pod's, else the last one its
/// trace names (`deployment 1`).
fn concerned_deployment(counterexample: &Value) -> Option<u64> {
    let pod = counterexample["unschedulable"]["pod"].as_u64();
    let last_state = counterexample["steps"]
        .as_array()
        .and_then(|steps| steps.last())
        .map(|step| &step["state"]);
    if let (Some(pod), Some(state)) = (pod, last_state) {
        if let Some(d) = state["pods"][(pod - 1) as usize]["deployment"].as_u64() {
            return Some(d);
        }
    }
    strings(&counterexample["kiviTrace"])
        .iter()
        .rev()
        .find_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            words.windows(2).rev().find_map(|pair| {
                (pair[0] == "deployment")
                    .then(|| pair[1].trim_end_matches([',', '.', ':']).parse().ok())
                    .flatten()
            })
        })
}

/// Where the report's `names` put deployment `id`'s manifest, if they do.
fn manifest_of(report: &Value, id: u64) -> Option<Manifest> {
    let entry = report["names"]
        .as_array()?
        .iter()
        .find(|n| n["kind"] == "deployment" && n["id"].as_u64() == Some(id))?;
    Some(Manifest {
        name: entry["name"].as_str()?.to_string(),
        file: entry["file"].as_str()?.to_string(),
        line: entry["line"].as_u64()?,
    })
}

/// The findings of a JSON report (single, scaling or loop), with the topology they belong to.
fn findings(report: &Value, topology: Option<&str>) -> Vec<Finding> {
    let topology = topology.map(str::to_string);
    let at = topology
        .as_deref()
        .map_or(String::new(), |t| format!(" at topology {t}"));
    match report["mode"].as_str() {
        Some("scaling") => report["violations"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|violation| findings(&violation["report"], violation["kivi"].as_str()))
            .collect(),
        Some("loop") if report["verdict"] == "violation" => {
            let trace = strings(&report["prefix"])
                .into_iter()
                .chain(std::iter::once("Loop (repeats forever):".to_string()))
                .chain(strings(&report["cycle"]))
                .chain(
                    strings(&report["notConverged"])
                        .into_iter()
                        .map(|r| format!("not converged: {r}")),
                )
                .collect();
            let rule = loop_rule(report);
            let message = if rule == EVICTION_LOOP {
                format!("Pods are evicted and re-created forever{at}.")
            } else {
                format!(
                    "Intent {rule} is violated{at}: after the last event and command the \
                     cluster does not stay converged."
                )
            };
            vec![Finding {
                rule,
                topology,
                message,
                trace,
                manifest: None,
            }]
        }
        _ => report["counterexamples"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|counterexample| {
                let rule = counterexample["intent"]
                    .as_str()
                    .unwrap_or("intent")
                    .to_string();
                let mut message = format!("Intent {rule} is violated{at}.");
                let unschedulable = &counterexample["unschedulable"];
                if let Some(reason) = unschedulable["reason"].as_str() {
                    let pod = &unschedulable["pod"];
                    let _ = write!(message, " Pod {pod} cannot be scheduled: {reason}");
                    for node in unschedulable["nodes"].as_array().into_iter().flatten() {
                        let (n, plugin) = (&node["node"], node["plugin"].as_str().unwrap_or(""));
                        let detail = node["detail"].as_str().unwrap_or("");
                        let _ = write!(message, "\n  node {n}: {plugin}: {detail}");
                    }
                }
                let manifest =
                    concerned_deployment(counterexample).and_then(|d| manifest_of(report, d));
                if let Some(manifest) = &manifest {
                    let _ = write!(message, "\nDeployment {} concerns it.", manifest.name);
                }
                if let Some(step) = counterexample["uncheckedFromStep"].as_u64() {
                    let steps = counterexample["steps"].as_array().map_or(0, Vec::len);
                    let unchecked = Unchecked {
                        from: step as usize,
                        bound: super::single::replay_bound_named(
                            counterexample["uncheckedBy"].as_str().unwrap_or_default(),
                        ),
                    };
                    let note = super::single::unchecked_note(unchecked, steps);
                    let _ = write!(message, "\n{note}");
                }
                Finding {
                    rule,
                    topology: topology.clone(),
                    message,
                    trace: explained_trace(counterexample),
                    manifest,
                }
            })
            .collect(),
    }
}

/// A counterexample's trace lines, each followed by the controller's reason and numbers when
/// it gave them (`… — because: New size: 6; … (cpu resource …)`).
fn explained_trace(counterexample: &Value) -> Vec<String> {
    let mut lines = strings(&counterexample["kiviTrace"]).into_iter();
    let messages = counterexample["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|step| step["messages"].as_array().into_iter().flatten());
    let mut explained: Vec<String> = messages
        .zip(lines.by_ref())
        .map(|(message, line)| match message["reason"].as_str() {
            Some(reason) => {
                let detail = message["detail"].as_str().unwrap_or("");
                format!("{line} — because: {reason} ({detail})")
            }
            None => line,
        })
        .collect();
    explained.extend(lines);
    explained
}

/// The strings of a JSON array.
fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// The intents a report names (those checked, else those violated), plus the loop rule for a
/// loop search.
fn rules(report: &Value, findings: &[Finding]) -> Vec<String> {
    let mut rules = strings(&report["intents"]);
    if report["mode"] == "loop" {
        rules.push(loop_rule(report));
    }
    for finding in findings {
        if !rules.contains(&finding.rule) {
            rules.push(finding.rule.clone());
        }
    }
    rules
}

/// The rule a loop search's report checks: its `property`, an eviction loop when it names none.
fn loop_rule(report: &Value) -> String {
    report["property"]
        .as_str()
        .unwrap_or(EVICTION_LOOP)
        .to_string()
}

/// Why a report is incomplete, if it is.
fn incomplete(report: &Value) -> Option<String> {
    (report["verdict"] == "incomplete").then(|| {
        ["summary", "incomplete", "reason"]
            .iter()
            .find_map(|key| report[*key].as_str())
            .unwrap_or("the search stopped before deciding")
            .to_string()
    })
}

/// The semantics `report` was checked under: a sweep's own, or a single check's setup's;
/// none for a report that does not say.
fn semantics(report: &Value) -> Option<&str> {
    report["semantics"]
        .as_str()
        .or(report["setup"]["semantics"].as_str())
}

/// The SARIF 2.1.0 log of `report` (kivi's JSON report of `input`, located at `uri`).
pub fn to_sarif(report: &Value, uri: &str) -> Value {
    let found = findings(report, None);
    let rules: Vec<Value> = rules(report, &found)
        .iter()
        .map(|rule| {
            let text = if rule == EVICTION_LOOP {
                "Pods must not be evicted and re-created forever.".to_string()
            } else {
                format!("The cluster keeps the intent {rule} in every reachable state.")
            };
            json!({"id": rule, "name": rule, "shortDescription": {"text": text}})
        })
        .collect();
    let location = json!({"physicalLocation": {"artifactLocation": {"uri": uri}}});
    let results: Vec<Value> = found
        .iter()
        .map(|finding| {
            let steps: Vec<Value> = finding
                .trace
                .iter()
                .map(|line| json!({"location": {"message": {"text": line}}}))
                .collect();
            let location = match &finding.manifest {
                Some(m) => json!({
                    "physicalLocation": {
                        "artifactLocation": {"uri": m.file},
                        "region": {"startLine": m.line},
                    },
                    "logicalLocations": [{"name": m.name, "kind": "object"}],
                }),
                None => location.clone(),
            };
            let mut result = json!({
                "ruleId": finding.rule,
                "level": "error",
                "message": {"text": finding.message},
                "locations": [location],
                "codeFlows": [{"threadFlows": [{"locations": steps}]}],
            });
            if let Some(topology) = &finding.topology {
                result["properties"] = json!({"topology": topology});
            }
            result
        })
        .collect();
    let missing_shards = report["minimal"]["missingShards"]
        .as_str()
        .map(|missing| format!("Not guaranteed minimal: {missing}"));
    let notifications: Vec<Value> = incomplete(report)
        .map(|reason| format!("Incomplete: {reason}"))
        .into_iter()
        .chain(missing_shards)
        .map(|text| json!({"level": "warning", "message": {"text": text}}))
        .collect();
    let mut log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "kivi",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/bingzheliu/Kivi",
                "rules": rules,
            }},
            "invocations": [{
                "executionSuccessful": true,
                "toolExecutionNotifications": notifications,
            }],
            "artifacts": [{"location": {"uri": uri}}],
            "results": results,
        }],
    });
    if let Some(semantics) = semantics(report) {
        log["runs"][0]["properties"] = json!({"semantics": semantics});
    }
    log
}

/// One JUnit test case: its name, and its failure (message, trace) or skip reason.
struct Case {
    name: String,
    outcome: CaseOutcome,
}

enum CaseOutcome {
    Passed,
    Failed {
        rule: String,
        message: String,
        trace: Vec<String>,
    },
    Skipped(String),
}

/// The JUnit XML of `report` (kivi's JSON report of the input named `input`).
pub fn to_junit(report: &Value, input: &str) -> String {
    let found = findings(report, None);
    let mut cases = Vec::new();
    let skipped = incomplete(report);
    match report["mode"].as_str() {
        Some("scaling") => {
            for row in report["rows"].as_array().into_iter().flatten() {
                let topology = row["kivi"].as_str().unwrap_or("?");
                let failures: Vec<&Finding> = found
                    .iter()
                    .filter(|f| f.topology.as_deref() == Some(topology))
                    .collect();
                if failures.is_empty() {
                    let outcome = match row["verdict"].as_str() {
                        Some("incomplete") => {
                            CaseOutcome::Skipped("the check stopped early".into())
                        }
                        _ => CaseOutcome::Passed,
                    };
                    cases.push(Case {
                        name: format!("topology {topology}"),
                        outcome,
                    });
                }
                for finding in failures {
                    cases.push(Case {
                        name: format!("topology {topology}: {}", finding.rule),
                        outcome: CaseOutcome::Failed {
                            rule: finding.rule.clone(),
                            message: finding.message.clone(),
                            trace: finding.trace.clone(),
                        },
                    });
                }
            }
        }
        _ => {
            for rule in rules(report, &found) {
                let outcome = match (found.iter().find(|f| f.rule == rule), &skipped) {
                    (Some(finding), _) => CaseOutcome::Failed {
                        rule: finding.rule.clone(),
                        message: finding.message.clone(),
                        trace: finding.trace.clone(),
                    },
                    (None, Some(reason)) => CaseOutcome::Skipped(reason.clone()),
                    (None, None) => CaseOutcome::Passed,
                };
                cases.push(Case {
                    name: rule,
                    outcome,
                });
            }
        }
    }
    let failures = cases
        .iter()
        .filter(|c| matches!(c.outcome, CaseOutcome::Failed { .. }))
        .count();
    let skips = cases
        .iter()
        .filter(|c| matches!(c.outcome, CaseOutcome::Skipped(_)))
        .count();
    let seconds = report["elapsed_s"]
        .as_f64()
        .or(report["stats"]["elapsed_s"].as_f64())
        .unwrap_or(0.0);
    let input = escape(input);
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"kivi\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skips}\" time=\"{seconds:.3}\">",
        cases.len()
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{input}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skips}\" time=\"{seconds:.3}\">",
        cases.len()
    );
    if let Some(semantics) = semantics(report) {
        let _ = writeln!(
            xml,
            "    <properties><property name=\"semantics\" value=\"{}\"/></properties>",
            escape(semantics)
        );
    }
    for case in &cases {
        let name = escape(&case.name);
        match &case.outcome {
            CaseOutcome::Passed => {
                let _ = writeln!(xml, "    <testcase classname=\"{input}\" name=\"{name}\"/>");
            }
            CaseOutcome::Skipped(reason) => {
                let _ = writeln!(
                    xml,
                    "    <testcase classname=\"{input}\" name=\"{name}\"><skipped message=\"{}\"/></testcase>",
                    escape(reason)
                );
            }
            CaseOutcome::Failed {
                rule,
                message,
                trace,
            } => {
                let _ = writeln!(xml, "    <testcase classname=\"{input}\" name=\"{name}\">");
                let _ = writeln!(
                    xml,
                    "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                    escape(message),
                    escape(rule),
                    escape(&trace.join("\n"))
                );
                let _ = writeln!(xml, "    </testcase>");
            }
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_special_characters_are_escaped() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"
        );
    }
}
