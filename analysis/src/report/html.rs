//! Markdown to a self-contained HTML page, with the figures inlined as SVG.

use std::fmt::Write as _;

/// Escapes text for HTML content and double-quoted attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// Page style shared by report.html and the cell pages.
pub(crate) const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;line-height:1.45;color:#222}\
     table{border-collapse:collapse;margin:1em 0;font-size:0.9em}td,th{border:1px solid #bbb;padding:3px 7px;text-align:right}\
     th{background:#eee}td:first-child,th:first-child{text-align:left}figure{margin:1.5em 0}\
     .warn{background:#fde2e1;border:2px solid #c0392b;padding:0.8em;font-weight:bold}";

/// Inline Markdown subset used by our tables: `**bold**` and `code`.
fn inline(s: &str) -> String {
    let e = esc(s);
    let mut out = String::new();
    let mut bold = false;
    let mut code = false;
    let mut it = e.chars().peekable();
    while let Some(c) = it.next() {
        if c == '*' && it.peek() == Some(&'*') {
            it.next();
            out.push_str(if bold { "</strong>" } else { "<strong>" });
            bold = !bold;
        } else if c == '`' {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
        } else if c == '[' && !code {
            // `[text](href)`: the links of the cells table to the cell pages.
            let rest: String = it.clone().collect();
            if let Some((text, tail)) = rest.split_once("](") {
                if let Some((href, _)) = tail.split_once(')') {
                    if !text.contains('[') && !href.contains(' ') {
                        let _ = write!(out, "<a href=\"{href}\">{text}</a>");
                        for _ in 0..text.chars().count() + 2 + href.chars().count() + 1 {
                            it.next();
                        }
                        continue;
                    }
                }
            }
            out.push(c);
        } else {
            out.push(c);
        }
    }
    out
}

/// Convert our generated Markdown (headings, paragraphs, pipe tables, lists, block quotes) to HTML.
/// Images are replaced by the inline SVG documents given in `svgs` (file name -> SVG text).
pub fn markdown_to_html(md: &str, svgs: &[(String, String)]) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(h) = l.strip_prefix("### ") {
            let _ = writeln!(out, "<h3>{}</h3>", inline(h));
        } else if let Some(h) = l.strip_prefix("## ") {
            let _ = writeln!(out, "<h2>{}</h2>", inline(h));
        } else if let Some(h) = l.strip_prefix("# ") {
            let _ = writeln!(out, "<h1>{}</h1>", inline(h));
        } else if l.starts_with('|') {
            out.push_str("<table>\n");
            let mut first = true;
            while i < lines.len() && lines[i].starts_with('|') {
                let row = lines[i];
                if row.starts_with("|---") {
                    i += 1;
                    continue;
                }
                let cells: Vec<&str> = row.trim_matches('|').split(" | ").collect();
                let tag = if first { "th" } else { "td" };
                out.push_str("<tr>");
                for c in cells {
                    let _ = write!(out, "<{tag}>{}</{tag}>", inline(c.trim()));
                }
                out.push_str("</tr>\n");
                first = false;
                i += 1;
            }
            out.push_str("</table>\n");
            continue;
        } else if let Some(q) = l.strip_prefix("> ") {
            let _ = writeln!(out, "<div class=\"warn\">{}</div>", inline(q));
        } else if let Some(item) = l.strip_prefix("- ") {
            out.push_str("<ul>\n");
            let _ = writeln!(out, "<li>{}</li>", inline(item));
            while i + 1 < lines.len() && lines[i + 1].starts_with("- ") {
                i += 1;
                let _ = writeln!(out, "<li>{}</li>", inline(&lines[i][2..]));
            }
            out.push_str("</ul>\n");
        } else if l.starts_with("![") {
            let file = l
                .split("](")
                .nth(1)
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or("");
            if let Some((_, svg)) = svgs.iter().find(|(f, _)| f == file) {
                let body = svg.find("<svg").map_or(svg.as_str(), |k| &svg[k..]);
                let _ = writeln!(out, "<figure>{body}</figure>");
            }
        } else if l.len() > 2 && l.starts_with('*') && l.ends_with('*') && !l.starts_with("**") {
            let _ = writeln!(out, "<p><em>{}</em></p>", inline(&l[1..l.len() - 1]));
        } else if !l.trim().is_empty() {
            let _ = writeln!(out, "<p>{}</p>", inline(l));
        }
        i += 1;
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>LRAB analysis report</title>\n\
         <style>{STYLE}</style></head>\n<body>\n{out}</body></html>\n"
    )
}
