//! Taking one measurement: `kivi check` run as a child process, as a user runs it, timed from
//! outside and read back from its JSON report.

use super::config::{Input, Mode, RunConfig, Variant};
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// One point of a sweep: a run's mode on one input, at one thread count and fast-find level.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Measurement {
    /// Index of the run in the config.
    pub run: usize,
    /// What is checked.
    pub input: Input,
    /// Fast-find level (sweeps only; 0 otherwise).
    pub fast_find: u8,
    /// The single topology checked (`--topology`), if any.
    pub topology: Option<String>,
    /// Worker threads (last, so that results sort by thread count within a group).
    pub threads: usize,
}

/// What one run of a measurement produced.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// kivi's exit code: 0 no violation, 1 violation, 3 incomplete.
    pub exit_code: i32,
    /// The report's verdict.
    pub verdict: String,
    /// Seconds from starting the process to its exit.
    pub wall_s: f64,
    /// CPU seconds the process used, user and system, on all its threads.
    pub cpu_s: f64,
    /// The process's peak resident memory, in bytes.
    pub peak_rss_bytes: u64,
    /// Seconds kivi itself reports (the sweep's, or the single check's search time).
    pub time_s: f64,
    /// States stored, summed over a sweep's topologies.
    pub states: u64,
    /// Transitions, summed likewise.
    pub transitions: u64,
    /// Sweeps: topologies up to the confident size in the search's order.
    pub candidates: Option<u64>,
    /// Sweeps: topologies checked.
    pub checked: Option<u64>,
    /// Sweeps: topologies decided up to the minimal violating one (Kivi's "tried").
    pub decided: Option<u64>,
    /// Sweeps: the minimal violating topology in Kivi's words.
    pub minimal: Option<String>,
    /// Sweeps: nodes, replicas and pod slots of the minimal violating topology.
    pub minimal_size: Option<(u64, u64, u64)>,
    /// Sweeps: per-topology check times, p50, p99 and max in milliseconds.
    pub check_times_ms: Option<(f64, f64, f64)>,
    /// Single checks: nodes and pod slots of the topology.
    pub size: Option<(u64, u64)>,
}

/// The `kivi check` (or `kivi bench engine`) arguments of `measurement` in `run`.
pub fn check_arguments(run: &RunConfig, measurement: &Measurement) -> Vec<String> {
    if let Some(engine) = &run.engine {
        let mut args: Vec<String> = [
            "bench",
            "engine",
            "--model",
            &engine.model,
            "--vars",
            &engine.vars.to_string(),
            "--max",
            &engine.max.to_string(),
            "--threads",
            &measurement.threads.to_string(),
            "--format",
            "json",
        ]
        .map(str::to_string)
        .to_vec();
        search_arguments(run, &mut args);
        return args;
    }
    let mut args = vec!["check".to_string()];
    match &measurement.input {
        Input::Case(name) => {
            args.extend(["--case".to_string(), name.clone()]);
            if run.variant == Variant::NonViolation {
                args.push("--non-violation".into());
            }
        }
        Input::File(path) => args.push(path.display().to_string()),
        Input::Synthetic(_) => unreachable!("synthetic inputs are engine runs"),
    }
    match (run.mode, &measurement.topology) {
        (Mode::Scaling | Mode::AllViolations, _) => {
            args.extend(["--fast-find".into(), measurement.fast_find.to_string()]);
            if run.mode == Mode::AllViolations {
                args.push("--all-violations".into());
            }
            let sizes = [
                ("--scale", run.scale),
                ("--confident-nodes", run.confident_nodes),
                ("--confident-ratio", run.confident_ratio),
            ];
            for (flag, value) in sizes {
                if let Some(value) = value {
                    args.extend([flag.to_string(), value.to_string()]);
                }
            }
        }
        (_, Some(topology)) => args.extend(["--topology".into(), topology.clone()]),
        (_, None) => args.push("--original".into()),
    }
    args.extend(["--threads".into(), measurement.threads.to_string()]);
    search_arguments(run, &mut args);
    if run.eviction_loop {
        args.push("--loop".into());
    }
    if let Some(seconds) = run.timeout_s {
        args.extend(["--timeout".into(), seconds.to_string()]);
    }
    if let Some(memory) = &run.memory {
        args.extend(["--memory".into(), memory.clone()]);
    }
    args.extend(["--format".into(), "json".into(), "--quiet".into()]);
    args
}

/// `--strategy` and `--expect-states`, when the run gives them.
fn search_arguments(run: &RunConfig, args: &mut Vec<String>) {
    if let Some(strategy) = &run.strategy {
        args.extend(["--strategy".into(), strategy.clone()]);
    }
    if let Some(states) = run.expect_states {
        args.extend(["--expect-states".into(), states.to_string()]);
    }
}

/// What the kernel reports of a child that has exited.
struct Exit {
    /// Its exit code, or -1 when a signal ended it.
    code: i32,
    /// CPU seconds, user and system, all threads.
    cpu_s: f64,
    /// Peak resident memory in bytes.
    peak_rss_bytes: u64,
}

/// Waits for the child `pid` with `wait4`, which gives that child's own resource use (the
/// standard library's wait does not).
fn wait_for(pid: u32) -> Result<Exit, String> {
    let mut status = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: wait4 writes the status and, on success, the rusage it is given.
    let waited = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, usage.as_mut_ptr()) };
    if waited != pid as libc::pid_t {
        return Err(format!(
            "waiting for kivi failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: wait4 succeeded, so it filled `usage`.
    let usage = unsafe { usage.assume_init() };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Exit {
        code: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        },
        cpu_s: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        // Linux reports ru_maxrss in kilobytes.
        peak_rss_bytes: usage.ru_maxrss.max(0) as u64 * 1024,
    })
}

/// Reads all of a child's pipe on a thread of its own, so that neither pipe fills up.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Runs `kivi` (the executable at `kivi`) with `args` and reads its report, with the wall
/// time, CPU time and peak memory of that process alone.
pub fn take(kivi: &Path, args: &[String]) -> Result<Sample, String> {
    let started = Instant::now();
    let mut child = Command::new(kivi)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot run {}: {error}", kivi.display()))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let exit = wait_for(child.id())?;
    let wall_s = started.elapsed().as_secs_f64();
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let command = || format!("kivi {}", args.join(" "));
    let exit_code = exit.code;
    if !matches!(exit_code, 0 | 1 | 3) {
        return Err(format!(
            "`{}` failed with exit code {exit_code}: {}",
            command(),
            String::from_utf8_lossy(&stderr).trim()
        ));
    }
    let report: Value = serde_json::from_slice(&stdout)
        .map_err(|error| format!("`{}` printed no JSON report: {error}", command()))?;
    let mut sample = read_report(&report).ok_or_else(|| {
        format!(
            "`{}` printed a report without the expected fields",
            command()
        )
    })?;
    sample.exit_code = exit_code;
    sample.wall_s = wall_s;
    sample.cpu_s = exit.cpu_s;
    sample.peak_rss_bytes = exit.peak_rss_bytes;
    Ok(sample)
}

/// The figures of a single-topology or sweep report.
fn read_report(report: &Value) -> Option<Sample> {
    let number = |value: &Value| value.as_u64();
    let verdict = report["verdict"].as_str()?.to_string();
    if report.get("model").is_some() {
        return Some(Sample {
            verdict,
            time_s: report["elapsed_s"].as_f64()?,
            states: number(&report["states_stored"])?,
            transitions: number(&report["transitions"])?,
            ..Sample::default()
        });
    }
    if report["mode"] == "single" || report["mode"] == "loop" {
        let stats = &report["stats"];
        return Some(Sample {
            verdict,
            time_s: stats["elapsed_s"].as_f64()?,
            states: number(&stats["states_stored"])?,
            transitions: number(&stats["transitions"])?,
            size: Some((
                number(&report["setup"]["nodes"])?,
                number(&report["setup"]["pods"])?,
            )),
            ..Sample::default()
        });
    }
    let rows = report["rows"].as_array()?;
    let minimal = &report["minimal"];
    let times = &report["checkTimes"];
    Some(Sample {
        verdict,
        time_s: report["elapsed_s"].as_f64()?,
        states: rows.iter().filter_map(|row| number(&row["states"])).sum(),
        transitions: rows
            .iter()
            .filter_map(|row| number(&row["transitions"]))
            .sum(),
        candidates: number(&report["candidates"]),
        checked: number(&report["checksFinished"]),
        decided: number(&report["topologiesDecided"]),
        minimal: minimal["kivi"].as_str().map(str::to_string),
        minimal_size: number(&minimal["nodes"])
            .zip(number(&minimal["replicas"]))
            .zip(number(&minimal["pods"]))
            .map(|((nodes, replicas), pods)| (nodes, replicas, pods)),
        check_times_ms: times["p50_ms"]
            .as_f64()
            .zip(times["p99_ms"].as_f64())
            .zip(times["max_ms"].as_f64())
            .map(|((p50, p99), max)| (p50, p99, max)),
        ..Sample::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::config::SweepConfig;

    fn run(json: &str) -> RunConfig {
        let config: SweepConfig =
            serde_json::from_str(&format!(r#"{{"title": "t", "runs": [{json}]}}"#)).unwrap();
        config.runs.into_iter().next().unwrap()
    }

    fn measurement(input: Input, topology: Option<&str>) -> Measurement {
        Measurement {
            run: 0,
            input,
            threads: 4,
            fast_find: 2,
            topology: topology.map(str::to_string),
        }
    }

    #[test]
    fn builds_the_check_command_of_each_mode() {
        let sweep = run(
            r#"{"name": "r", "mode": "all-violations", "cases": ["c3"], "variant": "non-violation", "scale": 6, "timeout_s": 60}"#,
        );
        let args = check_arguments(&sweep, &measurement(Input::Case("c3".into()), None));
        assert_eq!(
            args.join(" "),
            "check --case c3 --non-violation --fast-find 2 --all-violations --scale 6 \
             --threads 4 --timeout 60 --format json --quiet"
        );
        let single =
            run(r#"{"name": "r", "mode": "single", "inputs": ["m.json"], "memory": "8G"}"#);
        let args = check_arguments(
            &single,
            &measurement(Input::File("m.json".into()), Some("4,4:24")),
        );
        assert_eq!(
            args.join(" "),
            "check m.json --topology 4,4:24 --threads 4 --memory 8G --format json --quiet"
        );
        let args = check_arguments(&single, &measurement(Input::File("m.json".into()), None));
        assert!(args.contains(&"--original".to_string()), "{args:?}");
    }

    #[test]
    fn reads_sweep_and_single_reports() {
        let sweep = serde_json::json!({
            "mode": "scaling", "verdict": "violation", "elapsed_s": 0.5, "candidates": 264,
            "checksFinished": 60, "topologiesDecided": 58,
            "minimal": {"kivi": "{node type 0: 1}", "nodes": 3, "replicas": 3, "pods": 6},
            "checkTimes": {"p50_ms": 0.2, "p99_ms": 5.0, "max_ms": 6.0},
            "rows": [{"states": 10, "transitions": 12}, {"states": 5, "transitions": 4}],
        });
        let sample = read_report(&sweep).unwrap();
        assert_eq!((sample.states, sample.transitions), (15, 16));
        assert_eq!(sample.decided, Some(58));
        assert_eq!(sample.minimal_size, Some((3, 3, 6)));
        assert_eq!(sample.check_times_ms, Some((0.2, 5.0, 6.0)));
        let single = serde_json::json!({
            "mode": "single", "verdict": "no_violation",
            "setup": {"nodes": 8, "pods": 48},
            "stats": {"elapsed_s": 1.5, "states_stored": 1000, "transitions": 2000},
        });
        let sample = read_report(&single).unwrap();
        assert_eq!((sample.states, sample.size), (1000, Some((8, 48))));
        assert!(read_report(&serde_json::json!({"verdict": "violation"})).is_none());
    }
}
