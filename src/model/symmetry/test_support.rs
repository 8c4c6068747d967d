//! Models and whole-space searches the symmetry tests share: the node-failure benchmark model at
//! a topology, the least renaming of a state by trying every permutation, and the canonical
//! forms a search reaches.

use super::scratch::Scratch;
use super::{Symmetry, SymmetryStatus};
use crate::cluster::{ClusterState, Renaming, Semantics, TieBreak};
use crate::engine::interrupt::Interrupt;
use crate::engine::{MemoryBudget, Model, StepBuffers, WorkerBounds};
use crate::model::{ClusterModel, ModelOptions};
use crate::scaler::{sweep::topology_model, template::Template, topology::Topology};
use std::collections::{BTreeMap, HashSet, VecDeque};

/// The node-failure benchmark model at `topology`, under `any`, with or without symmetry.
pub(super) fn node_failures(topology: &str, symmetry: bool) -> ClusterModel {
    node_failures_with(topology, symmetry, 1)
}

/// [`node_failures`] with `deployments` alike deployment types.
pub(super) fn node_failures_with(
    topology: &str,
    symmetry: bool,
    deployments: usize,
) -> ClusterModel {
    failure_model(
        "c3-four-node-failures",
        Semantics::Kivi,
        topology,
        symmetry,
        deployments,
    )
}

/// Benchmark model `bench-configs/models/{file}.json` at `topology` under `semantics` and
/// `any`, with `deployments` alike deployment types, with or without symmetry.
pub(super) fn failure_model(
    file: &str,
    semantics: Semantics,
    topology: &str,
    symmetry: bool,
    deployments: usize,
) -> ClusterModel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("bench-configs/models/{file}.json"));
    let text = std::fs::read_to_string(path).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let types = json["userDefined"]["dTypes"].as_array_mut().unwrap();
    for name in 1..deployments {
        let mut another = types[0].clone();
        another["template"]["name"] = serde_json::json!(10 + name);
        types.push(another);
    }
    let template = Template::from_json(&json).unwrap();
    let topology: Topology = topology.parse().unwrap();
    let template = template.admitting(&topology).unwrap();
    let options = ModelOptions {
        tie_break: TieBreak::Any,
        semantics,
        symmetry,
        ..ModelOptions::default()
    };
    topology_model(&template, &topology, options).unwrap()
}

/// Every order of `items`.
fn permutations(items: &[u32]) -> Vec<Vec<u32>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    (0..items.len())
        .flat_map(|i| {
            let mut rest = items.to_vec();
            let first = rest.remove(i);
            permutations(&rest).into_iter().map(move |mut p| {
                p.insert(0, first);
                p
            })
        })
        .collect()
}

/// The inverse of an order (index = old id; index 0 unused).
fn inverse(order: &[u32]) -> Vec<u32> {
    let mut new = vec![0; order.len() + 1];
    for (k, &old) in order.iter().enumerate() {
        new[old as usize] = k as u32 + 1;
    }
    new
}

/// The least encoding of `state` over every permutation of nodes within their classes
/// (pods sorted exactly under each, where pods are permuted): the canonical form by
/// exhaustive search.
pub(super) fn least_renaming(symmetry: &Symmetry, state: &ClusterState) -> Vec<u8> {
    let mut scratch = Scratch::default();
    symmetry.place_pods(state, &mut scratch, false);
    let mut blocks: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, &class) in symmetry.node_classes.classes().iter().enumerate() {
        blocks.entry(class).or_default().push(i as u32 + 1);
    }
    let mut node_orders: Vec<Vec<u32>> = vec![vec![]];
    for block in blocks.values() {
        let orders = permutations(block);
        node_orders = node_orders
            .iter()
            .flat_map(|o| orders.iter().map(move |p| [o.as_slice(), p].concat()))
            .collect();
    }
    node_orders
        .iter()
        .map(|node_order| {
            let node_new = inverse(node_order);
            let mut pods: Vec<(u32, u64, u32)> = (1..=state.pods().len())
                .map(|p| {
                    let (node, hash) = symmetry.pod_element(state, p, scratch.pod_places[p]);
                    (node_new[node], hash, p as u32)
                })
                .collect();
            if symmetry.pod_slot_classes.is_some() {
                pods.sort();
            }
            let pod_order: Vec<u32> = pods.iter().map(|&(_, _, p)| p).collect();
            let renaming = Renaming {
                node_order,
                node_new: &node_new,
                pod_order: &pod_order,
                pod_new: &inverse(&pod_order),
                node_events: symmetry.node_classes.failure_events(),
                queues_as_sets: symmetry.queues_as_sets,
            };
            let mut out = Vec::new();
            symmetry.encode_renamed(state, &renaming, &mut out);
            out
        })
        .min()
        .unwrap()
}

/// What the listings of one scheduler or deployment controller step may hold while
/// [`forms_reached`] expands a state: an unreduced model's step over distinct pods can have
/// millions of outcomes; one with more is cut and noted in [`ClusterModel::left_out`].
const LISTING_BUDGET: u64 = 64 << 20;

/// Which reached states [`forms_reached`] expands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expand {
    /// The first state met of each canonical form.
    FirstOfEachForm,
    /// Every distinct state.
    EveryState,
}

/// The canonical forms of the states reached breadth-first from `model`'s initial state,
/// expanding the states `expand` says.
fn forms_reached(model: &ClusterModel, symmetry: &Symmetry, expand: Expand) -> HashSet<Vec<u8>> {
    let mut sym = super::Scratch::default();
    let mut forms = HashSet::new();
    let mut states: HashSet<Vec<u8>> = HashSet::new();
    let mut queue: VecDeque<ClusterState> = model.init_states().into();
    let interrupt = Interrupt::with_memory(None, None, MemoryBudget::new(LISTING_BUDGET));
    let mut worker = model.worker(WorkerBounds::new(interrupt));
    let mut buffers = StepBuffers::new();
    while let Some(state) = queue.pop_front() {
        let mut form = Vec::new();
        symmetry.encode(&state, &mut sym, &mut form);
        let new = match expand {
            Expand::FirstOfEachForm => forms.insert(form),
            Expand::EveryState => {
                forms.insert(form);
                let mut encoded = Vec::new();
                state.encode(&mut encoded);
                states.insert(encoded)
            }
        };
        if new {
            Model::successors(model, &mut worker, &state, &mut buffers, |_, next| {
                queue.push_back(next)
            });
        }
    }
    forms
}

/// Asserts that the search of `reduced` reaches the forms of exactly the states the
/// unreduced model (`full`) reaches, each searched expanding the first state of each form it
/// meets; the number of forms, or `None` where `reduced` has no symmetry to check or the
/// unreduced model has a step with more outcomes than [`LISTING_BUDGET`] holds (a scale-down
/// of distinct pods, each order of deletion an outcome).
pub(super) fn reduction_reaches_every_form(
    reduced: &ClusterModel,
    full: impl FnOnce() -> ClusterModel,
    at: &str,
) -> Option<usize> {
    reduction_compared(reduced, full, at, Expand::FirstOfEachForm)
}

/// The same, the unreduced model's every state expanded: expanding one state per form in
/// both searches cannot tell a step that treats two renamings of a state differently (a
/// choice made in id order) from a sound one, since each search may meet the same renaming
/// first; this can, at the cost of the unreduced state count.
pub(super) fn reduction_reaches_the_form_of_every_state(
    reduced: &ClusterModel,
    full: impl FnOnce() -> ClusterModel,
    at: &str,
) -> Option<usize> {
    reduction_compared(reduced, full, at, Expand::EveryState)
}

/// [`reduction_reaches_every_form`], the unreduced search expanding as `expand` says.
fn reduction_compared(
    reduced: &ClusterModel,
    full: impl FnOnce() -> ClusterModel,
    at: &str,
    expand: Expand,
) -> Option<usize> {
    let SymmetryStatus::On(symmetry) = reduced.symmetry() else {
        return None;
    };
    let full = full();
    let from_full = forms_reached(&full, symmetry, expand);
    let from_reduced = forms_reached(reduced, symmetry, Expand::FirstOfEachForm);
    assert_eq!(reduced.left_out(), None, "{at}: every reduced step listed");
    if full.left_out().is_some() {
        return None;
    }
    assert_eq!(from_full.len(), from_reduced.len(), "{at}");
    assert!(from_full == from_reduced, "{at}");
    Some(from_full.len())
}
