//! The per-task τ² manifest, `<domain>_manifest.json`, in the shape the paper published
//! (`benchmarks/tau2/*_manifest.json`): `{task: {arm: {status, reward, wall}}}`, error cells
//! `{status: "error", error}`. `lrab tau2 run` writes it (merging its arm into the file), and
//! `lrab analyze` reads ours and the published ones alike, so McNemar pairs a run's arm with a
//! published arm task by task.
//!
//! Order is kept (tasks and arms as written: the published files list tasks `"0".."113"`,
//! not sorted), and [`Tau2Manifest::to_json`] writes Python's `json.dump(indent=1)` layout
//! without a final newline, so a published file reads and writes back byte for byte.
//! Additions of ours, absent from the published files: status `ungraded` (an NL-gated task
//! without a judge: no reward), `reward: 0.0` on an error cell scored 0 by the paper's
//! policy, and `rewards` (every trial's reward, `null` when set aside or ungraded) when a run
//! had more than one trial; `reward` is always the first trial's.

use crate::error::RecordError;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::path::Path;

/// How a cell ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    /// The conversation ran and was graded.
    Ok,
    /// The run failed (a backend, the arm's launch or the task's set-up); `error` says how.
    Error,
    /// Ran, but a gating NL assertion had no judge (ours).
    Ungraded,
}

/// One task × arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestCell {
    /// How the cell ended.
    pub status: CellStatus,
    /// The first trial's reward (0..=1); absent when set aside or ungraded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
    /// Wall seconds of the first trial, whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall: Option<u64>,
    /// What failed (error cells).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Every trial's reward in trial order, when there was more than one (ours).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewards: Option<Vec<Option<f64>>>,
}

impl ManifestCell {
    /// Every trial's reward: `rewards` when present, else the one `reward`.
    pub fn trial_rewards(&self) -> Vec<Option<f64>> {
        self.rewards.clone().unwrap_or_else(|| vec![self.reward])
    }
}

/// The arms of one task, in file order.
pub type ManifestArms = Vec<(String, ManifestCell)>;

/// A whole manifest: tasks in file order, each with its arms in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tau2Manifest {
    /// `(task id, arms)`.
    pub tasks: Vec<(String, ManifestArms)>,
}

impl Tau2Manifest {
    /// The domain a manifest file is for: its name up to `_manifest`
    /// (`retail_manifest_nt0.json` → `retail`).
    pub fn domain_of(path: &Path) -> String {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("tau2");
        stem.split("_manifest").next().unwrap_or(stem).to_string()
    }

    /// The file name `lrab tau2 run` writes for a domain.
    pub fn file_name(domain: &str) -> String {
        format!("{domain}_manifest.json")
    }

    /// Parses a manifest; errors name the file and the task/arm.
    pub fn parse(text: &str, path: &Path) -> Result<Self, RecordError> {
        let m: Tau2Manifest = serde_json::from_str(text).map_err(|e| {
            RecordError::invalid(path, Some(e.line()), format!("not a τ² manifest: {e}"))
        })?;
        for (task, arms) in &m.tasks {
            for (arm, cell) in arms {
                for r in cell.trial_rewards().into_iter().flatten() {
                    if !(0.0..=1.0).contains(&r) {
                        return Err(RecordError::invalid(
                            path,
                            None,
                            format!("task `{task}`, arm `{arm}`: reward {r} outside [0, 1]"),
                        ));
                    }
                }
            }
        }
        Ok(m)
    }

    /// Reads a manifest file.
    pub fn read(path: &Path) -> Result<Self, RecordError> {
        let text = std::fs::read_to_string(path).map_err(|e| RecordError::io(path, e))?;
        Self::parse(&text, path)
    }

    /// The cell of `task` × `arm`.
    pub fn get(&self, task: &str, arm: &str) -> Option<&ManifestCell> {
        let arms = &self.tasks.iter().find(|(t, _)| t == task)?.1;
        arms.iter().find(|(a, _)| a == arm).map(|(_, c)| c)
    }

    /// Sets `task` × `arm`, replacing a cell already there (in place) or appending.
    pub fn set(&mut self, task: &str, arm: &str, cell: ManifestCell) {
        let i = match self.tasks.iter().position(|(t, _)| t == task) {
            Some(i) => i,
            None => {
                self.tasks.push((task.to_string(), Vec::new()));
                self.tasks.len() - 1
            }
        };
        let arms = &mut self.tasks[i].1;
        match arms.iter_mut().find(|(a, _)| a == arm) {
            Some(slot) => slot.1 = cell,
            None => arms.push((arm.to_string(), cell)),
        }
    }

    /// Python's `json.dump(m, f, indent=1)` text (ASCII only, `\uXXXX` escapes), no final
    /// newline: the published files' layout.
    pub fn to_json(&self) -> String {
        let mut buf = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, PyFormatter::new());
        self.serialize(&mut ser)
            .expect("a manifest always serializes");
        String::from_utf8(buf).expect("serde_json writes UTF-8")
    }

    /// Writes [`Self::to_json`] atomically.
    pub fn write(&self, path: &Path) -> Result<(), RecordError> {
        lrab_util::write_atomic(path, self.to_json().as_bytes())
            .map_err(|e| RecordError::io(path, e))
    }
}

struct Ordered<'a, T>(&'a [(String, T)]);

impl<T: Serialize> Serialize for Ordered<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for Tau2Manifest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let tasks: Vec<(String, Ordered<'_, ManifestCell>)> = self
            .tasks
            .iter()
            .map(|(t, a)| (t.clone(), Ordered(a)))
            .collect();
        Ordered(&tasks).serialize(s)
    }
}

/// An object read in document order; a repeated key is an error.
struct InOrder<T>(Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for InOrder<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = InOrder<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, T)> = Vec::new();
                while let Some(k) = a.next_key::<String>()? {
                    if out.iter().any(|(x, _)| *x == k) {
                        return Err(serde::de::Error::custom(format!("key `{k}` twice")));
                    }
                    let v = a.next_value::<T>()?;
                    out.push((k, v));
                }
                Ok(InOrder(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'de> Deserialize<'de> for Tau2Manifest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let tasks = InOrder::<InOrder<ManifestCell>>::deserialize(d)?;
        Ok(Tau2Manifest {
            tasks: tasks.0.into_iter().map(|(t, a)| (t, a.0)).collect(),
        })
    }
}

/// serde_json's pretty layout with a one-space indent, escaping non-ASCII as Python's
/// `ensure_ascii` does.
struct PyFormatter {
    inner: serde_json::ser::PrettyFormatter<'static>,
}

impl PyFormatter {
    fn new() -> Self {
        PyFormatter {
            inner: serde_json::ser::PrettyFormatter::with_indent(b" "),
        }
    }
}

macro_rules! delegate {
    ($($name:ident $(($arg:ident : $t:ty))?),* $(,)?) => {$(
        fn $name<W: ?Sized + std::io::Write>(&mut self, w: &mut W $(, $arg: $t)?) -> std::io::Result<()> {
            self.inner.$name(w $(, $arg)?)
        }
    )*};
}

impl serde_json::ser::Formatter for PyFormatter {
    delegate!(
        begin_array,
        end_array,
        begin_array_value(first: bool),
        end_array_value,
        begin_object,
        end_object,
        begin_object_key(first: bool),
        end_object_key,
        begin_object_value,
        end_object_value,
    );

    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        for ch in fragment.chars() {
            if ch.is_ascii() {
                w.write_all(&[ch as u8])?;
            } else {
                let mut units = [0u16; 2];
                for u in ch.encode_utf16(&mut units) {
                    write!(w, "\\u{u:04x}")?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_order_with_python_layout() {
        let text = "{\n \"1\": {\n  \"b\": {\n   \"status\": \"ok\",\n   \"reward\": 1.0,\n   \"wall\": 26\n  },\n  \"a\": {\n   \"status\": \"error\",\n   \"error\": \"x\\ny \\u00e9\"\n  }\n },\n \"0\": {}\n}";
        let m = Tau2Manifest::parse(text, Path::new("t_manifest.json")).unwrap();
        assert_eq!(m.tasks[0].0, "1");
        assert_eq!(m.tasks[0].1[0].0, "b");
        assert_eq!(m.get("1", "a").unwrap().error.as_deref(), Some("x\ny é"));
        assert_eq!(m.to_json(), text);
    }

    #[test]
    fn set_replaces_in_place_and_appends() {
        let mut m = Tau2Manifest::default();
        let cell = |r: f64| ManifestCell {
            status: CellStatus::Ok,
            reward: Some(r),
            wall: Some(1),
            error: None,
            rewards: None,
        };
        m.set("0", "x", cell(0.0));
        m.set("0", "y", cell(1.0));
        m.set("0", "x", cell(1.0));
        assert_eq!(m.tasks[0].1[0].0, "x");
        assert_eq!(m.get("0", "x").unwrap().reward, Some(1.0));
        assert_eq!(m.tasks[0].1.len(), 2);
    }

    #[test]
    fn bad_input_names_file_and_cell() {
        let p = Path::new("r_manifest.json");
        let e = Tau2Manifest::parse(r#"{"3": {"x": {"status": "ok", "reward": 2.0}}}"#, p)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("r_manifest.json") && e.contains("task `3`, arm `x`"),
            "{e}"
        );
        let e = Tau2Manifest::parse(r#"{"3": {"x": {"status": "fine"}}}"#, p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("r_manifest.json:1") && e.contains("fine"), "{e}");
        let e = Tau2Manifest::parse(r#"{"3": {}, "3": {}}"#, p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("key `3` twice"), "{e}");
        assert_eq!(
            Tau2Manifest::domain_of(Path::new("a/retail_manifest_nt0.json")),
            "retail"
        );
    }

    /// The published manifests (carried in data/mingbird/) read and write back byte for byte.
    #[test]
    fn published_manifests_round_trip() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/mingbird");
        let mut seen = 0;
        for name in [
            "airline_manifest.json",
            "retail_manifest.json",
            "retail_manifest_nt0.json",
            "telecom_manifest.json",
        ] {
            let p = dir.join(name);
            let text = std::fs::read_to_string(&p).unwrap();
            let m = Tau2Manifest::parse(&text, &p).unwrap();
            assert!(m.tasks.len() >= 50, "{name}");
            assert!(m.to_json() == text, "{name} does not round-trip");
            seen += 1;
        }
        assert_eq!(seen, 4);
    }
}
