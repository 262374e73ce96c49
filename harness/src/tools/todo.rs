//! The plan (todo) tool, with an explicit all-done exit so plan sync never costs more than one
//! call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanItem {
    pub text: String,
    pub done: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub items: Vec<PlanItem>,
}

fn items_arg(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| match x {
                Value::String(s) => Some(s.trim().to_string()),
                Value::Object(o) => o
                    .get("text")
                    .or_else(|| o.get("content"))
                    .or_else(|| o.get("task"))
                    .and_then(|t| t.as_str())
                    .map(|s| s.trim().to_string()),
                _ => None,
            })
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => {
            if let Ok(Value::Array(_)) = serde_json::from_str::<Value>(s) {
                return items_arg(serde_json::from_str::<Value>(s).ok().as_ref());
            }
            s.lines()
                .map(|l| {
                    l.trim()
                        .trim_start_matches(|c: char| {
                            c.is_ascii_digit() || c == '.' || c == '-' || c == ')' || c == '*'
                        })
                        .trim()
                        .to_string()
                })
                .filter(|l| !l.is_empty())
                .collect()
        }
        _ => Vec::new(),
    }
}

impl Plan {
    pub fn render(&self) -> String {
        self.items
            .iter()
            .enumerate()
            .map(|(i, it)| {
                format!(
                    "{}. [{}] {}",
                    i + 1,
                    if it.done { "x" } else { " " },
                    it.text
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
    pub fn open_items(&self) -> Vec<String> {
        self.items
            .iter()
            .enumerate()
            .filter(|(_, i)| !i.done)
            .map(|(n, i)| format!("{}. {}", n + 1, i.text))
            .collect()
    }
    pub fn next_open(&self) -> Option<(usize, &str)> {
        self.items
            .iter()
            .enumerate()
            .find(|(_, i)| !i.done)
            .map(|(n, i)| (n + 1, i.text.as_str()))
    }

    /// Apply a todo call; returns (ok, text for the model).
    pub fn apply(&mut self, args: &Value) -> (bool, String) {
        let action = args
            .get("action")
            .and_then(|a| a.as_str())
            .unwrap_or(if args.get("items").is_some() {
                "create"
            } else {
                "list"
            })
            .to_lowercase();
        match action.as_str() {
            "create" | "add" | "set" | "replace" => {
                let items = items_arg(args.get("items"));
                if items.is_empty() {
                    return (
                        false,
                        "todo create needs items: a list of step strings".into(),
                    );
                }
                if action == "add" {
                    self.items
                        .extend(items.into_iter().map(|text| PlanItem { text, done: false }));
                } else {
                    self.items = items
                        .into_iter()
                        .map(|text| PlanItem { text, done: false })
                        .collect();
                }
                (true, format!("plan saved:\n{}", self.render()))
            }
            "done" | "update" | "complete" | "check" => {
                let idx = args.get("index").and_then(|i| {
                    i.as_u64()
                        .or_else(|| i.as_str().and_then(|s| s.trim().parse().ok()))
                });
                match idx {
                    Some(i) if i >= 1 && (i as usize) <= self.items.len() => {
                        self.items[i as usize - 1].done = true;
                        let next = match self.next_open() {
                            Some((n, t)) => format!("next: {n}. {t}"),
                            None => "all items done: call finish".into(),
                        };
                        (true, format!("item {i} done; {next}"))
                    }
                    _ => (
                        false,
                        format!(
                            "todo done needs index between 1 and {}",
                            self.items.len().max(1)
                        ),
                    ),
                }
            }
            "done_all" | "all_done" | "complete_all" | "finish" => {
                for i in &mut self.items {
                    i.done = true;
                }
                (
                    true,
                    "all plan items marked done; call finish with a short summary".into(),
                )
            }
            "list" | "show" | "view" => {
                if self.items.is_empty() {
                    (
                        true,
                        "no plan yet: todo(action=\"create\", items=[...])".into(),
                    )
                } else {
                    (true, self.render())
                }
            }
            other => (
                false,
                format!("unknown todo action '{other}'; use create, done, done_all or list"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn create_done_done_all() {
        let mut p = Plan::default();
        assert!(
            p.apply(&json!({"action": "create", "items": ["read data", "write report.md"]}))
                .0
        );
        assert_eq!(p.open_items().len(), 2);
        let (ok, t) = p.apply(&json!({"action": "done", "index": 1}));
        assert!(ok && t.contains("next: 2. write report.md"));
        assert!(!p.apply(&json!({"action": "done", "index": 9})).0);
        assert!(p.apply(&json!({"action": "done_all"})).0);
        assert!(p.open_items().is_empty());
        // lenient shapes: a string list, objects
        let mut p = Plan::default();
        p.apply(&json!({"items": "1. a\n2. b"}));
        assert_eq!(p.items.len(), 2);
        p.apply(&json!({"action": "create", "items": [{"text": "x"}]}));
        assert_eq!(p.items[0].text, "x");
    }
}
