//! Telecom, the dual-control domain: the agent works on the carrier's records while the
//! simulated user operates their own phone with their own tools. After every tool call the
//! two sides are synchronised (`sync`): the line's status, roaming permission and data cap
//! reach the phone, and a payment the user made settles the bill. Graded on assertions over
//! the phone and the records (docs/tau2.md, "Telecom").

mod agent;
mod phone;
mod schemas;
mod user_kit;
mod user_tools;

pub use agent::TelecomDb;
pub use phone::UserDb;

use super::registry::{DomainDef, DomainState, ToolLists};
use crate::args::{ToolError, ToolResult};
use crate::error::err;
use phone::{PaymentRequest, Perf};
use serde_json::{Map, Value};
use std::path::Path;

pub use crate::error::LoadError;

pub const WRITE_TOOLS: &[&str] = &[
    "suspend_line",
    "resume_line",
    "send_payment_request",
    "enable_roaming",
    "disable_roaming",
    "refuel_data",
];
pub const READ_TOOLS: &[&str] = &[
    "get_customer_by_phone",
    "get_customer_by_id",
    "get_customer_by_name",
    "get_details_by_id",
    "get_bills_for_customer",
    "get_data_usage",
];
pub const GENERIC_TOOLS: &[&str] = &["transfer_to_human_agents"];
pub const USER_WRITE_TOOLS: &[&str] = &[
    "set_network_mode_preference",
    "toggle_airplane_mode",
    "reseat_sim_card",
    "toggle_data",
    "toggle_roaming",
    "toggle_data_saver_mode",
    "set_apn_settings",
    "reset_apn_settings",
    "toggle_wifi",
    "toggle_wifi_calling",
    "connect_vpn",
    "disconnect_vpn",
    "grant_app_permission",
    "reboot_device",
    "make_payment",
];
pub const USER_READ_TOOLS: &[&str] = &[
    "check_status_bar",
    "check_network_status",
    "check_network_mode_preference",
    "run_speed_test",
    "check_sim_status",
    "check_data_restriction_status",
    "check_apn_settings",
    "check_wifi_status",
    "check_wifi_calling_status",
    "check_vpn_status",
    "check_installed_apps",
    "check_app_status",
    "check_app_permissions",
    "can_send_mms",
    "check_payment_request",
];

const TOOLS: ToolLists = ToolLists::of(READ_TOOLS, WRITE_TOOLS, GENERIC_TOOLS);

/// The telecom domain's row in the table: dual control, the user has a phone and its tools.
pub(crate) static DOMAIN: DomainDef = DomainDef::new("telecom", TOOLS, load, schemas::schema)
    .with_user(ToolLists::of(USER_READ_TOOLS, USER_WRITE_TOOLS, &[]))
    .with_policy(policy_text);

/// The pristine state: `db.toml` and `user_db.toml`.
fn load(dir: &Path) -> crate::error::Result<Box<dyn DomainState>> {
    Ok(Box::new(TelecomState::load(dir)?))
}

/// [`policy`], its failure naming the folder.
fn policy_text(dir: &Path) -> crate::error::Result<String> {
    policy(dir).map_err(|e| {
        err!(
            Data,
            "cannot read the telecom policy files in {}: {e}",
            dir.display()
        )
    })
}

/// Python's `str(bool)`.
pub(crate) fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// The agent policy: `main_policy.md` and `tech_support_manual.md` in upstream's wrapper.
pub fn policy(dir: &Path) -> Result<String, std::io::Error> {
    let main = std::fs::read_to_string(dir.join("main_policy.md"))?;
    let manual = std::fs::read_to_string(dir.join("tech_support_manual.md"))?;
    Ok(format!(
        "<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{manual}\n</tech_support_policy>"
    ))
}

/// One telecom environment: both DBs plus the toolkit state upstream keeps outside them.
#[derive(Debug, Clone)]
pub struct TelecomState {
    pub db: TelecomDb,
    pub user: UserDb,
    /// Performance of the user toolkit's default VPN profile. Upstream shares one profile
    /// object between `connect_vpn` calls, so `break_vpn` degrades every later connection
    /// too (upstream: for the rest of the Python process; here: for this environment).
    vpn_default: Perf,
    /// Whether the phone's VPN details are that shared profile.
    vpn_shared: bool,
    /// Draft bills opened by refuelling (names the next one).
    new_bills: u32,
}

impl TelecomState {
    pub fn new(db: TelecomDb, user: UserDb) -> Self {
        TelecomState {
            db,
            user,
            vpn_default: Perf::Excellent,
            vpn_shared: false,
            new_bills: 0,
        }
    }

    /// Load `db.toml` and `user_db.toml`.
    pub fn load(dir: &Path) -> Result<TelecomState, LoadError> {
        let read = |f: &str| {
            let path = dir.join(f);
            match std::fs::read_to_string(&path) {
                Ok(text) => Ok((text, path)),
                Err(error) => Err(LoadError::Read { path, error }),
            }
        };
        let (text, path) = read("db.toml")?;
        let db = TelecomDb::from_toml(&text).map_err(|error| LoadError::Parse { path, error })?;
        let (text, path) = read("user_db.toml")?;
        let user: UserDb =
            toml::from_str(&text).map_err(|error| LoadError::Parse { path, error })?;
        Ok(TelecomState::new(db, user))
    }

    /// Any function of the agent toolkit (tools, setup and assertion functions).
    pub fn call_agent(&mut self, name: &str, kw: &Map<String, Value>) -> ToolResult {
        agent::call(self, name, kw)
    }

    /// Any function of the user toolkit.
    pub fn call_user(&mut self, name: &str, kw: &Map<String, Value>) -> ToolResult {
        user_tools::call(self, name, kw)
    }

    /// Upstream `TelecomEnvironment.sync_tools`: carry the line's state to the phone and
    /// settle or raise payment requests. A no-op until the user's phone number is known.
    pub fn sync(&mut self) -> Result<(), ToolError> {
        let Some(phone) = self.user.surroundings.phone_number.clone() else {
            return Ok(());
        };
        let line = self.db.line_by_phone(&phone)?;
        let s = &mut self.user.surroundings;
        s.line_active = line.status == "Active";
        s.roaming_allowed = line.roaming_enabled;
        let plan = self.db.plan(&line.plan_id)?;
        s.mobile_data_usage_exceeded =
            line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb;
        if let Some(p) = s.payment_request.clone() {
            if p.paid {
                self.db.bill_mut(&p.bill_id)?.status = "Paid".into();
                self.user.surroundings.payment_request = None;
            }
        }
        if self.user.surroundings.payment_request.is_none() {
            let customer = self.db.customer_by_phone(&phone)?;
            if let Some(bill) = self.db.bills_awaiting_payment(customer)?.first() {
                self.user.surroundings.payment_request = Some(PaymentRequest {
                    bill_id: bill.bill_id.clone(),
                    amount_due: bill.total_due,
                    paid: false,
                });
            }
        }
        Ok(())
    }
}

impl DomainState for TelecomState {
    fn fresh(&self) -> Box<dyn DomainState> {
        Box::new(self.clone())
    }
    fn call_agent(&mut self, name: &str, args: &Map<String, Value>) -> ToolResult {
        agent::call(self, name, args)
    }
    fn call_user(&mut self, name: &str, args: &Map<String, Value>) -> ToolResult {
        user_tools::call(self, name, args)
    }
    fn sync(&mut self) -> Result<(), ToolError> {
        TelecomState::sync(self)
    }
    fn db_canonical(&self) -> String {
        crate::canon::canonical_text(&self.db)
    }
    fn user_db_canonical(&self) -> Option<String> {
        Some(crate::canon::canonical_text(&self.user))
    }
    fn merge_agent_data(&mut self, data: &Value) -> crate::error::Result<()> {
        self.db = super::merged(&self.db, data, "agent_data")?;
        Ok(())
    }
    fn merge_user_data(&mut self, data: &Value) -> Option<crate::error::Result<()>> {
        Some(super::merged(&self.user, data, "user_data").map(|u| self.user = u))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
