//! Retail domain: typed `RetailDB` records and the 16 agent tools with upstream's exact
//! mutation semantics, including the last-variant quirk of `modify_pending_order_items`.

mod schemas;

use super::registry::{DomainDef, ToolLists};
use super::tables::{table_db, Cached};
use super::{to_json, Invocation};
use crate::args::{terr, Args, Out, ToolError, ToolResult};
use crate::pyjson::{self, round2};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

table_db! {
    /// Upstream's `RetailDB`.
    pub struct RetailDb;
    /// Canonical bytes and hash resume points of the loaded DB, shared by every environment.
    pub struct RetailCache;
    tables {
        products: Product,
        users: User,
        orders: Order,
    }
    tools call;
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variant {
    pub item_id: String,
    pub options: IndexMap<String, String>,
    pub available: bool,
    pub price: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Product {
    pub name: String,
    pub product_id: String,
    pub variants: IndexMap<String, Variant>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UserName {
    pub first_name: String,
    pub last_name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UserAddress {
    pub address1: String,
    pub address2: String,
    pub city: String,
    pub country: String,
    pub state: String,
    pub zip: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "source")]
pub enum PaymentMethod {
    #[serde(rename = "credit_card")]
    CreditCard {
        id: String,
        brand: String,
        last_four: String,
    },
    #[serde(rename = "paypal")]
    Paypal { id: String },
    #[serde(rename = "gift_card")]
    GiftCard { id: String, balance: f64 },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct User {
    pub user_id: String,
    pub name: UserName,
    pub address: UserAddress,
    pub email: String,
    pub payment_methods: IndexMap<String, PaymentMethod>,
    pub orders: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fulfillment {
    pub tracking_id: Vec<String>,
    pub item_ids: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OrderItem {
    pub name: String,
    pub product_id: String,
    pub item_id: String,
    pub price: f64,
    pub options: IndexMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OrderPayment {
    pub transaction_type: String,
    pub amount: f64,
    pub payment_method_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Order {
    pub order_id: String,
    pub user_id: String,
    pub address: UserAddress,
    pub items: Vec<OrderItem>,
    pub status: String,
    pub fulfillments: Vec<Fulfillment>,
    pub payment_history: Vec<OrderPayment>,
    #[serde(default)]
    pub cancel_reason: Option<String>,
    #[serde(default)]
    pub exchange_items: Option<Vec<String>>,
    #[serde(default)]
    pub exchange_new_items: Option<Vec<String>>,
    #[serde(default)]
    pub exchange_payment_method_id: Option<String>,
    #[serde(default)]
    pub exchange_price_difference: Option<f64>,
    #[serde(default)]
    pub return_items: Option<Vec<String>>,
    #[serde(default)]
    pub return_payment_method_id: Option<String>,
}

const TOOLS: ToolLists = ToolLists::of(READ_TOOLS, WRITE_TOOLS, GENERIC_TOOLS);

/// The retail domain's row in the table.
pub(crate) static DOMAIN: DomainDef =
    DomainDef::new("retail", TOOLS, Cached::<RetailDb>::load, schemas::schema);

pub const WRITE_TOOLS: &[&str] = &[
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
];
pub const READ_TOOLS: &[&str] = &[
    "find_user_id_by_email",
    "find_user_id_by_name_zip",
    "get_user_details",
    "get_order_details",
    "get_product_details",
    "get_item_details",
    "list_all_product_types",
];
pub const GENERIC_TOOLS: &[&str] = &["calculate", "transfer_to_human_agents"];

const CLASS: &str = "RetailTools";

fn order<'a>(db: &'a RetailDb, id: &str) -> Result<&'a Arc<Order>, ToolError> {
    db.orders
        .get(id)
        .ok_or_else(|| ToolError::from("Order not found"))
}

fn user<'a>(db: &'a RetailDb, id: &str) -> Result<&'a Arc<User>, ToolError> {
    db.users
        .get(id)
        .ok_or_else(|| ToolError::from("User not found"))
}

fn variant<'a>(
    db: &'a RetailDb,
    product_id: &str,
    item_id: &str,
) -> Result<&'a Variant, ToolError> {
    let p = db
        .products
        .get(product_id)
        .ok_or_else(|| ToolError::from("Product not found"))?;
    p.variants
        .get(item_id)
        .ok_or_else(|| ToolError::from("Variant not found"))
}

fn payment_method<'a>(
    db: &'a RetailDb,
    user_id: &str,
    pm: &str,
) -> Result<&'a PaymentMethod, ToolError> {
    user(db, user_id)?
        .payment_methods
        .get(pm)
        .ok_or_else(|| ToolError::from("Payment method not found"))
}

fn gift_balance(pm: &PaymentMethod) -> Option<f64> {
    match pm {
        PaymentMethod::GiftCard { balance, .. } => Some(*balance),
        _ => None,
    }
}

/// Apply `f` to a user's gift card balance, then round it to cents as upstream does.
fn adjust_gift_card(db: &mut RetailDb, user_id: &str, pm: &str, delta: f64) {
    let u = Arc::make_mut(db.users.get_mut(user_id).expect("checked"));
    if let Some(PaymentMethod::GiftCard { balance, .. }) = u.payment_methods.get_mut(pm) {
        *balance += delta;
        *balance = round2(*balance);
    }
}

fn count(list: &[String], x: &str) -> usize {
    list.iter().filter(|y| y.as_str() == x).count()
}

/// The first of `item_ids` asked for more times than the order holds it (each tool words its
/// own error for it, as upstream does).
fn first_missing_item<'a>(o: &Order, item_ids: &'a [String]) -> Option<&'a String> {
    let all: Vec<String> = o.items.iter().map(|i| i.item_id.clone()).collect();
    item_ids
        .iter()
        .find(|x| count(item_ids, x) > count(&all, x))
}

fn address_args(a: &Args) -> Result<UserAddress, ToolError> {
    Ok(UserAddress {
        address1: a.str("address1")?,
        address2: a.str("address2")?,
        city: a.str("city")?,
        country: a.str("country")?,
        state: a.str("state")?,
        zip: a.str("zip")?,
    })
}

const ADDRESS: &[&str] = &["address1", "address2", "city", "state", "country", "zip"];

/// Run one agent tool. `Err` carries the exception text (sent as `"Error: <text>"`).
pub fn call(db: &mut RetailDb, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let call = Invocation::new(CLASS, name, kw);
    match name {
        "find_user_id_by_email"
        | "find_user_id_by_name_zip"
        | "get_order_details"
        | "get_product_details"
        | "get_item_details"
        | "get_user_details"
        | "list_all_product_types" => read_tool(db, &call),
        "cancel_pending_order"
        | "exchange_delivered_order_items"
        | "modify_pending_order_address"
        | "modify_pending_order_items" => order_change(db, &call),
        "modify_pending_order_payment" | "modify_user_address" | "return_delivered_order_items" => {
            payment_or_return(db, &call)
        }
        _ => call.other(GENERIC_TOOLS),
    }
}

/// The read-only tools ([`call`] split by kind, to keep each short).
fn read_tool(db: &mut RetailDb, call: &Invocation<'_>) -> ToolResult {
    match call.name {
        "find_user_id_by_email" => {
            let a = call.args(&["email"], &[])?;
            let email = a.str("email")?;
            db.users
                .iter()
                .find(|(_, u)| u.email == email)
                .map(|(id, _)| Out::Str(id.clone()))
                .ok_or_else(|| ToolError::from("User not found"))
        }
        "find_user_id_by_name_zip" => {
            let a = call.args(&["first_name", "last_name", "zip"], &[])?;
            let (f, l, z) = (a.str("first_name")?, a.str("last_name")?, a.str("zip")?);
            db.users
                .iter()
                .find(|(_, u)| {
                    u.name.first_name == f && u.name.last_name == l && u.address.zip == z
                })
                .map(|(id, _)| Out::Str(id.clone()))
                .ok_or_else(|| ToolError::from("User not found"))
        }
        "get_order_details" => {
            let a = call.args(&["order_id"], &[])?;
            Ok(Out::Json(to_json(order(db, &a.str("order_id")?)?.as_ref())))
        }
        "get_product_details" => {
            let a = call.args(&["product_id"], &[])?;
            let id = a.str("product_id")?;
            let p = db
                .products
                .get(&id)
                .ok_or_else(|| ToolError::from("Product not found"))?;
            Ok(Out::Json(to_json(p.as_ref())))
        }
        "get_item_details" => {
            let a = call.args(&["item_id"], &[])?;
            let id = a.str("item_id")?;
            db.products
                .values()
                .find_map(|p| p.variants.get(&id))
                .map(|v| Out::Json(to_json(v)))
                .ok_or_else(|| ToolError::from("Item not found"))
        }
        "get_user_details" => {
            let a = call.args(&["user_id"], &[])?;
            Ok(Out::Json(to_json(user(db, &a.str("user_id")?)?.as_ref())))
        }
        "list_all_product_types" => {
            call.args(&[], &[])?;
            let mut m = Map::new();
            for p in db.products.values() {
                m.insert(p.name.clone(), Value::String(p.product_id.clone()));
            }
            Ok(Out::Str(pyjson::dumps_sorted(&Value::Object(m))))
        }
        _ => call.other(GENERIC_TOOLS),
    }
}

/// Cancelling, exchanging and modifying an order's address or items ([`call`] split by
/// kind, to keep each short).
fn order_change(db: &mut RetailDb, call: &Invocation<'_>) -> ToolResult {
    match call.name {
        "cancel_pending_order" => {
            let a = call.args(&["order_id", "reason"], &[])?;
            let id = a.str("order_id")?;
            let reason = a.str("reason")?;
            let o = order(db, &id)?.clone();
            if o.status != "pending" {
                return Err("Non-pending order cannot be cancelled".into());
            }
            if reason != "no longer needed" && reason != "ordered by mistake" {
                return Err("Invalid reason".into());
            }
            let mut refunds = Vec::new();
            for p in &o.payment_history {
                refunds.push(OrderPayment {
                    transaction_type: "refund".into(),
                    amount: p.amount,
                    payment_method_id: p.payment_method_id.clone(),
                });
                let pm = payment_method(db, &o.user_id, &p.payment_method_id)?;
                if gift_balance(pm).is_some() {
                    adjust_gift_card(db, &o.user_id, &p.payment_method_id, p.amount);
                }
            }
            let o = Arc::make_mut(db.orders.get_mut(&id).expect("checked"));
            o.status = "cancelled".into();
            o.cancel_reason = Some(reason);
            o.payment_history.extend(refunds);
            Ok(Out::Json(to_json(&*o)))
        }
        "exchange_delivered_order_items" => {
            let a = call.args(
                &["order_id", "item_ids", "new_item_ids", "payment_method_id"],
                &[],
            )?;
            let id = a.str("order_id")?;
            let item_ids = a.str_list("item_ids")?;
            let new_ids = a.str_list("new_item_ids")?;
            let pm_id = a.str("payment_method_id")?;
            let o = order(db, &id)?.clone();
            if o.status != "delivered" {
                return Err("Non-delivered order cannot be exchanged".into());
            }
            if let Some(x) = first_missing_item(&o, &item_ids) {
                return Err(terr!("Number of {x} not found."));
            }
            if item_ids.len() != new_ids.len() {
                return Err("The number of items to be exchanged should match.".into());
            }
            let mut diff = 0.0f64;
            for (old, new) in item_ids.iter().zip(&new_ids) {
                let item = o
                    .items
                    .iter()
                    .find(|i| &i.item_id == old)
                    .ok_or_else(|| terr!("Item {old} not found"))?;
                let v = variant(db, &item.product_id, new)?;
                if !v.available {
                    return Err(terr!("New item {new} not found or available"));
                }
                diff += v.price - item.price;
            }
            let diff = round2(diff);
            let pm = payment_method(db, &o.user_id, &pm_id)?;
            if gift_balance(pm).is_some_and(|b| b < diff) {
                return Err(
                    "Insufficient gift card balance to pay for the price difference".into(),
                );
            }
            let o = Arc::make_mut(db.orders.get_mut(&id).expect("checked"));
            let mut ex = item_ids.clone();
            ex.sort();
            let mut exn = new_ids.clone();
            exn.sort();
            o.status = "exchange requested".into();
            o.exchange_items = Some(ex);
            o.exchange_new_items = Some(exn);
            o.exchange_payment_method_id = Some(pm_id);
            o.exchange_price_difference = Some(diff);
            Ok(Out::Json(to_json(&*o)))
        }
        "modify_pending_order_address" => {
            let mut req = vec!["order_id"];
            req.extend_from_slice(ADDRESS);
            let a = call.args(&req, &[])?;
            let id = a.str("order_id")?;
            let addr = address_args(&a)?;
            if !order(db, &id)?.status.contains("pending") {
                return Err("Non-pending order cannot be modified".into());
            }
            let o = Arc::make_mut(db.orders.get_mut(&id).expect("checked"));
            o.address = addr;
            Ok(Out::Json(to_json(&*o)))
        }
        "modify_pending_order_items" => {
            let a = call.args(
                &["order_id", "item_ids", "new_item_ids", "payment_method_id"],
                &[],
            )?;
            modify_items(db, &a)
        }
        _ => call.other(GENERIC_TOOLS),
    }
}

/// Changing a payment method or an address, and returns ([`call`] split by kind, to keep
/// each short).
fn payment_or_return(db: &mut RetailDb, call: &Invocation<'_>) -> ToolResult {
    match call.name {
        "modify_pending_order_payment" => {
            let a = call.args(&["order_id", "payment_method_id"], &[])?;
            let id = a.str("order_id")?;
            let pm_id = a.str("payment_method_id")?;
            let o = order(db, &id)?.clone();
            if !o.status.contains("pending") {
                return Err("Non-pending order cannot be modified".into());
            }
            let pm = payment_method(db, &o.user_id, &pm_id)?;
            if o.payment_history.len() != 1 || o.payment_history[0].transaction_type != "payment" {
                return Err("There should be exactly one payment for a pending order".into());
            }
            let old_id = o.payment_history[0].payment_method_id.clone();
            if old_id == pm_id {
                return Err(
                    "The new payment method should be different from the current one".into(),
                );
            }
            let amount = o.payment_history[0].amount;
            let new_is_gift = gift_balance(pm);
            if new_is_gift.is_some_and(|b| b < amount) {
                return Err("Insufficient gift card balance to pay for the order".into());
            }
            {
                let o = Arc::make_mut(db.orders.get_mut(&id).expect("checked"));
                o.payment_history.push(OrderPayment {
                    transaction_type: "payment".into(),
                    amount,
                    payment_method_id: pm_id.clone(),
                });
                o.payment_history.push(OrderPayment {
                    transaction_type: "refund".into(),
                    amount,
                    payment_method_id: old_id.clone(),
                });
            }
            if new_is_gift.is_some() {
                adjust_gift_card(db, &o.user_id, &pm_id, -amount);
            }
            let old_pm = payment_method(db, &o.user_id, &old_id)?;
            if gift_balance(old_pm).is_some() {
                adjust_gift_card(db, &o.user_id, &old_id, amount);
            }
            Ok(Out::Json(to_json(db.orders[&id].as_ref())))
        }
        "modify_user_address" => {
            let mut req = vec!["user_id"];
            req.extend_from_slice(ADDRESS);
            let a = call.args(&req, &[])?;
            let uid = a.str("user_id")?;
            let addr = address_args(&a)?;
            user(db, &uid)?;
            let u = Arc::make_mut(db.users.get_mut(&uid).expect("checked"));
            u.address = addr;
            Ok(Out::Json(to_json(&*u)))
        }
        "return_delivered_order_items" => {
            let a = call.args(&["order_id", "item_ids", "payment_method_id"], &[])?;
            let id = a.str("order_id")?;
            let item_ids = a.str_list("item_ids")?;
            let pm_id = a.str("payment_method_id")?;
            let o = order(db, &id)?.clone();
            if o.status != "delivered" {
                return Err("Non-delivered order cannot be returned".into());
            }
            let u = user(db, &o.user_id)?;
            let pm = u
                .payment_methods
                .get(&pm_id)
                .ok_or_else(|| ToolError::from("Payment method not found"))?;
            let original = o
                .payment_history
                .first()
                .map(|p| p.payment_method_id.as_str());
            if gift_balance(pm).is_none() {
                match original {
                    None => return Err("list index out of range".into()),
                    Some(orig) if orig != pm_id => {
                        return Err("Payment method should be the original payment method".into())
                    }
                    _ => {}
                }
            }
            if first_missing_item(&o, &item_ids).is_some() {
                return Err("Some item not found".into());
            }
            let o = Arc::make_mut(db.orders.get_mut(&id).expect("checked"));
            let mut ri = item_ids;
            ri.sort();
            o.status = "return requested".into();
            o.return_items = Some(ri);
            o.return_payment_method_id = Some(pm_id);
            Ok(Out::Json(to_json(&*o)))
        }
        _ => call.other(GENERIC_TOOLS),
    }
}

fn modify_items(db: &mut RetailDb, a: &Args) -> ToolResult {
    let id = a.str("order_id")?;
    let item_ids = a.str_list("item_ids")?;
    let new_ids = a.str_list("new_item_ids")?;
    let pm_id = a.str("payment_method_id")?;
    let o = order(db, &id)?.clone();
    if o.status != "pending" {
        return Err("Non-pending order cannot be modified".into());
    }
    if let Some(x) = first_missing_item(&o, &item_ids) {
        return Err(terr!("{x} not found"));
    }
    if item_ids.len() != new_ids.len() {
        return Err("The number of items to be exchanged should match".into());
    }
    // Python starts the sum as the int 0; an empty list therefore records an int amount,
    // which pydantic turns into 0.0 - the same float we start from here.
    let mut diff = 0.0f64;
    let mut last_variant: Option<Variant> = None;
    for (old, new) in item_ids.iter().zip(&new_ids) {
        if old == new {
            return Err("The new item id should be different from the old item id".into());
        }
        let item = o
            .items
            .iter()
            .find(|i| &i.item_id == old)
            .ok_or_else(|| terr!("Item {old} not found"))?;
        let v = variant(db, &item.product_id, new)?;
        if !v.available {
            return Err(terr!("New item {new} not found or available"));
        }
        diff += v.price - item.price;
        last_variant = Some(v.clone());
    }
    let pm = payment_method(db, &o.user_id, &pm_id)?;
    let is_gift = gift_balance(pm);
    if is_gift.is_some_and(|b| b < diff) {
        return Err("Insufficient gift card balance to pay for the new item".into());
    }
    {
        let o = Arc::make_mut(db.orders.get_mut(&id).expect("checked"));
        o.payment_history.push(OrderPayment {
            transaction_type: if diff > 0.0 { "payment" } else { "refund" }.into(),
            amount: diff.abs(),
            payment_method_id: pm_id.clone(),
        });
    }
    if is_gift.is_some() {
        adjust_gift_card(db, &o.user_id, &pm_id, -diff);
    }
    let o = Arc::make_mut(db.orders.get_mut(&id).expect("checked"));
    for (old, new) in item_ids.iter().zip(&new_ids) {
        // Quirk kept from upstream: every modified item takes the price and options of
        // the *last* new variant in the list, not its own.
        let item = o
            .items
            .iter_mut()
            .find(|i| &i.item_id == old)
            .ok_or_else(|| terr!("Item {old} not found"))?;
        item.item_id = new.clone();
        if let Some(v) = &last_variant {
            item.price = v.price;
            item.options = v.options.clone();
        }
    }
    o.status = "pending (item modified)".into();
    Ok(Out::Json(to_json(&*o)))
}
