//! The integration tests, as one binary with a module per area (`tests/<area>.rs`) and the
//! helpers they share in `tests/support/`. One binary links once and runs every area's tests
//! side by side on the test harness's threads, so a test here must not change what the whole
//! process shares: no working directory, no environment variables, no signal handlers, no
//! fixed paths (`support::scratch` gives each test a directory of its own), and no measuring
//! of the process or of all its children. The tests that need that have a binary of their own
//! (Cargo.toml says which and why).

mod support;

mod audit_inputs;
mod autoscaler_node_groups;
mod autoscaler_soft_taint;
mod autoscaler_sweep;
mod autoscaler_with_operators;
mod bench_sweeps;
mod ci_formats;
mod cli_check;
mod cli_deschedule;
mod cli_schedule;
mod cluster_autoscaler;
mod cluster_autoscaler_input;
mod cluster_bookkeeping;
mod cluster_cases;
mod cluster_robustness;
mod cluster_scaling;
mod cluster_spin_traces;
mod daemonsets;
mod descheduler_cases;
mod descheduler_policy_in_check;
mod descheduler_scaling;
mod diff;
mod differential;
mod drain;
mod engine_counterexamples;
mod engine_growth;
mod engine_many_checks;
mod engine_state_counts;
mod front_end_vs_uniform;
mod hpa_behavior;
mod html_report;
mod input_frontends;
mod input_fuzz;
mod input_mutations;
mod interrupted_sweeps;
mod kube_controllers;
mod kube_descheduler_conformance;
mod kube_descheduler_model;
mod kube_scheduler_conformance;
mod layering;
mod list_input;
mod live_dump_input;
mod models_verdicts;
mod namespaces;
mod node_classes;
mod node_lifecycle;
mod node_upgrade;
mod pdb;
mod perturbations;
mod pinned_nodes;
mod point_of_no_return;
mod preemption;
mod real_sizes;
mod scaler_cases;
mod scaler_proportion;
mod scaler_template;
mod semantics;
mod semantics_kubernetes;
mod shards;
mod short_traces;
mod stable_reconciliation;
mod stdin_input;
mod symmetry_counts;
mod taints_as_kubernetes;
mod tie_break;
