//! `--semantics kivi|kubernetes`: `kivi` (the default for the cases and uniform JSON) is Kivi's
//! scheduler, every verdict and state count as without the flag; `kubernetes` is the default
//! for Kubernetes inputs; every report says which semantics it used; `kubernetes`
//! runs on `check`, `diff` and `job` (refused only with a stale-view scheduler); `kivi merge`
//! refuses journals of differing semantics.

use crate::support::{cli, scratch};

use cli::{json_of, kivi};
use std::path::PathBuf;

const LIVE_DUMP: &str = "models/live-cluster-dump";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn kivi_is_the_default_and_gives_the_same_verdict_and_state_count() {
    let args = [
        "check",
        "--case",
        "c3",
        "--original",
        "--format",
        "json",
        "-q",
        // One worker: how many states a parallel search stores before it stops at the first
        // violation depends on how its workers race.
        "--threads",
        "1",
    ];
    let default = kivi(&args);
    let explicit = kivi(&[&args[..], &["--semantics", "kivi"]].concat());
    assert_eq!(default.status.code(), Some(1));
    assert_eq!(explicit.status.code(), Some(1));
    let (default, explicit) = (json_of(&default), json_of(&explicit));
    assert_eq!(default["setup"]["semantics"], "kivi");
    assert_eq!(explicit["setup"], default["setup"]);
    assert_eq!(explicit["violatedIntents"], default["violatedIntents"]);
    assert_eq!(
        explicit["stats"]["states_stored"],
        default["stats"]["states_stored"]
    );
}

#[test]
fn every_report_says_which_semantics_it_used() {
    let single = ["check", "--case", "c3", "--original", "-q"];
    let text_report = text(&kivi(&single).stdout);
    assert!(
        text_report.contains("Setup: 3 node(s), 6 pod slot(s), 1 deployment(s); semantics kivi"),
        "{text_report}"
    );
    let sarif = json_of(&kivi(&[&single[..], &["--format", "sarif"]].concat()));
    assert_eq!(sarif["runs"][0]["properties"]["semantics"], "kivi");
    let junit = text(&kivi(&[&single[..], &["--format", "junit"]].concat()).stdout);
    assert!(
        junit.contains("<property name=\"semantics\" value=\"kivi\"/>"),
        "{junit}"
    );
    let dir = scratch("semantics-page");
    let html = dir.join("page.html");
    let page = kivi(&[&single[..], &["--html", html.to_str().unwrap()]].concat());
    assert_eq!(page.status.code(), Some(1));
    let page = std::fs::read_to_string(&html).expect("the HTML page");
    assert!(page.contains("; semantics kivi"), "{page}");
    std::fs::remove_file(&html).unwrap();
    let sweep = [
        "check",
        "--case",
        "c3",
        "--non-violation",
        "--threads",
        "1",
        "-q",
    ];
    let sweep_text = text(&kivi(&sweep).stdout);
    assert!(
        sweep_text.contains("up to the confident size (semantics kivi, fast-find 0,"),
        "{sweep_text}"
    );
    let sweep_json = json_of(&kivi(&[&sweep[..], &["--format", "json"]].concat()));
    assert_eq!(sweep_json["semantics"], "kivi");
    let manifests = kivi(&["check", LIVE_DUMP, "--format", "json", "-q"]);
    assert_eq!(
        json_of(&manifests)["setup"]["semantics"],
        "kubernetes",
        "the default for Kubernetes inputs"
    );
    let explicit = kivi(&[
        "check",
        LIVE_DUMP,
        "--semantics",
        "kivi",
        "--format",
        "json",
        "-q",
    ]);
    assert_eq!(json_of(&explicit)["setup"]["semantics"], "kivi");
}

#[test]
fn kubernetes_runs_on_check_diff_and_job_but_not_with_a_stale_view_scheduler() {
    let check = kivi(&[
        "check",
        "--case",
        "c3",
        "--original",
        "--semantics",
        "kubernetes",
        "--format",
        "json",
        "-q",
    ]);
    assert!(matches!(check.status.code(), Some(0 | 1)), "{check:?}");
    assert_eq!(json_of(&check)["setup"]["semantics"], "kubernetes");
    let diff = kivi(&[
        "diff",
        "cases/c3/original.json",
        "cases/c3/original.json",
        "--semantics",
        "kubernetes",
    ]);
    assert!(matches!(diff.status.code(), Some(0 | 1)), "{diff:?}");
    let job = kivi(&[
        "job",
        "--shards",
        "2",
        "--image",
        "x",
        "--",
        "--case",
        "c3",
        "--semantics",
        "kubernetes",
    ]);
    assert_eq!(job.status.code(), Some(0), "{job:?}");
    assert!(text(&job.stdout).contains("kubernetes"));
    let stale = kivi(&[
        "check",
        "--case",
        "c3",
        "--original",
        "--semantics",
        "kubernetes",
        "--perturb",
        "stale-view",
    ]);
    assert_eq!(stale.status.code(), Some(2));
    assert!(text(&stale.stderr).starts_with(
        "error: --semantics kubernetes with --perturb stale-view: not supported for check: "
    ));
    let unknown = kivi(&["check", "--case", "c3", "--semantics", "k8s"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("expected `kivi` or `kubernetes`, not `k8s`"));
}

#[test]
fn merge_refuses_journals_of_differing_semantics() {
    let dir = scratch("semantics-merge");
    let journal = |i: u32| dir.join(format!("shard-{i}.jsonl"));
    for i in 0..2 {
        let shard = format!("{i}/2");
        let path = journal(i);
        let output = kivi(&[
            "check",
            "--case",
            "c3",
            "--non-violation",
            "--threads",
            "1",
            "-q",
            "--shard",
            &shard,
            "--journal",
            path.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    }
    let merge = |paths: [&PathBuf; 2]| {
        kivi(&[
            "merge",
            "--threads",
            "1",
            paths[0].to_str().unwrap(),
            paths[1].to_str().unwrap(),
        ])
    };
    assert_eq!(merge([&journal(0), &journal(1)]).status.code(), Some(0));
    let recorded = std::fs::read_to_string(journal(1)).unwrap();
    assert!(recorded.contains("\"semantics\":\"kivi\""), "{recorded}");
    std::fs::write(
        journal(1),
        recorded.replace("\"semantics\":\"kivi\"", "\"semantics\":\"kubernetes\""),
    )
    .unwrap();
    let refused = merge([&journal(0), &journal(1)]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("are journals of different sweeps: --semantics: kivi and kubernetes;"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
