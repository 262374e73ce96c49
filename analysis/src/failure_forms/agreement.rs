//! Our coding against a published one, form by form and row by row: the proof that our rules
//! are the paper's. A form is compared only when the source records every field its rule reads
//! ([`Form::fields`]); a form whose inputs the file lacks altogether is listed as unchecked.
//! Two unknowns agree (a flag the published file leaves empty, ours unknown).

use super::{Field, Form, Inputs, Source};
use serde::Serialize;
use std::fmt::Write;

/// Agreement on one form.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FormAgreement {
    /// The form.
    pub form: Form,
    /// Rows where ours equals the published flag.
    pub agree: usize,
    /// Rows compared.
    pub rows: usize,
}

/// One row and form where the codings differ.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// Arm.
    pub arm: String,
    /// Model.
    pub model: String,
    /// Task.
    pub task: String,
    /// Form.
    pub form: Form,
    /// Our flag (`None` = unknown).
    pub ours: Option<bool>,
    /// The published flag (`None` = empty).
    pub published: Option<bool>,
    /// The rule's fields that this row leaves empty (why ours is unknown).
    pub empty_fields: Vec<Field>,
}

/// Our coding of one source against its published coding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Agreement {
    /// The file.
    pub file: String,
    /// Rows with a published coding.
    pub rows: usize,
    /// Rows where every compared form agrees.
    pub rows_agreeing: usize,
    /// The compared forms.
    pub forms: Vec<FormAgreement>,
    /// Forms not compared, with the fields the file lacks for them.
    pub unchecked: Vec<(Form, Vec<Field>)>,
    /// Every disagreement, in file order.
    pub differences: Vec<Difference>,
}

fn empty_fields(x: &Inputs, f: Form) -> Vec<Field> {
    f.fields()
        .iter()
        .copied()
        .filter(|k| match k {
            Field::Score => x.score.is_none(),
            Field::Wall => x.wall_seconds.is_none(),
            Field::Budget => x.budget.is_none(),
            Field::FailureMode => x.failure_mode.is_none(),
            Field::Exit => x.exit.is_none(),
            Field::ToolCalls => x.tool_calls.is_none(),
            Field::Checks => x.checks.is_none(),
            Field::SpinEvents => x.spin_events.is_none(),
            Field::FmtArgErrors => x.fmt_arg_errors.is_none(),
            Field::CtxEvents => x.ctx_events.is_none(),
            Field::FinishRejections => x.finish_rejections.is_none(),
            Field::ProviderErrors => x.provider_errors.is_none(),
        })
        .collect()
}

/// Our coding of `src` against its published coding; `None` when it has none.
pub fn agreement(src: &Source) -> Option<Agreement> {
    let rows: Vec<_> = src.cells.iter().filter(|c| c.published.is_some()).collect();
    if rows.is_empty() {
        return None;
    }
    let lacking = |f: Form| -> Vec<Field> {
        f.fields()
            .iter()
            .copied()
            .filter(|k| !src.fields.contains(k))
            .collect()
    };
    let compared: Vec<Form> = Form::ALL
        .into_iter()
        .filter(|f| lacking(*f).is_empty())
        .collect();
    let mut differences = Vec::new();
    let mut rows_agreeing = 0;
    for c in &rows {
        let published = c.published.expect("filtered");
        let before = differences.len();
        for f in &compared {
            let (ours, theirs) = (c.coding.get(*f), published.get(*f));
            if ours != theirs {
                differences.push(Difference {
                    arm: c.arm.clone(),
                    model: c.model.clone(),
                    task: c.task.clone(),
                    form: *f,
                    ours,
                    published: theirs,
                    empty_fields: empty_fields(&c.inputs, *f),
                });
            }
        }
        rows_agreeing += usize::from(differences.len() == before);
    }
    let forms = compared
        .iter()
        .map(|f| FormAgreement {
            form: *f,
            rows: rows.len(),
            agree: rows.len() - differences.iter().filter(|d| d.form == *f).count(),
        })
        .collect();
    Some(Agreement {
        file: src.file.clone(),
        rows: rows.len(),
        rows_agreeing,
        forms,
        unchecked: Form::ALL
            .into_iter()
            .filter(|f| !compared.contains(f))
            .map(|f| (f, lacking(f)))
            .collect(),
        differences,
    })
}

fn flag(x: Option<bool>) -> &'static str {
    match x {
        Some(true) => "1",
        Some(false) => "0",
        None => "unknown",
    }
}

fn names(xs: &[Field]) -> String {
    xs.iter()
        .map(|x| format!("`{}`", x.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Agreement {
    /// The agreement paragraph of the report.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "### Our coding against the published coding of {}\n\n\
             {}/{} rows agree on all {} forms whose inputs the file records.",
            self.file,
            self.rows_agreeing,
            self.rows,
            self.forms.len()
        );
        let per: Vec<String> = self
            .forms
            .iter()
            .map(|f| format!("{} {}/{}", f.form.name(), f.agree, f.rows))
            .collect();
        let _ = writeln!(out, "Per form: {}.", per.join(", "));
        for (f, lacking) in &self.unchecked {
            let _ = writeln!(
                out,
                "Not checkable: `{}` (the file has no {} column; its published flags are \
                 shown in brackets above).",
                f.name(),
                names(lacking)
            );
        }
        out.push('\n');
        for d in &self.differences {
            let why = if d.empty_fields.is_empty() {
                String::new()
            } else {
                format!(" (the row has no {})", names(&d.empty_fields))
            };
            let _ = writeln!(
                out,
                "- {} / {} / {}: `{}` published {}, ours {}{why}",
                d.arm,
                d.model,
                d.task,
                d.form.name(),
                flag(d.published),
                flag(d.ours)
            );
        }
        if !self.differences.is_empty() {
            out.push('\n');
        }
        out
    }
}
