//! What a failed command's own output says is missing on this machine. A command string
//! shows only its first program; a script it runs may import a module or call a program the
//! machine lacks, and then only its output tells (`ModuleNotFoundError: No module named
//! 'pytest'`, `sh: 1: node: not found`). Reading that turns "exited with Some(1)" into the
//! missing thing and its fix, in the wording of [`crate::Missing`].

use crate::preflight::{is_python, needs_of_shell, Missing, Need};

/// The Python module named by a "No module named …" line, if any (top-level package).
fn module_named(line: &str) -> Option<String> {
    let rest = line.split("No module named ").nth(1)?;
    let name: String = rest
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    let top = name.split('.').next().unwrap_or("");
    (!top.is_empty()).then(|| top.to_string())
}

/// The program a shell says it could not find (`sh: 1: x: not found`, `bash: line 1: x:
/// command not found`, `x: command not found`), if any.
fn program_not_found(line: &str) -> Option<String> {
    let l = line.trim();
    let head = l
        .strip_suffix(": command not found")
        .or_else(|| l.strip_suffix(": not found"))?;
    let name = head.rsplit(": ").next()?.trim();
    let plain = !name.is_empty()
        && !name.chars().all(|c| c.is_ascii_digit())
        && !name.chars().any(char::is_whitespace);
    plain.then(|| name.to_string())
}

/// The needs a failed `command`'s `output` says are missing, each once, in the order the
/// output names them; `why` is the line that says so. A module is charged to the
/// interpreter the command runs (its first `python…` word), else `python3`.
pub fn missing_in_output(command: &str, output: &str) -> Vec<Missing> {
    let python = needs_of_shell(command)
        .into_iter()
        .find_map(|n| match n {
            Need::Program(p) if is_python(&p) => Some(p),
            _ => None,
        })
        .unwrap_or_else(|| "python3".to_string());
    let mut out: Vec<Missing> = Vec::new();
    for line in output.lines() {
        let need = if let Some(module) = module_named(line) {
            Need::PythonModule {
                python: python.clone(),
                module,
            }
        } else if let Some(p) = program_not_found(line) {
            Need::Program(p)
        } else {
            continue;
        };
        if out.iter().all(|m| m.need != need) {
            out.push(Missing {
                need,
                why: format!(
                    "the command said: {}",
                    lrab_util::clip_chars(line.trim(), 200)
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(command: &str, output: &str) -> Vec<Need> {
        missing_in_output(command, output)
            .into_iter()
            .map(|m| m.need)
            .collect()
    }

    #[test]
    fn python_import_failures_name_the_module_and_the_interpreter() {
        let tb = "Traceback (most recent call last):\n  File \"w.py\", line 3, in <module>\n    \
                  import yaml.loader\nModuleNotFoundError: No module named 'yaml'\n";
        let m = missing_in_output("python3 write_fix_summary.py", tb);
        assert_eq!(
            m[0].need,
            Need::PythonModule {
                python: "python3".into(),
                module: "yaml".into()
            }
        );
        assert_eq!(
            m[0].why,
            "the command said: ModuleNotFoundError: No module named 'yaml'"
        );
        assert!(m[0].need.fix().contains("python3 -m pip install yaml"));
        // `python -m x` says it without quotes; a dotted name is its top-level package
        assert_eq!(
            needs(
                "cd d && python3.11 t.py",
                "/usr/bin/python3.11: No module named pytest.main"
            ),
            vec![Need::PythonModule {
                python: "python3.11".into(),
                module: "pytest".into()
            }]
        );
        assert_eq!(
            needs("./run.sh", "ImportError: No module named \"numpy\""),
            vec![Need::PythonModule {
                python: "python3".into(),
                module: "numpy".into()
            }]
        );
    }

    #[test]
    fn shells_name_the_program_they_did_not_find() {
        let out = "sh: 1: node: not found\nbash: line 4: jq: command not found\n\
                   rg: command not found\nsh: 1: node: not found\n";
        assert_eq!(
            needs("sh build.sh", out),
            vec![
                Need::Program("node".into()),
                Need::Program("jq".into()),
                Need::Program("rg".into())
            ]
        );
    }

    #[test]
    fn ordinary_failures_name_nothing() {
        for out in [
            "tests failed; see EXPORT.md",
            "AssertionError: 3 != 4",
            "grep: pattern not found",
            "error: 2: not found",
            "No module named ",
        ] {
            assert_eq!(needs("python3 x.py", out), vec![], "{out}");
        }
    }
}
