//! The events and user commands an input lists (its `events` and `userCommand`), as the
//! spec keeps them.

/// What an event or user command does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// `eventCpuChange`: one pod of the deployment gains 1–6 CPU.
    CpuChange {
        /// Deployment id whose current replica set is picked from.
        deployment: u8,
    },
    /// `kernelPanic`: every node may panic when its CPU is nearly exhausted, and recover.
    KernelPanic,
    /// `createTargetDeployment`: activates a deployment defined in the setup.
    CreateTargetDeployment {
        /// Deployment id.
        deployment: u8,
    },
    /// `createDeployment`: creates a deployment from a template (fails if it exists).
    CreateDeployment {
        /// Deployment template id.
        template: u8,
    },
    /// `applyDeployment`: `kubectl apply` of a deployment template.
    ApplyDeployment {
        /// Deployment template id.
        template: u8,
    },
    /// `scaleDeployment`: changes one deployment's replicas by -3..=3.
    ScaleDeployment {
        /// Largest deployment id that may be picked.
        max_deployment: u8,
    },
    /// `maintenance`: nodes are drained one after another in id order, at most `parallel` at a
    /// time, each put back once the cluster settles or its wait time has passed.
    Maintenance {
        /// Kivi's `p`: how many nodes may be down for maintenance at once (at least 1).
        parallel: u8,
    },
    /// `drain` (`kubectl drain`, `--semantics kubernetes` only): the node is cordoned, then its
    /// pods are evicted through the Eviction API one per step, a refused eviction retried in a
    /// later state (see `crate::events::drain`).
    Drain {
        /// Node id.
        node: u8,
        /// kubectl's options.
        options: DrainOptions,
    },
    /// `nodeFailure`: the node turns not ready, is queued for the node controller, and turns
    /// ready again, in three separate steps.
    NodeFailure {
        /// Node id.
        node: u8,
    },
    /// `upgrade` (a rolling node upgrade, `--semantics kubernetes` only): batch after batch of
    /// nodes in order, each cordoned, drained through the Eviction API as `drain` drains,
    /// restarted with the new version and put back (see `crate::events::node_upgrade`).
    Upgrade {
        /// Which nodes go together.
        by: UpgradeBatch,
    },
}

/// The options of a `drain` event: `kubectl drain`'s flags that change what the model does.
/// `--ignore-daemonsets` is always on (the model's DaemonSet pods are never listed), and there
/// is no `--timeout`: the drain retries for ever, kubectl's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrainOptions {
    /// `--force`: a pod no controller owns is deleted too (`unreplicatedFilter` lets it
    /// through with a warning) instead of stopping the drain.
    pub force: bool,
    /// `--disable-eviction`: pods are deleted instead of evicted, bypassing the
    /// PodDisruptionBudgets the Eviction API enforces.
    pub disable_eviction: bool,
}

/// The nodes a rolling node upgrade takes at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpgradeBatch {
    /// One node at a time, in id order.
    Node,
    /// Every node of one zone at a time (`crate::cluster::zones`), zones in the order of their
    /// first node.
    Zone,
}

impl UpgradeBatch {
    /// Per node (index `n - 1`), the batch (from 0) an upgrade taking nodes this way puts it
    /// in: its place in id order, or its zone.
    pub fn of_nodes(self, spec: &super::ClusterSpec) -> Vec<usize> {
        match self {
            Self::Node => (0..spec.nodes.len()).collect(),
            Self::Zone => super::zones::zone_of_nodes(spec),
        }
    }
}

/// One entry of the input's `events` or `userCommand` lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSpec {
    /// What it does.
    pub kind: EventKind,
    /// Whether it starts only once the cluster has first become quiet (`after_stable`).
    pub after_stable: bool,
    /// Whether it runs before any controller starts (Kivi's `first` commands, which its `init`
    /// runs and waits for).
    pub first: bool,
}
