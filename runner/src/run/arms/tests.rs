//! Unit tests of the arm files: loading, inheritance, validation, expansion.

use super::*;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
}

const BASE: &str = r#"
name = "base"
program = "sh"
args = ["-c", "cat {prompt_file}", "{model}"]
api = "ollama"
"#;

#[test]
fn all_runs_an_alias_once() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "base", BASE);
    write(
        d.path(),
        "base-abl",
        "name = \"base-abl\"\nextends = \"base\"\nextra_args = [\"x\"]\n",
    );
    write(
        d.path(),
        "base-no-x",
        "name = \"base-no-x\"\nextends = \"base-abl\"\ndescription = \"alias\"\n",
    );
    let arms = load_dir(d.path()).unwrap();
    assert_eq!(distinct_names(&arms), ["base", "base-abl"]);
    let shipped = load_dir(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../arms"))).unwrap();
    let names = distinct_names(&shipped);
    assert!(names.iter().any(|n| n == "mingbird-text-only-gate"));
    assert!(!names.iter().any(|n| n == "mingbird-v2-no-executable-gates"));
    assert_eq!(names.len(), shipped.len() - 1, "{names:?}");
}

#[test]
fn loads_extends_and_expands() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "base", BASE);
    write(
        d.path(),
        "base-abl",
        "name = \"base-abl\"\nextends = \"base\"\nextra_args = [\"--ablate\", \"x\"]\n",
    );
    let arms = load_dir(d.path()).unwrap();
    assert_eq!(arms.len(), 2);
    let abl = &arms[1];
    assert_eq!(abl.args.len(), 5);
    let mut v = Vars::default();
    v.set("prompt_file", "/w/p.txt").set("model", "m");
    let (_, args) = abl.command(&v).unwrap();
    assert_eq!(args, ["-c", "cat /w/p.txt", "m", "--ablate", "x"]);
    assert_eq!(expand("{\"a\": \"{model}\"}", &v), "{\"a\": \"m\"}");
}

#[test]
fn broken_files_name_file_and_field() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "base", BASE);
    write(
        d.path(),
        "bad",
        "name = \"bad\"\nprogram = \"x\"\nargs = [\"{promt}\"]\napi = \"ollama\"\n",
    );
    write(d.path(), "worse", "name = 3\n");
    write(
        d.path(),
        "orphan",
        "name = \"orphan\"\nextends = \"nope\"\n",
    );
    let e = format!("{:#}", load_dir(d.path()).unwrap_err());
    assert!(
        e.contains("bad.toml: args[0]: unknown placeholder {promt}"),
        "{e}"
    );
    assert!(e.contains("worse.toml"), "{e}");
    assert!(
        e.contains("orphan.toml: extends: unknown arm 'nope'"),
        "{e}"
    );
}

#[test]
fn config_files_may_not_touch_real_home() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "c",
        "name = \"c\"\nprogram = \"x\"\nargs = [\"{prompt}\"]\napi = \"openai\"\n[[config_files]]\npath = \"/root/.x\"\ncontent = \"\"\n",
    );
    let e = format!("{:#}", load_dir(d.path()).unwrap_err());
    assert!(e.contains("config_files[0].path"), "{e}");
}

#[test]
fn select_rejects_unknown() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "base", BASE);
    let arms = load_dir(d.path()).unwrap();
    let e = select(&arms, &["nope".into()]).unwrap_err().to_string();
    assert!(
        e.contains("unknown arm 'nope'") && e.contains("base"),
        "{e}"
    );
}
