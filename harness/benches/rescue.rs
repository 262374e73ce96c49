//! Format rescue on 64 KB replies (target: < 1 ms each) and on hostile input (bounded).
//! `cargo bench -p lrab-harness --bench rescue`; figures are recorded in docs/harness.md.
//! Each input is timed twice: wall clock (`rescue/…`) and the calling thread's CPU time
//! (`rescue_cpu/…`), which a machine shared with other builds does not inflate.

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use lrab_harness::mechanisms::format_rescue::rescue_detailed;
use lrab_harness::table;
use lrab_harness::ToolSpec;
use std::time::Duration;

const SIZE: usize = 64 * 1024;

/// A Python-ish file body of about `n` bytes.
fn file_body(n: usize) -> String {
    let mut s = String::new();
    let mut k = 0;
    while s.len() < n {
        s.push_str(&format!(
            "def f{k}(x):\n    \"\"\"Return x plus {k}.\"\"\"\n    return x + {k}  # tab\there\n\n"
        ));
        k += 1;
    }
    s
}

fn prose(n: usize) -> String {
    let unit = "I looked at the data (see notes) and the totals {per region} look right; next I will check the report, then run the tests. ";
    unit.repeat(n / unit.len() + 1)
}

fn inputs() -> Vec<(&'static str, String)> {
    let body = file_body(SIZE - 200);
    let json_body = serde_json::to_string(&body).unwrap();
    let mut many = String::new();
    let mut k = 0;
    while many.len() < SIZE {
        many.push_str(&format!(
            "Reading part {k}.\n<tool_call>\n{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"src/part{k}.py\", \"start_line\": \"1\"}}}}\n</tool_call>\n{}\n",
            prose(1500)
        ));
        k += 1;
    }
    vec![
        (
            "hermes_write_64k",
            format!(
                "<think>\nI will write the module now.\n</think>\n\n<tool_call>\n{{\"name\": \"write_file\", \"arguments\": {{\"path\": \"mod.py\", \"content\": {json_body}}}}}\n</tool_call>"
            ),
        ),
        (
            "qwen_xml_write_64k",
            format!(
                "Writing it.\n<tool_call>\n<function=write_file>\n<parameter=path>\nmod.py\n</parameter>\n<parameter=content>\n{body}\n</parameter>\n</function>\n</tool_call>"
            ),
        ),
        (
            "fenced_json_write_64k",
            format!(
                "Here is the call:\n```json\n{{\"name\": \"write_file\", \"arguments\": {{\"path\": \"mod.py\", \"content\": {json_body}}}}}\n```"
            ),
        ),
        ("prose_no_call_64k", prose(SIZE)),
        ("many_calls_and_prose_64k", many),
    ]
}

fn hostile() -> Vec<(&'static str, String)> {
    vec![
        ("one_line_1mb", "a{\"b\": [1, ".repeat(100_000)),
        ("open_brackets_1mb", "{[".repeat(500_000)),
        ("markers_1mb", "<tool_call>{\"name\": \"".repeat(45_000)),
    ]
}

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`).
struct CpuTime(WallTime);

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

impl Measurement for CpuTime {
    type Intermediate = Duration;
    type Value = Duration;
    fn start(&self) -> Duration {
        thread_cpu()
    }
    fn end(&self, i: Duration) -> Duration {
        thread_cpu().saturating_sub(i)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        self.0.formatter()
    }
}

fn tools() -> Vec<ToolSpec> {
    table::specs_for(&table::all_but_web())
}

fn run<M: Measurement>(c: &mut Criterion<M>, group: &str, hostile_too: bool) {
    let tools = tools();
    let mut g = c.benchmark_group(group);
    g.sample_size(60).measurement_time(Duration::from_secs(3));
    for (name, text) in inputs() {
        let r = rescue_detailed(&text, &tools);
        eprintln!("{name}: {} bytes, {} calls", text.len(), r.calls.len());
        g.bench_function(name, |b| {
            b.iter(|| rescue_detailed(black_box(&text), &tools))
        });
    }
    g.finish();
    if !hostile_too {
        return;
    }
    let mut g = c.benchmark_group(format!("{group}_hostile"));
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    for (name, text) in hostile() {
        g.bench_function(name, |b| {
            b.iter(|| rescue_detailed(black_box(&text), &tools))
        });
    }
    g.finish();
}

fn wall(c: &mut Criterion) {
    run(c, "rescue", true);
}

fn cpu(c: &mut Criterion<CpuTime>) {
    run(c, "rescue_cpu", true);
}

criterion_group!(wall_clock, wall);
criterion_group! {
    name = cpu_time;
    config = Criterion::default().with_measurement(CpuTime(WallTime));
    targets = cpu
}
criterion_main!(wall_clock, cpu_time);
