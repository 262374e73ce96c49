//! Borrowed readings of JSON strings, for the typed readings of requests and streamed lines.

use std::borrow::Cow;

use serde::Deserialize;

/// An optional string, borrowed from the JSON when it holds no escape: serde reads an
/// `Option<Cow<str>>` into an owned copy whatever `#[serde(borrow)]` says (it borrows only a
/// bare `Cow`), which cost every message's text an allocation, a copy and an escaping write.
/// For a field `#[serde(borrow, default, deserialize_with = "opt_cow")]`; reads what the
/// plain `Option<Cow<str>>` reads (a missing or null field: `None`; not a string: an error).
pub(super) fn opt_cow<'de: 'a, 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Cow<'a, str>>, D::Error> {
    #[derive(Deserialize)]
    struct Text<'a>(#[serde(borrow)] Cow<'a, str>);
    Ok(Option::<Text>::deserialize(d)?.map(|t| t.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `opt_cow` borrows a string without escapes (serde's own `Option<Cow<str>>` never
    /// does) and otherwise reads what that reads.
    #[test]
    fn optional_texts_are_borrowed_when_they_can_be() {
        #[derive(serde::Deserialize)]
        struct M<'a> {
            #[serde(borrow, default, deserialize_with = "opt_cow")]
            c: Option<Cow<'a, str>>,
        }
        let read = |s: &'static str| serde_json::from_str::<M>(s).map(|m| m.c);
        assert!(matches!(
            read(r#"{"c":"plain"}"#),
            Ok(Some(Cow::Borrowed("plain")))
        ));
        match read(r#"{"c":"a\"b"}"#) {
            Ok(Some(Cow::Owned(s))) => assert_eq!(s, "a\"b"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(read(r#"{"c":null}"#), Ok(None)));
        assert!(matches!(read("{}"), Ok(None)));
        assert!(read(r#"{"c":7}"#).is_err());
        assert!(read(r#"{"c":"a","c":"b"}"#).is_err());
        // serde's own reading, for comparison: always a copy
        #[derive(serde::Deserialize)]
        struct Plain<'a> {
            #[serde(borrow)]
            c: Option<Cow<'a, str>>,
        }
        let p: Plain = serde_json::from_str(r#"{"c":"plain"}"#).unwrap();
        assert!(matches!(p.c, Some(Cow::Owned(_))));
    }
}
