//! `--semantics kivi|kubernetes`: `kivi` (the default) is Kivi's scheduler, every verdict and
//! state count as without the flag; every report says which semantics it used; `kubernetes`
//! is refused by `check`, `diff` and `job` until the model schedules as kube-scheduler does (exit 2,
//! never a check under Kivi's rules in its name); `kivi merge` refuses journals of differing
//! semantics.

#[path = "support/cli.rs"]
mod cli;

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
    let html = std::env::temp_dir().join(format!("kivi-semantics-{}.html", std::process::id()));
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
    assert_eq!(json_of(&manifests)["setup"]["semantics"], "kivi");
}

#[test]
fn kubernetes_is_refused_by_check_and_diff_until_the_model_schedules_so() {
    let expected = "error: --semantics kubernetes: not yet supported for check: ";
    for args in [
        &["check", "--case", "c3", "--original"][..],
        &["check", "--case", "c3"][..],
        &["check", LIVE_DUMP][..],
    ] {
        let output = kivi(&[args, &["--semantics", "kubernetes", "-q"]].concat());
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(text(&output.stderr).starts_with(expected), "{args:?}");
    }
    let diff = kivi(&[
        "diff",
        "cases/c3/original.json",
        "cases/c3/original.json",
        "--semantics",
        "kubernetes",
    ]);
    assert_eq!(diff.status.code(), Some(2));
    assert!(text(&diff.stderr)
        .starts_with("error: --semantics kubernetes: not yet supported for diff: "));
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
    assert_eq!(job.status.code(), Some(2));
    assert!(text(&job.stderr).starts_with(
        "error: the check arguments after --: --semantics kubernetes: not yet supported for check: "
    ));
    let unknown = kivi(&["check", "--case", "c3", "--semantics", "k8s"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("expected `kivi` or `kubernetes`, not `k8s`"));
}

#[test]
fn merge_refuses_journals_of_differing_semantics() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("kivi-semantics-merge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
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
