use super::*;
use crate::convo::Msg;
use serde_json::json;

/// aider's whole-file system prompt (wholefile_prompts.py, fence ```), as it is sent.
const WHOLE: &str = "Act as an expert software developer.\nTake requests for changes to the supplied code.\n\
To suggest changes to a file you MUST return the entire content of the updated file.\n\
You MUST use this *file listing* format:\n\npath/to/filename.js\n```\n// entire file content ...\n// ... goes in between\n```\n\n\
Every *file listing* MUST use this format:\n- First line: the filename with any originally provided path\n";

/// aider's SEARCH/REPLACE system prompt (editblock_prompts.py) with its shell command prompt.
const DIFF: &str = "Act as an expert software developer.\n\
Describe each change with a *SEARCH/REPLACE block* per the examples below.\n\
4. *Concisely* suggest any shell commands the user might want to run in ```bash blocks.\n\
# *SEARCH/REPLACE block* Rules:\n\
2. The opening fence and code language, eg: ```python\n3. The start of search block: <<<<<<< SEARCH\n\
5. The dividing line: =======\n7. The end of the replace block: >>>>>>> REPLACE\n";

fn conv(system: &str, files: &str) -> Conv {
    let m = |role: &str, content: &str| Msg {
        role: role.into(),
        content: content.into(),
        calls: vec![],
    };
    Conv {
        messages: vec![
            m("system", system),
            m("user", &format!("I have *added these files to the chat* so you can go ahead and edit them.\n\n{files}")),
            m("assistant", "Ok, any changes I propose will be to those files."),
            m("user", "the task"),
        ],
        ..Default::default()
    }
}

fn write(note: &str, path: &str, content: &str) -> Action {
    Action {
        note: note.into(),
        call: Call {
            name: WRITE.into(),
            args: json!({"path": path, "content": content}),
        },
    }
}

#[test]
fn whole_file_listings_as_aider_reads_them() {
    let c = conv(WHOLE, "app.py\n```\nprint(1)\n```\n");
    let p = detect(&c, WHOLE).unwrap();
    assert_eq!(p.style, Style::Whole);
    assert_eq!(
        (p.open.as_str(), p.close.as_str(), p.shell),
        ("```", "```", false)
    );
    assert_eq!(p.tools().len(), 1);
    let acts = vec![
        write("Step 1/2: writing app.py.", "app.py", "print(2)\n"),
        write(
            "Step 2/2: writing docs/notes.md.",
            "docs/notes.md",
            "# Notes\n\n- one\n",
        ),
    ];
    let text = p.render(&c, &acts, "All steps are done.");
    // aider's parser: the line before an opening fence is the path, the next fence closes
    let got = listings(&text, "```", "```");
    let files: Vec<(&str, &str)> = got
        .iter()
        .map(|(_, p, c)| (p.as_str(), c.as_str()))
        .collect();
    assert_eq!(
        files,
        [
            ("app.py", "print(2)\n"),
            ("docs/notes.md", "# Notes\n\n- one\n")
        ]
    );
    assert!(text.ends_with("All steps are done."));
    assert_eq!(p.parse(&c, 4, &text), acts);
}

#[test]
fn other_fences_from_the_prompt() {
    let sys = WHOLE.replace("```", "<source>");
    let p = detect(&conv(&sys, ""), &sys).unwrap();
    assert_eq!(
        (p.open.as_str(), p.close.as_str()),
        ("<source>", "</source>")
    );
    let text = p.render(
        &Conv::default(),
        &[write("", "a.md", "```\ncode\n```\n")],
        "",
    );
    assert_eq!(text, "a.md\n<source>\n```\ncode\n```\n</source>\n\n");
}

#[test]
fn search_replace_blocks_edit_the_listed_file() {
    let old = "def f():\n    return 1\n\n\ndef g():\n    return 1\n";
    let c = conv(DIFF, &format!("m.py\n```\n{old}```\n"));
    let p = detect(&c, DIFF).unwrap();
    assert_eq!(p.style, Style::SearchReplace);
    assert!(p.shell);
    let new = "def f():\n    return 1\n\n\ndef g():\n    return 2\n";
    let acts = vec![
        write("Step 1/3: writing m.py.", "m.py", new),
        write("Step 2/3: writing new.md.", "new.md", "```\nfenced\n```\n"),
        Action {
            note: "Step 3/3: running `python3 m.py`.".into(),
            call: Call {
                name: RUN.into(),
                args: json!({"command": "python3 m.py"}),
            },
        },
    ];
    let text = p.render(&c, &acts, "");
    // the SEARCH part is only the changed line plus what makes it unique
    assert!(text.contains("m.py\n```python\n<<<<<<< SEARCH\n"), "{text}");
    assert!(
        text.contains("def g():\n    return 1\n=======\ndef g():\n    return 2\n>>>>>>> REPLACE\n"),
        "{text}"
    );
    assert!(text.contains(
        "new.md\n```markdown\n<<<<<<< SEARCH\n=======\n```\nfenced\n```\n>>>>>>> REPLACE"
    ));
    assert!(text.contains("```bash\npython3 m.py\n```\n"));
    assert_eq!(p.parse(&c, 4, &text), acts);
}

#[test]
fn hunks_are_unique_and_apply() {
    for (old, new) in [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("x\nx\nx\n", "x\nx\ny\nx\n"),
        ("", "new\n"),
        ("same\n", "same\n"),
        ("a\n", "a\nb\n"),
    ] {
        let (s, r) = hunk(old, new);
        assert_eq!(
            apply(old, &s, &r).as_deref(),
            Some(new),
            "{old:?} -> {new:?}: {s:?} {r:?}"
        );
    }
}

#[test]
fn no_format_no_protocol() {
    assert!(detect(&Conv::default(), "You are a helpful assistant.").is_none());
}
