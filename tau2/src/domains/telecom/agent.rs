//! The carrier's side of telecom: the typed `TelecomDB` (plans, devices, lines, customers,
//! bills), the 13 agent tools, and the non-tool functions tasks call to break an account
//! (`set_data_usage`, `suspend_line_for_overdue_bill`) or to check it (`assert_*`).
//!
//! Upstream's "today" is fixed to 2025-02-25, so every date the tools derive from it is a
//! constant below. Floats inside dict-shaped results are sent as `str(x)` (upstream's
//! `to_json_str` stringifies scalars nested in dicts, not in models); see docs/tau2.md.

use super::{py_bool, TelecomState};
use crate::args::{terr, Args, Out, ToolError, ToolResult};
use crate::pyjson::PyNum;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Upstream's fixed "today".
pub const TODAY: &str = "2025-02-25";
/// Last day of the current billing cycle (`get_data_usage`).
const CYCLE_END: &str = "2025-02-28";
/// First day, last day and due date of last month's bill (`suspend_line_for_overdue_bill`).
const LAST_MONTH: (&str, &str, &str) = ("2025-01-01", "2025-01-31", "2025-01-15");
/// Period start, period end and due date of a new draft bill for next month.
const NEXT_MONTH: (&str, &str, &str) = ("2025-03-01", "2025-03-31", "2025-03-15");

const CLASS: &str = "TelecomTools";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Address {
    pub street: String,
    pub city: String,
    pub state: String,
    pub zip_code: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub plan_id: String,
    pub name: String,
    pub data_limit_gb: f64,
    pub price_per_month: f64,
    pub data_refueling_price_per_gb: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub device_id: String,
    pub device_type: String,
    pub model: String,
    #[serde(default)]
    pub imei: Option<String>,
    pub is_esim_capable: bool,
    #[serde(default)]
    pub activated: bool,
    #[serde(default)]
    pub activation_date: Option<String>,
    #[serde(default)]
    pub last_esim_transfer_date: Option<String>,
}

fn pending_activation() -> String {
    "Pending Activation".into()
}
fn draft() -> String {
    "Draft".into()
}
fn pending_verification() -> String {
    "Pending Verification".into()
}
fn start_date() -> String {
    "2025-01-01".into()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    pub line_id: String,
    pub phone_number: String,
    #[serde(default = "pending_activation")]
    pub status: String,
    pub plan_id: String,
    #[serde(default)]
    pub device_id: Option<String>,
    #[serde(default)]
    pub data_used_gb: f64,
    #[serde(default)]
    pub data_refueling_gb: f64,
    #[serde(default)]
    pub roaming_enabled: bool,
    #[serde(default)]
    pub contract_end_date: Option<String>,
    #[serde(default)]
    pub last_plan_change_date: Option<String>,
    #[serde(default)]
    pub last_sim_replacement_date: Option<String>,
    #[serde(default)]
    pub suspension_start_date: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineItem {
    pub description: String,
    pub amount: f64,
    pub date: String,
    pub item_type: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bill {
    pub bill_id: String,
    pub customer_id: String,
    pub period_start: String,
    pub period_end: String,
    pub issue_date: String,
    pub total_due: f64,
    pub due_date: String,
    #[serde(default)]
    pub line_items: Vec<LineItem>,
    #[serde(default = "draft")]
    pub status: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaymentMethod {
    pub method_type: String,
    pub account_number_last_4: String,
    pub expiration_date: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Customer {
    pub customer_id: String,
    pub full_name: String,
    pub date_of_birth: String,
    pub email: String,
    pub phone_number: String,
    pub address: Address,
    #[serde(default = "pending_verification")]
    pub account_status: String,
    #[serde(default)]
    pub payment_methods: Vec<PaymentMethod>,
    #[serde(default)]
    pub line_ids: Vec<String>,
    #[serde(default)]
    pub bill_ids: Vec<String>,
    #[serde(default = "start_date")]
    pub created_at: String,
    #[serde(default)]
    pub last_extension_date: Option<String>,
    #[serde(default)]
    pub goodwill_credit_used_this_year: f64,
}

/// Upstream's `TelecomDB` (field order = declaration order, which tool results keep).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelecomDb {
    #[serde(default)]
    pub plans: Vec<Plan>,
    #[serde(default)]
    pub customers: Vec<Customer>,
    #[serde(default)]
    pub lines: Vec<Line>,
    #[serde(default)]
    pub bills: Vec<Bill>,
    #[serde(default)]
    pub devices: Vec<Device>,
}

/// `YYYY-MM-DDTHH:MM:SS` as pydantic reads it and `str(datetime)` writes it back.
fn as_datetime(s: &mut String) {
    if s.len() == 19 && s.as_bytes()[10] == b'T' {
        s.replace_range(10..11, " ");
    }
}

impl TelecomDb {
    /// The typed DB from `db.toml` (datetimes rendered as Python prints them).
    pub fn from_toml(text: &str) -> Result<TelecomDb, toml::de::Error> {
        let mut db: TelecomDb = toml::from_str(text)?;
        for d in &mut db.devices {
            d.activation_date.iter_mut().for_each(as_datetime);
            d.last_esim_transfer_date.iter_mut().for_each(as_datetime);
        }
        for c in &mut db.customers {
            as_datetime(&mut c.created_at);
        }
        Ok(db)
    }

    pub fn customer(&self, id: &str) -> Result<&Customer, ToolError> {
        self.customers
            .iter()
            .find(|c| c.customer_id == id)
            .ok_or_else(|| terr!("Customer with ID {id} not found"))
    }

    fn customer_mut(&mut self, id: &str) -> Result<&mut Customer, ToolError> {
        self.customers
            .iter_mut()
            .find(|c| c.customer_id == id)
            .ok_or_else(|| terr!("Customer with ID {id} not found"))
    }

    pub fn line(&self, id: &str) -> Result<&Line, ToolError> {
        self.lines
            .iter()
            .find(|l| l.line_id == id)
            .ok_or_else(|| terr!("Line with ID {id} not found"))
    }

    fn line_mut(&mut self, id: &str) -> Result<&mut Line, ToolError> {
        self.lines
            .iter_mut()
            .find(|l| l.line_id == id)
            .ok_or_else(|| terr!("Line with ID {id} not found"))
    }

    pub fn line_by_phone(&self, phone: &str) -> Result<&Line, ToolError> {
        self.lines
            .iter()
            .find(|l| l.phone_number == phone)
            .ok_or_else(|| terr!("Line with phone number {phone} not found"))
    }

    pub fn plan(&self, id: &str) -> Result<&Plan, ToolError> {
        self.plans
            .iter()
            .find(|p| p.plan_id == id)
            .ok_or_else(|| terr!("Plan with ID {id} not found"))
    }

    pub fn bill(&self, id: &str) -> Result<&Bill, ToolError> {
        self.bills
            .iter()
            .find(|b| b.bill_id == id)
            .ok_or_else(|| terr!("Bill with ID {id} not found"))
    }

    pub fn bill_mut(&mut self, id: &str) -> Result<&mut Bill, ToolError> {
        self.bills
            .iter_mut()
            .find(|b| b.bill_id == id)
            .ok_or_else(|| terr!("Bill with ID {id} not found"))
    }

    fn device(&self, id: &str) -> Result<&Device, ToolError> {
        self.devices
            .iter()
            .find(|d| d.device_id == id)
            .ok_or_else(|| terr!("Device with ID {id} not found"))
    }

    /// A line of a customer (upstream `_get_target_line`).
    fn target_line(&self, customer_id: &str, line_id: &str) -> Result<&Line, ToolError> {
        let c = self.customer(customer_id)?;
        if !c.line_ids.iter().any(|l| l == line_id) {
            return Err(terr!("Line {line_id} not found for customer {customer_id}"));
        }
        self.line(line_id)
    }

    fn target_line_mut(
        &mut self,
        customer_id: &str,
        line_id: &str,
    ) -> Result<&mut Line, ToolError> {
        self.target_line(customer_id, line_id)?;
        self.line_mut(line_id)
    }

    /// The customer whose contact number, or one of whose lines, is `phone`.
    pub fn customer_by_phone(&self, phone: &str) -> Result<&Customer, ToolError> {
        for c in &self.customers {
            if c.phone_number == phone {
                return Ok(c);
            }
            for l in &c.line_ids {
                if self.line(l)?.phone_number == phone {
                    return Ok(c);
                }
            }
        }
        Err(terr!("Customer with phone number {phone} not found"))
    }

    /// The customer's bills awaiting payment, in `bill_ids` order.
    pub fn bills_awaiting_payment(&self, customer: &Customer) -> Result<Vec<&Bill>, ToolError> {
        let mut out = Vec::new();
        for id in &customer.bill_ids {
            let b = self.bill(id)?;
            if b.status == "Awaiting Payment" {
                out.push(b);
            }
        }
        Ok(out)
    }
}

fn json_of<T: Serialize>(x: &T) -> Value {
    serde_json::to_value(x).expect("telecom records serialise")
}

/// A number argument; anything else fails like Python's comparison with an int would.
fn num(a: &Args, name: &str) -> Result<PyNum, ToolError> {
    let v = a.raw(name).unwrap_or(&Value::Null);
    PyNum::from_value(v).ok_or_else(|| {
        terr!(
            "'<=' not supported between instances of '{}' and 'int'",
            crate::args::type_name(v)
        )
    })
}

/// A bool argument as Python's truthiness reads common JSON values.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Python slice `list[:limit]`.
fn head<T>(v: Vec<T>, limit: i64) -> Vec<T> {
    let n = v.len() as i64;
    let end = if limit < 0 {
        (n + limit).max(0)
    } else {
        limit.min(n)
    };
    v.into_iter().take(end as usize).collect()
}

/// Agent tools of telecom plus the functions tasks call on the agent toolkit.
pub fn call(st: &mut TelecomState, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let args = |req: &[&str], opt: &[&str]| Args::new(CLASS, name, kw, req, opt);
    let db = &mut st.db;
    match name {
        "get_customer_by_phone" => {
            let a = args(&["phone_number"], &[])?;
            Ok(Out::Json(json_of(
                db.customer_by_phone(&a.str("phone_number")?)?,
            )))
        }
        "get_customer_by_id" => {
            let a = args(&["customer_id"], &[])?;
            Ok(Out::Json(json_of(db.customer(&a.str("customer_id")?)?)))
        }
        "get_customer_by_name" => {
            let a = args(&["full_name", "dob"], &[])?;
            let (name, dob) = (a.str("full_name")?.to_lowercase(), a.str("dob")?);
            let found: Vec<Value> = db
                .customers
                .iter()
                .filter(|c| c.full_name.to_lowercase() == name && c.date_of_birth == dob)
                .map(json_of)
                .collect();
            Ok(Out::Json(Value::Array(found)))
        }
        "get_details_by_id" => {
            let a = args(&["id"], &[])?;
            let id = a.str("id")?;
            let v = match id.chars().next() {
                Some('L') => json_of(db.line(&id)?),
                Some('D') => json_of(db.device(&id)?),
                Some('B') => json_of(db.bill(&id)?),
                Some('C') => json_of(db.customer(&id)?),
                Some('P') => json_of(db.plan(&id)?),
                _ => return Err(terr!("Unknown ID format or type: {id}")),
            };
            Ok(Out::Json(v))
        }
        "suspend_line" => {
            let a = args(&["customer_id", "line_id", "reason"], &[])?;
            let (c, l) = (a.str("customer_id")?, a.str("line_id")?);
            let line = db.target_line_mut(&c, &l)?;
            if line.status != "Active" {
                return Err("Line must be active to suspend".into());
            }
            line.status = "Suspended".into();
            line.suspension_start_date = Some(TODAY.into());
            Ok(Out::Json(json!({
                "message": "Line suspended successfully. $5/month holding fee will apply.",
                "line": json_of(&*line),
            })))
        }
        "resume_line" => {
            let a = args(&["customer_id", "line_id"], &[])?;
            let (c, l) = (a.str("customer_id")?, a.str("line_id")?);
            let line = db.target_line_mut(&c, &l)?;
            if line.status != "Suspended" && line.status != "Pending Activation" {
                return Err("Line must be suspended to resume".into());
            }
            line.status = "Active".into();
            line.suspension_start_date = None;
            Ok(Out::Json(json!({
                "message": "Line resumed successfully",
                "line": json_of(&*line),
            })))
        }
        "get_bills_for_customer" => {
            let a = args(&["customer_id"], &["limit"])?;
            let c = db.customer(&a.str("customer_id")?)?;
            let limit = match a.raw("limit") {
                None => 12,
                Some(v) => crate::args::value_int(v)
                    .filter(|_| !v.is_string())
                    .ok_or_else(|| {
                        ToolError::from(
                            "slice indices must be integers or None or have an __index__ method",
                        )
                    })?,
            };
            let mut bills = c
                .bill_ids
                .iter()
                .map(|id| db.bill(id))
                .collect::<Result<Vec<_>, _>>()?;
            // Newest first; a stable sort keeps equal dates in bill_ids order, like Python's.
            bills.sort_by(|x, y| y.issue_date.cmp(&x.issue_date));
            Ok(Out::Json(Value::Array(
                head(bills, limit).into_iter().map(json_of).collect(),
            )))
        }
        "send_payment_request" => {
            let a = args(&["customer_id", "bill_id"], &[])?;
            let (c, b) = (a.str("customer_id")?, a.str("bill_id")?);
            let customer = db.customer(&c)?;
            if !db.bills_awaiting_payment(customer)?.is_empty() {
                return Err("A bill is already awaiting payment for this customer".into());
            }
            if !customer.bill_ids.contains(&b) {
                return Err(terr!("Bill {b} not found for customer {c}"));
            }
            let bill = db.bill_mut(&b)?;
            bill.status = "Awaiting Payment".into();
            Ok(Out::Str(format!(
                "Payment request sent to the customer for bill {}",
                bill.bill_id
            )))
        }
        _ => more_agent_functions(st, name, kw),
    }
}

/// The rest of [`call`] (split to keep each short): data usage, roaming, refuelling, plans
/// and the assertion functions.
fn more_agent_functions(st: &mut TelecomState, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let args = |req: &[&str], opt: &[&str]| Args::new(CLASS, name, kw, req, opt);
    let db = &mut st.db;
    match name {
        "get_data_usage" => {
            let a = args(&["customer_id", "line_id"], &[])?;
            let l = a.str("line_id")?;
            let line = db.target_line(&a.str("customer_id")?, &l)?;
            let plan = db.plan(&line.plan_id)?;
            Ok(Out::Json(json!({
                "line_id": l,
                "data_used_gb": PyNum::Float(line.data_used_gb).to_string(),
                "data_limit_gb": PyNum::Float(plan.data_limit_gb).to_string(),
                "data_refueling_gb": PyNum::Float(line.data_refueling_gb).to_string(),
                "cycle_end_date": CYCLE_END,
            })))
        }
        "set_data_usage" => {
            let a = args(&["customer_id", "line_id", "data_used_gb"], &[])?;
            let l = a.str("line_id")?;
            let used = num(&a, "data_used_gb")?;
            db.target_line_mut(&a.str("customer_id")?, &l)?.data_used_gb = used.f64();
            Ok(Out::Str(format!(
                "Data usage set to {used} GB for line {l}"
            )))
        }
        "enable_roaming" | "disable_roaming" => {
            let a = args(&["customer_id", "line_id"], &[])?;
            let on = name == "enable_roaming";
            let line = db.target_line_mut(&a.str("customer_id")?, &a.str("line_id")?)?;
            let word = if on { "enabled" } else { "disabled" };
            if line.roaming_enabled == on {
                return Ok(Out::Str(format!("Roaming was already {word}")));
            }
            line.roaming_enabled = on;
            Ok(Out::Str(format!("Roaming {word} successfully")))
        }
        "transfer_to_human_agents" => {
            args(&["summary"], &[])?;
            Ok(Out::Str("Transfer successful".into()))
        }
        "refuel_data" => {
            let a = args(&["customer_id", "line_id", "gb_amount"], &[])?;
            let (c, l) = (a.str("customer_id")?, a.str("line_id")?);
            db.target_line(&c, &l)?;
            let gb = num(&a, "gb_amount")?;
            if gb.f64() <= 0.0 {
                return Err("Refuel amount must be positive".into());
            }
            let plan_id = db.line(&l)?.plan_id.clone();
            let price = db.plan(&plan_id)?.data_refueling_price_per_gb;
            let charge = gb.f64() * price;
            let line = db.line_mut(&l)?;
            line.data_refueling_gb += gb.f64();
            let total = line.data_refueling_gb;
            let description = format!("Data refueling: {gb} GB at ${}/GB", PyNum::Float(price));
            apply_one_time_charge(st, &c, charge, description)?;
            Ok(Out::Json(json!({
                "message": format!("Successfully added {gb} GB of data for line {l} for ${charge:.2}"),
                "new_data_refueling_gb": PyNum::Float(total).to_string(),
                "charge": PyNum::Float(charge).to_string(),
            })))
        }
        "suspend_line_for_overdue_bill" => {
            let a = args(
                &["customer_id", "line_id", "new_bill_id", "contract_ended"],
                &[],
            )?;
            suspend_for_overdue(st, &a)
        }
        "get_available_plan_ids" => {
            args(&[], &[])?;
            Ok(Out::Json(json!(db
                .plans
                .iter()
                .map(|p| p.plan_id.clone())
                .collect::<Vec<_>>())))
        }
        "assert_data_refueling_amount" => {
            let a = args(&["customer_id", "line_id", "expected_amount"], &[])?;
            let want = num(&a, "expected_amount")?.f64();
            let line = db.target_line(&a.str("customer_id")?, &a.str("line_id")?)?;
            Ok(Out::Json(json!(
                (line.data_refueling_gb - want).abs() < 1e-6
            )))
        }
        "assert_line_status" => {
            let a = args(&["customer_id", "line_id", "expected_status"], &[])?;
            let line = db.target_line(&a.str("customer_id")?, &a.str("line_id")?)?;
            Ok(Out::Json(json!(line.status == a.str("expected_status")?)))
        }
        "assert_overdue_bill_exists" => {
            let a = args(&["customer_id", "overdue_bill_id"], &[])?;
            let b = a.str("overdue_bill_id")?;
            if !db.customer(&a.str("customer_id")?)?.bill_ids.contains(&b) {
                return Err(terr!("Overdue bill {b} not found"));
            }
            if db.bill(&b)?.status != "Overdue" {
                return Err(terr!("Overdue bill {b} is not overdue"));
            }
            Ok(Out::Json(json!(true)))
        }
        "assert_no_overdue_bill" => {
            let a = args(&["overdue_bill_id"], &[])?;
            let ok = match db.bill(&a.str("overdue_bill_id")?) {
                Ok(b) => b.status == "Paid",
                Err(_) => true,
            };
            Ok(Out::Json(json!(ok)))
        }
        _ => Err(terr!("'{CLASS}' object has no attribute '{name}'")),
    }
}

/// Add a charge to the customer's draft bill, opening one for next month if there is none.
/// Upstream names a new bill `B` + 8 random hex digits (uuid4); here the digits come from a
/// per-environment counter, so runs are reproducible (docs/tau2.md).
fn apply_one_time_charge(
    st: &mut TelecomState,
    customer_id: &str,
    amount: f64,
    description: String,
) -> Result<(), ToolError> {
    let db = &mut st.db;
    let customer = db.customer(customer_id)?;
    let mut draft = None;
    for id in &customer.bill_ids {
        if db.bill(id)?.status == "Draft" {
            draft = Some(id.clone());
            break;
        }
    }
    let bill_id = match draft {
        Some(id) => id,
        None => {
            st.new_bills += 1;
            let digest =
                crate::canon::sha256_hex(format!("{customer_id}/{}", st.new_bills).as_bytes());
            let id = format!("B{}", &digest[..8]);
            let (start, end, due) = NEXT_MONTH;
            db.bills.push(Bill {
                bill_id: id.clone(),
                customer_id: customer_id.into(),
                period_start: start.into(),
                period_end: end.into(),
                issue_date: start.into(),
                total_due: 0.0,
                due_date: due.into(),
                line_items: vec![],
                status: "Draft".into(),
            });
            db.customer_mut(customer_id)?.bill_ids.push(id.clone());
            id
        }
    };
    let bill = db.bill_mut(&bill_id)?;
    bill.line_items.push(LineItem {
        description,
        amount,
        date: TODAY.into(),
        item_type: if amount < 0.0 { "Credit" } else { "Charge" }.into(),
    });
    bill.total_due += amount;
    Ok(())
}

/// Upstream `suspend_line_for_overdue_bill`: an overdue bill for last month's plan charge,
/// the line suspended, optionally the contract ended last month.
fn suspend_for_overdue(st: &mut TelecomState, a: &Args) -> ToolResult {
    let db = &mut st.db;
    let (c, l, b) = (
        a.str("customer_id")?,
        a.str("line_id")?,
        a.str("new_bill_id")?,
    );
    let ended = truthy(a.raw("contract_ended").unwrap_or(&Value::Null));
    let line = db.line(&l)?;
    if line.status != "Active" {
        return Err("Line must be active to suspend for unpaid bill".into());
    }
    let amount = db.plan(&line.plan_id)?.price_per_month;
    let description = format!("Charge for line {}", line.line_id);
    if amount <= 0.0 {
        return Err("Amount must be positive for overdue bill".into());
    }
    let customer = db.customer(&c)?;
    for id in &customer.bill_ids {
        if db.bill(id)?.status == "Overdue" {
            return Err("Customer already has an overdue bill".into());
        }
    }
    let (start, end, due) = LAST_MONTH;
    db.bills.push(Bill {
        bill_id: b.clone(),
        customer_id: c.clone(),
        period_start: start.into(),
        period_end: end.into(),
        issue_date: start.into(),
        total_due: amount,
        due_date: due.into(),
        line_items: vec![LineItem {
            description,
            amount,
            date: TODAY.into(),
            item_type: "Charge".into(),
        }],
        status: "Overdue".into(),
    });
    db.customer_mut(&c)?.bill_ids.push(b.clone());
    let line = db.line_mut(&l)?;
    line.status = "Suspended".into();
    line.suspension_start_date = Some(TODAY.into());
    if ended {
        line.contract_end_date = Some(end.into());
    }
    Ok(Out::Str(format!(
        "Line {l} suspended for unpaid bill {b}. Contract ended: {}",
        py_bool(ended)
    )))
}
