//! The descheduler in the model under `--semantics kubernetes`: each step is one cycle of the
//! real descheduler (`controllers/kube_descheduler/model_step.rs`), with its eviction limits
//! per cycle, and under `--tie-break any` every set of pods the cycle may evict is a step of
//! its own.

use crate::support::cli::kivi;
use crate::support::scratch::{copy_tree, scratch};
use kivi::cluster::spec::{Semantics, TieBreak};
use kivi::cluster::ClusterAction;
use kivi::engine::{Model, StepBuffers, WorkerBounds};
use kivi::model::{ClusterModel, ModelOptions};
use std::path::Path;

const C5: &str = "models/c5-descheduler-duplicates";

/// `kivi check DIR --original --semantics SEMANTICS`: the exit code and what it printed.
fn check(dir: &str, semantics: &str) -> (Option<i32>, String) {
    let output = kivi(&["check", dir, "--original", "--semantics", semantics]);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.code(), format!("{stdout}{stderr}"))
}

/// The trace lines of the descheduler's evictions.
fn evictions(report: &str) -> Vec<&str> {
    report
        .lines()
        .filter(|l| l.contains("[Descheduler]"))
        .collect()
}

#[test]
fn the_loop_of_c5_is_the_real_remove_duplicates() {
    let (code, report) = check(C5, "kubernetes");
    assert_eq!(code, Some(1), "{report}");
    assert!(report.contains("no_oscillation_eviction"), "{report}");
    let evicted = evictions(&report);
    // Five replicas on the one ssd node, three ready nodes: the plugin's average is
    // ceil(5 / 3) = 2, so each cycle evicts three, named by the plugin that evicted them.
    assert!(evicted.len() >= 6, "{report}");
    assert!(
        evicted
            .iter()
            .all(|l| l.ends_with("pending for deletion! (RemoveDuplicates)")),
        "{report}"
    );
    let (code, report) = check(C5, "kivi");
    assert_eq!(code, Some(1), "{report}");
    assert!(!report.contains("(RemoveDuplicates)"), "{report}");
}

#[test]
fn eviction_limits_count_per_cycle_only_under_kubernetes() {
    let dir = scratch("c5-node-limit");
    copy_tree(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(C5).as_path(),
        &dir,
    );
    let policy = dir.join("yaml/descheduler.yaml");
    let text = std::fs::read_to_string(&policy).unwrap();
    std::fs::write(
        &policy,
        text.replace("profiles:", "maxNoOfPodsToEvictPerNode: 1\nprofiles:"),
    )
    .unwrap();
    let dir = dir.to_str().unwrap();
    // Kivi counts the limit over the descheduler's life: one eviction, then never again.
    let (code, report) = check(dir, "kivi");
    assert_eq!(code, Some(0), "{report}");
    // The real descheduler counts it per cycle: one pod a cycle, for ever.
    let (code, report) = check(dir, "kubernetes");
    assert_eq!(code, Some(1), "{report}");
    let evicted = evictions(&report);
    assert!(evicted.len() >= 2, "{report}");
    let steps: Vec<&str> = evicted
        .iter()
        .map(|l| l.split(']').next().unwrap())
        .collect();
    let mut distinct = steps.clone();
    distinct.dedup();
    assert_eq!(distinct, steps, "one eviction per step: {report}");
}

/// C5's cluster (`kivi dump`) under kubernetes semantics and `tie_break`.
fn c5_model(tie_break: TieBreak, symmetry: bool) -> ClusterModel {
    let output = kivi(&["dump", C5, "--original"]);
    assert_eq!(output.status.code(), Some(0));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    kivi::input::load_uniform(&document)
        .unwrap()
        .with_options(ModelOptions {
            semantics: Semantics::Kubernetes,
            tie_break,
            symmetry,
            ..ModelOptions::default()
        })
}

/// The descheduler's steps where it is the only controller left to step, on the run that
/// takes the first of the other steps until then.
fn descheduler_steps_once_quiet(model: &ClusterModel) -> Vec<ClusterAction> {
    let is_descheduler = |a: &ClusterAction| {
        matches!(
            a,
            ClusterAction::Descheduler | ClusterAction::DeschedulerChoice { .. }
        )
    };
    let mut w = model.worker(WorkerBounds::none());
    let mut buffers = StepBuffers::new();
    let mut state = model.init_states().remove(0);
    for _ in 0..200 {
        let mut successors = Vec::new();
        model.successors(&mut w, &state, &mut buffers, |a, s| successors.push((a, s)));
        match successors.iter().position(|(a, _)| !is_descheduler(a)) {
            Some(other) => state = successors.swap_remove(other).1,
            None => return successors.into_iter().map(|(a, _)| a).collect(),
        }
    }
    panic!("the cluster never settles");
}

#[test]
fn any_explores_every_set_of_duplicates_a_cycle_may_evict() {
    // Lowest ids: one cycle, its choices the first options.
    assert_eq!(
        descheduler_steps_once_quiet(&c5_model(TieBreak::Lowest, true)),
        vec![ClusterAction::Descheduler]
    );
    // Any: the five replicas on the ssd node, three to go: every one of the C(5, 3) = 10
    // sets is a step (the order the plugin tries them in ends in the same state).
    let steps = descheduler_steps_once_quiet(&c5_model(TieBreak::Any, false));
    assert_eq!(steps.len(), 10, "{steps:?}");
    // With symmetry (on by default) the five alike replicas are one class: the ten sets are
    // renamings of one another, one step.
    let steps = descheduler_steps_once_quiet(&c5_model(TieBreak::Any, true));
    assert_eq!(steps, vec![ClusterAction::Descheduler]);
}
