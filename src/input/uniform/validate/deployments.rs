//! The deployments: their replica sets, rollout strategies and HPAs.

use super::problems::{integer_name, Problems};
use crate::cluster::state::MAX_PODS;
use crate::input::uniform::schema::{Deployment, HpaSpec, Pod};
use std::collections::{BTreeMap, BTreeSet};

/// Checks the deployments: names unique, replica counts, templates and rollouts, the pods
/// their replica sets list, and their HPA.
pub(super) fn check_deployments(
    problems: &mut Problems,
    deployments: &[Deployment],
    pods: &[Pod],
    templates: usize,
) {
    let mut names = BTreeSet::new();
    let mut listed: BTreeMap<i64, String> = BTreeMap::new();
    for (i, deployment) in deployments.iter().enumerate() {
        let path = format!("setup.d[{i}]");
        match integer_name(&deployment.name) {
            None => problems.add(
                format!("{path}.name"),
                "missing, or not a whole number 0 or more",
                "name the deployment by a number (Kivi's names are numbers)",
            ),
            Some(name) if !names.insert(name) => problems.add(
                format!("{path}.name"),
                format!("{name} names another deployment too"),
                "give every deployment its own name",
            ),
            Some(_) => {}
        }
        problems.within(
            &path,
            "id",
            deployment.id,
            0,
            i64::MAX,
            "Kivi's object id, 0 or more",
        );
        problems.within(
            &path,
            "status",
            deployment.status,
            0,
            1,
            "1 when the deployment exists, else 0",
        );
        problems.within(
            &path,
            "curVersion",
            deployment.cur_version,
            0,
            1,
            "0 or 1, the current replica set",
        );
        problems.within(
            &path,
            "specReplicas",
            deployment.spec_replicas,
            0,
            MAX_PODS as i64,
            "the desired replicas",
        );
        problems.required(
            &path,
            "replicas",
            deployment.replicas,
            0,
            MAX_PODS as i64,
            "the running replicas",
        );
        problems.required(
            &path,
            "podTemplateId",
            deployment.pod_template_id,
            1,
            templates as i64,
            "the id of the deployment's pod template (its position in setup.podTemplates)",
        );
        check_rollout(
            problems,
            &path,
            deployment.max_surge,
            deployment.max_unavailable,
            deployment.strategy,
        );
        if let Some(hpa) = &deployment.hpa_spec {
            check_hpa(problems, &format!("{path}.hpaSpec"), hpa);
        }
        let sets = deployment.replica_sets.as_deref().unwrap_or_default();
        if sets.len() != 2 {
            problems.add(
                format!("{path}.replicaSets"),
                format!("{} replica sets; a deployment has exactly two", sets.len()),
                "list the current and the next version",
            );
            continue;
        }
        let mut members = 0;
        for (v, set) in sets.iter().enumerate() {
            let rpath = format!("{path}.replicaSets[{v}]");
            if let Some(owner) = set.deployment_id {
                if owner != i as i64 + 1 {
                    problems.add(
                        format!("{rpath}.deploymentId"),
                        format!("{owner} is not this deployment's id {}", i + 1),
                        format!("write {} (the deployment's position in setup.d)", i + 1),
                    );
                }
            }
            problems.within(
                &rpath,
                "id",
                set.id,
                0,
                i64::MAX,
                "Kivi's object id, 0 or more",
            );
            problems.within(&rpath, "version", set.version, 0, 1, "0 or 1");
            problems.within(
                &rpath,
                "specReplicas",
                set.spec_replicas,
                0,
                MAX_PODS as i64,
                "the replica set's desired replicas",
            );
            let ids = set.pod_ids.as_deref().unwrap_or_default();
            for (j, &id) in ids.iter().enumerate() {
                let ipath = format!("{rpath}.podIds[{j}]");
                if id < 1 || id as usize > pods.len() {
                    problems.add(
                        ipath,
                        format!("pod id {id} does not exist"),
                        format!(
                            "use pod ids from 1 to {} (positions in setup.pods)",
                            pods.len()
                        ),
                    );
                    continue;
                }
                if let Some(other) = listed.insert(id, ipath.clone()) {
                    problems.add(
                        ipath.clone(),
                        format!("pod {id} is listed twice (also at {other})"),
                        "list each pod in one replica set once",
                    );
                }
                let pod = &pods[id as usize - 1];
                if pod.workload_type != Some(1) || pod.workload_id != Some(i as i64 + 1) {
                    problems.add(ipath, format!("pod {id} is not owned by this deployment (setup.pods[{}] has workloadType {:?}, workloadId {:?})", id - 1, pod.workload_type, pod.workload_id), format!("set the pod's workloadType to 1 and workloadId to {}, or drop it from podIds", i + 1));
                }
            }
            let replicas = set.replicas.unwrap_or(0);
            if replicas != ids.len() as i64 {
                problems.add(
                    format!("{rpath}.replicas"),
                    format!("{replicas} replicas but {} podIds", ids.len()),
                    "list exactly one pod id per replica",
                );
            }
            members += ids.len() as i64;
        }
        if let Some(replicas) = deployment.replicas {
            if (0..=MAX_PODS as i64).contains(&replicas) && replicas != members {
                problems.add(
                    format!("{path}.replicas"),
                    format!("{replicas} replicas but its replica sets hold {members} pods"),
                    "make replicas the number of pods in podIds of both replica sets",
                );
            }
        }
    }
}

/// Checks a rollout strategy: `maxSurge` and `maxUnavailable` in percent, `strategy` 0 or 1.
pub(super) fn check_rollout(
    problems: &mut Problems,
    path: &str,
    surge: Option<i64>,
    unavailable: Option<i64>,
    strategy: Option<i64>,
) {
    problems.within(path, "maxSurge", surge, 0, 100, "maxSurge in percent");
    problems.within(
        path,
        "maxUnavailable",
        unavailable,
        0,
        100,
        "maxUnavailable in percent",
    );
    problems.within(
        path,
        "strategy",
        strategy,
        0,
        1,
        "0 (Recreate) or 1 (RollingUpdate)",
    );
}

/// Checks an HPA spec: its switch, metrics, targets and replica bounds.
pub(super) fn check_hpa(problems: &mut Problems, path: &str, hpa: &HpaSpec) {
    problems.within(path, "isEnabled", hpa.is_enabled, 0, 1, "1 (enabled) or 0");
    let count = hpa.num_metrics.unwrap_or(0);
    problems.within(
        path,
        "numMetrics",
        hpa.num_metrics,
        0,
        16,
        "the number of metrics",
    );
    let names = hpa.metric_names.as_deref().unwrap_or_default();
    let targets = hpa.metric_targets.as_deref().unwrap_or_default();
    let types = hpa.metric_types.as_deref().unwrap_or_default();
    let count = count.clamp(0, 16) as usize;
    if names.len() < count || targets.len() < count || types.len() < count {
        problems.add(
            path,
            format!("numMetrics is {count} but a metric list is shorter"),
            "give numMetrics entries in metricNames, metricTargets and metricTypes",
        );
    }
    for j in 0..count {
        if let Some(&name) = names.get(j) {
            problems.within(
                path,
                &format!("metricNames[{j}]"),
                Some(name),
                0,
                1,
                "0 (CPU) or 1 (memory)",
            );
        }
        if let Some(&kind) = types.get(j) {
            problems.within(
                path,
                &format!("metricTypes[{j}]"),
                Some(kind),
                0,
                1,
                "0 (average value) or 1 (utilisation)",
            );
        }
        if let Some(&target) = targets.get(j) {
            problems.within(
                path,
                &format!("metricTargets[{j}]"),
                Some(target),
                1,
                i32::MAX as i64,
                "a positive target",
            );
        }
    }
    problems.within(
        path,
        "minReplicas",
        hpa.min_replicas,
        0,
        MAX_PODS as i64,
        "the fewest replicas",
    );
    problems.within(
        path,
        "maxReplicas",
        hpa.max_replicas,
        0,
        MAX_PODS as i64,
        "the most replicas",
    );
    if let Some(behavior) = &hpa.behavior {
        crate::input::uniform::hpa_behavior::check(problems, &format!("{path}.behavior"), behavior);
    }
    if hpa.is_enabled == Some(1) {
        let (min, max) = (hpa.min_replicas.unwrap_or(1), hpa.max_replicas.unwrap_or(0));
        if min > max {
            problems.add(
                format!("{path}.maxReplicas"),
                format!("{max} is below minReplicas {min}"),
                "give maxReplicas at least minReplicas",
            );
        }
    }
}
