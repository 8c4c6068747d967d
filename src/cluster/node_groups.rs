//! The cluster autoscaler's configuration (kubernetes/autoscaler `cluster-autoscaler`): its node
//! groups, each a range of node slots that the autoscaler adds and removes, and the options the
//! model reads. The controller is [`crate::controllers::cluster_autoscaler`].
//!
//! A group's nodes are slots of the spec's node table: the input's nodes of the group, then one
//! slot per node the group may still add (up to `maxSize`), copied from the group's first node
//! as the autoscaler's template node info is copied from a running node of the group
//! (`TemplateNodeInfo`, `sanitizeTemplateNode` in
//! `cluster-autoscaler/core/utils/utils.go`: the labels, taints and allocatable, a fresh
//! hostname), or, for a group without nodes, from the template node the input gives for it
//! (the cloud provider's `TemplateNodeInfo`), so a group may start at size 0. A slot's Node
//! exists only while the state says so ([`NodeStatus::exists`]).

use super::spec::ClusterSpec;
use super::state::{ClusterState, NodeState, NodeStatus};

/// How the autoscaler picks among the node groups a scale-up could grow (`--expander`,
/// `cluster-autoscaler/expander/*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expander {
    /// Any group that helps (`expander/random`): each is a successor of its own.
    #[default]
    Random,
    /// The groups that would leave the least CPU idle, then memory (`expander/waste`).
    LeastWaste,
    /// The groups that would place the most pending pods (`expander/mostpods`).
    MostPods,
    /// The groups of the highest priority the user gives them ([`NodeGroup::priority`],
    /// `expander/priority/priority.go`'s `BestOptions`): a group with none is not grown, and
    /// when no option's group has one, every option is kept (upstream falls back to a random
    /// choice, here each a successor of its own, as under [`Expander::Random`]).
    Priority,
}

impl Expander {
    /// The expanders the model has; [`Expander::name`] gives the name `--expander` and the
    /// uniform format's `expander` know it by.
    pub const ALL: [Expander; 4] = [
        Self::Random,
        Self::LeastWaste,
        Self::MostPods,
        Self::Priority,
    ];

    /// The expander named `name`, if the model has it.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Its flag name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Random => "random",
            Self::LeastWaste => "least-waste",
            Self::MostPods => "most-pods",
            Self::Priority => "priority",
        }
    }
}

/// One node group (`--nodes=MIN:MAX:NAME`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeGroup {
    /// The group's name, for traces.
    pub name: String,
    /// The fewest nodes the autoscaler leaves the group (`MinSize`).
    pub min_size: usize,
    /// The most nodes the autoscaler gives the group (`MaxSize`): the group's slots.
    pub max_size: usize,
    /// The node ids of the group's slots, ascending: the input's nodes of the group first
    /// (the first is the template new nodes are copied from), then the slots added for it
    /// (copies of the first node, or of the group's template node when it has none).
    pub slots: Vec<usize>,
    /// Under the priority expander, the highest priority whose name patterns match the
    /// group's name (the ConfigMap `cluster-autoscaler-priority-expander`'s `priorities`);
    /// `None` when none does, or under another expander.
    pub priority: Option<u32>,
}

impl NodeGroup {
    /// The group's size in `state` as the cloud provider reports it (`TargetSize`): its nodes
    /// that exist or are being provisioned.
    pub fn target_size(&self, state: &ClusterState) -> usize {
        self.slots
            .iter()
            .filter(|&&n| {
                let status = state.node(n).status;
                status.exists() || status == NodeStatus::Provisioning
            })
            .count()
    }

    /// Whether the group is backed off in `state` after a node of it failed to register
    /// ([`NodeStatus::BackedOff`]).
    pub fn backed_off(&self, state: &ClusterState) -> bool {
        self.slots
            .iter()
            .any(|&n| state.node(n).status == NodeStatus::BackedOff)
    }

    /// The group's slots without a Node in `state`, ascending: a scale-up fills them in this
    /// order.
    pub fn free_slots<'a>(&'a self, state: &'a ClusterState) -> impl Iterator<Item = usize> + 'a {
        self.slots
            .iter()
            .copied()
            .filter(|&n| state.node(n).status == NodeStatus::Absent)
    }
}

/// The cluster autoscaler's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterAutoscalerSpec {
    /// The node groups, in the order the input lists them.
    pub node_groups: Vec<NodeGroup>,
    /// Whether the autoscaler removes nodes (`--scale-down-enabled`).
    pub scale_down_enabled: bool,
    /// Whether it removes nodes that are not ready too (`--scale-down-unready-enabled`).
    pub scale_down_unready_enabled: bool,
    /// `--scale-down-utilization-threshold` in thousandths: a node whose requests (the larger
    /// of CPU and memory, over its allocatable) are below it is a candidate for removal.
    pub scale_down_threshold_permille: u32,
    /// `--expander`.
    pub expander: Expander,
    /// `--balance-similar-node-groups`: a scale-up is split between the groups similar to
    /// the one the expander picked (`controllers::cluster_autoscaler::balance`).
    pub balance_similar: bool,
    /// `--balancing-ignore-label`: label keys, besides those always ignored, that may differ
    /// between similar groups.
    pub balancing_ignore_labels: Vec<String>,
    /// `--balancing-label`: when given, groups are similar exactly when their nodes carry each
    /// of these labels with equal values, whatever else differs.
    pub balancing_labels: Vec<String>,
    /// Whether a node the autoscaler asks for may fail to register (an assumption about the
    /// cloud, not a flag): then `--max-node-provision-time` passes, the autoscaler deletes it
    /// and backs its group off.
    pub provisioning_may_fail: bool,
    /// `--max-bulk-soft-taint-count`: the `DeletionCandidateOfClusterAutoscaler` soft taints
    /// a loop adds or removes at most; 0 turns the soft taint off
    /// (`controllers::cluster_autoscaler::soft_taint`).
    pub max_bulk_soft_taint_count: usize,
}

/// `--max-bulk-soft-taint-count`'s default (`config/flags/flags.go`).
pub const DEFAULT_MAX_BULK_SOFT_TAINT_COUNT: usize = 10;

/// Node `n`'s record when its Node has just registered (or, with another `status`, when it
/// has none): empty but for its DaemonSets' pods, which the DaemonSet controller creates for
/// a new node, and its reserved load.
pub fn fresh_node(spec: &ClusterSpec, n: usize, status: NodeStatus) -> NodeState {
    let node = spec.node(n);
    let (cpu, memory, pods) = daemon_requests(spec, n);
    NodeState {
        cpu_left: (node.cpu - node.reserved_cpu - cpu) as i16,
        mem_left: (node.memory - node.reserved_memory - memory) as i16,
        status,
        num_pods: pods,
        ..NodeState::default()
    }
}

/// The CPU and memory the DaemonSet pods placed on node `n` request, and how many they are.
pub fn daemon_requests(spec: &ClusterSpec, n: usize) -> (i32, i32, u8) {
    let (mut cpu, mut memory, mut pods) = (0, 0, 0);
    for daemon in spec.daemon_pods.iter().filter(|d| d.node == n) {
        let template = super::kube::daemon_pod::template(spec, daemon.daemon_set);
        cpu += template.cpu_requested;
        memory += template.mem_requested;
        pods += 1;
    }
    (cpu, memory, pods)
}
