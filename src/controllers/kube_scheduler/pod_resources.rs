//! What a pod requests, summed as kube-scheduler sums it: containers added, init containers
//! taken at their peak (sidecars running beside them), overhead added
//! (`PodRequests` and `AggregateContainerRequests` in
//! `k8s.io/component-helpers/resource/helpers.go`), then converted to integers
//! (`Resource.Add` in `pkg/scheduler/framework/types.go`).

use crate::cluster::kube::amount::{add_into, max_into};
use crate::cluster::kube::{Amount, Pod, ResourceList};
use std::collections::BTreeMap;

/// The CPU a container without a CPU request counts as when scoring: 100m
/// (`DefaultMilliCPURequest` in `pkg/scheduler/util/pod_resources.go`).
pub const DEFAULT_MILLI_CPU_REQUEST: u64 = 100;
/// The memory a container without a memory request counts as when scoring: 200 MiB
/// (`DefaultMemoryRequest`).
pub const DEFAULT_MEMORY_REQUEST: u64 = 200 * 1024 * 1024;

/// Requests in the scheduler's integer units (`framework.Resource`): milli-CPU, bytes, and the
/// scalar resources (extended resources, hugepages) by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resource {
    /// Milli-CPU.
    pub milli_cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// Ephemeral storage in bytes.
    pub ephemeral_storage: i64,
    /// Pod slots (only an allocatable has them).
    pub allowed_pod_number: i64,
    /// Extended resources, hugepages and attachable volumes (`ScalarResources`).
    pub scalar: BTreeMap<String, i64>,
}

impl Resource {
    /// `NewResource(list)` / `Resource.Add`: each known name into its field, each scalar name
    /// into the map, other names dropped.
    pub fn from_list(list: &ResourceList) -> Self {
        let mut resource = Self::default();
        resource.add_list(list);
        resource
    }

    /// `Resource.Add`.
    pub fn add_list(&mut self, list: &ResourceList) {
        for (name, amount) in list {
            match name.as_str() {
                "cpu" => self.milli_cpu += amount.milli_value(),
                "memory" => self.memory += amount.value(),
                "pods" => self.allowed_pod_number += amount.value(),
                "ephemeral-storage" => self.ephemeral_storage += amount.value(),
                other if is_scalar_resource_name(other) => {
                    *self.scalar.entry(other.to_string()).or_default() += amount.value()
                }
                _ => {}
            }
        }
    }

    /// Adds `other` (a pod's requests) into `self` (a node's sum), scalars included.
    pub fn add(&mut self, other: &Resource) {
        self.milli_cpu += other.milli_cpu;
        self.memory += other.memory;
        self.ephemeral_storage += other.ephemeral_storage;
        for (name, value) in &other.scalar {
            *self.scalar.entry(name.clone()).or_default() += value;
        }
    }
}

/// Whether `name` is a scalar resource (`IsScalarResourceName` in
/// `pkg/scheduler/util/utils.go`): an extended resource (a name with a domain outside
/// `kubernetes.io`), a `kubernetes.io/`-prefixed native resource, hugepages, or attachable
/// volumes.
pub fn is_scalar_resource_name(name: &str) -> bool {
    name.contains('/') || name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")
}

/// The pod's requests as a resource list (`PodRequests`). With `non_missing`, a container
/// that does not name `cpu` or `memory` counts 100m / 200 MiB for it
/// (`NonMissingContainerRequests`, what scoring uses).
pub fn pod_requests(pod: &Pod, non_missing: bool) -> ResourceList {
    let with_defaults = |requests: &ResourceList| -> ResourceList {
        let mut requests = requests.clone();
        if non_missing {
            requests
                .entry("cpu".to_string())
                .or_insert(Amount::from_milli(DEFAULT_MILLI_CPU_REQUEST));
            requests
                .entry("memory".to_string())
                .or_insert(Amount::from_units(DEFAULT_MEMORY_REQUEST));
        }
        requests
    };
    let mut sum = ResourceList::new();
    for container in &pod.containers {
        add_into(&mut sum, &with_defaults(&container.requests));
    }
    let mut sidecars = ResourceList::new();
    let mut init_peak = ResourceList::new();
    for container in &pod.init_containers {
        let requests = with_defaults(&container.requests);
        let running = if container.sidecar {
            add_into(&mut sum, &requests);
            add_into(&mut sidecars, &requests);
            sidecars.clone()
        } else {
            let mut running = requests;
            add_into(&mut running, &sidecars);
            running
        };
        max_into(&mut init_peak, &running);
    }
    max_into(&mut sum, &init_peak);
    add_into(&mut sum, &pod.overhead);
    sum
}

/// A pod's contribution to a node (`podResource` of `PodInfo.calculateResource`): its requests
/// and its non-zero CPU and memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodResource {
    /// The requests as they are.
    pub requested: Resource,
    /// Milli-CPU with 100m for each container without a CPU request.
    pub non_zero_milli_cpu: i64,
    /// Memory with 200 MiB for each container without a memory request.
    pub non_zero_memory: i64,
}

impl PodResource {
    /// `PodInfo.calculateResource`.
    pub fn of(pod: &Pod) -> Self {
        let non_zero = pod_requests(pod, true);
        let amount = |name: &str| non_zero.get(name).copied().unwrap_or_default();
        Self {
            requested: Resource::from_list(&pod_requests(pod, false)),
            non_zero_milli_cpu: amount("cpu").milli_value(),
            non_zero_memory: amount("memory").value(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::kube::Container;

    fn container(cpu_milli: Option<u64>, memory: Option<u64>, sidecar: bool) -> Container {
        let mut requests = ResourceList::new();
        if let Some(cpu) = cpu_milli {
            requests.insert("cpu".into(), Amount::from_milli(cpu));
        }
        if let Some(memory) = memory {
            requests.insert("memory".into(), Amount::from_units(memory));
        }
        Container {
            name: "c".into(),
            image: "busybox".into(),
            requests,
            limits: Default::default(),
            host_ports: Vec::new(),
            sidecar,
        }
    }

    fn pod(containers: Vec<Container>, init: Vec<Container>) -> Pod {
        Pod {
            containers,
            init_containers: init,
            ..Pod::new("default", "p")
        }
    }

    #[test]
    fn init_containers_count_at_their_peak_and_sidecars_beside_the_rest() {
        let p = pod(
            vec![container(Some(200), Some(100), false)],
            vec![
                container(Some(50), None, true),
                container(Some(1000), Some(10), false),
            ],
        );
        let requests = Resource::from_list(&pod_requests(&p, false));
        assert_eq!(
            requests.milli_cpu, 1050,
            "the init container runs beside the sidecar"
        );
        assert_eq!(requests.memory, 100);
        let p = pod(
            vec![container(Some(2000), None, false)],
            vec![
                container(Some(500), None, true),
                container(Some(1000), None, false),
            ],
        );
        assert_eq!(
            Resource::from_list(&pod_requests(&p, false)).milli_cpu,
            2500,
            "the sidecar runs beside the containers"
        );
    }

    #[test]
    fn containers_without_requests_count_100m_and_200mi_only_when_scoring() {
        let p = pod(
            vec![
                container(None, None, false),
                container(Some(0), Some(5), false),
            ],
            vec![],
        );
        let resource = PodResource::of(&p);
        assert_eq!(resource.requested.milli_cpu, 0);
        assert_eq!(resource.requested.memory, 5);
        assert_eq!(resource.non_zero_milli_cpu, 100, "an explicit 0 stays 0");
        assert_eq!(resource.non_zero_memory, 200 * 1024 * 1024 + 5);
    }

    #[test]
    fn sums_are_exact_before_rounding_up() {
        let mut third = ResourceList::new();
        third.insert("cpu".into(), Amount::from_nanos(333_400_000));
        let mut c = container(None, None, false);
        c.requests = third;
        let p = pod(vec![c.clone(), c.clone(), c], vec![]);
        assert_eq!(
            Resource::from_list(&pod_requests(&p, false)).milli_cpu,
            1001
        );
    }
}
