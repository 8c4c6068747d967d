//! The safety intents and the expressions they compare replicas with.

use super::problems::Problems;
use super::{INTENTS, LIVENESS_INTENTS};
use crate::cluster::state::MAX_PODS;
use crate::input::uniform::schema::Intent;
use serde_json::Value;

/// Checks a safety intent: its name and the deployment and expression it reads.
pub(super) fn check_intent(
    problems: &mut Problems,
    path: &str,
    intent: &Intent,
    deployments: usize,
) {
    let Some(name) = intent.name.as_deref() else {
        problems.add(format!("{path}.name"), "missing", "name the intent");
        return;
    };
    let Some((user_name, _)) = INTENTS
        .iter()
        .find(|(user, kivi)| name == *user || name == *kivi)
    else {
        let names: Vec<&str> = INTENTS
            .iter()
            .chain(&LIVENESS_INTENTS)
            .map(|(user, _)| *user)
            .collect();
        problems.add(
            format!("{path}.name"),
            format!("unsupported intent `{name}`"),
            format!("use one of: {}", names.join(", ")),
        );
        return;
    };
    let para = intent.para.clone().unwrap_or_default();
    let ppath = format!("{path}.para");
    if !matches!(
        *user_name,
        "pod_always_schedulable" | "no_kernel_panic" | "pdb_never_violated"
    ) {
        problems.required(
            &ppath,
            "did",
            para.did,
            1,
            deployments as i64,
            "the deployment's id (its position in setup.d)",
        );
    }
    if *user_name == "replica_num_always_meet_exp" {
        match &para.exp_replicas {
            None => problems.add(
                format!("{ppath}.expReplicas"),
                "missing",
                "give the expected replicas: a number, or d[did].specReplicas ± n",
            ),
            Some(Value::Number(n))
                if n.as_i64()
                    .is_some_and(|n| (0..=MAX_PODS as i64).contains(&n)) => {}
            Some(Value::String(text)) if expression_offset(text).is_some() => {}
            Some(other) => problems.add(
                format!("{ppath}.expReplicas"),
                format!("cannot read `{other}`"),
                "write a whole number, or d[did].specReplicas followed by + n or - n",
            ),
        }
    }
    problems.within(
        &ppath,
        "maxSkew",
        para.max_skew,
        0,
        10_000,
        "the largest allowed difference in pods between nodes",
    );
}

/// `d[did].specReplicas ± n` (or a plain number) split into whether it starts from the
/// deployment's desired replicas and the offset.
pub fn expression_offset(text: &str) -> Option<(bool, i32)> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (relative, rest) = match compact.strip_prefix("d[did].specReplicas") {
        Some(rest) => (true, rest.to_string()),
        None => (false, compact),
    };
    let offset = match rest.as_str() {
        "" if relative => Some(0),
        "" => None,
        rest => rest
            .strip_prefix('+')
            .map_or_else(|| rest.parse::<i32>().ok(), |n| n.parse::<i32>().ok()),
    };
    offset.map(|offset| (relative, offset))
}
