//! A sweep split into shards run as separate processes (`kivi check --shard I/N --journal`)
//! and merged (`kivi merge`) gives the single run's report; shards killed mid-way resume;
//! missing shards and journals of different sweeps are named; `kivi job` prints an Indexed Job
//! that the Kubernetes types read back.

use crate::support::{cli, scratch};

use cli::{json_of, kivi};
use k8s_openapi::api::batch::v1::Job;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `case` args of a sweep on one thread, as every run of these tests checks it.
fn sweep_args(case: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec!["check".into()];
    args.extend(case.iter().map(|a| a.to_string()));
    args.extend(["--threads", "1", "--quiet"].map(String::from));
    args
}

/// Runs every shard of `count` as its own process, side by side; returns their exit codes.
fn run_shards(case: &[&str], count: u32, dir: &Path) -> Vec<i32> {
    let children: Vec<_> = (0..count)
        .map(|index| {
            let mut args = sweep_args(case);
            args.extend([
                "--shard".to_string(),
                format!("{index}/{count}"),
                "--journal".to_string(),
                dir.join(format!("shard-{index}.jsonl"))
                    .display()
                    .to_string(),
            ]);
            Command::new(env!("CARGO_BIN_EXE_kivi"))
                .args(&args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("a shard starts")
        })
        .collect();
    children
        .into_iter()
        .map(|mut child| {
            child
                .wait()
                .expect("a shard ends")
                .code()
                .expect("an exit code")
        })
        .collect()
}

/// The JSON report without what varies from run to run: times and rates, and the memory the
/// run's checks held (which a merge, running none, does not report).
fn without_timings(mut report: Value) -> Value {
    if let Some(map) = report.as_object_mut() {
        map.remove("memory");
    }
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for key in ["elapsed_s", "checkTimes", "states_per_s"] {
                    map.remove(key);
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut report);
    report
}

/// The single run's JSON report and exit code.
fn single_run(case: &[&str]) -> (Value, i32) {
    let mut args = sweep_args(case);
    args.extend(["--format", "json"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = kivi(&args);
    (
        json_of(&output),
        output.status.code().expect("an exit code"),
    )
}

/// `kivi merge` of `paths` on one thread.
fn merge(paths: &[&Path], format: &str) -> std::process::Output {
    let mut args = vec!["merge".to_string(), "--threads".into(), "1".into()];
    args.extend(["--format".to_string(), format.to_string()]);
    args.extend(paths.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    kivi(&args)
}

const C3: [&str; 5] = ["--case", "c3", "--non-violation", "--scale", "6"];

#[test]
fn c3_in_four_shards_merges_into_the_single_runs_report() {
    let dir = scratch("c3");
    let (single, code) = single_run(&C3);
    assert_eq!(code, 0);
    assert_eq!(single["topologiesDecided"], 1644);
    assert_eq!(run_shards(&C3, 4, &dir), vec![0; 4]);
    let merged = merge(&[&dir], "json");
    assert_eq!(merged.status.code(), Some(0));
    assert_eq!(without_timings(json_of(&merged)), without_timings(single));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn c8_in_three_shards_merges_into_the_single_runs_minimal_topology() {
    let dir = scratch("c8");
    let case = ["--case", "c8"];
    let (single, code) = single_run(&case);
    assert_eq!(code, 1);
    assert_eq!(
        run_shards(&case, 3, &dir),
        vec![1; 3],
        "each shard has a violation"
    );
    let merged = merge(&[&dir], "json");
    assert_eq!(merged.status.code(), Some(1));
    let report = json_of(&merged);
    assert_eq!(
        report["minimal"]["kivi"],
        "{node type 0: 1, node type 1: 2, deployment type 0: 6}"
    );
    assert_eq!(report["minimal"]["guaranteedMinimal"], true);
    assert_eq!(without_timings(report), without_timings(single));
    let text = merge(&[&dir], "text");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "Minimal violating topology: {node type 0: 1, node type 1: 2, deployment type 0: 6}"
        ),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_fast_find_level_gives_the_single_runs_answer_across_shards() {
    for level in ["1", "2", "3"] {
        let dir = scratch(&format!("fast-find-{level}"));
        let case = ["--case", "c8", "--fast-find", level];
        let (single, code) = single_run(&case);
        run_shards(&case, 3, &dir);
        let merged = merge(&[&dir], "json");
        assert_eq!(merged.status.code(), Some(code), "fast-find {level}");
        let report = json_of(&merged);
        assert_eq!(report["minimal"], single["minimal"], "fast-find {level}");
        assert_eq!(
            report["candidates"], single["candidates"],
            "fast-find {level}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_shard_killed_mid_way_resumes_from_its_journal_and_merges() {
    let dir = scratch("killed");
    let (single, _) = single_run(&C3);
    assert_eq!(run_shards(&C3, 2, &dir), vec![0, 0]);
    let journal = dir.join("shard-1.jsonl");
    std::fs::remove_file(&journal).unwrap();
    let mut args = sweep_args(&C3);
    args.extend(["--shard", "1/2", "--journal"].map(String::from));
    args.push(journal.display().to_string());
    let mut shard = Command::new(env!("CARGO_BIN_EXE_kivi"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the shard starts");
    let lines = || std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
    let started = Instant::now();
    while lines() < 100 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    shard.kill().expect("killed");
    shard.wait().expect("gone");
    // A kill mid-write leaves a line cut off: the merge warns and the rerun repairs it.
    let mut text = std::fs::read_to_string(&journal).unwrap();
    let decided = text.lines().count() - 1;
    assert!(
        (99..822).contains(&decided),
        "killed mid-way: {decided} decided"
    );
    text.push_str(r#"{"input":"b06"#);
    std::fs::write(&journal, text).unwrap();
    let partial = merge(&[&dir], "text");
    assert_eq!(partial.status.code(), Some(3), "a partial shard");
    let stdout = String::from_utf8_lossy(&partial.stdout);
    assert!(stdout.contains("shard(s) partial: 1/2"), "{stdout}");
    assert!(String::from_utf8_lossy(&partial.stderr).contains("the last line was cut off"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(kivi(&args).status.code(), Some(0), "the rerun resumes");
    let merged = merge(&[&dir], "json");
    assert_eq!(merged.status.code(), Some(0));
    let report = json_of(&merged);
    assert_eq!(report["rows"].as_array().map(Vec::len), Some(1644));
    assert_eq!(without_timings(report), without_timings(single));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_shards_are_named_and_journals_of_two_sweeps_refused() {
    let dir = scratch("missing");
    assert_eq!(run_shards(&C3, 4, &dir), vec![0; 4]);
    let shard = |i: u32| dir.join(format!("shard-{i}.jsonl"));
    let (zero, one, three) = (shard(0), shard(1), shard(3));
    let missing = merge(&[&zero, &one, &three], "json");
    assert_eq!(missing.status.code(), Some(3));
    let report = json_of(&missing);
    let reason = report["incomplete"].as_str().expect("incomplete");
    assert!(reason.starts_with("shard(s) missing: 2/4;"), "{reason}");
    let other = scratch("other");
    assert_eq!(
        run_shards(&["--case", "c3", "--scale", "6"], 4, &other),
        vec![1; 4]
    );
    let wrong = merge(&[&zero, &other.join("shard-1.jsonl")], "text");
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("are journals of different sweeps"));
    let twice = merge(&[&zero, &zero], "text");
    assert_eq!(twice.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&twice.stderr).contains("shard 0/4 is in both"));
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&other).unwrap();
}

/// A violation found in the shards given is a violation (exit 1) in every format, whatever
/// shards are missing; the missing shard only leaves its minimality open, which the text, the
/// JSON report and a SARIF notification say (#46 row 8).
#[test]
fn a_violation_found_with_a_shard_missing_is_a_violation_not_guaranteed_minimal() {
    let dir = scratch("violation-missing");
    assert_eq!(run_shards(&["--case", "c3"], 3, &dir), vec![1; 3]);
    let shard = |i: u32| dir.join(format!("shard-{i}.jsonl"));
    let (zero, two) = (shard(0), shard(2));
    let text = merge(&[&zero, &two], "text");
    assert_eq!(text.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("1 failure(s) found!"), "{stdout}");
    assert!(
        stdout.contains("not guaranteed minimal: 19 smaller topologies were not decided (shard(s) missing: 1/3;"),
        "{stdout}"
    );
    assert!(!stdout.contains("Incomplete:"), "{stdout}");
    let json = merge(&[&zero, &two], "json");
    assert_eq!(json.status.code(), Some(1));
    let report = json_of(&json);
    assert_eq!(report["verdict"], "violation");
    assert_eq!(report["incomplete"], Value::Null);
    assert_eq!(report["minimal"]["guaranteedMinimal"], false);
    let missing = report["minimal"]["missingShards"]
        .as_str()
        .unwrap_or_default();
    assert!(missing.starts_with("shard(s) missing: 1/3;"), "{report}");
    let sarif = merge(&[&zero, &two], "sarif");
    assert_eq!(sarif.status.code(), Some(1));
    let log = json_of(&sarif);
    let notes = &log["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    let note = notes[0]["message"]["text"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("Not guaranteed minimal: shard(s) missing: 1/3;"),
        "{log}"
    );
    assert_eq!(log["runs"][0]["results"].as_array().map(Vec::len), Some(1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn kivi_job_prints_an_indexed_job_the_kubernetes_types_read() {
    let output = kivi(&[
        "job",
        "--shards",
        "4",
        "--image",
        "registry.example/kivi:1",
        "--",
        "cases/c3/template-non-violation.json",
        "--scale",
        "6",
        "--threads",
        "2",
        "--memory",
        "2G",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let yaml = String::from_utf8(output.stdout).expect("UTF-8");
    let documents: Vec<&str> = yaml.split("---\n").collect();
    assert_eq!(documents.len(), 3, "ConfigMap, claim, Job");
    let job: Job = serde_yaml_ng::from_str(documents[2]).expect("a batch/v1 Job");
    let spec = job.spec.expect("a spec");
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!(spec.completions, Some(4));
    assert_eq!(spec.backoff_limit_per_index, Some(3));
    let pod = spec.template.spec.expect("a pod");
    let container = &pod.containers[0];
    let script = &container.command.as_ref().expect("a command")[2];
    assert!(
        script.starts_with(
            "kivi check '/input/template-non-violation.json' '--scale' '6' '--threads' '2' \
             '--memory' '2G' '--report-as' 'cases/c3/template-non-violation.json' \
             --shard \"$JOB_COMPLETION_INDEX/4\""
        ),
        "{script}"
    );
    let requests = container
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .expect("requests");
    assert_eq!(requests["cpu"].0, "2");
    // The budget caps what the checks hold; the pod adds the process's fixed overhead for 2
    // threads, as measured (64 MiB and 24 MiB a thread), not a quarter of the budget.
    let limits = container
        .resources
        .as_ref()
        .and_then(|r| r.limits.as_ref())
        .expect("limits");
    assert_eq!(requests["memory"].0, "2160Mi");
    assert_eq!(limits["memory"], requests["memory"]);
    assert_eq!((2u64 << 30) + kivi::engine::process_overhead(2), 2160 << 20);
    let config_map: k8s_openapi::api::core::v1::ConfigMap =
        serde_yaml_ng::from_str(documents[0]).expect("a ConfigMap");
    let data = config_map.data.expect("data");
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/c3/template-non-violation.json"),
    )
    .unwrap();
    assert_eq!(data["0000-template-non-violation.json"], text);
    for (args, why) in [
        (vec!["--case", "c3", "--journal", "j"], "are set by the Job"),
        (vec!["--case", "c3", "--original"], "nothing to shard"),
        (vec!["-"], "cannot reach the Job's pods"),
    ] {
        let mut command = vec!["job", "--shards", "2", "--image", "x", "--"];
        command.extend(args);
        let refused = kivi(&command);
        assert_eq!(refused.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&refused.stderr).contains(why));
    }
}

#[test]
fn a_copy_of_the_input_reported_as_the_original_gives_the_originals_report() {
    // What a `kivi job` pod does: it reads the input from /input and names it as the user does.
    let dir = scratch("report-as");
    let copy = dir.join("c3-spread-hpa");
    let original = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/c3-spread-hpa");
    let mut pending = vec![(original.clone(), copy.clone())];
    while let Some((from, to)) = pending.pop() {
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(&from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.path().is_dir() {
                pending.push((entry.path(), target));
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    let args = ["-q", "--threads", "1", "--format", "sarif"];
    let mut from_copy = vec![
        "check",
        copy.to_str().unwrap(),
        "--report-as",
        "models/c3-spread-hpa",
    ];
    from_copy.extend(args);
    let mut direct = vec!["check", "models/c3-spread-hpa"];
    direct.extend(args);
    let (a, b) = (kivi(&from_copy), kivi(&direct));
    assert_eq!(a.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&a.stdout),
        String::from_utf8_lossy(&b.stdout)
    );
    assert!(String::from_utf8_lossy(&a.stdout).contains("models/c3-spread-hpa/yaml/deploy.yaml"));
    std::fs::remove_dir_all(&dir).unwrap();
}
