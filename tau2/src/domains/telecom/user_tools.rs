//! The user's 30 phone tools, the functions tasks call to break the phone
//! (`turn_airplane_mode_on`, `unseat_sim_card`, `break_vpn`, `set_user_location`, …) and the
//! phone assertions (`assert_mobile_data_status`, `assert_internet_speed`, …). Texts are
//! upstream's byte for byte: tool results are compared exactly when trajectories are replayed.

use super::phone::{ApnName, ApnSettings, ModePref, NetStatus, Perf, Signal, SimStatus};
use super::user_kit::{apn_from, default_vpn, on_off, repr_opt, str_arg, with_bar, yes_no, CLASS};
use super::{py_bool, TelecomState};
use crate::args::{terr, Args, Out, ToolError, ToolResult};
use crate::pyjson::PyNum;
use serde_json::{json, Map, Value};

/// Call a user-side function of telecom.
pub fn call(st: &mut TelecomState, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let args = |req: &[&str], opt: &[&str]| Args::new(CLASS, name, kw, req, opt);
    let u = &mut st.user;
    let out = match name {
        // --- tools --------------------------------------------------------------------
        "check_status_bar" => {
            args(&[], &[])?;
            Out::Str(format!("Status Bar: {}", u.status_bar()))
        }
        "check_network_status" => {
            args(&[], &[])?;
            let d = &u.device;
            let mut lines = vec![
                format!("Airplane Mode: {}", on_off(d.airplane_mode)),
                format!("SIM Card Status: {}", u.sim_status().value()),
                format!(
                    "Cellular Connection: {}",
                    d.network_connection_status.value()
                ),
                format!("Cellular Signal: {}", d.network_signal_strength.value()),
                format!(
                    "Cellular Network Type: {}",
                    d.network_technology_connected.value()
                ),
                format!("Mobile Data Enabled: {}", yes_no(d.data_enabled)),
                format!("Data Roaming Enabled: {}", yes_no(d.roaming_enabled)),
                format!("Wi-Fi Radio: {}", on_off(d.wifi_enabled)),
                format!("Wi-Fi Connected: {}", yes_no(d.wifi_connected)),
            ];
            if d.wifi_connected {
                lines.push(format!(
                    "Connected Wi-Fi Network: {}",
                    d.wifi_ssid.as_deref().unwrap_or("None")
                ));
            }
            Out::Str(lines.join("\n"))
        }
        "check_network_mode_preference" => {
            args(&[], &[])?;
            Out::Str(format!(
                "Network Mode Preference: {}",
                u.device.network_mode_preference.value()
            ))
        }
        "set_network_mode_preference" => {
            let a = args(&["mode"], &[])?;
            let mode = a.raw("mode").cloned().unwrap_or(Value::Null);
            match mode.as_str().and_then(ModePref::parse) {
                Some(m) => {
                    u.device.network_mode_preference = m;
                    u.network_search();
                    with_bar(st, format!("Preferred Network Mode set to: {}", m.value()))
                }
                None => {
                    let shown = match &mode {
                        Value::String(s) => s.clone(),
                        other => crate::pyjson::py_str_number(other),
                    };
                    let all: Vec<&str> = ModePref::ALL.iter().map(|m| m.value()).collect();
                    with_bar(
                        st,
                        format!(
                            "Failed to set network mode: '{shown}' is not a valid option. Please use one of: {}",
                            all.join(", ")
                        ),
                    )
                }
            }
        }
        "run_speed_test" => {
            args(&[], &[])?;
            match u.speed_test() {
                (None, desc) => Out::Str(format!("Speed test failed: {desc}.")),
                (Some(speed), desc) => {
                    let advice = match desc {
                        "Very Poor" => "Connection is very slow. Basic web browsing might be difficult.",
                        "Poor" => "Connection is slow. Web browsing may be sluggish, streaming difficult.",
                        "Fair" => "Connection is okay for web browsing and some standard definition streaming.",
                        "Good" => "Connection is good for most activities, including HD streaming.",
                        "Excellent" => "Connection is very fast.",
                        _ => "",
                    };
                    Out::Str(format!(
                        "Speed Test Result: {speed:.2} Mbps ({desc}). {advice}"
                    ))
                }
            }
        }
        "toggle_airplane_mode" => {
            args(&[], &[])?;
            let on = u.toggle_airplane();
            with_bar(st, format!("Airplane Mode is now {}.", on_off(on)))
        }
        "check_sim_status" => {
            args(&[], &[])?;
            Out::Str(
                match u.sim_status() {
                    SimStatus::Active => "Your SIM card is active and working.",
                    SimStatus::Missing => "No SIM card detected in the phone.",
                    SimStatus::LockedPin => "The SIM card is locked with a PIN code.",
                    SimStatus::LockedPuk => "The SIM card is locked with a PUK code.",
                }
                .into(),
            )
        }
        "reseat_sim_card" => {
            args(&[], &[])?;
            u.device.sim_card_missing = false;
            u.network_search();
            with_bar(st, "SIM card re-seated successfully.".into())
        }
        _ => return data_tools(st, name, kw),
    };
    Ok(out)
}

/// Data, roaming, data saver and APN tools, part of [`call`].
fn data_tools(st: &mut TelecomState, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let args = |req: &[&str], opt: &[&str]| Args::new(CLASS, name, kw, req, opt);
    let u = &mut st.user;
    let out = match name {
        "toggle_data" => {
            args(&[], &[])?;
            u.device.data_enabled = !u.device.data_enabled;
            u.network_search();
            let on = u.device.data_enabled;
            with_bar(st, format!("Mobile Data is now {}.", on_off(on)))
        }
        "toggle_roaming" => {
            args(&[], &[])?;
            u.device.roaming_enabled = !u.device.roaming_enabled;
            u.network_search();
            let on = u.device.roaming_enabled;
            with_bar(st, format!("Data Roaming is now {}.", on_off(on)))
        }
        "check_data_restriction_status" => {
            args(&[], &[])?;
            Out::Str(
                if u.device.data_saver_mode {
                    "Data Saver mode is ON (limits data usage)."
                } else {
                    "Data Saver mode is OFF."
                }
                .into(),
            )
        }
        "toggle_data_saver_mode" => {
            args(&[], &[])?;
            u.device.data_saver_mode = !u.device.data_saver_mode;
            let on = u.device.data_saver_mode;
            with_bar(st, format!("Data Saver Mode is now {}.", on_off(on)))
        }
        "check_apn_settings" => {
            args(&[], &[])?;
            let s = &u.device.active_apn_settings;
            Out::Str(format!(
                "Current APN Name: {}\nMMSC URL (for picture messages): {}\n(These are technical settings, usually best left unchanged.)",
                s.apn_name.value(),
                s.mmsc_url.as_deref().filter(|x| !x.is_empty()).unwrap_or("Not Set")
            ))
        }
        "set_apn_settings" => {
            let a = args(&["apn_settings"], &[])?;
            let apn = apn_from(a.raw("apn_settings").unwrap_or(&Value::Null))?;
            let shown = apn.apn_name.value();
            u.device.active_apn_settings = apn;
            u.network_search();
            with_bar(st, format!("APN settings set to: {shown}"))
        }
        "reset_apn_settings" => {
            args(&[], &[])?;
            u.device.active_apn_settings.reset_at_reboot = true;
            u.network_search();
            with_bar(st, "APN settings will reset at reboot.".into())
        }
        _ => return wifi_and_vpn_tools(st, name, kw),
    };
    Ok(out)
}

/// Wi-Fi, Wi-Fi calling and VPN tools, part of [`call`].
fn wifi_and_vpn_tools(st: &mut TelecomState, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let args = |req: &[&str], opt: &[&str]| Args::new(CLASS, name, kw, req, opt);
    let u = &mut st.user;
    let out = match name {
        "check_wifi_status" => {
            args(&[], &[])?;
            let d = &u.device;
            Out::Str(if !d.wifi_enabled {
                "Wi-Fi is turned OFF.".into()
            } else if d.wifi_connected {
                format!(
                    "Wi-Fi is ON and connected to '{}'. Signal strength: {}.",
                    d.wifi_ssid.as_deref().unwrap_or("None"),
                    d.wifi_signal_strength.value()
                )
            } else {
                "Wi-Fi is ON but not connected to any network.".into()
            })
        }
        "toggle_wifi" => {
            args(&[], &[])?;
            let d = &mut u.device;
            if d.airplane_mode {
                with_bar(
                    st,
                    "Cannot change Wi-Fi settings while Airplane Mode is ON.".into(),
                )
            } else {
                d.wifi_enabled = !d.wifi_enabled;
                if !d.wifi_enabled {
                    d.wifi_connected = false;
                    d.wifi_ssid = None;
                    d.wifi_signal_strength = Signal::None;
                }
                let on = d.wifi_enabled;
                with_bar(st, format!("Wi-Fi is now {}.", on_off(on)))
            }
        }
        "check_wifi_calling_status" => {
            args(&[], &[])?;
            Out::Str(format!(
                "Wi-Fi Calling is currently turned {}.",
                on_off(u.device.wifi_calling_enabled)
            ))
        }
        "toggle_wifi_calling" => {
            args(&[], &[])?;
            u.device.wifi_calling_enabled = !u.device.wifi_calling_enabled;
            let on = u.device.wifi_calling_enabled;
            with_bar(st, format!("Wi-Fi Calling is now {}.", on_off(on)))
        }
        "check_vpn_status" => {
            args(&[], &[])?;
            let d = &u.device;
            Out::Str(if d.vpn_connected {
                match &d.vpn_details {
                    Some(v) => format!(
                        "VPN is ON and connected. Details: {{'server_address': {}, 'protocol': {}, 'server_performance': <PerformanceLevel.{}: '{}'>}}",
                        repr_opt(&v.server_address),
                        repr_opt(&v.protocol),
                        v.server_performance.value().to_uppercase(),
                        v.server_performance.value()
                    ),
                    None => "VPN is ON and connected (no specific details available).".into(),
                }
            } else if d.vpn_enabled_setting {
                "VPN is turned ON in settings, but currently not connected.".into()
            } else {
                "VPN is turned OFF.".into()
            })
        }
        "connect_vpn" => {
            args(&[], &[])?;
            if st.connect_vpn() {
                with_bar(st, "VPN connected successfully.".into())
            } else {
                Out::Str("VPN already connected.".into())
            }
        }
        "disconnect_vpn" => {
            args(&[], &[])?;
            let d = &mut u.device;
            let was = d.vpn_connected;
            if was {
                d.vpn_connected = false;
                d.vpn_details = None;
                st.vpn_shared = false;
            }
            with_bar(
                st,
                if was {
                    "VPN disconnected successfully."
                } else {
                    "No active VPN connection to disconnect."
                }
                .into(),
            )
        }
        _ => return app_and_payment_tools(st, name, kw),
    };
    Ok(out)
}

/// App, MMS, reboot and payment tools, the last part of [`call`].
fn app_and_payment_tools(st: &mut TelecomState, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let args = |req: &[&str], opt: &[&str]| Args::new(CLASS, name, kw, req, opt);
    let u = &mut st.user;
    let out = match name {
        "check_installed_apps" => {
            args(&[], &[])?;
            let names: Vec<&str> = u.device.app_statuses.keys().map(String::as_str).collect();
            Out::Str(format!(
                "The following apps are installed on the phone: {}",
                names.join(", ")
            ))
        }
        "check_app_status" => {
            let a = args(&["app_name"], &[])?;
            let app = a.str("app_name")?;
            Out::Str(match u.device.app_statuses.get(&app) {
                None => format!("App '{app}' not found on this phone."),
                Some(s) => {
                    let mut lines = vec![format!("Status for App: {app}")];
                    let granted = s.permissions.granted();
                    if granted.is_empty() {
                        lines.push(" - Permissions: None granted.".into());
                    } else {
                        lines.push(" - Permissions Granted:".into());
                        lines.extend(granted.iter().map(|p| format!("   - {p}")));
                    }
                    lines.join("\n")
                }
            })
        }
        "check_app_permissions" => {
            let a = args(&["app_name"], &[])?;
            let app = a.str("app_name")?;
            Out::Str(match u.device.app_statuses.get(&app) {
                None => format!("App '{app}' not found on this phone."),
                Some(s) if s.permissions.granted().is_empty() => {
                    format!("App '{app}' currently has no permissions granted.")
                }
                Some(s) => format!(
                    "App '{app}' has permission for: {}.",
                    s.permissions.granted().join(", ")
                ),
            })
        }
        "grant_app_permission" => {
            let a = args(&["app_name", "permission"], &[])?;
            let app = a.str("app_name")?;
            let perm = str_arg(&a, "permission", "lower")?.to_lowercase();
            let msg = match u.device.app_statuses.get_mut(&app).map(|s| s.permissions.set(&perm, true)) {
                None => format!("Error. App '{app}' not found. Cannot grant permission."),
                Some(true) => {
                    format!("Success. Permission '{perm}' granted to app '{app}'.")
                }
                Some(false) => format!(
                    "Error. Permission '{perm}' not tracked for app '{app}', available permissions: ['sms', 'storage', 'phone', 'network']"
                ),
            };
            with_bar(st, msg)
        }
        "can_send_mms" => {
            args(&[], &[])?;
            Out::Str(
                if u.can_send_mms() {
                    "Your messaging app can send MMS messages."
                } else {
                    "Your messaging app cannot send MMS messages."
                }
                .into(),
            )
        }
        "reboot_device" => {
            args(&[], &[])?;
            let mut lines = Vec::new();
            if u.device.active_apn_settings.reset_at_reboot {
                lines.push("Resetting APN settings...");
                u.device.active_apn_settings = ApnSettings::default();
            }
            lines.push("Restarting network services...");
            u.device.network_connection_status = NetStatus::Searching;
            u.network_search();
            with_bar(st, lines.join("\n"))
        }
        "check_payment_request" => {
            args(&[], &[])?;
            Out::Str(match &u.surroundings.payment_request {
                None => "No payment request has been made.".into(),
                Some(p) => format!(
                    "You have a payment request for bill {} of {} USD.",
                    p.bill_id,
                    PyNum::Float(p.amount_due)
                ),
            })
        }
        "make_payment" => {
            args(&[], &[])?;
            Out::Str(match &mut u.surroundings.payment_request {
                None => "You do not have a payment request.".into(),
                Some(p) => {
                    p.paid = true;
                    format!(
                        "Payment of {} USD has been made for bill {}.",
                        PyNum::Float(p.amount_due),
                        p.bill_id
                    )
                }
            })
        }
        _ => return setup_or_assert(st, name, kw),
    };
    Ok(out)
}

/// The non-tool functions of the user toolkit: scenario setup and assertions.
fn setup_or_assert(st: &mut TelecomState, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let args = |req: &[&str], opt: &[&str]| Args::new(CLASS, name, kw, req, opt);
    let truthy = |a: &Args, k: &str| super::agent::truthy(a.raw(k).unwrap_or(&Value::Null));
    let u = &mut st.user;
    match name {
        "set_user_info" => {
            let a = args(&["name", "phone_number"], &[])?;
            u.surroundings.name = Some(a.str("name")?);
            u.surroundings.phone_number = Some(a.str("phone_number")?);
            Ok(Out::Json(Value::Null))
        }
        "set_user_location" => {
            let a = args(&["abroad"], &[])?;
            u.surroundings.is_abroad = truthy(&a, "abroad");
            Ok(Out::Json(Value::Null))
        }
        "turn_airplane_mode_on" | "turn_airplane_mode_off" => {
            args(&[], &[])?;
            let want = name.ends_with("_on");
            if u.toggle_airplane() != want {
                u.toggle_airplane();
            }
            Ok(Out::Str(format!("Airplane Mode is now {}.", on_off(want))))
        }
        "unseat_sim_card" => {
            args(&[], &[])?;
            u.device.sim_card_missing = true;
            u.network_search();
            Ok(Out::Str("SIM card un-seated successfully.".into()))
        }
        "lock_sim_card" => {
            let a = args(&["mode"], &[])?;
            let mode = a.str("mode")?;
            match mode.as_str() {
                "pin" => u.device.sim_card_status = SimStatus::LockedPin,
                "puk" => u.device.sim_card_status = SimStatus::LockedPuk,
                _ => {}
            }
            u.network_search();
            Ok(Out::Str(format!(
                "SIM card locked successfully in {mode} mode."
            )))
        }
        "turn_data_on" => {
            args(&[], &[])?;
            u.device.data_enabled = true;
            Ok(Out::Str("Data connection restored.".into()))
        }
        "turn_data_off" => {
            args(&[], &[])?;
            for _ in 0..2 {
                u.device.data_enabled = !u.device.data_enabled;
                u.network_search();
                if !u.device.data_enabled {
                    break;
                }
            }
            Ok(Out::Str("Data connection broken.".into()))
        }
        "turn_roaming_on" | "turn_roaming_off" => {
            args(&[], &[])?;
            let want = name.ends_with("_on");
            for _ in 0..2 {
                u.device.roaming_enabled = !u.device.roaming_enabled;
                u.network_search();
                if u.device.roaming_enabled == want {
                    break;
                }
            }
            Ok(Out::Str(format!("Data Roaming is now {}.", on_off(want))))
        }
        _ => more_setup(st, name, kw),
    }
}

/// More scenario set-up functions, part of [`setup_or_assert`].
fn more_setup(st: &mut TelecomState, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let args = |req: &[&str], opt: &[&str]| Args::new(CLASS, name, kw, req, opt);
    let truthy = |a: &Args, k: &str| super::agent::truthy(a.raw(k).unwrap_or(&Value::Null));
    let u = &mut st.user;
    match name {
        "turn_data_saver_mode_on" | "turn_data_saver_mode_off" => {
            args(&[], &[])?;
            let want = name.ends_with("_on");
            u.device.data_saver_mode = want;
            Ok(Out::Str(format!(
                "Data Saver Mode is now {}.",
                on_off(want)
            )))
        }
        "break_apn_settings" => {
            args(&[], &[])?;
            u.device.active_apn_settings.apn_name = ApnName::Broken;
            u.network_search();
            Ok(Out::Str(
                "APN settings broken. Please call reset_apn_settings() to fix.".into(),
            ))
        }
        "break_apn_mms_setting" => {
            args(&[], &[])?;
            u.device.active_apn_settings.mmsc_url = None;
            Ok(Out::Str(
                "APN MMS setting broken. Please call reset_apn_settings() to fix.".into(),
            ))
        }
        "set_wifi_calling" => {
            let a = args(&["enabled"], &["mms_over_wifi"])?;
            let on = truthy(&a, "enabled");
            u.device.wifi_calling_enabled = on;
            let mut msg = format!("Wi-Fi Calling is now {}.", on_off(on));
            if let Some(v) = a.raw("mms_over_wifi").filter(|v| !v.is_null()) {
                let mms = super::agent::truthy(v);
                u.device.wifi_calling_mms_over_wifi = mms;
                msg.push_str(&format!("\nMMS over Wi-Fi is now {}.", on_off(mms)));
            }
            Ok(Out::Str(msg))
        }
        "break_vpn" => {
            args(&[], &[])?;
            st.connect_vpn();
            match st.user.device.vpn_details.as_mut() {
                Some(v) => v.server_performance = Perf::Poor,
                None => {
                    return Err("'NoneType' object has no attribute 'server_performance'".into())
                }
            }
            if st.vpn_shared {
                st.vpn_default = Perf::Poor;
            }
            Ok(Out::Str("VPN connection broken.".into()))
        }
        "remove_app_permission" => {
            let a = args(&["app_name", "permission"], &[])?;
            let app = a.str("app_name")?;
            let perm = str_arg(&a, "permission", "lower")?.to_lowercase();
            let (ok, msg) = match u
                .device
                .app_statuses
                .get_mut(&app)
                .map(|s| s.permissions.set(&perm, false))
            {
                None => (
                    false,
                    format!("App '{app}' not found. Cannot remove permission."),
                ),
                Some(true) => (
                    true,
                    format!("Permission '{perm}' removed from app '{app}'."),
                ),
                Some(false) => (
                    false,
                    format!("Permission '{perm}' not tracked for app '{app}'."),
                ),
            };
            Ok(Out::Json(json!([py_bool(ok), msg])))
        }
        _ => assertions(st, name, kw),
    }
}

/// The assertion functions of the user toolkit (and network search), the rest of
/// [`setup_or_assert`].
fn assertions(st: &mut TelecomState, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let args = |req: &[&str], opt: &[&str]| Args::new(CLASS, name, kw, req, opt);
    let truthy = |a: &Args, k: &str| super::agent::truthy(a.raw(k).unwrap_or(&Value::Null));
    let u = &mut st.user;
    let b = |x: bool| Ok(Out::Json(json!(x)));
    match name {
        "simulate_network_search" => {
            args(&[], &[])?;
            u.network_search();
            Ok(Out::Json(Value::Null))
        }
        "assert_airplane_mode_status" => {
            let a = args(&["expected_status"], &[])?;
            b(u.device.airplane_mode == truthy(&a, "expected_status"))
        }
        "assert_service_status" => {
            let a = args(&["expected_status"], &[])?;
            let want = a.str("expected_status")?;
            let want = NetStatus::parse(&want)
                .ok_or_else(|| terr!("'{want}' is not a valid NetworkStatus"))?;
            b(u.device.network_connection_status == want)
        }
        "assert_mobile_data_status" => {
            let a = args(&["expected_status"], &[])?;
            b(u.mobile_data_working() == truthy(&a, "expected_status"))
        }
        "assert_mobile_roaming_status" => {
            let a = args(&["expected_status"], &[])?;
            b(u.device.roaming_enabled == truthy(&a, "expected_status"))
        }
        "assert_mobile_data_saver_mode_status" => {
            let a = args(&["expected_status"], &[])?;
            b(u.device.data_saver_mode == truthy(&a, "expected_status"))
        }
        "assert_internet_speed" => {
            let a = args(&["expected_speed"], &["expected_desc"])?;
            let want = a
                .raw("expected_speed")
                .and_then(PyNum::from_value)
                .ok_or_else(|| ToolError::from("expected_speed must be a number"))?
                .f64();
            let (speed, desc) = u.speed_test();
            let fast = speed.unwrap_or(0.0) >= want;
            match a.opt_str("expected_desc")? {
                None => b(fast),
                Some(d) => b(fast && desc.to_lowercase() == d.to_lowercase()),
            }
        }
        "assert_internet_not_excellent" => {
            args(&[], &[])?;
            b(u.speed_test().1 != "Excellent")
        }
        "assert_can_send_mms" => {
            let a = args(&["expected_status"], &[])?;
            b(u.can_send_mms() == truthy(&a, "expected_status"))
        }
        "assert_mobile_data_usage_exceeded" => {
            let a = args(&["expected_status"], &[])?;
            b(u.surroundings.mobile_data_usage_exceeded == truthy(&a, "expected_status"))
        }
        _ => Err(terr!("'{CLASS}' object has no attribute '{name}'")),
    }
}

impl TelecomState {
    /// Connect the VPN with the toolkit's default profile; false when already connected.
    pub(super) fn connect_vpn(&mut self) -> bool {
        let d = &mut self.user.device;
        if d.vpn_connected {
            return false;
        }
        d.vpn_connected = true;
        d.vpn_details = Some(default_vpn(self.vpn_default));
        self.vpn_shared = true;
        true
    }
}
