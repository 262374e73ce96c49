//! One line for an error and its causes, each said once. Many errors put their cause's text
//! into their own message and also return it as `source()` (an I/O error wrapped with its
//! path, a library error quoting the system's); printing the chain naively then says the
//! same cause twice ("…: No such file or directory (os error 2): No such file or directory
//! (os error 2)").

/// `err` and its causes joined with `": "`, leaving out a cause whose text is already in
/// the line (and empty ones).
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string().trim().to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        let text = c.to_string();
        let text = unsaid(&out, text.trim());
        if !text.is_empty() && !out.contains(text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(text);
        }
        cause = c.source();
    }
    out
}

/// `text` without its leading `segment: ` parts that `said` already holds: a client error that
/// starts by naming the URL the context just named says only what is new.
fn unsaid<'a>(said: &str, mut text: &'a str) -> &'a str {
    while let Some((head, rest)) = text.split_once(": ") {
        if head.is_empty() || !said.contains(head) {
            break;
        }
        text = rest.trim_start();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrap(String, Option<Box<dyn std::error::Error + 'static>>);
    impl std::fmt::Display for Wrap {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }
    impl std::error::Error for Wrap {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref()
        }
    }

    #[test]
    fn a_cause_already_said_is_left_out() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let inner = Wrap(format!("/x/manifest.json: {io}"), Some(Box::new(io)));
        let outer = Wrap("cannot resume".into(), Some(Box::new(inner)));
        assert_eq!(
            error_chain(&outer),
            "cannot resume: /x/manifest.json: entity not found"
        );
    }

    #[test]
    fn a_cause_that_repeats_the_url_says_only_what_is_new() {
        let inner = Wrap(
            "http://h:1/api/tags: Connection Failed: Connection refused".into(),
            None,
        );
        let outer = Wrap("GET http://h:1/api/tags".into(), Some(Box::new(inner)));
        assert_eq!(
            error_chain(&outer),
            "GET http://h:1/api/tags: Connection Failed: Connection refused"
        );
    }

    #[test]
    fn distinct_causes_are_all_kept() {
        let inner = Wrap("connection refused".into(), None);
        let mid = Wrap("GET http://h/api/tags".into(), Some(Box::new(inner)));
        let outer = Wrap("backend unreachable".into(), Some(Box::new(mid)));
        assert_eq!(
            error_chain(&outer),
            "backend unreachable: GET http://h/api/tags: connection refused"
        );
        assert_eq!(error_chain(&Wrap(String::new(), None)), "");
    }
}
