//! `lrab analyze` on three-domain τ² results as `lrab tau2 run` writes them (one tau2.csv per
//! arm and domain): the summary carries the per-domain and pooled McNemar tables in the
//! paper's layout, with counts that match a direct count of the pairs.

use lrab_analysis::stats::mcnemar_from_counts as from_counts;
use lrab_analysis::tau2_tables::g4;
use lrab_analysis::{run, AnalyzeArgs};

fn pass(arm: &str, domain: usize, task: usize) -> bool {
    match arm {
        "harness" => (task + domain) % 3 != 0,
        _ => (task * 7 + domain) % 5 < 3,
    }
}

#[test]
fn analyze_prints_the_278_task_tables() {
    let dir = tempfile::tempdir().unwrap();
    let domains = [("retail", 114), ("airline", 50), ("telecom", 114)];
    let mut inputs = Vec::new();
    for arm in ["harness", "plain"] {
        for (di, (d, n)) in domains.iter().enumerate() {
            let mut csv =
                String::from("domain,task,arm,trial,reward,components,steps,termination\n");
            for t in 0..*n {
                let r = pass(arm, di, t) as u8;
                csv.push_str(&format!(
                    "{d},{t},{arm},0,{r},ENV_ASSERTION={r},9,user_stop\n"
                ));
            }
            let p = dir.path().join(format!("{arm}-{d}.csv"));
            std::fs::write(&p, csv).unwrap();
            inputs.push(p);
        }
    }
    let mut args = AnalyzeArgs::new(inputs, dir.path().join("out"));
    args.quiet = true;
    args.no_figures = true;
    args.resamples = 10;
    let out = run(&args).unwrap();
    let (mut all, mut per) = ((0, 0, 0), Vec::new());
    for (di, (d, n)) in domains.iter().enumerate() {
        let mut c = (0, 0, 0);
        for t in 0..*n {
            match (pass("harness", di, t), pass("plain", di, t)) {
                (true, false) => c.0 += 1,
                (false, true) => c.2 += 1,
                _ => c.1 += 1,
            }
        }
        all = (all.0 + c.0, all.1 + c.1, all.2 + c.2);
        per.push(format!("{d} {}/{}/{}", c.0, c.1, c.2));
    }
    let p = from_counts(all.0, all.2, all.1).p_exact;
    let want = [
        "### harness vs plain".to_string(),
        format!(
            "- pooled (278 tasks): {}W / {}T / {}L  \n  McNemar exact p = {}",
            all.0,
            all.1,
            all.2,
            g4(p)
        ),
        "- discriminating subset retail+airline (164 tasks): ".to_string(),
        format!("- per-domain: {}", per.join(", ")),
        "Holm-adjusted (k=1) McNemar p, vs plain: ".to_string(),
    ];
    for w in &want {
        assert!(
            out.summary.contains(w.as_str()),
            "missing {w:?} in\n{}",
            out.summary
        );
    }
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(report.contains("- pooled (278 tasks): "));
}

/// Writes one arm's τ² CSV for the mock domain with a `simulated` column value per row.
fn labelled_csv(dir: &std::path::Path, arm: &str, simulated: &str) -> std::path::PathBuf {
    let mut csv =
        String::from("domain,task,arm,trial,reward,components,steps,termination,simulated\n");
    for t in 0..6 {
        let r = pass(arm, 0, t) as u8;
        csv.push_str(&format!(
            "mock,{t},{arm},0,{r},DB={r},4,user_stop,{simulated}\n"
        ));
    }
    let p = dir.join(format!("{arm}.csv"));
    std::fs::write(&p, csv).unwrap();
    p
}

#[test]
fn simulated_tau_rows_are_labelled_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = vec![
        labelled_csv(dir.path(), "harness", "true"),
        labelled_csv(dir.path(), "plain", "false"),
    ];
    let mut args = AnalyzeArgs::new(inputs, dir.path().join("out"));
    args.quiet = true;
    args.no_figures = true;
    args.resamples = 10;
    let out = run(&args).unwrap();
    let banner = "6 τ² rows ran on the simulated model server";
    assert!(out.summary.contains(banner), "{}", out.summary);
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(report.contains(banner), "{report}");
    assert!(report.contains("6 τ² rows ran against the simulated model server"));

    // rows of a real backend carry no label
    let d2 = tempfile::tempdir().unwrap();
    let inputs = vec![
        labelled_csv(d2.path(), "harness", "false"),
        labelled_csv(d2.path(), "plain", "false"),
    ];
    let mut args = AnalyzeArgs::new(inputs, d2.path().join("out"));
    args.quiet = true;
    args.no_figures = true;
    args.resamples = 10;
    let out = run(&args).unwrap();
    assert!(!out.summary.contains("SIMULATED"), "{}", out.summary);
}

#[test]
fn a_bad_simulated_value_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = vec![
        labelled_csv(dir.path(), "harness", "maybe"),
        labelled_csv(dir.path(), "plain", "false"),
    ];
    let mut args = AnalyzeArgs::new(inputs, dir.path().join("out"));
    args.quiet = true;
    args.no_figures = true;
    let e = run(&args).unwrap_err().to_string();
    assert!(
        e.contains("harness.csv:2") && e.contains("simulated") && e.contains("maybe"),
        "{e}"
    );
}

/// A run's manifest (as `lrab tau2 run` writes it: two arms in one file) beside the published
/// retail manifest: McNemar for every pair of arms — the run's two arms, and each of them with
/// each published arm — on the tasks both have, the counts equal to a direct count.
#[test]
fn mcnemar_pairs_a_runs_arms_with_each_other_and_with_published_arms() {
    use lrab_records::{CellStatus, ManifestCell, Tau2Manifest};
    let published = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/mingbird/retail_manifest_nt0.json");
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    let cell = |r: f64| ManifestCell {
        status: CellStatus::Ok,
        reward: Some(r),
        wall: Some(3),
        error: None,
        rewards: None,
    };
    let mut ours = Tau2Manifest::default();
    for t in 0..12 {
        ours.set(&t.to_string(), "gold", cell(1.0));
        ours.set(&t.to_string(), "plain", cell((t % 3 == 0) as u8 as f64));
    }
    // a set-aside error cell: counted apart, never paired
    ours.set(
        "12",
        "plain",
        ManifestCell {
            status: CellStatus::Error,
            reward: None,
            wall: None,
            error: Some("agent_error".into()),
            rewards: None,
        },
    );
    // an error cell scored 0 (the paper's policy): a fail, and the report says so
    ours.set(
        "999",
        "plain",
        ManifestCell {
            status: CellStatus::Error,
            reward: Some(0.0),
            wall: Some(1),
            error: Some("agent_error".into()),
            rewards: None,
        },
    );
    let mine = run_dir.join("retail_manifest.json");
    ours.write(&mine).unwrap();
    let mut args = AnalyzeArgs::new(
        vec![mine.clone(), published.clone()],
        dir.path().join("out"),
    );
    args.quiet = true;
    args.no_figures = true;
    args.resamples = 10;
    args.focal = Some("gold".into());
    let out = run(&args).unwrap();
    let pubm = Tau2Manifest::read(&published).unwrap();
    let row = |a: &str, b: &str, pa: &dyn Fn(usize) -> bool, pb: &dyn Fn(usize) -> bool| {
        let (mut w, mut l, mut t) = (0, 0, 0);
        for k in 0..12 {
            match (pa(k), pb(k)) {
                (true, false) => w += 1,
                (false, true) => l += 1,
                _ => t += 1,
            }
        }
        let p = from_counts(w, l, t).p_exact;
        format!("| {a} | {b} | retail | 12 | {w} | {l} | {t} | {} |", g4(p))
    };
    let published_pass = |arm: &'static str| {
        let pubm = pubm.clone();
        move |k: usize| pubm.get(&k.to_string(), arm).unwrap().reward == Some(1.0)
    };
    let gold = |_k: usize| true;
    let plain = |k: usize| k % 3 == 0;
    for want in [
        row("gold", "plain", &gold, &plain),
        row("gold", "llm_agent", &gold, &published_pass("llm_agent")),
        row("mingbird", "plain", &published_pass("mingbird"), &plain),
        row("gold", "opencode", &gold, &published_pass("opencode")),
    ] {
        assert!(
            out.summary.contains(&want),
            "missing {want:?} in\n{}",
            out.summary
        );
    }
    assert!(out
        .summary
        .contains("## τ²: McNemar for every pair of arms"));
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(
        report.contains("1 τ² error cell(s) were scored 0")
            && report.contains("1 τ² cell(s) have no reward"),
        "{report}"
    );
    // the published arms against each other: all 114 tasks
    assert!(out
        .summary
        .contains("| llm_agent | mingbird | retail | 114 |"));
    assert!(
        out.summary.contains("### gold vs llm_agent"),
        "{}",
        out.summary
    );

    // the same arm name in a run's manifest and a published one is refused, naming the way out
    let mut clash = Tau2Manifest::default();
    clash.set("0", "opencode", cell(1.0));
    let clash_path = run_dir.join("clash").join("retail_manifest.json");
    std::fs::create_dir_all(clash_path.parent().unwrap()).unwrap();
    clash.write(&clash_path).unwrap();
    let args = AnalyzeArgs::new(vec![clash_path, published], dir.path().join("out2"));
    let e = run(&args).unwrap_err().to_string();
    assert!(
        e.contains("retail_manifest_nt0.json")
            && e.contains("task `0`, arm `opencode`")
            && e.contains("--arm-name"),
        "{e}"
    );
}
