//! Reading one member out of a wheel (a zip archive): the end record, the central directory and
//! the member's local header; stored or deflated members. Enough for the wheels the catalogue
//! names (no zip64, no encryption); anything else is an error naming the wheel.

use flate2::read::DeflateDecoder;
use std::io::Read;

const EOCD: u32 = 0x0605_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const LOCAL: u32 = 0x0403_4b50;

fn u16_at(b: &[u8], at: usize) -> Option<usize> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]) as usize)
}

fn u32_at(b: &[u8], at: usize) -> Option<usize> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
}

/// One central directory entry.
struct Entry {
    name: String,
    method: usize,
    csize: usize,
    size: usize,
    local: usize,
}

/// The central directory's entries.
fn entries(zip: &[u8]) -> Result<Vec<Entry>, String> {
    let floor = zip.len().saturating_sub(22 + 65_535);
    let end = (floor..=zip.len().saturating_sub(22))
        .rev()
        .find(|&i| u32_at(zip, i) == Some(EOCD as usize))
        .ok_or("no end-of-central-directory record (not a zip archive)")?;
    let bad = || "central directory cut short".to_string();
    let count = u16_at(zip, end + 10).ok_or_else(bad)?;
    let mut at = u32_at(zip, end + 16).ok_or_else(bad)?;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        if u32_at(zip, at) != Some(CENTRAL as usize) {
            return Err(format!("bad central directory entry at byte {at}"));
        }
        let method = u16_at(zip, at + 10).ok_or_else(bad)?;
        let csize = u32_at(zip, at + 20).ok_or_else(bad)?;
        let size = u32_at(zip, at + 24).ok_or_else(bad)?;
        let (n, e, c) = (
            u16_at(zip, at + 28).ok_or_else(bad)?,
            u16_at(zip, at + 30).ok_or_else(bad)?,
            u16_at(zip, at + 32).ok_or_else(bad)?,
        );
        let local = u32_at(zip, at + 42).ok_or_else(bad)?;
        let name = zip.get(at + 46..at + 46 + n).ok_or_else(bad)?;
        out.push(Entry {
            name: String::from_utf8_lossy(name).into_owned(),
            method,
            csize,
            size,
            local,
        });
        at += 46 + n + e + c;
    }
    Ok(out)
}

/// The bytes of `member` in the zip archive `zip`.
pub fn member(zip: &[u8], member: &str) -> Result<Vec<u8>, String> {
    let all = entries(zip)?;
    let e = all
        .iter()
        .find(|e| e.name == member)
        .ok_or_else(|| format!("no member {member}"))?;
    let (method, csize, size, local) = (e.method, e.csize, e.size, e.local);
    if u32_at(zip, local) != Some(LOCAL as usize) {
        return Err(format!("{member}: bad local header"));
    }
    let cut = || format!("{member}: archive cut short");
    let start = local
        + 30
        + u16_at(zip, local + 26).ok_or_else(cut)?
        + u16_at(zip, local + 28).ok_or_else(cut)?;
    let raw = zip.get(start..start + csize).ok_or_else(cut)?;
    let bytes = match method {
        0 => raw.to_vec(),
        8 => {
            let mut out = Vec::with_capacity(size);
            DeflateDecoder::new(raw)
                .read_to_end(&mut out)
                .map_err(|e| format!("{member}: cannot inflate: {e}"))?;
            out
        }
        m => return Err(format!("{member}: compression method {m} not supported")),
    };
    if bytes.len() != size {
        return Err(format!(
            "{member}: {} bytes, the directory says {size}",
            bytes.len()
        ));
    }
    Ok(bytes)
}
