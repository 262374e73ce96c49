//! Writing the trajectory: one `proxy.jsonl` line per request holding only what is new since
//! the previous request (the request read by [`super::read`]), written off the request's path
//! by one writer thread.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};

use lrab_records::{TrajectoryEntry, TrajectoryMessage};

/// Appends the entries of one proxy from a thread of its own, so a slow disk never holds up
/// an answer: each request hands its entry over and is done. The writer keeps the previous
/// request's messages so a line only holds the new ones, writes every entry as one whole line
/// (a killed proxy leaves its file readable to the last complete line), and flushes the lines
/// to disk with one `fdatasync` at most every 200 ms and when it stops.
/// Builds one entry and the request's whole message list: reading the request's messages
/// (parsing its body when it was forwarded untouched) is work the answer's path need not wait
/// for, so the writer thread does it.
pub type Build = Box<dyn FnOnce() -> (TrajectoryEntry, Vec<TrajectoryMessage>) + Send>;

#[derive(Debug)]
pub struct Recorder {
    tx: Mutex<Option<mpsc::Sender<Build>>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Recorder {
    pub fn new(log: Option<PathBuf>) -> Recorder {
        let Some(log) = log else {
            return Recorder {
                tx: Mutex::new(None),
                writer: Mutex::new(None),
            };
        };
        let (tx, rx) = mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("lrab-proxy-record".into())
            .spawn(move || write_all(&log, rx))
            .ok();
        Recorder {
            tx: Mutex::new(writer.is_some().then_some(tx)),
            writer: Mutex::new(writer),
        }
    }

    /// Queues an entry, built on the writer thread. Entries are written in the order they
    /// are queued, which is the order their deltas refer to.
    pub fn write(&self, build: Build) {
        if let Some(tx) = self.tx.lock().ok().as_ref().and_then(|t| t.as_ref()) {
            let _ = tx.send(build);
        }
    }

    /// Waits until every queued entry is on disk; entries queued later are not written.
    pub fn close(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            drop(tx.take());
        }
        let writer = self.writer.lock().ok().and_then(|mut w| w.take());
        if let Some(w) = writer {
            let _ = w.join();
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.close();
    }
}

/// How long written lines may wait for their `fdatasync`. Syncing every batch cost a disk
/// flush per request at load (most of the proxy's CPU at 16 clients); a killed proxy loses
/// nothing either way (the lines are in the page cache), only a crash of the machine could.
const SYNC_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// How long the writer lets entries gather once the first of a batch has arrived. A request
/// that hands its entry to a writer waiting on the queue wakes it (a futex call on the
/// request's thread, a context switch on the writer's); one that hands it to a writer
/// lingering here only queues it. At load 16 that was one wake per request; now it is one per
/// batch, and the batch's lines leave in one write. The entries are queued in order, and a
/// proxy that stops still writes every one of them ([`Recorder::close`]).
const LINGER: std::time::Duration = std::time::Duration::from_millis(2);

/// The writer thread: one batch = everything queued by [`LINGER`] after its first entry. The
/// lines are synced at most every [`SYNC_EVERY`], when nothing more arrives for that long,
/// and when the proxy stops.
fn write_all(log: &Path, rx: mpsc::Receiver<Build>) {
    let mut prev: Option<Vec<TrajectoryMessage>> = None;
    let mut file: Option<std::fs::File> = None;
    let mut synced = std::time::Instant::now();
    let mut dirty = false;
    loop {
        let first = match rx.recv_timeout(SYNC_EVERY) {
            Ok(x) => x,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                sync(log, &mut file, &mut dirty);
                synced = std::time::Instant::now();
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        std::thread::sleep(LINGER);
        let mut batch = String::new();
        for build in std::iter::once(first).chain(rx.try_iter()) {
            let (mut e, messages) = build();
            let (prefix, new) = TrajectoryEntry::delta(prev.as_deref(), &messages);
            e.prefix_messages = prefix;
            e.messages = new;
            match serde_json::to_string(&e) {
                Ok(line) => {
                    batch.push_str(&line);
                    batch.push('\n');
                }
                Err(err) => eprintln!("lrab proxy: {}: {err}", log.display()),
            }
            prev = Some(messages);
        }
        match append(log, &mut file, batch.as_bytes()) {
            Ok(()) => dirty = true,
            Err(err) => {
                eprintln!("lrab proxy: {}: {err}", log.display());
                file = None;
            }
        }
        if synced.elapsed() >= SYNC_EVERY {
            sync(log, &mut file, &mut dirty);
            synced = std::time::Instant::now();
        }
    }
    sync(log, &mut file, &mut dirty);
}

fn sync(log: &Path, file: &mut Option<std::fs::File>, dirty: &mut bool) {
    if let (true, Some(f)) = (*dirty, file.as_ref()) {
        if let Err(err) = f.sync_data() {
            eprintln!("lrab proxy: {}: {err}", log.display());
        }
    }
    *dirty = false;
}

/// Appends whole lines in one `write` on an `O_APPEND` descriptor (opened once; a torn last
/// line left by an earlier, killed writer is terminated first).
fn append(log: &Path, file: &mut Option<std::fs::File>, lines: &[u8]) -> std::io::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let f = match file {
        Some(f) => f,
        None => {
            if let Some(d) = log.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(d)?;
            }
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .open(log)?;
            let len = f.metadata()?.len();
            if len > 0 {
                let mut last = [0u8; 1];
                f.seek(SeekFrom::Start(len - 1))?;
                f.read_exact(&mut last)?;
                if last[0] != b'\n' {
                    f.write_all(b"\n")?;
                }
            }
            file.insert(f)
        }
    };
    f.write_all(lines)
}
