//! `kivi deschedule`'s text: one descheduling cycle, plugin by plugin, with the pods each
//! evicted in order and each eviction it decided on but did not carry out, with the reason.

use crate::model::DeschedulingReport;
use std::fmt::Write;

/// The cycle as text, ending with a newline.
pub fn to_text(report: &DeschedulingReport) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "Ready nodes: {}", report.ready_nodes.join(", "));
    if let Some(why) = &report.aborted {
        let _ = writeln!(text, "Cycle skipped: {why}");
        return text;
    }
    for plugin in &report.plugins_run {
        let evicted = &report.by_plugin[plugin];
        let refused: Vec<_> = report
            .refused
            .iter()
            .filter(|r| &r.plugin == plugin)
            .collect();
        let _ = writeln!(
            text,
            "{plugin}: {} evicted, {} refused",
            evicted.len(),
            refused.len()
        );
        for pod in evicted {
            let _ = writeln!(text, "  evicted  {pod}");
        }
        for refusal in refused {
            let _ = writeln!(
                text,
                "  refused  {}  {}: {}",
                refusal.pod, refusal.reason, refusal.message
            );
        }
    }
    let _ = writeln!(text, "Evicted in all: {}", report.evicted.len());
    text
}
