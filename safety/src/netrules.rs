//! Landlock network rules (ABI ≥ 4): which TCP ports a confined process may connect to or
//! bind. A ruleset that handles both rights and grants only `connect` to one port leaves the
//! process exactly one way out over TCP — the backend (or the runner's proxy) in front of it —
//! and no listening socket at all. UDP is not covered by Landlock; the arm filter
//! ([`crate::seccomp::Filter::arm`]) refuses datagram sockets instead.

use crate::fsrules::Ruleset;

/// `LANDLOCK_ACCESS_NET_BIND_TCP`.
pub const BIND_TCP: u64 = 1 << 0;
/// `LANDLOCK_ACCESS_NET_CONNECT_TCP`.
pub const CONNECT_TCP: u64 = 1 << 1;

/// The first Landlock ABI with network rules.
pub const MIN_ABI: i32 = 4;

#[repr(C, packed)]
struct NetPortAttr {
    allowed_access: u64,
    port: u64,
}

/// A ruleset handling every file right of `abi` and both TCP rights: nothing may be bound
/// and nothing connected until [`allow_connect`] grants a port.
pub fn ruleset(abi: i32) -> std::io::Result<Ruleset> {
    if abi < MIN_ABI {
        return Err(std::io::Error::other(format!(
            "Landlock ABI {abi} has no network rules (need {MIN_ABI})"
        )));
    }
    Ruleset::with_net(abi, BIND_TCP | CONNECT_TCP)
}

/// Grant TCP `connect` to `port` (any address: the port is what Landlock can name).
pub fn allow_connect(r: &Ruleset, port: u16) -> std::io::Result<()> {
    let attr = NetPortAttr {
        allowed_access: CONNECT_TCP,
        port: port as u64,
    };
    // SAFETY: `attr` is live for the call; LANDLOCK_RULE_NET_PORT = 2.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            r.raw_fd(),
            2u32,
            &attr as *const NetPortAttr,
            0u32,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
