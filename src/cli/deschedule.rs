//! `kivi deschedule`: one descheduling cycle of kubernetes-sigs/descheduler v0.33 on a List
//! with a DeschedulerPolicy (see [`crate::controllers::kube_descheduler`]). Where the real
//! descheduler's choice depends on Go's map order, the cycle shown takes the objects in the
//! input's order.

use super::error::CommandError;
use super::one_file;
use crate::input::descheduler_policy::read_cluster_and_policy;
use crate::model::{Descheduler, FirstOption};
use crate::report::deschedule::to_text;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Arguments of `kivi deschedule`.
#[derive(Debug, Args)]
pub struct DescheduleArgs {
    /// A List (or YAML stream) of the cluster's Nodes, Pods, owners, PodDisruptionBudgets and
    /// PriorityClasses with one `descheduler/v1alpha2` DeschedulerPolicy; `-` reads it from
    /// standard input.
    input: PathBuf,
    /// `text` lists each plugin's evictions and refusals; `json` prints `evicted`,
    /// `by_plugin`, `refused` (as the recorded decisions name them), `plugins_run`,
    /// `ready_nodes` and `aborted`.
    #[arg(long, value_enum, default_value = "text")]
    format: DescheduleFormat,
}

/// How `kivi deschedule` prints the cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DescheduleFormat {
    /// Plugin by plugin.
    Text,
    /// The cycle as JSON.
    Json,
}

impl DescheduleArgs {
    /// Prints the cycle on stdout and the input's warnings on stderr. Exit 0 after a cycle
    /// (whatever it evicted), 2 when the input or the policy cannot be read.
    pub fn run(self) -> Result<i32, CommandError> {
        let (name, text) = one_file::read(
            &self.input,
            "`kivi deschedule` reads one file: the cluster's objects and a DeschedulerPolicy \
             in one List",
        )?;
        let (snapshot, policy, diagnostics) =
            read_cluster_and_policy(&name, &text).map_err(|e| e.to_string())?;
        eprint!("{}", diagnostics.to_text());
        let descheduler =
            Descheduler::new(&snapshot, &policy).map_err(|why| format!("{name}: {why}"))?;
        let cycle = descheduler
            .run(&mut FirstOption)
            .map_err(|_| CommandError::Internal("the canonical cycle was pruned".into()))?;
        let report = cycle.report(|pod| descheduler.pod_name(pod));
        let output = match self.format {
            DescheduleFormat::Json => one_file::pretty_json(&name, &report)?,
            DescheduleFormat::Text => to_text(&report),
        };
        one_file::print(&output, "cycle")?;
        Ok(0)
    }
}
