//! The user's side of telecom: the simulated phone (`MockPhoneAttributes`) and the user's
//! surroundings, with the rules upstream derives from them — network search, whether mobile
//! data works, the speed test, whether MMS can be sent, and the status bar line.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

macro_rules! str_enum {
    ($(#[$m:meta])* $name:ident { $($v:ident = $s:literal),+ $(,)? } default $d:ident) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name { $(#[serde(rename = $s)] $v),+ }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$v),+];
            /// The enum's value, as upstream's str-enum prints it.
            pub fn value(self) -> &'static str {
                match self { $($name::$v => $s),+ }
            }
            /// The variant whose value is `s`.
            pub fn parse(s: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|x| x.value() == s)
            }
        }
        impl Default for $name {
            fn default() -> Self {
                $name::$d
            }
        }
    };
}

str_enum!(SimStatus { Active = "active", Missing = "missing", LockedPin = "locked_pin", LockedPuk = "locked_puk" } default Active);
str_enum!(Tech { None = "none", G2 = "2G", G3 = "3G", G4 = "4G", G5 = "5G" } default G5);
str_enum!(ModePref { G4G5 = "4g_5g_preferred", G4Only = "4g_only", G3Only = "3g_only", G2Only = "2g_only" } default G4G5);
str_enum!(Signal { None = "none", Poor = "poor", Fair = "fair", Good = "good", Excellent = "excellent" } default Good);
str_enum!(Perf { Unknown = "unknown", Poor = "poor", Fair = "fair", Good = "good", Excellent = "excellent" } default Unknown);
str_enum!(NetStatus { Connected = "connected", Searching = "searching", NoService = "no_service", EmergencyOnly = "emergency_only" } default Connected);
str_enum!(ApnName { Internet = "internet", Broken = "broken" } default Internet);

fn yes() -> bool {
    true
}
fn battery() -> i64 {
    80
}
fn mms_apn() -> Option<String> {
    Some("mms".into())
}
fn mmsc_url() -> Option<String> {
    Some("http://mms.carrier.com/mms/wapenc".into())
}
fn no_signal() -> Signal {
    Signal::None
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApnSettings {
    #[serde(default)]
    pub apn_name: ApnName,
    #[serde(default)]
    pub reset_at_reboot: bool,
    #[serde(default = "mms_apn")]
    pub mms_apn: Option<String>,
    #[serde(default = "mmsc_url")]
    pub mmsc_url: Option<String>,
    #[serde(default)]
    pub mms_proxy: Option<String>,
    #[serde(default)]
    pub mms_port: Option<i64>,
}

impl Default for ApnSettings {
    fn default() -> Self {
        ApnSettings {
            apn_name: ApnName::Internet,
            reset_at_reboot: false,
            mms_apn: mms_apn(),
            mmsc_url: mmsc_url(),
            mms_proxy: None,
            mms_port: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VpnDetails {
    #[serde(default)]
    pub server_address: Option<String>,
    #[serde(default)]
    pub protocol: Option<String>,
    #[serde(default)]
    pub server_performance: Perf,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppPermissions {
    #[serde(default)]
    pub sms: bool,
    #[serde(default)]
    pub storage: bool,
    #[serde(default)]
    pub phone: bool,
    #[serde(default)]
    pub network: bool,
}

impl AppPermissions {
    pub const NAMES: [&'static str; 4] = ["sms", "storage", "phone", "network"];

    pub fn get(&self, name: &str) -> Option<bool> {
        Some(match name {
            "sms" => self.sms,
            "storage" => self.storage,
            "phone" => self.phone,
            "network" => self.network,
            _ => return None,
        })
    }

    pub fn set(&mut self, name: &str, on: bool) -> bool {
        let slot = match name {
            "sms" => &mut self.sms,
            "storage" => &mut self.storage,
            "phone" => &mut self.phone,
            "network" => &mut self.network,
            _ => return false,
        };
        *slot = on;
        true
    }

    /// Granted permission names in declaration order.
    pub fn granted(&self) -> Vec<&'static str> {
        Self::NAMES
            .into_iter()
            .filter(|n| self.get(n) == Some(true))
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppStatus {
    pub app_name: String,
    #[serde(default)]
    pub permissions: AppPermissions,
}

fn default_apps() -> IndexMap<String, AppStatus> {
    let app = |name: &str, p: AppPermissions| {
        (
            name.to_string(),
            AppStatus {
                app_name: name.into(),
                permissions: p,
            },
        )
    };
    IndexMap::from([
        app(
            "messaging",
            AppPermissions {
                sms: true,
                storage: true,
                phone: true,
                network: false,
            },
        ),
        app(
            "browser",
            AppPermissions {
                network: true,
                storage: true,
                ..Default::default()
            },
        ),
    ])
}

/// Upstream's `MockPhoneAttributes` (declaration order kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    #[serde(default)]
    pub sim_card_status: SimStatus,
    #[serde(default)]
    pub sim_card_missing: bool,
    #[serde(default)]
    pub airplane_mode: bool,
    #[serde(default)]
    pub network_signal_strength: Signal,
    #[serde(default)]
    pub network_technology_connected: Tech,
    #[serde(default)]
    pub network_connection_status: NetStatus,
    #[serde(default = "battery")]
    pub battery_level: i64,
    #[serde(default = "yes")]
    pub data_enabled: bool,
    #[serde(default)]
    pub roaming_enabled: bool,
    #[serde(default)]
    pub network_mode_preference: ModePref,
    #[serde(default)]
    pub active_apn_settings: ApnSettings,
    #[serde(default)]
    pub wifi_enabled: bool,
    #[serde(default)]
    pub wifi_connected: bool,
    #[serde(default)]
    pub wifi_ssid: Option<String>,
    #[serde(default = "no_signal")]
    pub wifi_signal_strength: Signal,
    #[serde(default)]
    pub wifi_calling_enabled: bool,
    #[serde(default)]
    pub wifi_calling_mms_over_wifi: bool,
    #[serde(default)]
    pub data_saver_mode: bool,
    #[serde(default)]
    pub vpn_enabled_setting: bool,
    #[serde(default)]
    pub vpn_connected: bool,
    #[serde(default)]
    pub vpn_details: Option<VpnDetails>,
    #[serde(default = "default_apps")]
    pub app_statuses: IndexMap<String, AppStatus>,
}

impl Default for Device {
    fn default() -> Self {
        toml::from_str("").expect("every phone field has a default")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaymentRequest {
    pub bill_id: String,
    pub amount_due: f64,
    #[serde(default)]
    pub paid: bool,
}

fn signal_map() -> IndexMap<Tech, Signal> {
    IndexMap::from([
        (Tech::G2, Signal::Poor),
        (Tech::G3, Signal::Fair),
        (Tech::G4, Signal::Good),
        (Tech::G5, Signal::Excellent),
    ])
}

/// Upstream's `UserSurroundings`: where the user is and what the carrier allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Surroundings {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub phone_number: Option<String>,
    #[serde(default)]
    pub is_abroad: bool,
    #[serde(default)]
    pub roaming_allowed: bool,
    #[serde(default = "signal_map")]
    pub signal_strength: IndexMap<Tech, Signal>,
    #[serde(default)]
    pub mobile_data_usage_exceeded: bool,
    #[serde(default = "yes")]
    pub line_active: bool,
    #[serde(default)]
    pub payment_request: Option<PaymentRequest>,
}

impl Default for Surroundings {
    fn default() -> Self {
        toml::from_str("").expect("every surroundings field has a default")
    }
}

/// Upstream's `TelecomUserDB`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserDb {
    #[serde(default)]
    pub device: Device,
    #[serde(default)]
    pub surroundings: Surroundings,
}

impl UserDb {
    pub fn sim_status(&self) -> SimStatus {
        if self.device.sim_card_missing {
            SimStatus::Missing
        } else {
            self.device.sim_card_status
        }
    }

    /// Upstream `simulate_network_search`: which network the phone attaches to, if any.
    pub fn network_search(&mut self) {
        let signal_of =
            |s: &Surroundings, t: Tech| *s.signal_strength.get(&t).unwrap_or(&Signal::None);
        let d = &mut self.device;
        let s = &self.surroundings;
        let sim = if d.sim_card_missing {
            SimStatus::Missing
        } else {
            d.sim_card_status
        };
        let mut attach = |tech: Tech, signal: Signal| {
            d.network_technology_connected = tech;
            d.network_signal_strength = signal;
        };
        if sim == SimStatus::Active {
            let tech = match d.network_mode_preference {
                ModePref::G4G5 if signal_of(s, Tech::G5) != Signal::None => Tech::G5,
                ModePref::G4G5 | ModePref::G4Only => Tech::G4,
                ModePref::G3Only => Tech::G3,
                ModePref::G2Only => Tech::G2,
            };
            attach(tech, signal_of(s, tech));
            d.network_connection_status = NetStatus::Connected;
        } else {
            attach(Tech::None, Signal::None);
            d.network_connection_status = NetStatus::NoService;
        }
        if d.airplane_mode || d.active_apn_settings.apn_name == ApnName::Broken || !s.line_active {
            d.network_connection_status = NetStatus::NoService;
            d.network_technology_connected = Tech::None;
            d.network_signal_strength = Signal::None;
        }
    }

    /// Whether mobile data works (upstream `_get_mobile_data_working`).
    pub fn mobile_data_working(&self) -> bool {
        let (d, s) = (&self.device, &self.surroundings);
        if d.airplane_mode || d.network_signal_strength == Signal::None {
            return false;
        }
        if d.network_connection_status == NetStatus::NoService {
            return false;
        }
        if s.is_abroad && (!d.roaming_enabled || !s.roaming_allowed) {
            return false;
        }
        d.data_enabled && !s.mobile_data_usage_exceeded
    }

    /// Upstream `_run_speed_test`: (Mbps rounded to 2 decimals, description), or no speed.
    pub fn speed_test(&self) -> (Option<f64>, &'static str) {
        if !self.mobile_data_working() {
            return (None, "No Connection");
        }
        let d = &self.device;
        let slow_vpn = d.vpn_connected
            && d.vpn_details
                .as_ref()
                .is_some_and(|v| v.server_performance == Perf::Poor);
        let mut factor = if slow_vpn { 0.1 } else { 1.0 };
        if d.data_saver_mode {
            factor *= 0.2;
        }
        let (lo, hi) = match d.network_technology_connected {
            Tech::G2 => (0.1, 0.4),
            Tech::G3 => (1.0, 5.0),
            Tech::G4 => (10.0, 100.0),
            Tech::G5 => (50.0, 500.0),
            Tech::None => (0.0, 0.0),
        };
        let signal = match d.network_signal_strength {
            Signal::Poor => 0.2,
            Signal::Fair => 0.5,
            Signal::Good => 0.8,
            Signal::Excellent => 1.0,
            Signal::None => 0.0,
        };
        let speed = crate::pyjson::round2((lo + hi) / 2.0 * signal * factor);
        let desc = if speed < 1.0 {
            "Very Poor"
        } else if speed < 5.0 {
            "Poor"
        } else if speed < 25.0 {
            "Fair"
        } else if speed < 100.0 {
            "Good"
        } else {
            "Excellent"
        };
        (Some(speed), desc)
    }

    /// Upstream `_can_send_mms`.
    pub fn can_send_mms(&self) -> bool {
        let d = &self.device;
        if !self.mobile_data_working() || d.network_technology_connected == Tech::G2 {
            return false;
        }
        if d.wifi_calling_enabled && d.wifi_calling_mms_over_wifi {
            return false;
        }
        if d.active_apn_settings.mmsc_url.is_none() {
            return false;
        }
        d.app_statuses
            .get("messaging")
            .is_some_and(|a| a.permissions.storage && a.permissions.sms)
    }

    /// The status bar text (upstream `_check_status_bar`), emoji included.
    pub fn status_bar(&self) -> String {
        let d = &self.device;
        let mut parts: Vec<String> = Vec::new();
        if d.airplane_mode {
            parts.push("✈️ Airplane Mode".into());
        } else {
            parts.push(
                match d.network_signal_strength {
                    Signal::None => "📵 No Signal",
                    Signal::Poor => "📶¹ Poor",
                    Signal::Fair => "📶² Fair",
                    Signal::Good => "📶³ Good",
                    Signal::Excellent => "📶⁴ Excellent",
                }
                .into(),
            );
            if d.network_technology_connected != Tech::None {
                parts.push(d.network_technology_connected.value().into());
            }
            if d.data_enabled && d.network_technology_connected != Tech::None {
                parts.push("📱 Data Enabled".into());
                if d.data_saver_mode {
                    parts.push("🔽 Data Saver".into());
                }
            } else {
                parts.push("📵 Data Disabled".into());
            }
        }
        if d.wifi_enabled && d.wifi_connected {
            parts.push(match &d.wifi_ssid {
                Some(ssid) if !ssid.is_empty() => format!("📡 Connected to {ssid}"),
                _ => "📡 Enabled".into(),
            });
        }
        if d.vpn_connected {
            parts.push("🔒 VPN Connected".into());
        }
        parts.push(format!("🔋 {}%", d.battery_level));
        parts.join(" | ")
    }

    /// Flip airplane mode (upstream `_toggle_airplane_mode`); returns the new state.
    pub fn toggle_airplane(&mut self) -> bool {
        let d = &mut self.device;
        let was_on = d.airplane_mode;
        d.airplane_mode = !was_on;
        if !was_on || d.wifi_enabled {
            d.wifi_connected = false;
            d.wifi_ssid = None;
            d.wifi_signal_strength = Signal::None;
        }
        if was_on {
            d.network_connection_status = NetStatus::Searching;
        } else if d.vpn_connected {
            d.vpn_connected = false;
            d.vpn_details = None;
        }
        self.network_search();
        self.device.airplane_mode
    }
}
