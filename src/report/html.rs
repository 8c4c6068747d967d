//! `--html FILE`: one self-contained page (no scripts, fonts or images from elsewhere) with the
//! verdict, the setup and each counterexample as a timeline.
//!
//! The timeline is an inline SVG: one lane per node (plus one for pods no node holds yet),
//! steps left to right, each column the cluster after a step that printed something (silent
//! steps fold into the next one), with every pod drawn on the node it is on, coloured by its
//! deployment (dashed while terminating, pale while pending). A mark above each column says
//! what kind of step it was — scheduling, scaling, eviction, node failure, load change, an
//! intent's monitor — the step that violates the intent is outlined in red, and the cycle of
//! an eviction loop is bracketed. Hovering a column shows its log lines and the controllers'
//! reasons (an SVG `<title>`, which every browser shows as a tooltip); the full trace follows
//! the chart as text. Clusters too large to draw whole keep the lanes of the nodes the trace
//! touches.

use super::counterexample::Counterexample;
use super::escape_markup as escape;
use crate::cluster::{ClusterAction, ClusterState, NodeStatus, PodPhase, TraceLine};
use crate::engine::Outcome;
use crate::model::liveness::{searched_cluster, FoundLoop, LoopKind, LoopSearch, LoopVerdict};
use crate::model::ClusterModel;
use crate::report::eviction_loop;
use crate::scaler::sweep::{Finding, SweepResult};
use std::fmt::Write;

/// Above this many nodes, only the lanes of nodes whose pods or status change are drawn.
const MAX_LANES: usize = 64;
/// Most pods drawn side by side in one row of a lane.
const PODS_PER_ROW: usize = 6;
/// The narrowest column: room for a label such as `[10–11]`.
const MIN_COLUMN_WIDTH: usize = 50;
/// The side of a pod's square, and the gap around it.
const POD: usize = 14;
const GAP: usize = 3;
/// Width of the lane labels on the left, and height of the marks row on top.
const LABEL_WIDTH: usize = 120;
const HEADER: usize = 46;
/// Deployment colours, in order (deployment 1 takes the first).
const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#e15759",
];

/// What kind of step a column shows, from the controllers that printed its lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    /// The cluster before the first step.
    Start,
    /// Pods bound to nodes or started (scheduler, kubelet).
    Scheduling,
    /// Replica counts changed or deployments applied (HPA, deployment controller, user).
    Scaling,
    /// Pods evicted (descheduler, taint manager).
    Eviction,
    /// A node failed, panicked or went into maintenance.
    Failure,
    /// A pod's CPU load changed.
    Load,
    /// An intent's monitor or the scheduler reported a violation.
    Intent,
    /// Steps that repeat the ones before, folded into one column.
    Repeat,
}

impl Mark {
    /// The mark of a step whose lines came from `controller`.
    fn of(controller: Option<&str>) -> Self {
        match controller {
            Some(
                "Descheduler"
                | "DeScheduler"
                | "taintManger"
                | "kubectl drain"
                | "Scheduler - preemption",
            ) => Self::Eviction,
            Some("nodeFailure" | "maintenanceNode" | "kernel_panic") | None => Self::Failure,
            Some("HPA" | "Deployment" | "applyDeployment" | "createDeployment")
            | Some("createTargetDeployment") => Self::Scaling,
            Some("CPU Change") => Self::Load,
            Some("Scheduler" | "Kubelet") => Self::Scheduling,
            Some(_) => Self::Intent,
        }
    }

    /// The most telling mark of a step that printed `lines`: failures and evictions over
    /// scaling, scaling over scheduling.
    fn of_lines(lines: &[(usize, TraceLine)]) -> Self {
        let rank = |m: Self| match m {
            Self::Intent => 0,
            Self::Failure => 1,
            Self::Eviction => 2,
            Self::Scaling => 3,
            Self::Load => 4,
            Self::Scheduling => 5,
            Self::Start | Self::Repeat => 6,
        };
        lines
            .iter()
            .map(|(_, line)| Self::of(line.controller))
            .min_by_key(|&m| rank(m))
            .unwrap_or(Self::Scheduling)
    }

    /// Its symbol, colour and name in the legend.
    fn look(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Self::Start => ("●", "#777", "initial state"),
            Self::Scheduling => ("→", "#59a14f", "scheduling"),
            Self::Scaling => ("±", "#4e79a7", "scaling"),
            Self::Eviction => ("✕", "#f28e2b", "eviction"),
            Self::Failure => ("⚡", "#e15759", "node failure"),
            Self::Load => ("~", "#9c755f", "load change"),
            Self::Intent => ("!", "#b00020", "intent check"),
            Self::Repeat => ("↻", "#777", "steps repeated, folded"),
        }
    }
}

/// One column: the cluster after a step that printed something, and the numbered lines it
/// printed (with the controllers' reasons); or the steps folded away after a block of columns
/// that they repeat.
struct Column {
    mark: Mark,
    /// The lines with Kivi's numbers (none for the initial state or a fold).
    lines: Vec<(usize, TraceLine)>,
    state: ClusterState,
    /// For a fold, what it folds.
    fold: Option<Fold>,
    /// The steps of the trace taken up to this column (0 for the initial state).
    taken: usize,
}

impl Column {
    /// Kivi's numbers of its first and last line, or `None` for the initial state.
    fn numbers(&self) -> Option<(usize, usize)> {
        Some((self.lines.first()?.0, self.lines.last()?.0))
    }
}

/// Steps of the path to a loop folded into one column, as the text report folds their lines:
/// the block of `columns` columns before the fold, repeated `more` more times, which printed
/// Kivi's lines `lines.0` to `lines.1`. The fold's column shows the cluster after them.
struct Fold {
    columns: usize,
    more: usize,
    lines: (usize, usize),
}

impl Fold {
    /// What the fold stands for, in words.
    fn note(&self) -> String {
        format!(
            "... the {} step(s) above repeat {} more times (lines [{}]–[{}]) ...",
            self.columns, self.more, self.lines.0, self.lines.1
        )
    }
}

/// Which edge of its column the point of no return is drawn on: after the step that made
/// the failure unavoidable, or before the first column after it when that step printed
/// nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NoReturnEdge {
    Before,
    After,
}

/// A counterexample as columns over node lanes.
pub struct Timeline {
    columns: Vec<Column>,
    /// The column where an eviction loop's cycle starts.
    loop_from: Option<usize>,
    /// Where the point of no return is drawn: the x offset within the column's width, and
    /// the column.
    no_return: Option<(NoReturnEdge, usize)>,
    /// Whether the last column is where an intent is violated.
    violation: bool,
    /// Lines printed after the trace (why a pod found no node).
    epilogue: Vec<String>,
}

impl Timeline {
    /// The timeline of `steps` taken from `init` in `model`; `loop_at` is the index of the step
    /// that starts an eviction loop's cycle.
    fn new<'a>(
        model: &ClusterModel,
        init: &ClusterState,
        steps: impl IntoIterator<Item = (&'a ClusterAction, &'a ClusterState)>,
        loop_at: Option<usize>,
    ) -> Self {
        let mut columns = vec![Column {
            mark: Mark::Start,
            lines: Vec::new(),
            state: init.clone(),
            fold: None,
            taken: 0,
        }];
        let mut loop_from = None;
        let mut number = 0;
        let mut before = init;
        for (index, (action, after)) in steps.into_iter().enumerate() {
            if Some(index) == loop_at {
                loop_from = Some(columns.len());
            }
            let lines = model.describe_step(before, action);
            before = after;
            if lines.is_empty() {
                continue;
            }
            let numbered: Vec<_> = (number..).zip(lines).collect();
            number += numbered.len();
            columns.push(Column {
                mark: Mark::of_lines(&numbered),
                lines: numbered,
                state: after.clone(),
                fold: None,
                taken: index + 1,
            });
        }
        if loop_from.is_none() && columns.len() > 1 {
            if let Some(last) = columns.last_mut() {
                last.state = before.clone();
            }
        }
        Self {
            columns,
            loop_from,
            no_return: None,
            violation: false,
            epilogue: Vec::new(),
        }
    }

    /// The timeline of an intent's counterexample: its last column is the violation.
    pub fn of_counterexample(counterexample: &Counterexample) -> Self {
        let trace = counterexample.trace;
        let steps = trace.steps.iter().map(|s| (&s.action, &s.state));
        let mut timeline = Self::new(counterexample.model, &trace.init, steps, None);
        timeline.violation = true;
        timeline.no_return = counterexample.no_return_mark().and_then(|steps| {
            let at = timeline.columns.iter().position(|c| c.taken >= steps)?;
            match timeline.columns[at].taken == steps {
                true => Some((NoReturnEdge::After, at)),
                false => Some((NoReturnEdge::Before, at)),
            }
        });
        timeline.epilogue =
            counterexample.unschedulable_lines(super::counterexample::Verbosity::AllSteps);
        if let Some(unchecked) = counterexample.unchecked {
            let note = super::single::unchecked_note(unchecked, trace.steps.len());
            timeline.epilogue.push(note);
        }
        timeline
    }

    /// The timeline of an eviction loop: the path to it, with runs of repeated steps folded
    /// as the text report folds them, then one round, bracketed.
    pub fn of_loop(found: &FoundLoop) -> Self {
        let lasso = &found.lasso;
        let steps = lasso.prefix.iter().chain(&lasso.cycle);
        let steps = steps.map(|s| (&s.action, &s.state));
        let mut timeline = Self::new(&found.model, &lasso.init, steps, Some(lasso.prefix.len()));
        timeline.fold_repeats();
        timeline
    }

    /// Folds each block of columns on the path to the loop that repeats back to back three
    /// times or more (the same lines, step numbers aside) into the block and one column for
    /// the repeats ([`eviction_loop::fold_runs`]).
    fn fold_repeats(&mut self) {
        let mut columns = std::mem::take(&mut self.columns);
        let tail = columns.split_off(self.loop_from.unwrap_or(columns.len()).max(1));
        let path: Vec<Column> = columns.split_off(1);
        let printed = |column: &Column| -> Vec<String> {
            column
                .lines
                .iter()
                .map(|(_, line)| line.render(0))
                .collect()
        };
        let keys: Vec<Vec<String>> = path.iter().map(printed).collect();
        let mut path: Vec<Option<Column>> = path.into_iter().map(Some).collect();
        let mut take = |at: usize| path[at].take().expect("each column is taken once");
        for stretch in eviction_loop::fold_runs(&keys) {
            match stretch {
                eviction_loop::Folded::One(at) => columns.push(take(at)),
                eviction_loop::Folded::Repeated { at, len, copies } => {
                    columns.extend((at..at + len).map(&mut take));
                    let folded: Vec<Column> =
                        (at + len..at + len * copies).map(&mut take).collect();
                    let numbers = |c: Option<&Column>| c.and_then(Column::numbers);
                    let (first, _) = numbers(folded.first()).unwrap_or_default();
                    let (_, last) = numbers(folded.last()).unwrap_or_default();
                    let end = folded.into_iter().last().expect("two copies or more");
                    columns.push(Column {
                        mark: Mark::Repeat,
                        lines: Vec::new(),
                        state: end.state,
                        taken: end.taken,
                        fold: Some(Fold {
                            columns: len,
                            more: copies - 1,
                            lines: (first, last),
                        }),
                    });
                }
            }
        }
        if self.loop_from.is_some() {
            self.loop_from = Some(columns.len());
        }
        columns.extend(tail);
        self.columns = columns;
    }

    /// The lanes to draw: every node of a small cluster, else those whose pods or status
    /// change along the trace; and whether some node was left out.
    fn lanes(&self) -> (Vec<usize>, bool) {
        let first = &self.columns[0].state;
        let nodes = first.nodes().len();
        if nodes <= MAX_LANES {
            return ((1..=nodes).collect(), false);
        }
        let touched: Vec<usize> = (1..=nodes)
            .filter(|&n| {
                self.columns.iter().any(|c| {
                    c.state.node(n).status != first.node(n).status
                        || c.state.node(n).num_pods != first.node(n).num_pods
                })
            })
            .collect();
        (touched, true)
    }
}

/// The pods a column draws on node `node` (0: pods on no node yet), as (id, deployment,
/// phase).
fn pods_on(state: &ClusterState, node: usize) -> Vec<(usize, usize, PodPhase)> {
    state
        .pods()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.phase != PodPhase::Idle && p.loc as usize == node)
        .map(|(i, p)| (i + 1, p.deployment as usize, p.phase))
        .collect()
}

/// A rendered trace line with the controller's reason and numbers under it.
fn explained(number: usize, line: &TraceLine) -> String {
    let mut text = line.render(number);
    if let Some(why) = &line.why {
        let _ = write!(
            text,
            "\n    because: {}\n    numbers: {}",
            why.reason, why.detail
        );
    }
    text
}

/// The SVG chart of `timeline`, naming nodes by `node_name`.
fn svg(timeline: &Timeline, node_name: &dyn Fn(usize) -> String) -> String {
    let (lanes, partial) = timeline.lanes();
    let lanes: Vec<usize> = lanes.into_iter().chain(std::iter::once(0)).collect();
    let most_on = |node: usize| {
        timeline
            .columns
            .iter()
            .map(|c| pods_on(&c.state, node).len())
            .max()
            .unwrap_or(0)
    };
    let most: Vec<usize> = lanes.iter().map(|&n| most_on(n)).collect();
    let per_row = most
        .iter()
        .copied()
        .max()
        .unwrap_or(1)
        .clamp(1, PODS_PER_ROW);
    let lane_height: Vec<usize> = most
        .iter()
        .map(|&m| m.div_ceil(per_row).max(1) * (POD + GAP) + 2 * GAP)
        .collect();
    let column_width = (per_row * (POD + GAP) + 3 * GAP).max(MIN_COLUMN_WIDTH);
    let width = LABEL_WIDTH + timeline.columns.len() * column_width + GAP;
    let height = HEADER + lane_height.iter().sum::<usize>() + GAP;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r##"<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" data-lanes="{}" data-steps="{}">"##,
        lanes.len() - 1,
        timeline.columns.len()
    );
    let mut y = HEADER;
    for (lane, &node) in lanes.iter().enumerate() {
        let label = if node == 0 {
            "no node yet".to_string()
        } else {
            node_name(node)
        };
        let class = if node == 0 { "lane queue" } else { "lane" };
        let _ = writeln!(
            out,
            r##"<g class="{class}" data-node="{node}"><rect class="lane-bg" x="0" y="{y}" width="{width}" height="{}"/><text class="lane-label" x="6" y="{}">{}</text></g>"##,
            lane_height[lane],
            y + lane_height[lane] / 2 + 4,
            escape(&label)
        );
        y += lane_height[lane];
    }
    if let Some(from) = timeline.loop_from {
        let x0 = LABEL_WIDTH + from * column_width;
        let x1 = LABEL_WIDTH + timeline.columns.len() * column_width - GAP;
        let _ = writeln!(
            out,
            r##"<g class="loop"><path d="M{x0} 12 V6 H{x1} V12" fill="none" stroke="#b00020" stroke-width="1.5"/><text x="{}" y="4" text-anchor="middle" font-size="9" fill="#b00020">repeats forever</text></g>"##,
            (x0 + x1) / 2
        );
    }
    if let Some((edge, at)) = timeline.no_return {
        let x = match edge {
            NoReturnEdge::Before => LABEL_WIDTH + at * column_width - GAP / 2,
            NoReturnEdge::After => LABEL_WIDTH + (at + 1) * column_width - GAP / 2,
        };
        let _ = writeln!(
            out,
            r##"<g class="no-return" data-column="{at}"><title>from here on, every run fails</title><line x1="{x}" y1="0" x2="{x}" y2="{height}" stroke="#b00020" stroke-width="1.5" stroke-dasharray="4,3"/><text x="{}" y="10" font-size="9" fill="#b00020">no return</text></g>"##,
            x + 3
        );
    }
    let last = timeline.columns.len() - 1;
    for (index, column) in timeline.columns.iter().enumerate() {
        let x = LABEL_WIDTH + index * column_width;
        let violation = timeline.violation && index == last;
        let title = match (&column.fold, column.numbers()) {
            (Some(fold), _) => fold.note(),
            (None, None) => "initial state".to_string(),
            (None, Some(_)) => column
                .lines
                .iter()
                .map(|(number, line)| explained(*number, line))
                .collect::<Vec<_>>()
                .join("\n"),
        };
        let class = match (violation, &column.fold) {
            (true, _) => "step violation",
            (false, Some(_)) => "step fold",
            (false, None) => "step",
        };
        let _ = writeln!(
            out,
            r##"<g class="{class}" data-step="{index}"><title>{}</title>"##,
            escape(&title)
        );
        let _ = writeln!(
            out,
            r##"<rect class="step-bg" x="{x}" y="14" width="{}" height="{}"/>"##,
            column_width - GAP,
            height - 14 - GAP
        );
        let (symbol, colour, _) = column.mark.look();
        let cx = x + (column_width - GAP) / 2;
        let label = match (&column.fold, column.numbers()) {
            (Some(fold), _) => format!("{}× more", fold.more),
            (None, None) => "init".to_string(),
            (None, Some((a, b))) if a == b => format!("[{a}]"),
            (None, Some((a, b))) => format!("[{a}–{b}]"),
        };
        let _ = writeln!(
            out,
            r##"<circle class="mark" cx="{cx}" cy="24" r="8" fill="{colour}"/><text x="{cx}" y="28" text-anchor="middle" font-size="10" fill="#fff">{symbol}</text><text x="{cx}" y="42" text-anchor="middle" font-size="9">{label}</text>"##
        );
        let mut y = HEADER;
        for (lane, &node) in lanes.iter().enumerate() {
            if node != 0 {
                let status = column.state.node(node).status;
                if status != NodeStatus::Ready {
                    let fill = if status == NodeStatus::Unhealthy {
                        "#f8d0d0"
                    } else {
                        "#ddd"
                    };
                    let _ = writeln!(
                        out,
                        r##"<rect class="node-down" x="{x}" y="{y}" width="{}" height="{}" fill="{fill}"><title>node {node}: {status:?}</title></rect>"##,
                        column_width - GAP,
                        lane_height[lane]
                    );
                }
            }
            for (slot, (pod, deployment, phase)) in
                pods_on(&column.state, node).into_iter().enumerate()
            {
                let px = x + GAP + (slot % per_row) * (POD + GAP);
                let py = y + GAP + (slot / per_row) * (POD + GAP);
                let colour = PALETTE[deployment.saturating_sub(1) % PALETTE.len()];
                let style = match phase {
                    PodPhase::Terminating => {
                        format!(r##"fill="#fff" stroke="{colour}" stroke-dasharray="2,2""##)
                    }
                    PodPhase::Pending => {
                        format!(r##"fill="{colour}" fill-opacity="0.4" stroke="{colour}""##)
                    }
                    _ => format!(r##"fill="{colour}" stroke="{colour}""##),
                };
                let text_colour = if phase == PodPhase::Running {
                    "#fff"
                } else {
                    "#222"
                };
                let _ = writeln!(
                    out,
                    r##"<g class="pod" data-pod="{pod}"><rect x="{px}" y="{py}" width="{POD}" height="{POD}" rx="3" {style}/><text x="{}" y="{}" text-anchor="middle" font-size="8" fill="{text_colour}">{pod}</text></g>"##,
                    px + POD / 2,
                    py + POD / 2 + 3
                );
            }
            y += lane_height[lane];
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    if partial {
        let _ = writeln!(
            out,
            "<p class=\"note\">Only the {} nodes whose pods or status change are drawn.</p>",
            lanes.len() - 1
        );
    }
    out
}

/// The legend of the marks and pod styles.
fn legend() -> String {
    let mut out = String::from("<p class=\"legend\">");
    for mark in [
        Mark::Scheduling,
        Mark::Scaling,
        Mark::Eviction,
        Mark::Failure,
        Mark::Load,
        Mark::Intent,
        Mark::Repeat,
    ] {
        let (symbol, colour, name) = mark.look();
        let _ = write!(
            out,
            "<span style=\"color:{colour}\">{symbol}</span> {name} &nbsp; "
        );
    }
    out.push_str(
        "· a square is a pod (its number), coloured by deployment: solid running, pale \
         pending, dashed terminating · grey lane: node not ready, pink: unhealthy · red \
         outline: the step that violates the intent · hover a step for its log lines</p>\n",
    );
    out
}

/// One section of the page: a heading, what it found, and its timeline.
pub struct Section {
    /// The heading (`Failure #1: pod_always_schedulable`).
    pub heading: String,
    /// The counterexample.
    pub timeline: Timeline,
}

/// The page's content.
pub struct Page {
    /// What was checked (the input's name).
    pub title: String,
    /// The verdict, one line.
    pub verdict: String,
    /// Setup and statistics lines.
    pub summary: Vec<String>,
    /// One section per counterexample.
    pub sections: Vec<Section>,
    /// Names for node ids, when the input named its nodes.
    pub node_names: Vec<String>,
}

impl Page {
    /// The page with the nodes named as the input names them (`node 3 (zone-b #1)`; index =
    /// node id - 1).
    pub fn named(mut self, node_names: &[String]) -> Self {
        self.node_names = node_names.to_vec();
        self
    }

    /// The page as one self-contained HTML document.
    pub fn render(&self) -> String {
        let node_name = |n: usize| match self.node_names.get(n - 1) {
            Some(name) => format!("node {n} ({name})"),
            None => format!("node {n}"),
        };
        let mut out = String::new();
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>kivi: {}</title>\n<style>{STYLE}</style></head><body>\n",
            escape(&self.title)
        );
        let _ = writeln!(out, "<h1>kivi: {}</h1>", escape(&self.title));
        let _ = writeln!(out, "<p class=\"verdict\">{}</p>", escape(&self.verdict));
        out.push_str("<ul class=\"summary\">");
        for line in &self.summary {
            let _ = write!(out, "<li>{}</li>", escape(line));
        }
        out.push_str("</ul>\n");
        if !self.sections.is_empty() {
            out.push_str(&legend());
        }
        for section in &self.sections {
            let _ = writeln!(out, "<h2>{}</h2>", escape(&section.heading));
            let _ = writeln!(
                out,
                "<div class=\"chart\">{}</div>",
                svg(&section.timeline, &node_name)
            );
            out.push_str("<pre class=\"trace\">");
            for (index, column) in section.timeline.columns.iter().enumerate() {
                if section.timeline.loop_from == Some(index) {
                    out.push_str("<b>Loop (repeats forever):</b>\n");
                }
                for (number, line) in &column.lines {
                    let _ = writeln!(out, "{}", escape(&explained(*number, line)));
                }
                if let Some(fold) = &column.fold {
                    let _ = writeln!(out, "{}", escape(&fold.note()));
                }
            }
            for line in &section.timeline.epilogue {
                let _ = writeln!(out, "<b>{}</b>", escape(line));
            }
            out.push_str("</pre>\n");
        }
        out.push_str("</body></html>\n");
        out
    }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}\
.verdict{font-weight:bold;font-size:1.1em}.summary{color:#444}\
.chart{overflow-x:auto;border:1px solid #ccc;padding:4px}\
.lane-bg{fill:#fafafa;stroke:#e4e4e4}.queue .lane-bg{fill:#fff7e6}\
.lane-label{font-size:11px;fill:#333}\
.step-bg{fill:transparent}.step:hover .step-bg{fill:#e8eefc;fill-opacity:0.7}\
.violation .step-bg{stroke:#b00020;stroke-width:2.5;fill:#fde8ea;fill-opacity:0.6}\
.trace{background:#f6f6f6;padding:0.8em;font-size:12px;white-space:pre-wrap}\
.legend,.note{font-size:12px;color:#555}";

/// The page of a single-topology check.
pub fn single_page(title: &str, model: &ClusterModel, outcome: &Outcome<ClusterModel>) -> Page {
    let sections = outcome
        .violations
        .iter()
        .enumerate()
        .map(|(number, violation)| {
            let counterexample = Counterexample::of(model, violation);
            Section {
                heading: format!("Failure #{}: {}", number + 1, violation.failure),
                timeline: Timeline::of_counterexample(&counterexample),
            }
        })
        .collect();
    let stats = &outcome.stats;
    Page {
        title: title.to_string(),
        verdict: outcome.summary(),
        summary: vec![
            format!("Intents: {}", model.intent_names().join(", ")),
            format!("Setup: {}", super::single::setup_text(model)),
            format!(
                "States: {} stored, {} transitions, max depth {}, {} thread(s), {:.3} s",
                stats.states_stored,
                stats.transitions,
                stats.max_depth,
                stats.threads,
                stats.elapsed_s
            ),
        ],
        sections,
        node_names: Vec::new(),
    }
}

/// The page of a search for a lasso of `kind` (an eviction loop, or a run that does not stay
/// converged).
pub fn loop_page(title: &str, kind: LoopKind, model: &ClusterModel, search: &LoopSearch) -> Page {
    let (verdict, sections) = match &search.verdict {
        LoopVerdict::Found(found) => (
            eviction_loop::found_headline(kind).to_string(),
            vec![Section {
                heading: loop_heading(kind).to_string(),
                timeline: Timeline::of_loop(found),
            }],
        ),
        LoopVerdict::None => (eviction_loop::none_headline(kind).to_string(), Vec::new()),
        LoopVerdict::Incomplete(reason) => (format!("Incomplete: {reason}"), Vec::new()),
    };
    Page {
        title: title.to_string(),
        verdict,
        summary: vec![
            format!(
                "Setup: {}",
                super::single::setup_text(&searched_cluster(model))
            ),
            format!(
                "States: {} stored, {} transitions, {} thread(s), {:.3} s",
                search.stats.states,
                search.stats.transitions,
                search.stats.threads,
                search.elapsed.as_secs_f64()
            ),
        ],
        sections,
        node_names: Vec::new(),
    }
}

/// The heading of a lasso's timeline.
fn loop_heading(kind: LoopKind) -> &'static str {
    match kind {
        LoopKind::Eviction => "Eviction loop",
        LoopKind::UnstableReconciliation => "Not converged forever",
        LoopKind::DrainNeverCompletes => "Drain never completes",
    }
}

/// The page of a sweep: one section per violating topology's counterexample.
pub fn sweep_page(title: &str, result: &SweepResult) -> Page {
    let mut sections = Vec::new();
    for violation in &result.violations {
        let at = &violation.row.topology;
        match &violation.finding {
            Finding::Intents(outcome) => {
                for v in &outcome.violations {
                    let counterexample = Counterexample::of(&violation.model, v);
                    sections.push(Section {
                        heading: format!("Topology {at}: {}", v.failure),
                        timeline: Timeline::of_counterexample(&counterexample),
                    });
                }
            }
            Finding::Loop(found) => sections.push(Section {
                heading: format!("Topology {at}: {}", loop_heading(found.kind).to_lowercase()),
                timeline: Timeline::of_loop(found),
            }),
        }
    }
    let verdict = match result.violations.first() {
        Some(first) => format!(
            "{} violating topology(ies); the smallest is {}.",
            result.violations.len(),
            first.row.topology
        ),
        None => format!("No failure in {} topologies.", result.candidates),
    };
    Page {
        title: title.to_string(),
        verdict,
        summary: vec![format!(
            "Scaling: {} topologies up to the confident size (semantics {}, fast-find {}, {} \
             thread(s))",
            result.candidates,
            result.semantics.name(),
            result.fast_find.level(),
            result.threads
        )],
        sections,
        node_names: Vec::new(),
    }
}
