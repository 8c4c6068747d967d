//! The descheduler's step in the model under `--semantics kubernetes`: one cycle of
//! descheduler v0.33 ([`super::Descheduler::run`]) on the Kubernetes objects the state stands
//! for ([`crate::cluster::kube::of_model::snapshot`]), its evictions written back as the
//! model's.
//!
//! When the step runs is Kivi's rule ([`crate::controllers::descheduler::enabled`]): after
//! the descheduler's period, or while the other controllers are idle, once a pod of some
//! deployment has started or gone since its last run; the real descheduler runs a cycle every
//! `deschedulingInterval` whatever happened, and a cycle on a cluster that has not changed
//! evicts what the last one left, so only the cycles after a change are steps. One step is
//! one cycle: it empties the descheduler's queue (Kivi runs its plugins once per queued
//! deployment). Which pods a cycle evicts is the real descheduler's: the DefaultEvictor's
//! filters, RemoveDuplicates by owner and images evicting the last duplicates, the topology
//! plugin balancing by average with its node-fit check, the eviction limits counted per
//! cycle (Kivi counts them over the descheduler's life), each eviction checked against the
//! PodDisruptionBudgets as the eviction subresource checks it, on the status the disruption
//! controller would have written for the state ([`budgets`]). Where the real one's choice rests on
//! Go's map order or an unstable sort, the model's [`Ties`] decide: the first option under
//! `--tie-break lowest` (the cycle in the order of node and pod ids), every option under
//! `any` (the model lists the distinct outcomes). An evicted pod is terminating and queued
//! for the kubelet, as Kivi's descheduler leaves it. The model writes a cycle's evictions in
//! the order of pod ids, whatever order the plugins tried them in: that order shows only in
//! the kubelet's queue, where Kubernetes has no order (each node's kubelet stops its own pods,
//! and the ReplicaSet controller's workers replace them concurrently), so a set of evictions
//! is one outcome, not one per order. A crash after `k` writes (`--perturb restart`) leaves
//! the first `k` of them.
//!
//! The policy is the input's own `DeschedulerPolicy` where it gives one
//! ([`crate::cluster::DeschedulerSpec::policy`]: every plugin and argument `kivi deschedule`
//! reads), else the one Kivi's configuration stands for ([`policy`]).

use super::choices::Chooser;
use super::Descheduler;
use crate::cluster::kube::descheduler_policy::{
    DeschedulerPolicy, EvictorArgs, PluginArgs, Profile, RemoveDuplicatesArgs, TopologySpreadArgs,
};
use crate::cluster::kube::of_model::{budgets, pod_id, snapshot};
use crate::cluster::kube::{Snapshot, WhenUnsatisfiable};
use crate::cluster::{
    BalancePlugin, ClusterSpec, ClusterState, ConstraintsTopologySpread, DeschedulerSpec, Queue,
    Recorder, WriteBudget,
};
use crate::controllers::descheduler::{enabled, evictor::UNLIMITED};
use crate::controllers::ties::Ties;

/// `SystemCriticalPriority` (`pkg/apis/scheduling/types.go`): the priority a model pod marked
/// system-critical stands for.
const SYSTEM_CRITICAL_PRIORITY: i32 = 2_000_000_000;

/// One descheduler step under `--semantics kubernetes` (see the module documentation), with
/// the choices `ties` makes; nothing is written when the picker ends the step or the process
/// has crashed.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    rec: &mut Recorder,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    let Some(config) = &spec.descheduler else {
        return;
    };
    if writes.crashed() || !enabled(spec, state) {
        return;
    }
    state.clear_queue(Queue::Descheduler);
    let derived;
    let policy = match &config.policy {
        Some(given) => given,
        None => {
            derived = policy(config);
            &derived
        }
    };
    let snapshot = descheduled_snapshot(spec, state);
    // Neither policy names a PriorityClass (the model keeps none, and the input's reader
    // refuses a given policy that names one), so every profile builds.
    let Ok(descheduler) = Descheduler::new(&snapshot, policy).map(Descheduler::without_rejections)
    else {
        return;
    };
    let mut chooser = TiesChooser { ties };
    let Ok(cycle) = descheduler.run(&mut chooser) else {
        return;
    };
    if chooser.ties.stopped() {
        return;
    }
    let mut evicted: Vec<(usize, &'static str)> = cycle
        .events
        .iter()
        .filter(|e| e.refusal.is_none())
        .filter_map(|e| Some((pod_id(&snapshot.pods[e.pod].name)?, e.plugin)))
        .collect();
    evicted.sort_unstable();
    for (pod, plugin) in evicted {
        if writes.crashed() {
            break;
        }
        let (loc, deployment) = (state.pod(pod).loc, state.pod(pod).deployment);
        rec.log(Some("Descheduler"), || {
            format!("Pod {pod} on node {loc} pending for deletion! ({plugin})")
        });
        state.mark_for_deletion(deployment as usize, pod);
        writes.write();
    }
}

/// The snapshot the descheduler reads: kube-scheduler's ([`snapshot`]), each pod with a UID
/// (the API server gives every pod one; `PodEvictor` refuses a pod without), the model's
/// system-critical pods at `SystemCriticalPriority`, which the DefaultEvictor protects unless
/// `evictSystemCriticalPods`, and the PodDisruptionBudgets with their status ([`budgets`]).
fn descheduled_snapshot(spec: &ClusterSpec, state: &ClusterState) -> Snapshot {
    let mut snapshot = snapshot(spec, state);
    snapshot.pod_disruption_budgets = budgets(spec, state);
    for pod in &mut snapshot.pods {
        pod.uid = pod.name.clone();
        if pod_id(&pod.name).is_some_and(|p| spec.pods[p - 1].critical) {
            pod.priority = SYSTEM_CRITICAL_PRIORITY;
        }
    }
    snapshot
}

/// The model's descheduler configuration as a `DeschedulerPolicy` after the descheduler's
/// defaulting (`pkg/api/v1alpha2/defaults.go` and the plugins' `defaults.go`): one profile per
/// profile with its balance plugins in order, the DefaultEvictor's defaults but
/// `evictSystemCriticalPods`, the topology plugin's `constraints` from
/// `constraintsTopologySpread` and `topologyBalanceNodeFit` true, and the per-node and
/// per-namespace limits where they are set.
pub fn policy(config: &DeschedulerSpec) -> DeschedulerPolicy {
    let limit = |value: u32| (value < UNLIMITED).then_some(value);
    DeschedulerPolicy {
        profiles: config
            .profiles
            .iter()
            .enumerate()
            .map(|(index, profile)| Profile {
                name: format!("profile-{}", index + 1),
                evictor: EvictorArgs {
                    evict_system_critical_pods: profile.evict_system_critical_pods,
                    ..EvictorArgs::default()
                },
                deschedule: Vec::new(),
                balance: profile
                    .plugins
                    .iter()
                    .map(|plugin| match plugin {
                        BalancePlugin::RemoveDuplicates => {
                            PluginArgs::RemoveDuplicates(RemoveDuplicatesArgs {
                                exclude_owner_kinds: Vec::new(),
                                namespaces: Default::default(),
                            })
                        }
                        BalancePlugin::RemovePodsViolatingTopologySpreadConstraint => {
                            PluginArgs::TopologySpread(TopologySpreadArgs {
                                constraints: constraints(profile.constraints_topology_spread),
                                topology_balance_node_fit: true,
                                namespaces: Default::default(),
                                label_selector: None,
                            })
                        }
                    })
                    .collect(),
            })
            .collect(),
        max_pods_per_node: limit(config.max_pods_to_evict_per_node),
        max_pods_per_namespace: limit(config.max_pods_to_evict_per_namespace),
        max_pods_total: None,
    }
}

/// The topology plugin's `constraints` for Kivi's `constraintsTopologySpread`.
fn constraints(which: ConstraintsTopologySpread) -> Vec<WhenUnsatisfiable> {
    match which {
        ConstraintsTopologySpread::DoNotSchedule => vec![WhenUnsatisfiable::DoNotSchedule],
        ConstraintsTopologySpread::ScheduleAnyway => vec![WhenUnsatisfiable::ScheduleAnyway],
        ConstraintsTopologySpread::Both => vec![
            WhenUnsatisfiable::DoNotSchedule,
            WhenUnsatisfiable::ScheduleAnyway,
        ],
    }
}

/// The cycle's choices made by the model's [`Ties`]: option `i` of `n` is the `i`-th of `n`
/// candidates (only their number matters to a picker); once the picker has ended the step,
/// the first option, and the step writes nothing.
struct TiesChooser<'t, 'a> {
    ties: &'t mut Ties<'a>,
}

impl Chooser for TiesChooser<'_, '_> {
    fn choose(&mut self, options: usize) -> usize {
        if options <= 1 || self.ties.stopped() {
            return 0;
        }
        let candidates: Vec<usize> = (0..options).collect();
        self.ties.pick(&candidates).unwrap_or(0)
    }
}
