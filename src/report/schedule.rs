//! `kivi schedule`'s text: kube-scheduler's decision for one pending pod, told as `kubectl
//! describe pod` tells it (the `FailedScheduling` or `Scheduled` event), then why: each
//! rejected node's first failing filter and its reasons, and each plugin's normalised, weighted
//! score on every feasible node with the totals `selectHost` compares; where preemption would
//! make room, the node DefaultPreemption nominates and the victims on each candidate node.

use crate::model::{Decision, Plugin};
use std::fmt::Write;

/// The decision as text, ending with a newline.
pub fn to_text(decision: &Decision) -> String {
    let mut text = String::new();
    let pod = &decision.pending_pod;
    let fits = decision.feasible.len();
    let _ = writeln!(
        text,
        "Pod {pod}: fits {fits} of {} node(s)",
        decision.num_nodes
    );
    match (&decision.fit_error_with_postfilter, decision.top.as_slice()) {
        (Some(message), _) => {
            let _ = writeln!(
                text,
                "  Warning  FailedScheduling  default-scheduler  {message}"
            );
            preemption(&mut text, decision);
        }
        (None, [only]) => {
            let _ = writeln!(
                text,
                "  Normal  Scheduled  default-scheduler  Successfully assigned {pod} to {only}"
            );
            if !decision.scoring_run_by_scheduler {
                let _ = writeln!(
                    text,
                    "  ({only} is the only feasible node: kube-scheduler binds it without \
                     scoring; the scores below are for information)"
                );
            }
        }
        (None, top) => {
            let _ = writeln!(
                text,
                "  Scheduled to one of {} (tied top score {}; kube-scheduler picks one at \
                 random)",
                top.join(", "),
                top.first()
                    .and_then(|node| decision.total.get(node))
                    .copied()
                    .unwrap_or(0)
            );
        }
    }
    rejections(&mut text, decision);
    scores(&mut text, decision);
    text
}

/// Where preemption makes room: the candidate nodes, the one kube-scheduler nominates (or the
/// nodes tied on the criteria kivi models), and each candidate's victims, most important first.
fn preemption(text: &mut String, decision: &Decision) {
    if decision.preemption_candidates.is_empty() {
        return;
    }
    let _ = writeln!(
        text,
        "  Preemption: evicting lower-priority pods makes room on {}",
        decision.preemption_candidates.join(", ")
    );
    let nominated = &decision.nominated_nodes;
    let then = "deletes its victims and the pod waits for them to go";
    let _ = match (nominated.as_slice(), decision.nominated_by) {
        ([], _) => return,
        ([only], None) => writeln!(
            text,
            "  kube-scheduler nominates {only}, the only candidate, {then}"
        ),
        ([only], Some(criterion)) => writeln!(
            text,
            "  kube-scheduler nominates {only} ({} of the candidates), {then}",
            criterion.describe()
        ),
        (tied, _) => writeln!(
            text,
            "  {} tie on the criteria kivi models (budget violations, highest victim priority, \
             sum of priorities, number of victims): kube-scheduler nominates the one whose \
             highest-priority victims started latest (kivi does not read start times), else one \
             of them at random, {then}",
            tied.join(", ")
        ),
    };
    let _ = writeln!(
        text,
        "  Victims on each candidate node (most important first; * nominated):"
    );
    let width = decision
        .preemption_victims
        .iter()
        .map(|c| c.node.len())
        .max()
        .unwrap_or(0);
    for candidate in &decision.preemption_victims {
        let mark = if nominated.contains(&candidate.node) {
            '*'
        } else {
            ' '
        };
        let victims: Vec<String> = candidate
            .victims
            .iter()
            .map(|v| format!("{}/{} (priority {})", v.namespace, v.name, v.priority))
            .collect();
        let _ = write!(
            text,
            "    {mark} {:<width$}  {}; {} break a PodDisruptionBudget",
            candidate.node,
            victims.join(", "),
            candidate.pdb_violations
        );
        if candidate.start_times_may_decide {
            let _ = write!(
                text,
                "; pods of equal priority: kube-scheduler spares those that started first, kivi \
                 those listed first"
            );
        }
        let _ = writeln!(text);
    }
}

/// Each rejected node's first failing filter, in node order.
fn rejections(text: &mut String, decision: &Decision) {
    if decision.first_rejection.is_empty() {
        return;
    }
    let _ = writeln!(
        text,
        "  Rejected nodes (the first filter that fails, in kube-scheduler's order):"
    );
    let width = decision
        .first_rejection
        .keys()
        .map(String::len)
        .max()
        .unwrap_or(0);
    let plugin_width = decision
        .first_rejection
        .values()
        .map(|r| r.plugin.name().len())
        .max()
        .unwrap_or(0);
    for (node, rejection) in &decision.first_rejection {
        let _ = writeln!(
            text,
            "    {node:<width$}  {:<plugin_width$}  {}",
            rejection.plugin.name(),
            rejection.reasons.join(", ")
        );
    }
}

/// The score table: a row per feasible node, highest total first, a column per plugin that
/// scored.
fn scores(text: &mut String, decision: &Decision) {
    if decision.total.is_empty() {
        return;
    }
    let plugins: Vec<Plugin> = Plugin::SCORES
        .iter()
        .map(|(plugin, _)| *plugin)
        .filter(|plugin| {
            decision
                .scores
                .values()
                .any(|scores| scores.contains_key(plugin))
        })
        .collect();
    let skipped: Vec<&str> = decision
        .skipped_score_plugins
        .iter()
        .filter(|p| !p.is_volume_plugin())
        .map(|p| p.name())
        .collect();
    let _ = write!(text, "  Scores (normalised, times the plugin's weight)");
    if skipped.is_empty() {
        let _ = writeln!(text, ":");
    } else {
        let _ = writeln!(text, "; skipped at PreScore: {}:", skipped.join(", "));
    }
    let mut rows: Vec<(&String, i64)> = decision.total.iter().map(|(n, t)| (n, *t)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut header = vec!["NODE".to_string()];
    header.extend(plugins.iter().map(|p| p.name().to_string()));
    header.push("TOTAL".to_string());
    let mut table = vec![header];
    for (node, total) in rows {
        let mut row = vec![node.clone()];
        for plugin in &plugins {
            let score = decision.scores.get(node).and_then(|s| s.get(plugin));
            row.push(score.map_or("-".to_string(), i64::to_string));
        }
        row.push(total.to_string());
        table.push(row);
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|column| table.iter().map(|row| row[column].len()).max().unwrap_or(0))
        .collect();
    for row in table {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        let _ = writeln!(text, "    {}", cells.join("  ").trim_end());
    }
}
