//! Scoring one workdir with every file-only check kind (no python subprocess), target < 20 ms.

use criterion::{criterion_group, criterion_main, Criterion};
use lrab_tasks::{Check, CheckSpec, Expect, ResolvedChecks, Task, TaskSpec};

fn c(artifact: &str, check: Check) -> CheckSpec {
    CheckSpec {
        artifact: artifact.into(),
        check,
    }
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn bench(cr: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pack = tmp.path().join("pack");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(pack.join("fixtures")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let report: String = (0..3000)
        .map(|i| format!("word{i} see https://example.org/{i} Abstract References B06 675 "))
        .collect();
    std::fs::write(work.join("report.md"), &report).unwrap();
    std::fs::write(work.join("fig.png"), lrab_scorer::encode_png(640, 480)).unwrap();
    std::fs::write(pack.join("fixtures/spec.py"), "def test():\n    pass\n").unwrap();
    std::fs::write(work.join("spec.py"), "def test():\r\n    pass\r\n").unwrap();
    let milestones = vec![
        c("report.md", Check::Exists {}),
        c(
            "report.md",
            Check::ContainsAny {
                any_of: s(&["nope", "B06"]),
            },
        ),
        c(
            "report.md",
            Check::NotContains {
                none_of: s(&["proves"]),
            },
        ),
        c(
            "report.md",
            Check::ContainsGroups {
                groups: (0..8)
                    .map(|i| vec![format!("word{}", i * 300), "x".into()])
                    .collect(),
                min_ratio: 1.0,
            },
        ),
        c(
            "report.md",
            Check::ContainsOrdered {
                ordered: s(&["Abstract", "References"]),
            },
        ),
    ];
    let finals = vec![
        c("report.md", Check::MinWords { min_words: 400 }),
        c(
            "report.md",
            Check::Structure {
                required_sections: s(&["abstract", "references"]),
                min_words: None,
            },
        ),
        c("report.md", Check::FileMinBytes { min_bytes: 1000 }),
        c("report.md", Check::MinUrls { min_urls: 5 }),
        c(
            "fig.png",
            Check::ImageValid {
                min_width: 200,
                min_height: 100,
            },
        ),
        c(
            "spec.py",
            Check::SeedUnchanged {
                seed_rel: "fixtures/spec.py".into(),
            },
        ),
    ];
    let spec = TaskSpec {
        id: "BENCH".into(),
        tier: 2,
        domain: "bench".into(),
        title: "bench".into(),
        budget_minutes: 1,
        inputs: vec![],
        plan_steps: vec!["x".into()],
        kill_at_pct: None,
        generator: None,
        milestones: milestones.clone(),
        finals: finals.clone(),
        reference: None,
        partial: None,
        expect: Expect {
            untouched: 0.0,
            partial: None,
        },
    };
    let task = Task {
        spec,
        dir: pack.join("BENCH"),
        pack_root: pack.clone(),
        prompt_body: String::new(),
    };
    let checks = ResolvedChecks { milestones, finals };
    let got = lrab_scorer::score(&task, &checks, &work).expect("score");
    assert_eq!(got.total, 1.0, "{got:#?}");
    cr.bench_function("score_workdir_11_file_checks", |b| {
        b.iter(|| lrab_scorer::score(&task, &checks, &work).expect("score"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
