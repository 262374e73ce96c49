//! The MCP session for an agent that runs confined (a matrix cell's box allows one TCP port —
//! its recording proxy — and no unix sockets): the conversation loop, the user simulator and
//! the record stay in the process that launched the agent ([`Relayed`]); the server the agent
//! starts is a thin stdio relay (`lrab tau2 mcp-relay DIR`, [`relay`]) that passes lines through
//! two FIFOs created beforehand in a folder the box lets the agent write (`DIR/req`,
//! `DIR/resp`). Relays are served one after another (`DIR/turn` orders them), so an agent may
//! start the server more than once; the conversation ends when the agent has gone
//! ([`Relayed::finish`]) or the loop ends it (the customer, the limits).

use super::protocol::serve;
use super::session::{mcp_tools, Bridge, Session};
use crate::domains::Env;
use crate::message::Message;
use crate::orchestrator::{self, Limits, Outcome, User};
use anyhow::{anyhow, bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Linux's `O_NONBLOCK`: opening a FIFO without waiting for the other end.
const O_NONBLOCK: i32 = 0o4000;

fn fifo(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// The agent side: stdin lines to `DIR/req`, `DIR/resp` lines to `out`, until stdin ends.
pub fn relay(dir: &Path, out: &mut dyn Write) -> Result<()> {
    let _turn = Turn::take(dir)?;
    let mut req = OpenOptions::new()
        .write(true)
        .open(fifo(dir, "req"))
        .with_context(|| format!("cannot open {}/req", dir.display()))?;
    let resp = File::open(fifo(dir, "resp"))
        .with_context(|| format!("cannot open {}/resp", dir.display()))?;
    let forward = std::thread::spawn(move || -> std::io::Result<()> {
        let mut input = std::io::stdin().lock();
        let mut line = String::new();
        while input.read_line(&mut line)? > 0 {
            if !line.ends_with('\n') {
                line.push('\n');
            }
            req.write_all(line.as_bytes())?;
            line.clear();
        }
        Ok(())
    });
    let mut lines = BufReader::new(resp);
    let mut line = String::new();
    while lines.read_line(&mut line)? > 0 {
        out.write_all(line.as_bytes())?;
        out.flush()?;
        line.clear();
    }
    forward
        .join()
        .map_err(|_| anyhow!("relay thread panicked"))??;
    Ok(())
}

/// One relay at a time: `DIR/turn` holds the pid of the relay being served; a relay waits
/// for it, and takes it over from a relay that died holding it.
struct Turn(PathBuf);

impl Turn {
    fn take(dir: &Path) -> Result<Turn> {
        let p = fifo(dir, "turn");
        loop {
            match OpenOptions::new().write(true).create_new(true).open(&p) {
                Ok(mut f) => {
                    write!(f, "{}", std::process::id())?;
                    return Ok(Turn(p));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&p).unwrap_or_default();
                    let alive = holder
                        .trim()
                        .parse::<u32>()
                        .is_ok_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
                    if !alive && !holder.is_empty() {
                        let _ = std::fs::remove_file(&p);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => return Err(e).with_context(|| format!("cannot create {}", p.display())),
            }
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A conversation served to a confined agent through relays; see the module doc.
pub struct Relayed {
    dir: PathBuf,
    stop: Arc<AtomicBool>,
    server: Option<JoinHandle<()>>,
    looped: Option<JoinHandle<Outcome>>,
    opening: Option<String>,
}

impl Relayed {
    /// Makes the FIFOs in `dir` (which must exist), starts the loop — the greeting and the
    /// customer's first turn happen before this returns — and serves relays.
    pub fn start(
        dir: &Path,
        mut env: Env,
        history: Vec<Message>,
        limits: Limits,
        policy: &str,
        make_user: Box<dyn FnOnce() -> Box<dyn User> + Send>,
    ) -> Result<Relayed> {
        for name in ["req", "resp"] {
            let p = fifo(dir, name);
            let st = std::process::Command::new("mkfifo")
                .arg("-m")
                .arg("600")
                .arg(&p)
                .status()
                .context("cannot run mkfifo")?;
            if !st.success() {
                bail!("mkfifo {} failed ({st})", p.display());
            }
        }
        let (req_tx, req_rx) = std::sync::mpsc::channel();
        let (ev_tx, ev_rx) = std::sync::mpsc::channel();
        let tools = mcp_tools(&env.tool_schemas("assistant"));
        let looped = std::thread::spawn(move || {
            let mut user = make_user();
            let mut bridge = Bridge::new(req_rx, ev_tx);
            let o = orchestrator::run(&mut env, &mut bridge, user.as_mut(), &history, &limits);
            bridge.finish(&o.messages, &o.termination);
            o
        });
        let mut session = Session {
            name: "tau2".into(),
            instructions: String::new(),
            tools,
            requests: Some(req_tx),
            events: ev_rx,
            ended: None,
        };
        let opening = session.opening();
        session.instructions = super::instructions(policy, opening.as_deref());
        let stop = Arc::new(AtomicBool::new(false));
        let (d, st) = (dir.to_path_buf(), stop.clone());
        let server = std::thread::spawn(move || serve_relays(session, &d, &st));
        Ok(Relayed {
            dir: dir.to_path_buf(),
            stop,
            server: Some(server),
            looped: Some(looped),
            opening,
        })
    }

    /// The customer's first message (the agent's prompt); `None` when the conversation ended
    /// before the agent was asked anything.
    pub fn opening(&self) -> Option<&str> {
        self.opening.as_deref()
    }

    /// The agent has gone (exited or was stopped): no more relays; a conversation still
    /// running ends as the agent leaving it (`agent_stop`). Returns the whole conversation.
    pub fn finish(mut self) -> Result<Outcome> {
        self.stop.store(true, Ordering::SeqCst);
        // release a server waiting for a relay to open either FIFO
        for (name, write) in [("req", true), ("resp", false)] {
            let _ = OpenOptions::new()
                .read(!write)
                .write(write)
                .custom_flags(O_NONBLOCK)
                .open(fifo(&self.dir, name));
        }
        if let Some(s) = self.server.take() {
            s.join()
                .map_err(|_| anyhow!("the MCP relay server panicked"))?;
        }
        let looped = self.looped.take().expect("started");
        looped
            .join()
            .map_err(|_| anyhow!("the conversation loop panicked"))
    }
}

/// Serves one relay after another until stopped; dropping the session at the end lets the
/// loop end the conversation.
fn serve_relays(mut session: Session, dir: &Path, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let Ok(req) = File::open(fifo(dir, "req")) else {
            break;
        };
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut resp) = OpenOptions::new().write(true).open(fifo(dir, "resp")) else {
            break;
        };
        if stop.load(Ordering::SeqCst) {
            break;
        }
        // a relay that goes away mid-line or a broken pipe ends only this relay
        let _ = serve(&mut session, &mut BufReader::new(req), &mut resp);
    }
}
