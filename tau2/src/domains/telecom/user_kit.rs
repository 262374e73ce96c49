//! What the user's toolkit shares with the functions it runs: its class name, how it reads
//! arguments and words yes/no, on/off and Python reprs, its default VPN profile and APN
//! settings, the status bar after a tool's output; apart so the toolkit's functions stay
//! short files.

use super::phone::{ApnName, ApnSettings, Perf, VpnDetails};
use super::TelecomState;
use crate::args::{terr, type_name, Args, Out, ToolError};
use serde_json::Value;

pub(super) const CLASS: &str = "TelecomUserTools";

pub(super) fn on_off(b: bool) -> &'static str {
    if b {
        "ON"
    } else {
        "OFF"
    }
}

pub(super) fn yes_no(b: bool) -> &'static str {
    if b {
        "Yes"
    } else {
        "No"
    }
}

/// Python `repr()` of a short string (single quotes unless it holds one and no double).
pub(super) fn py_repr(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

pub(super) fn repr_opt(s: &Option<String>) -> String {
    s.as_deref().map(py_repr).unwrap_or_else(|| "None".into())
}

/// A string argument the way the Python method would use it (`.lower()` on a non-str fails).
pub(super) fn str_arg(a: &Args, name: &str, method: &str) -> Result<String, ToolError> {
    match a.raw(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(terr!(
            "'{}' object has no attribute '{method}'",
            type_name(v)
        )),
        None => Err(terr!("{}: missing argument '{name}'", a.func)),
    }
}

/// The toolkit's default VPN profile; `break_vpn` degrades it in place (see `TelecomState`).
pub(super) fn default_vpn(perf: Perf) -> VpnDetails {
    VpnDetails {
        server_address: Some("192.168.1.1".into()),
        protocol: Some("OpenVPN".into()),
        server_performance: perf,
    }
}

/// Build `APNSettings(**apn_settings)` like pydantic would (unknown keys and bad values fail).
pub(super) fn apn_from(v: &Value) -> Result<ApnSettings, ToolError> {
    let Value::Object(m) = v else {
        return Err(terr!(
            "'{}' object has no attribute 'apn_name'",
            type_name(v)
        ));
    };
    if let Some(Value::String(name)) = m.get("apn_name") {
        if ApnName::parse(name).is_none() {
            return Err(terr!(
                "1 validation error for APNSettings\napn_name\n  Input should be 'internet' or 'broken' [type=enum, input_value={}, input_type=str]",
                py_repr(name)
            ));
        }
    }
    serde_json::from_value(v.clone()).map_err(|e| terr!("1 validation error for APNSettings\n{e}"))
}

/// A tool's output followed by the phone's status bar, as upstream prints it.
pub(super) fn with_bar(st: &TelecomState, s: String) -> Out {
    Out::Str(format!("{s}\nStatus Bar: {}", st.user.status_bar()))
}
