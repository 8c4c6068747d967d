//! Kivi's enumeration of topologies up to the confident size, smallest first.
//!
//! The walk mirrors Kivi's incremental scaling algorithm step for step:
//! a depth-first walk over node types, then deployment types, where a free type
//! tries every count from its `minSize` upwards and a proportional type takes
//! `ceil(base × proportion)` for a common base that an outer loop raises.
//! Free node types stop above the confident node count (per type), free
//! deployment types stop above `pods_per_node × total nodes` and above
//! `max_pod_per_node × total nodes`. Topologies without nodes or without
//! replicas are skipped, duplicates are dropped, and the result is sorted by
//! total nodes, then total replicas, keeping generation order among ties.

use std::collections::HashSet;
use std::fmt;

use super::template::{ScaleType, Template};
use super::topology::Topology;

/// Kivi's `--fast_find` levels, plus level 3, this crate's galloping search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FastFind {
    /// Level 0: every topology up to the confident size, one replica count at a time.
    #[default]
    Exhaustive,
    /// Level 1: free replica counts step by 2 from 7 upwards (7, 9, 11, …), and
    /// proportional-only bases step by 2; may miss the minimal topology.
    StepTwo,
    /// Level 2: when nodes and deployments both scale by proportion, each node
    /// base gets the single replica base implied by `proportionNodeSpec`
    /// instead of every replica base; free types enumerate as in level 0.
    ProportionalRamp,
    /// Level 3: the level-0 topologies, visited by a galloping search
    /// (see [`super::search::Search`]) that still finds the level-0 minimum.
    Gallop,
}

/// A fast-find level outside 0..=3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownFastFind(pub u8);

impl fmt::Display for UnknownFastFind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown fast-find level {}; choose 0, 1, 2 or 3", self.0)
    }
}

impl std::error::Error for UnknownFastFind {}

impl FastFind {
    /// The mode for Kivi's `-f` number.
    pub fn from_level(level: u8) -> Result<FastFind, UnknownFastFind> {
        match level {
            0 => Ok(FastFind::Exhaustive),
            1 => Ok(FastFind::StepTwo),
            2 => Ok(FastFind::ProportionalRamp),
            3 => Ok(FastFind::Gallop),
            other => Err(UnknownFastFind(other)),
        }
    }

    /// Kivi's `-f` number for this mode.
    pub fn level(self) -> u8 {
        match self {
            FastFind::Exhaustive => 0,
            FastFind::StepTwo => 1,
            FastFind::ProportionalRamp => 2,
            FastFind::Gallop => 3,
        }
    }
}

/// The knobs of the enumeration; the defaults are Kivi's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnumerationOptions {
    /// Kivi's confident node size: free node types stop above this many nodes each,
    /// proportional node bases stop once a topology exceeds it (default 6).
    pub confident_nodes: u64,
    /// Kivi's confident pod size factor: free deployment types stop above this
    /// many replicas per node (default 6).
    pub pods_per_node: u64,
    /// The fast-find mode.
    pub fast_find: FastFind,
}

impl Default for EnumerationOptions {
    fn default() -> Self {
        EnumerationOptions {
            confident_nodes: 6,
            pods_per_node: 6,
            fast_find: FastFind::Exhaustive,
        }
    }
}

/// All topologies to check, smallest first, in Kivi's order, without those too small to hold
/// the node an event names ([`Template::named_node`]) or a node a pod template is pinned to
/// ([`super::pinned_nodes`]).
///
/// Under [`FastFind::Gallop`] this is the level-0 list; the gallop changes only
/// the order in which [`super::search::Search`] checks it.
pub fn enumerate(template: &Template, options: &EnumerationOptions) -> Vec<Topology> {
    let mut walk = Walk {
        template,
        options,
        current: Topology::new(
            vec![0; template.node_types.len()],
            vec![0; template.deployment_types.len()],
        ),
    };
    let proportional = template.node_scale == ScaleType::Proportion
        || template.deployment_scale == ScaleType::Proportion;
    let mut found = Found::new(proportional);
    walk.run(&mut found);
    let mut topologies = found.topologies;
    if let Some(named) = template.named_node() {
        topologies.retain(|t| t.total_nodes() >= named.id);
    }
    topologies.retain(|t| template.pinned.missing_in(t).is_none());
    // Each key once, not per comparison; the keys are sums of counts, never negative, so
    // their bits order them as their values do, and the sort keeps generation order among
    // equal keys.
    topologies.sort_by_cached_key(|t| t.kivi_sort_key().to_bits());
    topologies
}

/// Why [`enumerate`] finds no topology for `template` under `options`, and what would give it
/// some: for a sweep that would otherwise answer "no failure" having checked nothing.
pub fn why_no_topology(template: &Template, options: &EnumerationOptions) -> String {
    let confident = options.confident_nodes;
    if let Some((i, t)) =
        (template.node_types.iter().enumerate()).find(|(_, t)| t.min_size > confident)
    {
        return format!(
            "userDefined.nodesTypes[{i}].minSize {} is above the confident size of {confident} \
             nodes per type, so no topology up to it has the type; give --confident-nodes {} \
             or more, or lower minSize",
            t.min_size, t.min_size
        );
    }
    let nodes: u64 = (template.node_types.iter())
        .map(|t| t.max_size.min(confident))
        .sum();
    if let Some(named) = template.named_node().filter(|named| named.id > nodes) {
        return format!(
            "{named}, and no topology up to the confident size has more than {nodes}; name a \
             node from 1 to {nodes}, or raise the node types' maxSize or --confident-nodes"
        );
    }
    if let Some(pin) = (template.pinned.iter()).find(|pin| {
        let node_type = &template.node_types[pin.node_type()];
        pin.node() > node_type.max_size.min(confident)
    }) {
        return format!(
            "{}, and no topology up to the confident size has more than {} of them; pin a node \
             within them, or raise the maxSize of {} or --confident-nodes",
            pin.describe(&template.origins),
            template.node_types[pin.node_type()].max_size.min(confident),
            pin.node_type_name(&template.origins),
        );
    }
    let per_node = template
        .max_pods_per_node
        .map_or(options.pods_per_node, |cap| cap.min(options.pods_per_node));
    let room = per_node.saturating_mul(nodes);
    if let Some((i, t)) =
        (template.deployment_types.iter().enumerate()).find(|(_, t)| t.min_size > room)
    {
        return format!(
            "userDefined.dTypes[{i}].minSize {} is above the {room} replicas that {nodes} \
             node(s) hold at {per_node} pods each (--confident-ratio {}, max_pod_per_node {}), \
             so no topology up to the confident size has it; raise --confident-nodes or \
             --confident-ratio, or lower minSize",
            t.min_size,
            options.pods_per_node,
            template
                .max_pods_per_node
                .map_or("not set".to_string(), |cap| cap.to_string()),
        );
    }
    format!(
        "no topology of the template is within the confident size (--confident-nodes \
         {confident}, --confident-ratio {}) and fast-find {}; widen the types' minSize..maxSize \
         or the confident size",
        options.pods_per_node,
        options.fast_find.level()
    )
}

/// Topologies collected so far, without duplicates, in generation order. Only a walk with
/// proportional types can reach one topology twice (two bases whose counts round alike): a
/// walk over free counts alone chooses each type's count once per branch, so only the former
/// keeps the set of those seen (for the 3.6 million topologies of `shop-5000-nodes` the set
/// took seconds).
struct Found {
    topologies: Vec<Topology>,
    seen: Option<HashSet<Topology>>,
}

impl Found {
    /// An empty collection that drops duplicates when `deduplicate`.
    fn new(deduplicate: bool) -> Self {
        Self {
            topologies: Vec::new(),
            seen: deduplicate.then(HashSet::new),
        }
    }

    fn add(&mut self, topology: &Topology) {
        if let Some(seen) = &mut self.seen {
            if !seen.insert(topology.clone()) {
                return;
            }
        }
        self.topologies.push(topology.clone());
    }
}

/// Running totals of the counts chosen on the current walk.
///
/// Kivi adds a proportional count without taking it back when the walk
/// returns; the totals reproduce that, since the stopping rules read them.
#[derive(Default)]
struct Totals {
    nodes: u64,
    replicas: u64,
}

/// The common bases that proportional types multiply by their weights.
#[derive(Clone, Copy)]
struct Base {
    nodes: f64,
    replicas: f64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Nodes,
    Deployments,
}

struct Walk<'a> {
    template: &'a Template,
    options: &'a EnumerationOptions,
    current: Topology,
}

impl Walk<'_> {
    fn run(&mut self, found: &mut Found) {
        let max_node_base = self.max_base(Stage::Nodes);
        let max_replica_base = self.max_base(Stage::Deployments);
        let step = if self.options.fast_find == FastFind::StepTwo {
            2
        } else {
            1
        };
        if max_node_base > 0 && max_replica_base > 0 {
            self.both_proportional(found, max_node_base, max_replica_base);
        } else if max_node_base > 0 {
            for node_base in (1..=max_node_base).step_by(step) {
                let base = Base {
                    nodes: node_base as f64,
                    replicas: 0.0,
                };
                self.visit(Stage::Nodes, 0, &mut Totals::default(), base, found);
            }
        } else if max_replica_base > 0 {
            for replica_base in (1..=max_replica_base).step_by(step) {
                let base = Base {
                    nodes: 0.0,
                    replicas: replica_base as f64,
                };
                self.visit(Stage::Nodes, 0, &mut Totals::default(), base, found);
            }
        } else {
            let base = Base {
                nodes: 0.0,
                replicas: 0.0,
            };
            self.visit(Stage::Nodes, 0, &mut Totals::default(), base, found);
        }
    }

    fn both_proportional(&mut self, found: &mut Found, max_node_base: u64, max_replica_base: u64) {
        for node_base in 1..=max_node_base {
            let mut past_confident = false;
            if self.options.fast_find == FastFind::ProportionalRamp {
                let mut totals = Totals::default();
                let probe = Base {
                    nodes: node_base as f64,
                    replicas: 1.0,
                };
                self.visit(Stage::Nodes, 0, &mut totals, probe, &mut Found::new(false));
                let replica_base = self.replica_base_for_nodes(totals.nodes);
                let mut totals = Totals::default();
                let base = Base {
                    nodes: node_base as f64,
                    replicas: replica_base,
                };
                self.visit(Stage::Nodes, 0, &mut totals, base, found);
                past_confident = totals.nodes > self.options.confident_nodes;
            } else {
                let mut replica_base = 1;
                while replica_base <= max_replica_base {
                    let mut totals = Totals::default();
                    let base = Base {
                        nodes: node_base as f64,
                        replicas: replica_base as f64,
                    };
                    self.visit(Stage::Nodes, 0, &mut totals, base, found);
                    if totals.nodes > self.options.confident_nodes {
                        past_confident = true;
                    }
                    replica_base = self.next_count(replica_base);
                    if self.exceeds_replicas_per_node(totals.nodes, replica_base) {
                        break;
                    }
                }
            }
            if past_confident {
                break;
            }
        }
    }

    /// Largest base any proportional type of this stage needs to reach its
    /// maximum; 0 when the stage scales freely.
    fn max_base(&self, stage: Stage) -> u64 {
        let ranges: Vec<(u64, f64)> = match stage {
            Stage::Nodes if self.template.node_scale == ScaleType::Proportion => self
                .template
                .node_types
                .iter()
                .map(|t| (t.max_size, t.proportion))
                .collect(),
            Stage::Deployments if self.template.deployment_scale == ScaleType::Proportion => self
                .template
                .deployment_types
                .iter()
                .map(|t| (t.max_size, t.proportion))
                .collect(),
            _ => Vec::new(),
        };
        ranges
            .into_iter()
            .map(|(max_size, proportion)| float_to_count((max_size as f64 / proportion).ceil()))
            .max()
            .unwrap_or(0)
    }

    /// The replica base at which some deployment type reaches its
    /// `proportionNodeSpec` replicas per node for `nodes` nodes.
    fn replica_base_for_nodes(&self, nodes: u64) -> f64 {
        self.template
            .deployment_types
            .iter()
            .map(|t| nodes as f64 * t.replicas_per_node.unwrap_or(0.0) / t.proportion)
            .fold(0.0, f64::max)
    }

    fn exceeds_replicas_per_node(&self, nodes: u64, replica_base: u64) -> bool {
        self.template.deployment_types.iter().any(|t| {
            let limit = (nodes as f64 * t.replicas_per_node.unwrap_or(0.0)).ceil();
            replica_base as f64 * t.proportion > limit
        })
    }

    fn next_count(&self, count: u64) -> u64 {
        if self.options.fast_find == FastFind::StepTwo && count >= 7 {
            count + 2
        } else {
            count + 1
        }
    }

    fn visit(
        &mut self,
        stage: Stage,
        index: usize,
        totals: &mut Totals,
        base: Base,
        found: &mut Found,
    ) {
        let type_count = match stage {
            Stage::Nodes => self.template.node_types.len(),
            Stage::Deployments => self.template.deployment_types.len(),
        };
        if index == type_count {
            match stage {
                Stage::Nodes if totals.nodes > 0 => {
                    self.visit(Stage::Deployments, 0, totals, base, found)
                }
                Stage::Deployments if totals.nodes > 0 && totals.replicas > 0 => {
                    found.add(&self.current)
                }
                _ => {}
            }
            return;
        }
        let (min_size, max_size, proportion, scale) = match stage {
            Stage::Nodes => {
                let t = &self.template.node_types[index];
                (
                    t.min_size,
                    t.max_size,
                    t.proportion,
                    self.template.node_scale,
                )
            }
            Stage::Deployments => {
                let t = &self.template.deployment_types[index];
                (
                    t.min_size,
                    t.max_size,
                    t.proportion,
                    self.template.deployment_scale,
                )
            }
        };
        match scale {
            ScaleType::Proportion => {
                let stage_base = match stage {
                    Stage::Nodes => base.nodes,
                    Stage::Deployments => base.replicas,
                };
                let mut count = float_to_count((stage_base * proportion).ceil());
                if count < min_size {
                    count = min_size;
                }
                if count > max_size {
                    count = max_size;
                }
                self.choose(stage, index, count, totals);
                self.visit(stage, index + 1, totals, base, found);
            }
            ScaleType::Free => {
                let mut count = min_size;
                while count <= max_size {
                    if self.beyond_confident(stage, count, totals.nodes) {
                        break;
                    }
                    self.choose(stage, index, count, totals);
                    self.visit(stage, index + 1, totals, base, found);
                    match stage {
                        Stage::Nodes => totals.nodes -= count,
                        Stage::Deployments => totals.replicas -= count,
                    }
                    count = self.next_count(count);
                }
            }
        }
    }

    fn beyond_confident(&self, stage: Stage, count: u64, total_nodes: u64) -> bool {
        match stage {
            Stage::Nodes => count > self.options.confident_nodes,
            Stage::Deployments => {
                let by_ratio = self.options.pods_per_node.saturating_mul(total_nodes);
                let by_cap = self
                    .template
                    .max_pods_per_node
                    .map_or(u64::MAX, |cap| cap.saturating_mul(total_nodes));
                count > by_ratio || count > by_cap
            }
        }
    }

    fn choose(&mut self, stage: Stage, index: usize, count: u64, totals: &mut Totals) {
        match stage {
            Stage::Nodes => {
                self.current.nodes_mut()[index] = count;
                totals.nodes += count;
            }
            Stage::Deployments => {
                self.current.replicas_mut()[index] = count;
                totals.replicas += count;
            }
        }
    }
}

/// A non-negative whole float as a count (saturating; NaN and negatives become 0).
fn float_to_count(value: f64) -> u64 {
    value as u64
}
