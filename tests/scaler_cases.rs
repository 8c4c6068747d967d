//! The scaler against Kivi's own output for the eight cases: templates and
//! enumerations from `cases/cN/`, instantiated documents from
//! `tests/data/scaler/instances/` (all produced by running Kivi's Python).

use std::fs;
use std::path::Path;

use kivi::scaler::{
    enumerate, instantiate, EnumerationOptions, FastFind, JobVerdict, ReportError, Search,
    Template, Topology,
};
use serde_json::Value;

const CASES: [&str; 8] = ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"];

fn read_json(path: impl AsRef<Path>) -> Value {
    let path = path.as_ref();
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn template(case: &str, non_violation: bool) -> Template {
    let file = if non_violation {
        "template-non-violation.json"
    } else {
        "template.json"
    };
    Template::from_json(&read_json(format!("cases/{case}/{file}"))).expect("Kivi's template parses")
}

fn counts(value: &Value) -> Vec<u64> {
    value
        .as_array()
        .expect("an array of counts")
        .iter()
        .map(|n| n.as_u64().expect("a count"))
        .collect()
}

fn with_level(level: u8) -> EnumerationOptions {
    EnumerationOptions {
        fast_find: FastFind::from_level(level).expect("a known level"),
        ..EnumerationOptions::default()
    }
}

/// Kivi's minimal violating topology per case, in Kivi's words, and how many
/// topologies Kivi tries to reach it at fast-find 0.
const MINIMAL: [(&str, &str, usize); 8] = [
    ("c1", "{node type 0: 1, deployment type 0: 3}", 3),
    ("c2", "{node type 0: 1, deployment type 0: 2}", 2),
    (
        "c3",
        "{node type 0: 1, node type 1: 2, deployment type 0: 3}",
        58,
    ),
    ("c4", "{node type 0: 2, deployment type 0: 5}", 5),
    (
        "c5",
        "{node type 0: 1, node type 1: 1, deployment type 0: 2}",
        2,
    ),
    ("c6", "{node type 0: 2, deployment type 0: 2}", 2),
    (
        "c7",
        "{node type 0: 1, node type 1: 0, deployment type 0: 1}",
        2,
    ),
    (
        "c8",
        "{node type 0: 1, node type 1: 2, deployment type 0: 6}",
        70,
    ),
];

fn position_of(topologies: &[Topology], words: &str) -> Option<usize> {
    topologies
        .iter()
        .position(|t| t.to_string() == words)
        .map(|i| i + 1)
}

#[test]
fn topology_counts_match_kivi_for_every_case_and_variant() {
    let expected = [
        ("c1", 36, 36),
        ("c2", 36, 36),
        ("c3", 264, 264),
        ("c4", 20, 20),
        ("c5", 192, 36),
        ("c6", 20, 20),
        ("c7", 264, 36),
        ("c8", 264, 264),
    ];
    for (case, violation, non_violation) in expected {
        let options = EnumerationOptions::default();
        assert_eq!(
            enumerate(&template(case, false), &options).len(),
            violation,
            "{case}"
        );
        assert_eq!(
            enumerate(&template(case, true), &options).len(),
            non_violation,
            "{case} -cn"
        );
    }
}

#[test]
fn minimal_topologies_sit_where_kivi_finds_them() {
    for (case, words, position) in MINIMAL {
        let topologies = enumerate(&template(case, false), &EnumerationOptions::default());
        assert_eq!(position_of(&topologies, words), Some(position), "{case}");
    }
}

#[test]
fn enumeration_matches_kivi_topology_by_topology() {
    for case in CASES {
        let recorded = read_json(format!("cases/{case}/enumeration.json"));
        for (variant, non_violation) in [("violation", false), ("nonViolation", true)] {
            let template = template(case, non_violation);
            let ours = enumerate(&template, &EnumerationOptions::default());
            let kivi = recorded[variant].as_array().expect("a list of topologies");
            assert_eq!(ours.len(), kivi.len(), "{case} {variant}");
            for (topology, entry) in ours.iter().zip(kivi) {
                let context = format!("{case} {variant} #{}", entry["index"]);
                assert_eq!(
                    topology.to_string(),
                    entry["setup"].as_str().unwrap(),
                    "{context}"
                );
                assert_eq!(
                    topology.nodes(),
                    counts(&entry["nodeTypeCounts"]),
                    "{context}"
                );
                assert_eq!(
                    topology.replicas(),
                    counts(&entry["deploymentTypeCounts"]),
                    "{context}"
                );
                assert_eq!(
                    Some(topology.total_nodes()),
                    entry["numNodes"].as_u64(),
                    "{context}"
                );
                assert_eq!(
                    Some(template.pod_count(topology)),
                    entry["numPods"].as_u64(),
                    "{context}"
                );
                let sizing = template.size_deployment(
                    &template.deployment_types[0],
                    topology.replicas()[0],
                    topology.total_nodes(),
                );
                let deployment = &entry["deployments"][0];
                assert_eq!(
                    Some(sizing.spec_replicas),
                    deployment["specReplicas"].as_u64(),
                    "{context}"
                );
                let hpa = deployment["hpaMinReplicas"]
                    .as_u64()
                    .zip(deployment["hpaMaxReplicas"].as_u64());
                assert_eq!(sizing.hpa_range, hpa, "{context}");
            }
        }
    }
}

#[test]
fn scale_six_matches_kivi_for_c3_and_c8() {
    for case in ["c3", "c8"] {
        let recorded = read_json(format!("cases/{case}/enumeration-scale6.json"));
        for (variant, non_violation) in [("violation", false), ("nonViolation", true)] {
            let template = template(case, non_violation)
                .with_scale(6)
                .expect("scale 6 fits");
            let ours = enumerate(&template, &EnumerationOptions::default());
            let kivi: Vec<&str> = recorded[variant]
                .as_array()
                .unwrap()
                .iter()
                .map(|entry| entry["setup"].as_str().unwrap())
                .collect();
            assert_eq!(ours.len(), 1644, "{case} {variant}");
            let words: Vec<String> = ours.iter().map(Topology::to_string).collect();
            assert_eq!(words, kivi, "{case} {variant}");
        }
    }
}

#[test]
fn fast_find_one_reaches_the_same_minimum_sooner() {
    for (case, words, position) in [
        ("c3", MINIMAL[2].1, 49),
        ("c8", MINIMAL[7].1, 61),
        ("c1", MINIMAL[0].1, 3),
    ] {
        let topologies = enumerate(&template(case, false), &with_level(1));
        assert_eq!(position_of(&topologies, words), Some(position), "{case}");
    }
    assert_eq!(enumerate(&template("c3", false), &with_level(1)).len(), 177);
}

#[test]
fn fast_find_two_changes_nothing_for_free_templates() {
    for case in CASES {
        let template = template(case, false);
        assert_eq!(
            enumerate(&template, &with_level(2)),
            enumerate(&template, &EnumerationOptions::default()),
            "{case}"
        );
    }
}

#[test]
fn confident_size_overrides_bound_the_enumeration() {
    let template = template("c1", false);
    let smaller = EnumerationOptions {
        confident_nodes: 2,
        pods_per_node: 2,
        ..EnumerationOptions::default()
    };
    let topologies = enumerate(&template, &smaller);
    let words: Vec<String> = topologies.iter().map(Topology::to_string).collect();
    assert_eq!(
        words,
        [
            "{node type 0: 1, deployment type 0: 1}",
            "{node type 0: 1, deployment type 0: 2}",
            "{node type 0: 2, deployment type 0: 1}",
            "{node type 0: 2, deployment type 0: 2}",
            "{node type 0: 2, deployment type 0: 3}",
            "{node type 0: 2, deployment type 0: 4}",
        ]
    );
    // Kivi with confident_node_size = 4 and confident_pod_size_factor = 3 on C3
    // (scale 3) yields 144 topologies.
    let wider = EnumerationOptions {
        confident_nodes: 4,
        pods_per_node: 3,
        ..EnumerationOptions::default()
    };
    let topologies = enumerate(&self::template("c3", false), &wider);
    assert_eq!(topologies.len(), 144);
    assert_eq!(
        topologies[40].to_string(),
        "{node type 0: 0, node type 1: 3, deployment type 0: 5}"
    );
    assert_eq!(
        topologies[143].to_string(),
        "{node type 0: 3, node type 1: 3, deployment type 0: 18}"
    );
}

#[test]
fn instantiation_reproduces_kivi_documents() {
    let directory = Path::new("tests/data/scaler/instances");
    let mut files: Vec<_> = fs::read_dir(directory)
        .expect("instance data")
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 13);
    for file in files {
        let expected = read_json(&file);
        let case = expected["case"].as_str().unwrap();
        let template = template(case, expected["variant"] == "non-violation");
        let topology = Topology::new(counts(&expected["nodes"]), counts(&expected["replicas"]));
        let document = instantiate(&template, &topology);
        assert_eq!(document, expected["document"], "{}", file.display());
        assert_eq!(
            Some(template.pod_count(&topology)),
            expected["numPods"].as_u64()
        );
        assert_eq!(Some(topology.total_nodes()), expected["numNodes"].as_u64());
    }
}

#[test]
fn instantiated_minimal_topologies_match_the_cases_branch() {
    for case in ["c1", "c2", "c4", "c5", "c6"] {
        let (_, words, position) = MINIMAL.iter().find(|(c, ..)| *c == case).unwrap();
        let template = template(case, false);
        let topology = &enumerate(&template, &EnumerationOptions::default())[position - 1];
        assert_eq!(&topology.to_string(), words);
        let mut expected = read_json(format!("cases/{case}/minimal.json"));
        // Kivi appends its default intent (no_feasible_node, our pod_always_schedulable, which
        // the model always checks) before it writes per-topology files; instantiation does not.
        if let Some(intents) = expected["intents"].as_array_mut() {
            intents.retain(|intent| intent["name"] != "no_feasible_node");
        }
        assert_eq!(instantiate(&template, topology), expected, "{case}");
    }
}

/// The verdict of a check that finished: a violation or none.
fn verdict(violated: bool) -> JobVerdict {
    if violated {
        JobVerdict::Violation
    } else {
        JobVerdict::NoViolation
    }
}

/// Runs a search to the end, answering with `violates`, and returns the
/// outcome together with how many rounds of `next_batch` it took.
fn drive(
    search: &mut Search,
    violates: impl Fn(&Topology) -> bool,
) -> (kivi::scaler::Outcome, usize) {
    let mut rounds = 0;
    while !search.is_finished() {
        let batch = search.next_batch();
        assert!(!batch.is_empty(), "an unfinished search hands out work");
        rounds += 1;
        for topology in batch {
            search
                .report(&topology, verdict(violates(&topology)))
                .expect("a fresh verdict");
        }
    }
    (search.outcome().expect("finished"), rounds)
}

#[test]
fn kivi_search_tries_as_many_topologies_as_kivi() {
    for (case, words, position) in MINIMAL {
        let template = template(case, false);
        let mut search = Search::new(&template, &EnumerationOptions::default(), 1);
        let (outcome, _) = drive(&mut search, |t| t.to_string() == words);
        assert_eq!(outcome.checked, position, "{case}");
        assert_eq!(outcome.position, Some(position), "{case}");
        assert_eq!(outcome.violation.unwrap().to_string(), words, "{case}");
        assert!(outcome.guaranteed_minimal, "{case}");
    }
}

#[test]
fn topologies_cut_short_before_the_answer_make_it_not_guaranteed_minimal() {
    let (case, words, position) = MINIMAL[2];
    let template = template(case, false);
    let order = enumerate(&template, &EnumerationOptions::default());
    for window in [1, 8] {
        let mut search = Search::new(&template, &EnumerationOptions::default(), window);
        while !search.is_finished() {
            for topology in search.next_batch() {
                let at = order.iter().position(|t| *t == topology).unwrap() + 1;
                let verdict = match at {
                    at if at == position => JobVerdict::Violation,
                    3 | 10 | 20 => JobVerdict::Incomplete,
                    _ => JobVerdict::NoViolation,
                };
                search.report(&topology, verdict).expect("a fresh verdict");
            }
        }
        let outcome = search.outcome().expect("finished");
        assert_eq!(outcome.violation.unwrap().to_string(), words, "{case}");
        assert_eq!(outcome.position, Some(position));
        assert_eq!(outcome.cut_short, 3, "window {window}");
        assert!(!outcome.guaranteed_minimal, "window {window}");
    }
}

#[test]
fn fast_find_one_search_is_not_guaranteed_minimal() {
    let words = MINIMAL[2].1;
    let mut search = Search::new(&template("c3", false), &with_level(1), 1);
    let (outcome, _) = drive(&mut search, |t| t.to_string() == words);
    assert_eq!(outcome.checked, 49);
    assert_eq!(outcome.violation.unwrap().to_string(), words);
    assert!(!outcome.guaranteed_minimal);
}

#[test]
fn gallop_finds_the_kivi_minimum_in_few_rounds() {
    for (case, words, position) in MINIMAL {
        let template = template(case, false);
        let options = with_level(3);
        let topologies = enumerate(&template, &options);
        let minimum = &topologies[position - 1];
        // The minimum and most topologies after it violate, but not all:
        // the search must not rely on monotonicity.
        let violates = |t: &Topology| {
            let at = topologies.iter().position(|u| u == t).unwrap();
            at == position - 1 || (at >= position && at % 5 != 1)
        };
        for window in [1, 4, 64] {
            let mut search = Search::new(&template, &options, window);
            let (outcome, rounds) = drive(&mut search, violates);
            assert_eq!(
                outcome.violation.as_ref(),
                Some(minimum),
                "{case} window {window}"
            );
            assert_eq!(outcome.violation.unwrap().to_string(), words);
            assert!(outcome.guaranteed_minimal, "{case} window {window}");
            if window == 64 {
                assert!(rounds <= 10, "{case}: {rounds} rounds");
            }
        }
    }
}

#[test]
fn gallop_without_violations_checks_everything() {
    let template = template("c4", true);
    let mut search = Search::new(&template, &with_level(3), 3);
    let (outcome, _) = drive(&mut search, |_| false);
    assert_eq!(outcome.violation, None);
    assert_eq!(outcome.checked, 20);
    assert!(outcome.guaranteed_minimal);
}

#[test]
fn topologies_read_like_kivi() {
    let topology = Topology::new(vec![1, 2], vec![3]);
    assert_eq!(
        topology.to_string(),
        "{node type 0: 1, node type 1: 2, deployment type 0: 3}"
    );
    assert_eq!(topology.total_nodes(), 3);
    assert_eq!(topology.total_replicas(), 3);
}

#[test]
fn search_rejects_stray_verdicts_and_releases_needless_checks() {
    let template = template("c2", false);
    let mut search = Search::new(&template, &EnumerationOptions::default(), 4);
    let batch = search.next_batch();
    assert_eq!(batch.len(), 4);
    assert!(search.next_batch().is_empty(), "the window is full");
    let stray = Topology::new(vec![9], vec![9]);
    assert_eq!(
        search.report(&stray, JobVerdict::NoViolation),
        Err(ReportError::NotIssued(stray))
    );
    search.report(&batch[1], JobVerdict::Violation).unwrap();
    assert_eq!(
        search.report(&batch[1], JobVerdict::Violation),
        Err(ReportError::AlreadyReported(batch[1].clone()))
    );
    assert!(search.still_needed(&batch[0]));
    assert!(!search.still_needed(&batch[2]));
    assert!(!search.is_finished());
    assert!(search.next_batch().is_empty(), "nothing after a violation");
    search.report(&batch[0], JobVerdict::NoViolation).unwrap();
    let outcome = search.outcome().expect("finished");
    assert_eq!(outcome.violation.as_ref(), Some(&batch[1]));
    assert_eq!(outcome.position, Some(2));
    assert!(outcome.guaranteed_minimal);
}
