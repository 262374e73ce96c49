//! `file_min_bytes`: 1 if the file's size is at least N bytes.

use super::{regular_file, Ctx, Outcome};

pub fn run(ctx: &Ctx<'_>, artifact: &str, min: u64) -> Outcome {
    match regular_file(ctx, artifact) {
        Ok((_, m)) => Outcome::bool(
            m.len() >= min,
            format!("{} bytes >= {min}", m.len()),
            format!("{} bytes < {min}", m.len()),
        ),
        Err(o) => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::Dirs;

    #[test]
    fn size_threshold() {
        let d = Dirs::new();
        d.write("f.bin", [0u8; 100]);
        assert_eq!(run(&d.ctx(), "f.bin", 100).score, 1.0);
        assert_eq!(run(&d.ctx(), "f.bin", 101).score, 0.0);
        assert_eq!(run(&d.ctx(), "g.bin", 0).score, 0.0);
    }
}
