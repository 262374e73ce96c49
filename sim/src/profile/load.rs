//! Reading and checking profile files. Every problem names the file and the field; a profile
//! that fails any check is not used at all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{ContentRates, FailureForm, Profile, Rate, Reactions, Speed};
use crate::dialect::Family;
use crate::error::SimError;

/// The file as written (forms keyed by name so an unknown one can be reported by name).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: String,
    family: String,
    params_b: f64,
    thinking: bool,
    origin: String,
    speed: Speed,
    forms: BTreeMap<String, Rate>,
    content: ContentRates,
    reactions: Reactions,
}

fn check_prob(file: &Path, field: &str, v: f64) -> Result<(), SimError> {
    if !(0.0..=1.0).contains(&v) || v.is_nan() {
        return Err(SimError::field(
            file,
            field,
            format!("{v} is outside [0, 1]"),
        ));
    }
    Ok(())
}

fn check_finite(file: &Path, field: &str, v: f64) -> Result<(), SimError> {
    if !v.is_finite() {
        return Err(SimError::field(
            file,
            field,
            format!("{v} is not a finite number"),
        ));
    }
    Ok(())
}

fn check_positive(file: &Path, field: &str, v: f64) -> Result<(), SimError> {
    check_finite(file, field, v)?;
    if v <= 0.0 {
        return Err(SimError::field(
            file,
            field,
            format!("{v} must be greater than 0"),
        ));
    }
    Ok(())
}

/// Parses and validates one profile text (`file` is only used in messages).
pub fn parse(file: &Path, text: &str) -> Result<Profile, SimError> {
    let raw: Raw = toml::from_str(text).map_err(|e| SimError::ProfileSyntax {
        file: file.to_path_buf(),
        msg: e.to_string().trim_end().to_string(),
    })?;
    if raw.name.trim().is_empty() || raw.name.contains(['/', ':', ' ']) {
        return Err(SimError::field(
            file,
            "name",
            format!("`{}` is not a plain model name", raw.name),
        ));
    }
    let family = Family::parse(&raw.family).ok_or_else(|| {
        SimError::field(
            file,
            "family",
            format!(
                "unknown family `{}` (known: {})",
                raw.family,
                Family::ALL
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    check_positive(file, "params_b", raw.params_b)?;
    let s = &raw.speed;
    for (k, v) in [
        ("speed.prefill_a", s.prefill_a),
        ("speed.prefill_b", s.prefill_b),
        ("speed.prefill_c", s.prefill_c),
        ("speed.load_s", s.load_s),
    ] {
        check_finite(file, k, v)?;
        if v < 0.0 {
            return Err(SimError::field(
                file,
                k,
                format!("{v} must not be negative"),
            ));
        }
    }
    check_positive(file, "speed.decode_tps", s.decode_tps)?;
    let mut forms = BTreeMap::new();
    for (name, r) in raw.forms {
        let field = format!("forms.{name}");
        let f = FailureForm::parse(&name).ok_or_else(|| {
            SimError::field(
                file,
                &field,
                format!(
                    "unknown failure form `{name}` (known: {})",
                    FailureForm::ALL
                        .iter()
                        .map(|f| f.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        if f == FailureForm::ContentError {
            return Err(SimError::field(
                file,
                &field,
                "content errors are set in [content], not [forms]",
            ));
        }
        check_prob(file, &format!("{field}.base"), r.base)?;
        check_finite(file, &format!("{field}.ctx_slope"), r.ctx_slope)?;
        check_finite(file, &format!("{field}.opening_slope"), r.opening_slope)?;
        check_finite(file, &format!("{field}.tools_slope"), r.tools_slope)?;
        forms.insert(f, r);
    }
    check_prob(file, "content.base", raw.content.base)?;
    check_finite(file, "content.tier_slope", raw.content.tier_slope)?;
    check_finite(file, "content.progress_slope", raw.content.progress_slope)?;
    let x = &raw.reactions;
    for (k, v) in [
        ("reactions.loop_stay_plain", x.loop_stay_plain),
        ("reactions.loop_stay_warned", x.loop_stay_warned),
        ("reactions.loop_stay_blocked", x.loop_stay_blocked),
        ("reactions.fix_precise", x.fix_precise),
        ("reactions.fix_generic", x.fix_generic),
        ("reactions.persist", x.persist),
        ("reactions.nudge_continue", x.nudge_continue),
    ] {
        check_prob(file, k, v)?;
    }
    Ok(Profile {
        name: raw.name,
        family,
        params_b: raw.params_b,
        thinking: raw.thinking,
        origin: raw.origin,
        speed: raw.speed,
        forms,
        content: raw.content,
        reactions: raw.reactions,
    })
}

/// Reads and validates one file.
pub fn load_file(path: &Path) -> Result<Profile, SimError> {
    let text = std::fs::read_to_string(path).map_err(|source| SimError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &text)
}

/// Every `*.toml` of a folder, in name order; the first bad file is the error (and no profile
/// of the folder is used). Two files naming the same model are an error too.
pub fn load_dir(dir: &Path) -> Result<Vec<Profile>, SimError> {
    let rd = std::fs::read_dir(dir).map_err(|source| SimError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out: Vec<Profile> = Vec::new();
    for f in &files {
        let p = load_file(f)?;
        if out.iter().any(|q| q.name == p.name) {
            return Err(SimError::field(
                f,
                "name",
                format!("model `{}` is defined twice in {}", p.name, dir.display()),
            ));
        }
        out.push(p);
    }
    Ok(out)
}

const BUILTIN: [(&str, &str); 4] = [
    ("sim-2b.toml", include_str!("../../profiles/sim-2b.toml")),
    ("sim-4b.toml", include_str!("../../profiles/sim-4b.toml")),
    ("sim-12b.toml", include_str!("../../profiles/sim-12b.toml")),
    ("sim-35b.toml", include_str!("../../profiles/sim-35b.toml")),
];

/// The committed profiles (`sim/profiles/*.toml`), compiled in.
pub fn builtin() -> Vec<Profile> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            parse(&Path::new("sim/profiles").join(name), text)
                .unwrap_or_else(|e| panic!("committed profile is invalid: {e}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> String {
        BUILTIN[0].1.to_string()
    }

    fn err(text: &str) -> String {
        parse(Path::new("p/x.toml"), text).unwrap_err().to_string()
    }

    #[test]
    fn bad_profiles_name_the_file_and_field() {
        let e = err(&good().replace("[forms.abandon]", "[forms.teleport]"));
        assert!(
            e.starts_with("p/x.toml: field `forms.teleport`: unknown failure form"),
            "{e}"
        );
        let bad = good().replacen("nudge_continue = ", "nudge_continue = 1.5 #", 1);
        let e = err(&bad);
        assert!(
            e.contains("p/x.toml")
                && e.contains("reactions.nudge_continue")
                && e.contains("outside [0, 1]"),
            "{e}"
        );
        let e = err(&good().replace("decode_tps", "# decode_tps"));
        assert!(e.contains("p/x.toml") && e.contains("decode_tps"), "{e}");
        let e = err(&good().replace("family = \"gemma4\"", "family = \"gpt9\""));
        assert!(e.contains("field `family`: unknown family `gpt9`"), "{e}");
        let e = err(&(good() + "\nsurprise = 1\n"));
        assert!(e.contains("surprise"), "{e}");
    }

    #[test]
    fn a_folder_with_one_bad_file_is_rejected_whole() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.toml"), good()).unwrap();
        std::fs::write(
            d.path().join("b.toml"),
            good()
                .replace("sim-2b", "sim-x")
                .replace("base = ", "base = -"),
        )
        .unwrap();
        let e = load_dir(d.path()).unwrap_err().to_string();
        assert!(e.contains("b.toml") && e.contains("outside [0, 1]"), "{e}");
        std::fs::write(d.path().join("b.toml"), good()).unwrap();
        let e = load_dir(d.path()).unwrap_err().to_string();
        assert!(e.contains("defined twice"), "{e}");
    }
}
