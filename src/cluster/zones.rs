//! Which zone each node is in, as Kubernetes reads it from the node's labels
//! (`k8s.io/component-helpers/node/topology.GetZoneKey`: the region and zone labels, stable and
//! beta names). The node lifecycle controller rates its tainting per zone, and a rolling node
//! upgrade may take a zone at a time.

use super::spec::ClusterSpec;

/// The label keys whose values make a node's zone: `GetZoneKey`'s region and zone, stable and
/// beta names, and Kivi's `zone`.
pub const ZONE_KEYS: [&str; 5] = [
    "zone",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
];

/// Per node (index `n - 1`), its zone: zones numbered from 0 in the order of their first node.
/// Nodes without any of [`ZONE_KEYS`] share one zone, as `GetZoneKey`'s empty key does.
pub fn zone_of_nodes(spec: &ClusterSpec) -> Vec<usize> {
    let keys: Vec<usize> = (0..spec.label_keys.len())
        .filter(|&k| ZONE_KEYS.contains(&spec.label_keys[k].as_str()))
        .collect();
    let mut seen: Vec<Vec<u16>> = Vec::new();
    (1..=spec.nodes.len())
        .map(|n| {
            let labels = &spec.node(n).labels;
            let key: Vec<u16> = keys
                .iter()
                .map(|&k| labels.get(k).copied().unwrap_or(0))
                .collect();
            seen.iter().position(|k| *k == key).unwrap_or_else(|| {
                seen.push(key);
                seen.len() - 1
            })
        })
        .collect()
}
