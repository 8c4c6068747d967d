//! ImageLocality (`pkg/scheduler/framework/plugins/imagelocality/image_locality.go`): nodes
//! that already have the pod's images score higher. Each image the node has counts its size
//! times the share of all nodes that have it; the sum is clamped to 23 MiB … 1000 MiB per
//! container and scaled to 0–100. The pod's image names get `:latest` when they carry no tag,
//! the node's names are taken as reported.

use super::node_info::NodeInfo;
use super::normalize::MAX_NODE_SCORE;
use crate::cluster::kube::Pod;

const MB: i64 = 1024 * 1024;
/// Below this sum a node scores 0 (`minThreshold`).
const MIN_THRESHOLD: i64 = 23 * MB;
/// The sum each container can add at most (`maxContainerThreshold`).
const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

/// `normalizedImageName`: `:latest` appended when the name has no tag after its last `/`.
pub fn normalized_image_name(name: &str) -> String {
    let colon = name.rfind(':').map_or(-1, |i| i as i64);
    let slash = name.rfind('/').map_or(-1, |i| i as i64);
    if colon <= slash {
        format!("{name}:latest")
    } else {
        name.to_string()
    }
}

/// `ImageLocality.Score`; `total_nodes` is the number of nodes in the cluster.
pub fn score(pod: &Pod, node: &NodeInfo, total_nodes: usize) -> i64 {
    let mut sum = 0;
    // A node reporting no image adds nothing: no name to normalise (a model's nodes).
    let containers = pod.init_containers.iter().chain(&pod.containers);
    for container in containers.filter(|_| !node.image_states.is_empty()) {
        if let Some(state) = node
            .image_states
            .get(normalized_image_name(&container.image).as_str())
        {
            let spread = state.num_nodes as f64 / total_nodes as f64;
            sum += (state.size as f64 * spread) as i64;
        }
    }
    let containers = (pod.init_containers.len() + pod.containers.len()) as i64;
    calculate_priority(sum, containers)
}

/// `calculatePriority`.
fn calculate_priority(sum: i64, containers: i64) -> i64 {
    let max_threshold = MAX_CONTAINER_THRESHOLD * containers;
    let clamped = if sum < MIN_THRESHOLD {
        MIN_THRESHOLD
    } else if sum > max_threshold {
        max_threshold
    } else {
        sum
    };
    MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untagged_names_get_latest_and_registry_ports_are_not_tags() {
        assert_eq!(normalized_image_name("busybox"), "busybox:latest");
        assert_eq!(normalized_image_name("nginx:1.27"), "nginx:1.27");
        assert_eq!(
            normalized_image_name("registry:5000/shop/web"),
            "registry:5000/shop/web:latest"
        );
    }

    #[test]
    fn small_sums_score_zero_and_large_ones_are_capped() {
        assert_eq!(calculate_priority(10 * MB, 1), 0);
        assert_eq!(calculate_priority(5000 * MB, 1), 100);
        assert_eq!(calculate_priority(500 * MB, 1), 48, "100*477/977");
    }
}
