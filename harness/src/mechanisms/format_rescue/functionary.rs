//! Recipient lines (Functionary v3.2, ChatGLM-4): each message starts with `>>>RECIPIENT`, a
//! newline, then the body — `all` for text to the user, a tool name for a call whose body is
//! the JSON arguments. The generation prompt already ends in `>>>`, so the first recipient of
//! a reply appears without it. A reply that begins with a bare tool name on its own line
//! followed by a JSON object (the same layout without any `>>>`) is weak evidence.

use super::scan::{find_in, is_name, mark, skip_ws, Args, Found, Scan};

const MARK: &str = ">>>";

pub(crate) fn scan_marked(s: &mut Scan) {
    if !s.has(mark::FUNCTIONARY) {
        return;
    }
    first_line(s, false);
    let marks = s.occurrences(MARK);
    for (n, &at) in marks.iter().enumerate() {
        let limit = marks.get(n + 1).copied().unwrap_or(s.text.len());
        recipient(s, at, at + MARK.len(), limit, false);
    }
}

pub(crate) fn scan_first_line(s: &mut Scan) {
    first_line(s, true);
}

fn first_line(s: &mut Scan, weak: bool) {
    let i = skip_ws(s.text, 0);
    let limit = if s.has(mark::FUNCTIONARY) {
        find_in(s.text, i, s.text.len(), MARK).unwrap_or(s.text.len())
    } else {
        s.text.len()
    };
    recipient(s, i, i, limit, weak);
}

/// `NAME\n{json}` starting at `i` (the message starts at `at`).
fn recipient(s: &mut Scan, at: usize, i: usize, limit: usize, weak: bool) {
    let t = s.text;
    let Some(nl) = find_in(t, i, limit.min(i + 130), "\n") else {
        return;
    };
    let name = t[i..nl].trim();
    if name == "all" || !is_name(name) {
        return;
    }
    let j = skip_ws(t, nl);
    if t.as_bytes().get(j) != Some(&b'{') {
        return;
    }
    if let Some((end, Ok(v))) = s.json_at(j, limit) {
        let f = Found::new(at, end, name, Args::Json(v), "functionary-v3.2");
        s.push(if weak { f.weak() } else { f });
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{expect, none};
    use serde_json::json;

    #[test]
    fn recipients() {
        expect(
            "all\nOne moment.>>>read_file\n{\"path\": \"a\"}>>>list_dir\n{}",
            "functionary-v3.2",
            json!([{"name": "read_file", "arguments": {"path": "a"}}, {"name": "list_dir", "arguments": {}}]),
        );
        expect(
            "run_shell\n{\"command\": \"date\"}",
            "functionary-v3.2",
            json!([{"name": "run_shell", "arguments": {"command": "date"}}]),
        );
        none("all\nNothing to run.");
        none("read_file\nis the tool I would use.");
    }
}
