//! A verifier must never answer wrongly: one test per way kivi once gave a false or unfounded
//! answer, a panic or a hang (issue "A verifier must never say No failure wrongly"). Fixtures
//! are in `tests/data/wrong-answers/`.

#[path = "support/cli.rs"]
mod cli;

use cli::kivi;
use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const DATA: &str = "tests/data/wrong-answers";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn fixture(name: &str) -> String {
    format!("{DATA}/{name}")
}

/// `kivi ARGS` exits with `code` and its standard error contains `message`.
fn fails_with(args: &[&str], code: i32, message: &str) {
    let output = kivi(args);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(stderr.contains(message), "{args:?}: {stderr}");
}

#[test]
fn row_1_swept_topologies_take_the_kubectl_apply_step() {
    let output = kivi(&["check", "models/c2-apply-without-replicas", "-q"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("Violating intent(s): replica_num_always_meet_min"));
    assert!(stdout.contains(
        "Minimal violating topology: {node type 0: 1, deployment type 0: 3} (1 nodes, 3 \
         replicas, up to 6 pods)\n"
    ));
    assert!(stdout.contains("[applyDeployment] Applying the template 1"));
    let one = kivi(&[
        "check",
        "models/c2-apply-without-replicas",
        "--topology",
        "3:3",
        "-q",
    ]);
    assert_eq!(one.status.code(), Some(1), "{}", text(&one.stdout));
}

#[test]
fn row_2_an_empty_or_comment_only_file_is_nothing_to_verify() {
    for file in ["empty.yaml", "comments-only.yaml"] {
        fails_with(&["check", &fixture(file), "-q"], 2, "nothing to verify");
    }
}

#[test]
fn row_3_a_deployment_without_nodes_names_what_is_missing() {
    let file = fixture("deployment-only.yaml");
    for original in [false, true] {
        let mut args = vec!["check", file.as_str(), "-q"];
        if original {
            args.push("--original");
        }
        fails_with(
            &args,
            2,
            "no nodes: the workloads have nowhere to run; add Node objects, or node types",
        );
    }
}

#[test]
fn row_4_a_template_with_min_size_above_max_size_is_refused() {
    fails_with(
        &["check", &fixture("template-min-above-max.json"), "-q"],
        2,
        "userDefined.nodesTypes[0].minSize: 5 is above maxSize 2",
    );
    fails_with(
        &[
            "check",
            &fixture("template-min-size-two.json"),
            "--scale",
            "1",
            "-q",
        ],
        2,
        "--scale: 1 allows at most 1, below userDefined.nodesTypes[1].minSize 2; fix: give \
         --scale 2 or more",
    );
}

#[test]
fn row_5_topologies_cut_short_make_the_minimum_only_the_smallest_found() {
    // The smallest bounds kivi accepts (#46 row 9 refuses --memory below 16K and --timeout 0):
    // C3's smaller topologies under `any` ties without symmetry outgrow a 16 KiB table, and a
    // nanosecond cuts short every topology whose violation is not met first.
    let memory: &[&str] = &["--memory", "16K", "--tie-break", "any", "--no-symmetry"];
    let timeout: &[&str] = &["--timeout", "0.000000001"];
    for bound in [memory, timeout] {
        let mut args = vec![
            "check",
            "--case",
            "c3",
            "--threads",
            "1",
            "--format",
            "json",
        ];
        args.extend_from_slice(bound);
        let output = kivi(&args);
        assert_eq!(output.status.code(), Some(1), "the violation is real");
        let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        let minimal = &report["minimal"];
        assert_eq!(minimal["guaranteedMinimal"], false, "{bound:?}");
        let cut_short = minimal["cutShortBefore"].as_u64().unwrap();
        assert!(cut_short > 0, "{bound:?}");
        if bound == memory {
            args.truncate(5);
            args.extend_from_slice(&["-q"]);
            args.extend_from_slice(bound);
            let output = kivi(&args);
            let expected = format!(
                "— smallest found; not guaranteed minimal: {cut_short} smaller topologies were \
                 cut short ("
            );
            let stdout = text(&output.stdout);
            let line = stdout
                .lines()
                .find(|l| l.contains(&expected))
                .unwrap_or_else(|| panic!("{stdout}"));
            // The visited set or a listing under `any` (charged as it grows) meets the budget.
            assert!(line.contains("memory budget"), "{stdout}");
        }
    }
}

#[test]
fn row_6_locations_beyond_the_nodes() {
    // An idle slot's location is meaningless (Kivi's own cases carry stale ones): the check
    // runs exactly as the unmodified case does.
    let stale = kivi(&[
        "check",
        &fixture("c8-idle-pod-stale-loc.json"),
        "--format",
        "json",
    ]);
    let case = kivi(&["check", "--case", "c8", "--original", "--format", "json"]);
    assert_eq!(stale.status.code(), case.status.code());
    let states = |output: &Output| {
        let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        report["stats"]["states_stored"].clone()
    };
    assert_eq!(states(&stale), states(&case));
    // A placed pod on a node that does not exist is an input error.
    fails_with(
        &["check", &fixture("c3-placed-pod-beyond-nodes.json"), "-q"],
        2,
        "setup.pods[0].loc",
    );
}

#[test]
fn row_6_a_panic_in_one_worker_stops_every_worker() {
    // That the other workers stop after their current state is counted by the engine's own
    // test (`engine::synthetic::faulty`); here the binary reports the panic, exit 4.
    for threads in ["1", "2", "16"] {
        let output = kivi(&[
            "bench",
            "engine",
            "--model",
            "panicking-counters",
            "--vars",
            "6",
            "--max",
            "9",
            "--threads",
            threads,
        ]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{threads} threads: {stderr}");
        assert!(
            stderr.contains("internal error") && stderr.contains("injected fault"),
            "{stderr}"
        );
    }
}

#[test]
fn row_7_a_timeout_beyond_what_a_duration_holds_is_refused() {
    fails_with(
        &["check", "--case", "c3", "--timeout", "1e20"],
        2,
        "leave --timeout out for no limit",
    );
}

#[test]
fn row_8_more_replicas_than_pod_slots_is_refused() {
    fails_with(
        &["check", "--case", "c3", "--topology", "1,2:300", "-q"],
        2,
        "the topology asks 300 replicas, but 3 node(s) hold at most 21 pods",
    );
}

#[test]
fn row_9_yaml_non_finite_numbers_are_refused() {
    fails_with(
        &["check", &fixture("non-finite.yaml"), "-q"],
        2,
        "non-finite.yaml:11:3: spec.replicas: .nan is not a finite number",
    );
}

#[test]
fn row_10_autoscaling_v2beta2_is_converted_with_a_warning() {
    let output = kivi(&["check", &fixture("hpa-v2beta2.yaml"), "--original", "-q"]);
    let stderr = text(&output.stderr);
    assert!(stderr.contains(
        "HorizontalPodAutoscaler/web: apiVersion autoscaling/v2beta2 was removed from \
         Kubernetes; read as autoscaling/v2"
    ));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

#[test]
fn row_11_a_journal_in_use_is_refused() {
    let journal = std::env::temp_dir().join(format!("kivi-shared-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&journal);
    let journal_arg = journal.to_str().expect("utf-8");
    let mut first = Command::new(env!("CARGO_BIN_EXE_kivi"))
        .args([
            "check",
            "--case",
            "c3",
            "--non-violation",
            "--scale",
            "6",
            "--threads",
            "1",
            "-q",
            "--journal",
            journal_arg,
        ])
        .stdout(Stdio::null())
        .spawn()
        .expect("kivi starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::metadata(&journal).map_or(true, |m| m.len() == 0) {
        assert!(Instant::now() < deadline, "the first sweep never wrote");
        std::thread::sleep(Duration::from_millis(20));
    }
    fails_with(
        &[
            "check",
            "--case",
            "c3",
            "--non-violation",
            "--journal",
            journal_arg,
        ],
        2,
        "journal in use by another kivi run",
    );
    assert_eq!(first.wait().expect("the first sweep ends").code(), Some(0));
    let lines = std::fs::read_to_string(&journal).expect("a journal");
    assert!(lines
        .lines()
        .all(|line| serde_json::from_str::<Value>(line).is_ok()));
    std::fs::remove_file(&journal).expect("the journal exists");
}

#[test]
fn row_12_the_breadth_first_frontier_counts_toward_the_memory_budget() {
    let output = kivi(&[
        "check",
        "bench-configs/models/c3-four-node-failures.json",
        "--topology",
        "4,4:24",
        "--strategy",
        "bfs",
        "--memory",
        "64M",
        "-q",
    ]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("memory budget of 64 MiB reached"),
        "{stdout}"
    );
    // The largest child process so far is this one or a smaller one: well under a gigabyte
    // (it reached 2.8 GB when the frontier was not counted).
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr());
        usage.assume_init()
    };
    assert!(usage.ru_maxrss < 1 << 20, "peak {} KiB", usage.ru_maxrss);
}

#[test]
fn ctrl_c_ends_a_sweep_with_what_it_decided_and_how_to_resume() {
    let journal = std::env::temp_dir().join(format!("kivi-sigint-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&journal);
    let journal_arg = journal.to_str().expect("utf-8");
    let args = [
        "check",
        "--case",
        "c3",
        "--non-violation",
        "--scale",
        "6",
        "--threads",
        "1",
        "-q",
        "--journal",
        journal_arg,
    ];
    let child = Command::new(env!("CARGO_BIN_EXE_kivi"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kivi starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count()) < 50 {
        assert!(Instant::now() < deadline, "the sweep never got going");
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: sends SIGINT to the child we started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let output = child.wait_with_output().expect("kivi ends");
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("Incomplete: interrupted (Ctrl-C) with"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "topologies are recorded in {journal_arg}; run the same command again to resume"
        )),
        "{stdout}"
    );
    let resumed = kivi(&args);
    let stdout = text(&resumed.stdout);
    assert_eq!(resumed.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("No failure is found!"));
    assert!(stdout.contains("Topologies decided: 1644 up to the answer"));
    assert!(!stdout.contains(", 0 from the journal"), "{stdout}");
    std::fs::remove_file(&journal).expect("the journal exists");
}
