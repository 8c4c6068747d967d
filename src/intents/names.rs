//! The names the intents are checked and reported under.
//!
//! The engine knows a property by its name: a violation is recorded, replayed and reported
//! under it, and two violations of one name are one failure. Intents of the same kind about
//! different deployments (two `pod_balance_across_node`) must therefore be told apart, and the
//! report must say which deployment's intent failed: such a name carries its deployment
//! (`pod_balance_across_node (deployment 2)`, which the report's legend names as the user does),
//! and where that is not enough either, its place in the list (`#3`).

use crate::cluster::IntentKind;

/// The deployment an intent is about, if it is about one.
fn deployment(intent: &IntentKind) -> Option<u8> {
    match *intent {
        IntentKind::NoOscillationReplicaNum { deployment }
        | IntentKind::ReplicaNumAlwaysMeetMin { deployment }
        | IntentKind::NoOscillationEviction { deployment }
        | IntentKind::ReplicaNumAlwaysMeetExp { deployment, .. }
        | IntentKind::PodBalanceAcrossNode { deployment, .. }
        | IntentKind::NoPreemptionOf { deployment } => Some(deployment),
        IntentKind::PodAlwaysSchedulable
        | IntentKind::NoKernelPanic
        | IntentKind::PdbNeverViolated => None,
    }
}

/// One distinct name per intent, in the intents' order: Kivi's user-facing name, with the
/// intent's deployment when another intent has the same name, and with its number in the list
/// (from 1) when that still leaves two alike.
pub fn distinct_names(intents: &[IntentKind]) -> Vec<String> {
    let shared = |names: &[String], name: &String| names.iter().filter(|n| *n == name).count() > 1;
    let plain: Vec<String> = intents.iter().map(|i| i.name().to_string()).collect();
    let with_deployment: Vec<String> = intents
        .iter()
        .zip(&plain)
        .map(|(intent, name)| match deployment(intent) {
            Some(d) if shared(&plain, name) => format!("{name} (deployment {d})"),
            _ => name.clone(),
        })
        .collect();
    with_deployment
        .iter()
        .enumerate()
        .map(|(index, name)| {
            if shared(&with_deployment, name) {
                format!("{name} #{}", index + 1)
            } else {
                name.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_unless_shared() {
        let balance = |deployment, max_skew| IntentKind::PodBalanceAcrossNode {
            deployment,
            max_skew,
        };
        assert_eq!(
            distinct_names(&[
                IntentKind::PodAlwaysSchedulable,
                IntentKind::ReplicaNumAlwaysMeetMin { deployment: 1 },
                balance(1, 2),
                balance(2, 1),
            ]),
            [
                "pod_always_schedulable",
                "replica_num_always_meet_min",
                "pod_balance_across_node (deployment 1)",
                "pod_balance_across_node (deployment 2)",
            ]
        );
        assert_eq!(
            distinct_names(&[
                IntentKind::PodAlwaysSchedulable,
                balance(1, 2),
                balance(1, 1),
                IntentKind::NoKernelPanic,
                IntentKind::NoKernelPanic,
            ]),
            [
                "pod_always_schedulable",
                "pod_balance_across_node (deployment 1) #2",
                "pod_balance_across_node (deployment 1) #3",
                "no_kernel_panic #4",
                "no_kernel_panic #5",
            ]
        );
    }
}
