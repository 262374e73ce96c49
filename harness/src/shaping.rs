//! Tool-output shaping: denoise terminal output, clamp it tail-first (the end of a test run is
//! where the verdict is), and read a passed/failed/unknown verdict from test-runner output.

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Passed,
    Failed,
    /// Looks like a test run, but no count could be read ("no tests ran", "collected 0 items").
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Passed => "PASSED",
            Verdict::Failed => "FAILED",
            Verdict::Unknown => "UNKNOWN",
        }
    }
}

fn re(cell: &'static OnceLock<Regex>, pat: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pat).expect("static regex"))
}

/// Strip ANSI escapes, keep only the final state of carriage-return progress lines, collapse runs
/// of three or more identical lines and of blank lines.
pub fn denoise(text: &str) -> String {
    static ANSI: OnceLock<Regex> = OnceLock::new();
    let ansi = re(&ANSI, r"\x1b\[[0-9;?]*[ -/]*[@-~]");
    let clean = ansi.replace_all(text, "");
    let mut out: Vec<&str> = Vec::new();
    let mut run = 0usize;
    let mut dropped = 0usize;
    for raw in clean.split('\n') {
        let line = raw.trim_end_matches('\r');
        let line = match line.rfind('\r') {
            Some(i) => &line[i + 1..],
            None => line,
        };
        if out.last() == Some(&line) {
            run += 1;
            if line.trim().is_empty() {
                continue; // blank runs merge silently
            }
            if run >= 2 {
                dropped += 1;
                continue;
            }
        } else {
            if dropped > 0 {
                out.push("[… identical lines collapsed]");
                dropped = 0;
            }
            run = 0;
        }
        out.push(line);
    }
    if dropped > 0 {
        out.push("[… identical lines collapsed]");
    }
    out.join("\n")
}

/// Paths beneath the workdir `root` shown relative to it: the model works with relative paths,
/// and an absolute prefix repeated in every frame of a traceback carries nothing new.
pub fn relative_paths(text: &str, root: &std::path::Path) -> String {
    let r = root.to_string_lossy();
    let r = r.trim_end_matches('/');
    if r.is_empty() || !text.contains(r) {
        return text.to_string();
    }
    text.replace(&format!("{r}/"), "")
}

/// Longest block of lines [`collapse_repeated_blocks`] looks for.
pub const MAX_BLOCK_LINES: usize = 24;

/// Consecutive copies of the same block of two or more lines (a loop that prints the same
/// traceback for every item) kept once, followed by how many copies were dropped; the first
/// copy and everything else stay as they were. Output longer than 20,000 lines is left alone
/// (it is clamped anyway).
pub fn collapse_repeated_blocks(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    if lines.len() < 4 || lines.len() > 20_000 {
        return text.to_string();
    }
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        // the block length whose consecutive copies cover the most lines from here
        let mut best = (0usize, 1usize);
        for k in 2..=MAX_BLOCK_LINES.min((lines.len() - i) / 2) {
            let block = &lines[i..i + k];
            if block.iter().all(|l| l.trim().is_empty()) {
                continue;
            }
            let mut copies = 1;
            while i + (copies + 1) * k <= lines.len()
                && &lines[i + copies * k..i + (copies + 1) * k] == block
            {
                copies += 1;
            }
            if copies >= 2 && copies * k > best.0 * best.1 {
                best = (k, copies);
            }
        }
        let (k, copies) = best;
        if copies >= 2 {
            out.extend(lines[i..i + k].iter().map(|l| l.to_string()));
            out.push(format!(
                "[… the {k} lines above repeated {} more time{}]",
                copies - 1,
                if copies == 2 { "" } else { "s" }
            ));
            i += k * copies;
        } else {
            out.push(lines[i].to_string());
            i += 1;
        }
    }
    out.join("\n")
}

/// Lines of a passing test run shown in full; a longer one keeps its head and its tail.
pub const PASSING_LOG_LINES: usize = 40;

/// A passing test run longer than [`PASSING_LOG_LINES`]: its first 5 and last 15 lines (the
/// tail holds the counts the verdict was read from), the elision naming the full output.
/// Anything else is returned as it is: a failing run keeps its errors.
pub fn shorten_passing_log(text: &str, verdict: Option<Verdict>, full_ref: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if verdict != Some(Verdict::Passed) || lines.len() <= PASSING_LOG_LINES {
        return text.to_string();
    }
    let cut = lines.len() - 20;
    format!(
        "{}\n[… {cut} lines of the passing run elided; full output: {full_ref} …]\n{}",
        lines[..5].join("\n"),
        lines[lines.len() - 15..].join("\n")
    )
}

/// Clamp to `budget` characters: a quarter from the head, three quarters from the tail, with an
/// elision marker that says where the full text is.
pub fn clamp_tail_first(text: &str, budget: usize, full_ref: &str) -> String {
    head_tail(text, budget, budget / 4, |cut| {
        format!("[… {cut} chars elided; full output: {full_ref} …]")
    })
}

pub use lrab_util::head_tail;

/// Read a test verdict from runner output, scanning bottom-up; failures win. `None` when the
/// output does not look like a test run at all. A non-zero exit turns a pass into a failure.
pub fn detect_verdict(text: &str, exit_code: Option<i32>) -> Option<Verdict> {
    static FAIL_N: OnceLock<Regex> = OnceLock::new();
    static PASS_N: OnceLock<Regex> = OnceLock::new();
    static ERR_N: OnceLock<Regex> = OnceLock::new();
    static RAN_N: OnceLock<Regex> = OnceLock::new();
    let fail_n = re(&FAIL_N, r"\b(\d+) failed\b");
    let pass_n = re(&PASS_N, r"\b(\d+) passed\b");
    let err_n = re(&ERR_N, r"\b(\d+) errors?\b");
    let ran_n = re(&RAN_N, r"^Ran (\d+) tests?");
    let mut verdict: Option<Verdict> = None;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate().rev() {
        let l = line.trim();
        if l.contains("no tests ran")
            || l.contains("collected 0 items")
            || ran_n.captures(l).is_some_and(|c| &c[1] == "0")
        {
            verdict = Some(Verdict::Unknown);
            break;
        }
        let n_of = |r: &Regex| -> Option<u64> { r.captures(l).and_then(|c| c[1].parse().ok()) };
        if n_of(fail_n).is_some_and(|n| n > 0)
            || l.starts_with("FAILED")
            || l.starts_with("FAIL:")
            || l.starts_with("FAIL ")
            || l.contains("test result: FAILED")
            || (n_of(err_n).is_some_and(|n| n > 0)
                && (l.contains("passed") || l.contains("error in") || l.starts_with('=')))
        {
            verdict = Some(Verdict::Failed);
            break;
        }
        if n_of(pass_n).is_some_and(|n| n > 0) || l.contains("test result: ok") {
            verdict = Some(Verdict::Passed);
            break;
        }
        if l == "OK" || l.starts_with("OK (") {
            let ran_before = lines[..i]
                .iter()
                .rev()
                .take(5)
                .any(|p| ran_n.is_match(p.trim()));
            if ran_before {
                verdict = Some(Verdict::Passed);
                break;
            }
        }
    }
    match (verdict, exit_code) {
        (Some(Verdict::Passed), Some(c)) if c != 0 => Some(Verdict::Failed),
        (v, _) => v,
    }
}

/// Whether a shell command is a test run (so an exit code alone can be a verdict).
pub fn is_test_command(cmd: &str) -> bool {
    let c = cmd.to_lowercase();
    c.contains("pytest")
        || c.contains("unittest")
        || c.contains("test_")
        || c.contains("_test.py")
        || c.contains("cargo test")
        || c.contains("test_suite")
}

/// The first real failure in test output: file, line and error text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub test: Option<String>,
    pub error: String,
}

impl Failure {
    pub fn describe(&self) -> String {
        let mut s = String::new();
        if let Some(t) = &self.test {
            s.push_str(&format!("test {t}: "));
        }
        s.push_str(&self.error);
        match (&self.file, self.line) {
            (Some(f), Some(l)) => s.push_str(&format!(" (at {f}:{l})")),
            (Some(f), None) => s.push_str(&format!(" (in {f})")),
            _ => {}
        }
        s
    }
}

/// Extract the first failure from pytest, unittest or a plain "FAIL name: …" script. The
/// deepest traceback frame that is not inside the Python installation is reported.
pub fn first_failure(text: &str) -> Option<Failure> {
    static FRAME: OnceLock<Regex> = OnceLock::new();
    static PYTEST_LOC: OnceLock<Regex> = OnceLock::new();
    static FAILED_LINE: OnceLock<Regex> = OnceLock::new();
    let frame = re(&FRAME, r#"File "([^"]+)", line (\d+)"#);
    let pytest_loc = re(
        &PYTEST_LOC,
        r"^([\w./\\-]+\.py):(\d+): (\w*(Error|Exception)\w*)",
    );
    let failed_line = re(
        &FAILED_LINE,
        r"^FAILED ([^\s]+?)(?:::([\w\[\]-]+))?(?: - (.*))?$",
    );
    let lines: Vec<&str> = text.lines().collect();
    let mut f = Failure {
        file: None,
        line: None,
        test: None,
        error: String::new(),
    };
    // pytest short summary: "FAILED file::test - Error: msg"
    if let Some(c) = lines.iter().find_map(|l| failed_line.captures(l.trim())) {
        f.file = Some(c[1].to_string());
        f.test = c.get(2).map(|m| m.as_str().to_string());
        if let Some(m) = c.get(3) {
            f.error = m.as_str().to_string();
        }
    }
    // pytest "E   assert …" line and "file.py:12: AssertionError" location
    if f.error.is_empty() {
        if let Some(e) = lines.iter().find(|l| l.starts_with("E ")) {
            f.error = e[1..].trim().to_string();
        }
    }
    if let Some(c) = lines.iter().find_map(|l| pytest_loc.captures(l.trim())) {
        f.file = Some(c[1].to_string());
        f.line = c[2].parse().ok();
        if f.error.is_empty() {
            f.error = c[3].to_string();
        }
    }
    // Python traceback: deepest user frame, then the exception line after it.
    if f.line.is_none() {
        let mut last: Option<(String, u32, usize)> = None;
        for (i, l) in lines.iter().enumerate() {
            if let Some(c) = frame.captures(l) {
                let file = c[1].to_string();
                if !file.contains("/lib/python")
                    && !file.contains("site-packages")
                    && !file.starts_with('<')
                {
                    last = Some((file, c[2].parse().unwrap_or(0), i));
                }
            }
        }
        if let Some((file, line, idx)) = last {
            f.file = Some(file);
            f.line = Some(line);
            if f.error.is_empty() {
                if let Some(e) = lines[idx..].iter().find(|l| {
                    let t = l.trim_start();
                    !l.starts_with(' ')
                        && t.contains(':')
                        && !t.starts_with("File ")
                        && !t.starts_with("Traceback")
                }) {
                    f.error = e.trim().to_string();
                }
            }
        }
    }
    // plain test scripts: "FAIL test_x: expected 1 got 2"
    if f.error.is_empty() {
        if let Some(l) = lines.iter().find(|l| {
            let t = l.trim_start();
            t.starts_with("FAIL") || t.starts_with("ERROR") || t.starts_with("AssertionError")
        }) {
            f.error = l.trim().to_string();
        }
    }
    if f.error.is_empty() && f.file.is_none() {
        return None;
    }
    if f.error.is_empty() {
        f.error = "test failed".into();
    }
    f.error = f.error.chars().take(300).collect();
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denoise_strips_ansi_progress_and_repeats() {
        let t = "\x1b[32mok\x1b[0m\n10%\r50%\r100%\nx\nx\nx\nx\n\n\n\ny";
        assert_eq!(
            denoise(t),
            "ok\n100%\nx\nx\n[… identical lines collapsed]\n\ny"
        );
    }

    #[test]
    fn workdir_paths_become_relative() {
        let root = std::path::Path::new("/runs/cell/workdir");
        let t = "Traceback (most recent call last):\n  File \"/runs/cell/workdir/a.py\", line 3, in <module>\n    import b\n  File \"/runs/cell/workdir/sub/b.py\", line 1\n/runs/cell/workdir-old/c.py /usr/lib/x.py";
        assert_eq!(
            relative_paths(t, root),
            "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    import b\n  File \"sub/b.py\", line 1\n/runs/cell/workdir-old/c.py /usr/lib/x.py"
        );
        assert_eq!(relative_paths("no paths", root), "no paths");
    }

    #[test]
    fn repeated_blocks_are_kept_once_with_a_count() {
        let tb = "Traceback (most recent call last):\n  File \"s.py\", line 11, in <module>\n    X = Y / 2\nNameError: name 'Y' is not defined";
        let eight = [tb; 8].join("\n");
        let t = format!("start\n{eight}\nend");
        assert_eq!(
            collapse_repeated_blocks(&t),
            format!("start\n{tb}\n[… the 4 lines above repeated 7 more times]\nend")
        );
        // two copies; then blocks that differ in one line are all kept
        let two = format!("{tb}\n{tb}");
        assert_eq!(
            collapse_repeated_blocks(&two),
            format!("{tb}\n[… the 4 lines above repeated 1 more time]")
        );
        let differ: String = (0..6).map(|i| format!("batch B0{i}\nrows 625\n")).collect();
        assert_eq!(collapse_repeated_blocks(&differ), differ);
        // a period of alternating lines, and blank runs untouched
        assert_eq!(
            collapse_repeated_blocks("a\nb\na\nb\na\nb\nc"),
            "a\nb\n[… the 2 lines above repeated 2 more times]\nc"
        );
        assert_eq!(collapse_repeated_blocks("x\n\n\n\n\n\ny"), "x\n\n\n\n\n\ny");
    }

    #[test]
    fn a_long_passing_log_keeps_head_and_tail_and_a_failing_one_everything() {
        let mut t: String = (0..100).map(|i| format!("test_{i:03} PASSED\n")).collect();
        t.push_str("100 passed in 0.5s");
        let s = shorten_passing_log(&t, Some(Verdict::Passed), "out/3.txt");
        assert!(s.starts_with("test_000 PASSED\n"));
        assert!(s.ends_with("test_099 PASSED\n100 passed in 0.5s"));
        assert!(s.contains("[… 81 lines of the passing run elided; full output: out/3.txt …]"));
        assert_eq!(s.lines().count(), 21);
        assert_eq!(shorten_passing_log(&t, Some(Verdict::Failed), "o"), t);
        assert_eq!(shorten_passing_log(&t, None, "o"), t);
        let short = "3 passed in 0.1s";
        assert_eq!(
            shorten_passing_log(short, Some(Verdict::Passed), "o"),
            short
        );
    }

    #[test]
    fn clamp_keeps_tail_and_names_reference() {
        let t: String = (0..1000).map(|i| format!("line{i}\n")).collect();
        let c = clamp_tail_first(&t, 400, ".lrab/out/1.txt");
        assert!(c.contains("line999"));
        assert!(c.starts_with("line0"));
        assert!(c.contains(".lrab/out/1.txt"));
        assert!(c.chars().count() < 520);
    }

    #[test]
    fn verdicts_from_runner_output() {
        assert_eq!(
            detect_verdict("..\n2 passed in 0.1s", Some(0)),
            Some(Verdict::Passed)
        );
        assert_eq!(
            detect_verdict("F.\n1 failed, 1 passed in 0.1s", Some(1)),
            Some(Verdict::Failed)
        );
        assert_eq!(
            detect_verdict("collected 0 items\n\nno tests ran in 0.01s", Some(5)),
            Some(Verdict::Unknown)
        );
        assert_eq!(
            detect_verdict("Ran 3 tests in 0.001s\n\nOK", Some(0)),
            Some(Verdict::Passed)
        );
        assert_eq!(
            detect_verdict("Ran 3 tests\n\nFAILED (failures=1)", Some(1)),
            Some(Verdict::Failed)
        );
        assert_eq!(
            detect_verdict("PASS a\nFAIL b\n9 passed, 1 failed", Some(0)),
            Some(Verdict::Failed)
        );
        assert_eq!(
            detect_verdict("10 passed, 0 failed", Some(0)),
            Some(Verdict::Passed)
        );
        assert_eq!(detect_verdict("3 passed", Some(2)), Some(Verdict::Failed));
        assert_eq!(detect_verdict("hello world", Some(0)), None);
    }

    #[test]
    fn first_failure_from_pytest() {
        let out = "\
=================================== FAILURES ===================================
_________________________________ test_total __________________________________
    def test_total():
>       assert inv.total_value() == 30
E       assert 15 == 30

test_inventory.py:21: AssertionError
=========================== short test summary info ============================
FAILED test_inventory.py::test_total - assert 15 == 30
1 failed, 5 passed in 0.05s";
        let f = first_failure(out).unwrap();
        assert_eq!(f.file.as_deref(), Some("test_inventory.py"));
        assert_eq!(f.line, Some(21));
        assert_eq!(f.test.as_deref(), Some("test_total"));
        assert_eq!(f.error, "assert 15 == 30");
    }

    #[test]
    fn first_failure_from_traceback_and_script() {
        let out = "Traceback (most recent call last):\n  File \"/usr/lib/python3.11/x.py\", line 3, in <module>\n  File \"m01.py\", line 7, in calc_mean\n    return s / (len(xs) + 1)\nZeroDivisionError: division by zero\n";
        let f = first_failure(out).unwrap();
        assert_eq!(f.file.as_deref(), Some("m01.py"));
        assert_eq!(f.line, Some(7));
        assert_eq!(f.error, "ZeroDivisionError: division by zero");
        let f = first_failure("PASS m01\nFAIL m02 calc_median: expected 2.5 got 2\n").unwrap();
        assert!(f.error.starts_with("FAIL m02"));
        assert!(first_failure("all good").is_none());
    }
}
