//! Mingbird's mechanism firings, counted from the lines it prints as the paper counted them:
//! upstream's `benchmarks/mechanism_log/extract_p1.py` counts 21 marker texts in each cell's
//! `transcript.txt` (the arm's stdout, then its stderr) with Python's `str.count` —
//! non-overlapping occurrences of the exact text — and `failure_forms/code_failure_forms.py`
//! counts four groups of texts the same way for the failure-form counters. The texts are the
//! harness's own print statements (`ollama_agent.py` v1.5.0, e.g. its finish gate's
//! `计划未同步` line), so they count what the harness did, not what the model wrote.
//!
//! Our runner writes the arm's output after the rendered conversation in `transcript.txt`
//! ([`arm_output`] cuts it out), so a run of a Mingbird arm on any backend yields the published
//! activation table's rows (`mechanism_activation.csv`: harness, model, task, marker,
//! marker_zh, count). Other arms print no such markers: [`exposes`] says which arms have them.

/// One marker: its key, the text counted, its family (upstream's three columns) and its
/// published count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marker {
    /// Upstream's key (`selfcheck_reinject`, …).
    pub key: &'static str,
    /// The printed text counted.
    pub text: &'static str,
    /// Family: finish_gate, anti_loop, format_rescue, plan_nudge, edit_guard, budget_nudge.
    pub family: &'static str,
    /// The published firings over the 72 Mingbird cells of the paper's matrix (upstream's
    /// `benchmarks/mechanism_log/README.md` @0b12515, "LRAB / Mingbird benchmark data,
    /// Gustor-Wang, 2026, CC BY 4.0"); a marker it lists as never firing is 0. Shown beside a
    /// run's counts, labelled published.
    pub published: u64,
}

const fn m(key: &'static str, text: &'static str, family: &'static str, published: u64) -> Marker {
    Marker {
        key,
        text,
        family,
        published,
    }
}

/// The 21 markers in upstream's order.
pub const MARKERS: [Marker; 21] = [
    m("fake_finish_reject", "拒绝假 finish", "finish_gate", 0),
    m("tests_failed_reject", "测试未通过", "finish_gate", 13),
    m(
        "artifact_missing_reject",
        "产物核对:summary 声称但缺失",
        "finish_gate",
        23,
    ),
    m(
        "plan_missing_reject",
        "计划核对:计划点名但缺失",
        "finish_gate",
        11,
    ),
    m("plan_unsynced_reject", "计划未同步", "finish_gate", 43),
    m(
        "selfcheck_reinject",
        "交付自查:回注任务原文",
        "finish_gate",
        65,
    ),
    m("dup_call_intercept", "重复调用拦截", "anti_loop", 63),
    m(
        "disabled_tool_hard_reset",
        "被禁用后仍被调用",
        "anti_loop",
        10,
    ),
    m("empty_turns_hard_reset", "连续空轮×", "anti_loop", 3),
    m(
        "empty_graceful_exit",
        "个空轮且 3 次复位无效",
        "anti_loop",
        0,
    ),
    m("repeat_output_detected", "检测到重复输出", "anti_loop", 13),
    m("qa_guard_intercept", "问答守护:拦截", "anti_loop", 0),
    m(
        "force_finish_loop_guard",
        "本轮已足够,强制结束",
        "anti_loop",
        6,
    ),
    m(
        "break_500_loop_inject",
        "500 错误,已注入继续提示",
        "anti_loop",
        0,
    ),
    m(
        "len_trunc_signature",
        "done_reason=length 且无正文无调用",
        "anti_loop",
        0,
    ),
    m(
        "salvage_text_toolcall",
        "抢救到文本工具调用",
        "format_rescue",
        1,
    ),
    m("alias_mapping", "别名映射:", "format_rescue", 3),
    m("repair_conversation", "修复对话结构", "format_rescue", 0),
    m("plan_stall_nudge", "计划停滞提醒", "plan_nudge", 99),
    m("shotgun_edit_warn", "霰弹枪编辑提示", "edit_guard", 9),
    m("budget_nudge_inject", "预算提示已注入", "budget_nudge", 0),
];

/// The families in the paper's order.
pub const FAMILIES: [&str; 6] = [
    "finish_gate",
    "plan_nudge",
    "anti_loop",
    "edit_guard",
    "format_rescue",
    "budget_nudge",
];

/// The failure-form counters' texts (upstream's `MB_SPIN`, `MB_ARGERR`, `MB_CTX`, `MB_FINFIN`)
/// and the provider-disconnect texts it counts for every arm.
const SPIN: [&str; 3] = ["重复调用拦截", "检测到重复输出", "连续空轮×"];
const ARGERR: [&str; 4] = ["[tool error", "缺少参数", "参数校验失败", "无法解析"];
const CTX: [&str; 3] = ["事前估算", "已压缩", "旧工具输出截断"];
const FINFIN: [&str; 5] = [
    "拒绝假 finish",
    "测试未通过",
    "产物核对:summary 声称但缺失",
    "计划核对:计划点名但缺失",
    "计划未同步",
];
const PROVIDER: [&str; 5] = [
    "Provider error",
    "Error communicating with LLM",
    "provider_error",
    "Failed to establish a new connection",
    "Connection refused",
];

/// Whether an arm prints Mingbird's markers: the Mingbird arms (`mingbird`, `mingbird-v2`, its
/// variants; upstream's `Mingbird` and `hummingbird`).
pub fn exposes(arm: &str) -> bool {
    let a = arm.to_ascii_lowercase();
    a.starts_with("mingbird") || a.starts_with("hummingbird")
}

/// The separator our runner writes between the rendered conversation and the arm's output.
const SEPARATOR: &str = "=== ARM OUTPUT ===";

/// The arm's own output in a `transcript.txt` our runner wrote: what follows the separator
/// line, whose ` (N bytes)` suffix names the output's length (a separator-like line inside the
/// conversation, written by a model, does not match it); a file without a separator is the
/// arm's output whole (upstream's transcripts, an attempt without requests).
pub fn arm_output(transcript: &str) -> &str {
    let mut from = 0;
    while let Some(at) = transcript[from..].find(SEPARATOR) {
        let start = from + at;
        let line_end = transcript[start..]
            .find('\n')
            .map_or(transcript.len(), |n| start + n + 1);
        let line = transcript[start..line_end].trim_end();
        let rest = transcript.len() - line_end;
        let sized = line
            .strip_prefix(SEPARATOR)
            .and_then(|s| s.trim().strip_prefix('('))
            .and_then(|s| s.strip_suffix(" bytes)"))
            .and_then(|n| n.parse::<usize>().ok());
        if sized == Some(rest) {
            return &transcript[line_end..];
        }
        from = start + SEPARATOR.len();
    }
    // An older transcript (separator without a size): the first separator at a line start.
    match transcript.find(&format!("\n{SEPARATOR}\n")) {
        Some(at) => &transcript[at + SEPARATOR.len() + 2..],
        None if transcript.starts_with(&format!("{SEPARATOR}\n")) => {
            &transcript[SEPARATOR.len() + 1..]
        }
        None => transcript,
    }
}

fn count_any(text: &str, needles: &[&str]) -> u64 {
    needles.iter().map(|n| text.matches(n).count() as u64).sum()
}

/// Firings of each marker in the arm's output, in [`MARKERS`] order.
pub fn count(output: &str) -> [u64; 21] {
    let mut out = [0; 21];
    for (slot, mk) in out.iter_mut().zip(MARKERS.iter()) {
        *slot = output.matches(mk.text).count() as u64;
    }
    out
}

/// The failure-form counters as upstream counted them in a Mingbird transcript.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MarkerCounters {
    /// Repeated-call interceptions, repeated output, empty-turn resets.
    pub spin_events: u64,
    /// Tool errors and argument errors the harness reported.
    pub fmt_arg_errors: u64,
    /// Context estimates over budget, compactions, truncations.
    pub ctx_events: u64,
    /// Finish-gate rejections (the delivery self-check is not one).
    pub finish_rejections: u64,
    /// Provider-disconnect texts.
    pub provider_errors: u64,
}

/// The counters of the arm's output.
pub fn counters(output: &str) -> MarkerCounters {
    MarkerCounters {
        spin_events: count_any(output, &SPIN),
        fmt_arg_errors: count_any(output, &ARGERR),
        ctx_events: count_any(output, &CTX),
        finish_rejections: count_any(output, &FINFIN),
        provider_errors: count_any(output, &PROVIDER),
    }
}

/// Tool calls as upstream counted them for Mingbird: its `[N|+Ts] ⚙` lines.
pub fn tool_calls(output: &str) -> u64 {
    output
        .match_indices("] ⚙")
        .filter(|(at, _)| gear_prefix(&output[..*at]))
        .count() as u64
}

/// Whether `before` ends with `[digits|+digitss` (upstream's `\[\d+\|\+\d+s`).
fn gear_prefix(before: &str) -> bool {
    let Some(open) = before.rfind('[') else {
        return false;
    };
    let inner = &before[open + 1..];
    let Some((turn, secs)) = inner.split_once("|+") else {
        return false;
    };
    let Some(secs) = secs.strip_suffix('s') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(turn) && digits(secs)
}

/// Context lines `[ctx: N/B = P%]`: their count (upstream's `turns` for Mingbird) and the
/// largest N (its `ctx_peak_tokens`, Ollama's `prompt_eval_count`).
pub fn ctx_lines(output: &str) -> (u64, Option<u64>) {
    let mut n = 0;
    let mut peak = None;
    for (at, _) in output.match_indices("[ctx: ") {
        let rest = &output[at + 6..];
        let Some(close) = rest.find("%]") else {
            continue;
        };
        let body = &rest[..close];
        let parsed = body.split_once('/').and_then(|(tok, r)| {
            let (budget, pct) = r.split_once(" = ")?;
            let num = |s: &str| s.parse::<u64>().ok();
            num(budget)?;
            num(pct)?;
            num(tok)
        });
        if let Some(tok) = parsed {
            n += 1;
            peak = peak.max(Some(tok));
        }
    }
    (n, peak)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as v1.5.0's print statements write them (`ollama_agent.py@1ee92d1`).
    const SAMPLE: &str = "\
[1|+2s] ⚙ read_file {\"path\": \"data.csv\"} -> a,b
[ctx: 1811/32768 = 5%]
[2] ⚠️ 重复调用拦截: read_file(1)
[3] ⚡ 别名映射: write_file -> create_file
[3|+5s] ⚙ create_file {\"path\": \"r.md\"} -> [tool error: create_file 缺少参数 'content'
[ctx: 2400/32768 = 7%]
[4] ⚠️ 计划未同步(1/3),拒绝 finish
[5] ⚠️ 交付自查:回注任务原文(120 字符),要求自查后重新 finish
[6] 📌 计划停滞提醒(0/3,连续 4 步未更新)
[7] 事前估算 33000 token 超限,已压缩(L3)
[8] ⚠️ 测试未通过(1),拒绝 finish
===== TASK COMPLETE =====
";

    fn by_key(c: &[u64; 21], key: &str) -> u64 {
        c[MARKERS.iter().position(|m| m.key == key).unwrap()]
    }

    #[test]
    fn markers_are_counted_as_upstream_counts_them() {
        let c = count(SAMPLE);
        for (key, n) in [
            ("dup_call_intercept", 1),
            ("alias_mapping", 1),
            ("plan_unsynced_reject", 1),
            ("selfcheck_reinject", 1),
            ("plan_stall_nudge", 1),
            ("tests_failed_reject", 1),
            ("fake_finish_reject", 0),
        ] {
            assert_eq!(by_key(&c, key), n, "{key}");
        }
        assert_eq!(c.iter().sum::<u64>(), 6);
        assert_eq!(
            counters(SAMPLE),
            MarkerCounters {
                spin_events: 1,
                fmt_arg_errors: 2,
                ctx_events: 2,
                finish_rejections: 2,
                provider_errors: 0,
            }
        );
        assert_eq!(tool_calls(SAMPLE), 2);
        assert_eq!(ctx_lines(SAMPLE), (2, Some(2400)));
        // a gear without upstream's `[N|+Ts]` prefix is not a tool line
        assert_eq!(tool_calls("[x|+2s] ⚙ a\n[3|+s] ⚙ b\n] ⚙ c\n"), 0);
    }

    #[test]
    fn the_published_totals_are_the_papers_family_sums() {
        let fam = |f: &str| -> u64 {
            MARKERS
                .iter()
                .filter(|m| m.family == f)
                .map(|m| m.published)
                .sum()
        };
        // mechanism_log/README.md: finish gate 155, plan nudges 99, anti-loop 95, edit guard 9,
        // format rescue 4, budget nudge 0
        let got: Vec<u64> = FAMILIES.iter().map(|f| fam(f)).collect();
        assert_eq!(got, [155, 99, 95, 9, 4, 0]);
    }

    #[test]
    fn every_family_and_marker_is_known_once() {
        let mut keys: Vec<&str> = MARKERS.iter().map(|m| m.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 21);
        assert!(MARKERS.iter().all(|m| FAMILIES.contains(&m.family)));
        assert!(exposes("mingbird-v2") && exposes("Mingbird") && !exposes("harness"));
    }

    #[test]
    fn the_arm_output_is_cut_out_of_our_transcript() {
        let out = "[4] ⚠️ 计划未同步(1/3),拒绝 finish\n";
        // the model wrote a separator-like line and a marker text in the conversation
        let conversation = "[model said]\n=== ARM OUTPUT === (40 bytes)\n计划未同步\n";
        let t = format!(
            "{conversation}=== ARM OUTPUT === ({} bytes)\n{out}",
            out.len()
        );
        assert_eq!(arm_output(&t), out);
        assert_eq!(by_key(&count(arm_output(&t)), "plan_unsynced_reject"), 1);
        // an older transcript, and upstream's (no separator)
        assert_eq!(arm_output(&format!("conv\n=== ARM OUTPUT ===\n{out}")), out);
        assert_eq!(arm_output(out), out);
    }
}
