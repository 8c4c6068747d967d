//! The model units a translation of Kubernetes objects into Kivi's uniform JSON writes its
//! resources in ([`Units`]), chosen from every value of the input (`super::units`).

use super::description::{ClusterDescription, MetricResource, MetricTarget};
use super::diagnostics::Diagnostics;
use super::quantity::Quantity;
use super::units::ResourceUnit;
use serde_json::{json, Value};

/// The units chosen for a translation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Units {
    /// One model unit of CPU.
    pub cpu: ResourceUnit,
    /// One model unit of memory.
    pub memory: ResourceUnit,
}

/// How the model rounds one kind of quantity to its unit, and which way that may move a
/// verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rounding {
    /// A request, rounded up: pods look bigger than they are, so kivi may report a pod
    /// unschedulable that fits on the cluster.
    Request,
    /// A capacity, rounded down: nodes look smaller than they are, with the same effect.
    Capacity,
    /// A measured usage, rounded to the nearest unit (at least one): the HPA may see more or
    /// less load than the cluster has, and scale where the real one does not.
    Usage,
    /// An HPA's `averageValue` target, rounded to the nearest unit (at least one): the HPA may
    /// scale at another load than the real one.
    Target,
}

/// A quantity of the input, with the object and field it comes from (for warnings).
struct Valued {
    value: Quantity,
    rounding: Rounding,
    what: String,
}

impl Units {
    /// Chooses the units for every quantity in `cluster`: requests, capacities, HPA targets,
    /// and the measured usages (`kubectl top`, usage patterns), so that every ratio the HPA
    /// computes is the one it computes from the raw quantities. Where a value still cannot be
    /// represented exactly, `diagnostics` records it ([`Diagnostics::inexact`]), naming the
    /// object, the field, the given and the modelled value and which way the verdict may move.
    pub fn choose(cluster: &ClusterDescription, diagnostics: &mut Diagnostics) -> Self {
        let mut cpu = Vec::new();
        let mut memory = Vec::new();
        let add = |list: &mut Vec<Valued>, value, rounding, what: String| {
            list.push(Valued {
                value,
                rounding,
                what,
            })
        };
        let templates = cluster
            .node_templates
            .iter()
            .map(|t| (t, "Cluster API template"));
        for (node, kind) in cluster.nodes.iter().map(|n| (n, "Node")).chain(templates) {
            let name = format!("{kind}/{}", node.name);
            add(
                &mut cpu,
                node.cpu,
                Rounding::Capacity,
                format!("{name}: allocatable cpu"),
            );
            add(
                &mut memory,
                node.memory,
                Rounding::Capacity,
                format!("{name}: allocatable memory"),
            );
            add(
                &mut cpu,
                node.reserved_cpu,
                Rounding::Request,
                format!("{name}: cpu requested by pods not modelled"),
            );
            add(
                &mut memory,
                node.reserved_memory,
                Rounding::Request,
                format!("{name}: memory requested by pods not modelled"),
            );
        }
        let templates = cluster.workload_templates().chain(
            cluster
                .daemon_sets
                .iter()
                .map(|d| (format!("DaemonSet/{}", d.name), &d.pod)),
        );
        for (name, pod) in templates {
            add(
                &mut cpu,
                pod.cpu,
                Rounding::Request,
                format!("{name}: cpu request"),
            );
            add(
                &mut memory,
                pod.memory,
                Rounding::Request,
                format!("{name}: memory request"),
            );
            for (time, usage) in &pod.cpu_pattern {
                add(
                    &mut cpu,
                    *usage,
                    Rounding::Usage,
                    format!("{name}: cpu usage pattern at time {time}"),
                );
            }
        }
        for running in &cluster.running {
            if let Some(usage) = running.cpu_usage {
                add(
                    &mut cpu,
                    usage,
                    Rounding::Usage,
                    format!("Pod/{}: measured cpu usage", running.name),
                );
            }
        }
        for deployment in &cluster.deployments {
            let Some(hpa) = &deployment.autoscaler else {
                continue;
            };
            for (resource, target) in &hpa.metrics {
                if let MetricTarget::AverageValue(value) = target {
                    let (list, field) = match resource {
                        MetricResource::Cpu => (&mut cpu, "cpu averageValue target"),
                        MetricResource::Memory => (&mut memory, "memory averageValue target"),
                    };
                    let name = format!("HorizontalPodAutoscaler of Deployment/{}", deployment.name);
                    add(list, *value, Rounding::Target, format!("{name}: {field}"));
                }
            }
        }
        let units = Self {
            cpu: ResourceUnit::choose(cpu.iter().map(|v| v.value), Quantity::from_units(1)),
            memory: ResourceUnit::choose(
                memory.iter().map(|v| v.value),
                Quantity::from_units(1 << 30),
            ),
        };
        for (name, unit, values) in [("CPU", units.cpu, &cpu), ("memory", units.memory, &memory)] {
            if !unit.rounded {
                continue;
            }
            diagnostics.warn(format!(
                "{name} values are too far apart for exact 16-bit units; one unit is {}",
                unit.unit
            ));
            for valued in values.iter().filter(|v| !unit.represents(v.value)) {
                let (modelled, effect) = match valued.rounding {
                    Rounding::Request => (
                        unit.request(valued.value),
                        "rounded up: the model may find a pod unschedulable that fits",
                    ),
                    Rounding::Capacity => (
                        unit.capacity(valued.value),
                        "rounded down: the model may find a pod unschedulable that fits",
                    ),
                    Rounding::Usage | Rounding::Target => {
                        let modelled = unit.usage(valued.value);
                        let up = unit.unit.nanos() * modelled as u128 > valued.value.nanos();
                        let effect = match (valued.rounding == Rounding::Usage, up) {
                            (true, true) => {
                                "rounded up: the model's HPA sees more load than the cluster's \
                                 and may scale up where it does not (a violation found may be \
                                 false)"
                            }
                            (true, false) => {
                                "rounded down: the model's HPA sees less load than the \
                                 cluster's and may not scale up where it does (a violation may \
                                 be missed)"
                            }
                            (false, true) => {
                                "rounded up: the model's HPA scales up later than the \
                                 cluster's (a violation may be missed)"
                            }
                            (false, false) => {
                                "rounded down: the model's HPA scales up sooner than the \
                                 cluster's (a violation found may be false)"
                            }
                        };
                        (modelled, effect)
                    }
                };
                diagnostics.inexact(format!(
                    "{}: {} is modelled as {} ({modelled} × {}); {effect}",
                    valued.what,
                    valued.value,
                    Quantity::from_nanos(unit.unit.nanos() * modelled as u128),
                    unit.unit
                ));
            }
        }
        units
    }

    /// The units as the uniform document's `kiviUnits` entry.
    pub fn to_json(self) -> Value {
        json!({"cpu": self.cpu.unit.to_string(), "memory": self.memory.unit.to_string()})
    }
}
