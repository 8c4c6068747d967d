//! Intents asserted where they happen: the scheduler's `pod_always_schedulable` and
//! `no_preemption_of` and the kernel panic event's `no_kernel_panic` are not monitors that look at states (see
//! [`crate::intents`]) but asserts inside the steps, as in Kivi. The steps record them here.

use super::spec::{ClusterSpec, IntentKind};
use super::state::ClusterState;
use super::timing::LOOP_TIMES;
use super::trace::Recorder;

impl ClusterState {
    /// Records that intent number `intent` (an index into the spec's intents) is violated.
    pub fn violate(&mut self, intent: usize) {
        self.monitors_mut().violated |= 1 << intent;
    }

    /// Records that the scheduler found no feasible node, when `pod_always_schedulable` is
    /// checked (it always is).
    pub fn violate_pod_always_schedulable(&mut self, spec: &ClusterSpec) {
        if let Some(i) = spec
            .intents
            .iter()
            .position(|i| *i == IntentKind::PodAlwaysSchedulable)
        {
            self.violate(i);
        }
    }

    /// Records that kube-scheduler found no node for a pod: `pod_always_schedulable` is
    /// violated, unless a cluster autoscaler is configured, for which an unschedulable pod is
    /// what a scale-up is for (it reports the pods no node group can take:
    /// `crate::controllers::cluster_autoscaler`).
    pub fn found_no_node(&mut self, spec: &ClusterSpec) {
        if spec.cluster_autoscaler.is_none() {
            self.violate_pod_always_schedulable(spec);
        }
    }

    /// Records that kube-scheduler preempted a pod of deployment `deployment`, when a
    /// `no_preemption_of` intent names it.
    pub fn violate_no_preemption_of(&mut self, spec: &ClusterSpec, deployment: u8) {
        for (i, intent) in spec.intents.iter().enumerate() {
            if *intent == (IntentKind::NoPreemptionOf { deployment }) {
                self.violate(i);
            }
        }
    }

    /// Records that node `n` panicked `LOOP_TIMES` times, when `no_kernel_panic` is checked.
    pub fn violate_no_kernel_panic(&mut self, spec: &ClusterSpec, n: usize, rec: &mut Recorder) {
        if let Some(i) = spec
            .intents
            .iter()
            .position(|i| *i == IntentKind::NoKernelPanic)
        {
            self.violate(i);
            rec.log(Some("kernel_panic"), || {
                format!("Kernel panic happened multiple times at node {n}.")
            });
        }
        debug_assert!(self.node(n).panics >= LOOP_TIMES);
    }
}
