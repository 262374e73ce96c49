//! `image_valid`: a real PNG: signature, an `IEND` chunk, a full decode with the `png` crate, and
//! at least the minimum width and height.

use super::{read_bytes, Ctx, Outcome};

const SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// Why bytes are not a valid PNG; displays as the check's detail.
#[derive(Debug, thiserror::Error)]
pub enum PngError {
    /// The file does not start with the PNG signature.
    #[error("not a PNG (bad signature)")]
    Signature,
    /// No `IEND` chunk: usually a truncated file.
    #[error("no IEND chunk (truncated?)")]
    NoEnd,
    /// The `png` crate could not decode the header or the first frame.
    #[error("decode error: {0}")]
    Decode(png::DecodingError),
}

/// Validates PNG bytes; `Ok((w, h))` when they decode.
pub fn decode(bytes: &[u8]) -> Result<(u32, u32), PngError> {
    if bytes.len() < 8 || &bytes[..8] != SIGNATURE {
        return Err(PngError::Signature);
    }
    if !bytes.windows(4).any(|w| w == b"IEND") {
        return Err(PngError::NoEnd);
    }
    let limits = png::Limits {
        bytes: 256 * 1024 * 1024,
    };
    let decoder = png::Decoder::new_with_limits(std::io::Cursor::new(bytes), limits);
    let mut reader = decoder.read_info().map_err(PngError::Decode)?;
    let mut buf = vec![0u8; reader.output_buffer_size()];
    reader.next_frame(&mut buf).map_err(PngError::Decode)?;
    let info = reader.info();
    Ok((info.width, info.height))
}

pub fn run(ctx: &Ctx<'_>, artifact: &str, min_w: u32, min_h: u32) -> Outcome {
    let bytes = match read_bytes(ctx, artifact) {
        Ok(b) => b,
        Err(o) => return o,
    };
    match decode(&bytes) {
        Ok((w, h)) => Outcome::bool(
            w >= min_w && h >= min_h,
            format!("{w}x{h} PNG"),
            format!("{w}x{h} is smaller than {min_w}x{min_h}"),
        ),
        Err(e) => Outcome::fail(e.to_string()),
    }
}

/// Encodes a small RGB PNG (tests and fixtures).
pub fn encode_rgb(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc.write_header().expect("png header");
        let data: Vec<u8> = (0..w * h * 3).map(|i| (i % 251) as u8).collect();
        wr.write_image_data(&data).expect("png data");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testutil::Dirs;

    #[test]
    fn valid_small_broken_and_fake() {
        let d = Dirs::new();
        let good = encode_rgb(40, 30);
        d.write("good.png", &good);
        assert_eq!(run(&d.ctx(), "good.png", 1, 1).score, 1.0);
        assert_eq!(run(&d.ctx(), "good.png", 200, 100).score, 0.0);
        // Signature and IEND kept, image data corrupted: only a real decode notices.
        let mut broken = good.clone();
        let idat = broken.windows(4).position(|w| w == b"IDAT").unwrap();
        for b in &mut broken[idat + 4..idat + 20] {
            *b ^= 0x5a;
        }
        d.write("broken.png", &broken);
        let o = run(&d.ctx(), "broken.png", 1, 1);
        assert_eq!(o.score, 0.0, "{}", o.detail);
        assert!(o.detail.starts_with("decode error: "), "{}", o.detail);
        assert!(matches!(decode(&broken), Err(PngError::Decode(_))));
        d.write("trunc.png", &good[..good.len() - 12]);
        let o = run(&d.ctx(), "trunc.png", 1, 1);
        assert_eq!(
            (o.score, o.detail.as_str()),
            (0.0, "no IEND chunk (truncated?)")
        );
        assert_eq!(
            decode(b"GIF89a").unwrap_err().to_string(),
            "not a PNG (bad signature)"
        );
        d.write("fake.png", b"\x89PNG\r\n\x1a\nIEND not really");
        assert_eq!(run(&d.ctx(), "fake.png", 1, 1).score, 0.0);
        assert_eq!(run(&d.ctx(), "none.png", 1, 1).score, 0.0);
    }
}
