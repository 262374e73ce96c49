//! Airline domain: typed `FlightDB` records and the 14 agent tools with upstream's exact
//! mutation semantics (see docs/tau2.md for the quirks kept on purpose).

mod booking;

mod schemas;

use super::registry::{DomainDef, ToolLists};
use super::tables::{table_db, Cached};
use super::{to_json, Invocation};
use crate::args::{field_error, obj_str, terr, value_float, value_int, Out, ToolError, ToolResult};
use crate::pyjson;
use booking::{book_reservation, payment_for_update, update_reservation_flights};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::sync::Arc;

table_db! {
    /// Upstream's `FlightDB`.
    pub struct AirlineDb;
    /// Canonical bytes and hash resume points of the loaded DB, shared by every environment.
    pub struct AirlineCache;
    tables {
        flights: Flight,
        users: User,
        reservations: Reservation,
    }
    tools call;
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flight {
    pub flight_number: String,
    pub origin: String,
    pub destination: String,
    pub scheduled_departure_time_est: String,
    pub scheduled_arrival_time_est: String,
    pub dates: IndexMap<String, FlightDateStatus>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "status")]
pub enum FlightDateStatus {
    #[serde(rename = "available")]
    Available {
        available_seats: IndexMap<String, i64>,
        prices: IndexMap<String, i64>,
    },
    #[serde(rename = "landed")]
    Landed {
        actual_departure_time_est: String,
        actual_arrival_time_est: String,
    },
    #[serde(rename = "cancelled")]
    Cancelled {},
    #[serde(rename = "delayed")]
    Delayed {
        estimated_departure_time_est: String,
        estimated_arrival_time_est: String,
    },
    #[serde(rename = "flying")]
    Flying {
        actual_departure_time_est: String,
        estimated_arrival_time_est: String,
    },
    #[serde(rename = "on time")]
    OnTime {
        estimated_departure_time_est: String,
        estimated_arrival_time_est: String,
    },
}

impl FlightDateStatus {
    pub fn status(&self) -> &'static str {
        match self {
            FlightDateStatus::Available { .. } => "available",
            FlightDateStatus::Landed { .. } => "landed",
            FlightDateStatus::Cancelled {} => "cancelled",
            FlightDateStatus::Delayed { .. } => "delayed",
            FlightDateStatus::Flying { .. } => "flying",
            FlightDateStatus::OnTime { .. } => "on time",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Name {
    pub first_name: String,
    pub last_name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Address {
    pub address1: String,
    #[serde(default)]
    pub address2: Option<String>,
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
    #[serde(rename = "gift_card")]
    GiftCard { id: String, amount: f64 },
    #[serde(rename = "certificate")]
    Certificate { id: String, amount: f64 },
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Passenger {
    pub first_name: String,
    pub last_name: String,
    pub dob: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct User {
    pub user_id: String,
    pub name: Name,
    pub address: Address,
    pub email: String,
    pub dob: String,
    pub payment_methods: IndexMap<String, PaymentMethod>,
    pub saved_passengers: Vec<Passenger>,
    pub membership: String,
    pub reservations: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReservationFlight {
    pub flight_number: String,
    pub origin: String,
    pub destination: String,
    pub date: String,
    pub price: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Payment {
    pub payment_id: String,
    pub amount: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reservation {
    pub reservation_id: String,
    pub user_id: String,
    pub origin: String,
    pub destination: String,
    pub flight_type: String,
    pub cabin: String,
    pub flights: Vec<ReservationFlight>,
    pub passengers: Vec<Passenger>,
    pub payment_history: Vec<Payment>,
    pub created_at: String,
    pub total_baggages: i64,
    pub nonfree_baggages: i64,
    pub insurance: String,
    #[serde(default)]
    pub status: Option<String>,
}

const TOOLS: ToolLists = ToolLists::of(READ_TOOLS, WRITE_TOOLS, GENERIC_TOOLS);

/// The airline domain's row in the table.
pub(crate) static DOMAIN: DomainDef =
    DomainDef::new("airline", TOOLS, Cached::<AirlineDb>::load, schemas::schema);

pub const WRITE_TOOLS: &[&str] = &[
    "book_reservation",
    "cancel_reservation",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
    "send_certificate",
];
pub const READ_TOOLS: &[&str] = &[
    "get_user_details",
    "get_reservation_details",
    "get_flight_status",
    "search_direct_flight",
    "search_onestop_flight",
    "list_all_airports",
];
pub const GENERIC_TOOLS: &[&str] = &["calculate", "transfer_to_human_agents"];

const CLASS: &str = "AirlineTools";
const CABINS: &[&str] = &["business", "economy", "basic_economy"];

fn user<'a>(db: &'a AirlineDb, id: &str) -> Result<&'a Arc<User>, ToolError> {
    db.users.get(id).ok_or_else(|| terr!("User {id} not found"))
}

fn reservation<'a>(db: &'a AirlineDb, id: &str) -> Result<&'a Arc<Reservation>, ToolError> {
    db.reservations
        .get(id)
        .ok_or_else(|| terr!("Reservation {id} not found"))
}

fn flight_instance<'a>(
    db: &'a AirlineDb,
    number: &str,
    date: &str,
) -> Result<&'a FlightDateStatus, ToolError> {
    let f = db
        .flights
        .get(number)
        .ok_or_else(|| terr!("Flight {number} not found"))?;
    f.dates
        .get(date)
        .ok_or_else(|| terr!("Flight {number} not found on date {date}"))
}

fn flight_infos(list: &[&Map<String, Value>]) -> Result<Vec<(String, String)>, ToolError> {
    list.iter()
        .map(|m| {
            Ok((
                obj_str(m, "FlightInfo", "flight_number")?,
                obj_str(m, "FlightInfo", "date")?,
            ))
        })
        .collect()
}

fn passengers(list: &[&Map<String, Value>]) -> Result<Vec<Passenger>, ToolError> {
    list.iter()
        .map(|m| {
            Ok(Passenger {
                first_name: obj_str(m, "Passenger", "first_name")?,
                last_name: obj_str(m, "Passenger", "last_name")?,
                dob: obj_str(m, "Passenger", "dob")?,
            })
        })
        .collect()
}

fn literal(model: &str, field: &str, v: &str, allowed: &[&str]) -> Result<(), ToolError> {
    if allowed.contains(&v) {
        Ok(())
    } else {
        let opts: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
        Err(field_error(
            model,
            field,
            &format!("Input should be {}", opts.join(" or ")),
        ))
    }
}

/// Run one agent tool. `Err` carries the exception text (sent as `"Error: <text>"`).
pub fn call(db: &mut AirlineDb, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let call = Invocation::new(CLASS, name, kw);
    match name {
        n if WRITE_TOOLS.contains(&n) => write_tool(db, &call),
        n if READ_TOOLS.contains(&n) => read_tool(db, &call),
        _ => call.other(GENERIC_TOOLS),
    }
}

/// The state-changing tools ([`call`] split by kind, to keep each short).
fn write_tool(db: &mut AirlineDb, call: &Invocation<'_>) -> ToolResult {
    match call.name {
        "book_reservation" => {
            let a = call.args(
                &[
                    "user_id",
                    "origin",
                    "destination",
                    "flight_type",
                    "cabin",
                    "flights",
                    "passengers",
                    "payment_methods",
                    "total_baggages",
                    "nonfree_baggages",
                    "insurance",
                ],
                &[],
            )?;
            book_reservation(db, &a)
        }
        "cancel_reservation" => {
            let a = call.args(&["reservation_id"], &[])?;
            let id = a.str("reservation_id")?;
            reservation(db, &id)?;
            let r = Arc::make_mut(db.reservations.get_mut(&id).expect("checked"));
            let refunds: Vec<Payment> = r
                .payment_history
                .iter()
                .map(|p| Payment {
                    payment_id: p.payment_id.clone(),
                    amount: -p.amount,
                })
                .collect();
            r.payment_history.extend(refunds);
            r.status = Some("cancelled".into());
            Ok(Out::Json(to_json(&*r)))
        }
        "update_reservation_baggages" => {
            let a = call.args(
                &[
                    "reservation_id",
                    "total_baggages",
                    "nonfree_baggages",
                    "payment_id",
                ],
                &[],
            )?;
            let id = a.str("reservation_id")?;
            let total = a.int("total_baggages")?;
            let nonfree = a.int("nonfree_baggages")?;
            let payment_id = a.str("payment_id")?;
            let r = reservation(db, &id)?.clone();
            user(db, &r.user_id)?;
            let price = 50 * (nonfree - r.nonfree_baggages).max(0);
            let payment = payment_for_update(db, &r.user_id, &payment_id, price)?;
            let r = Arc::make_mut(db.reservations.get_mut(&id).expect("checked"));
            if let Some(p) = payment {
                r.payment_history.push(p);
            }
            r.total_baggages = total;
            r.nonfree_baggages = nonfree;
            Ok(Out::Json(to_json(&*r)))
        }
        "update_reservation_flights" => {
            let a = call.args(&["reservation_id", "cabin", "flights", "payment_id"], &[])?;
            update_reservation_flights(db, &a)
        }
        "update_reservation_passengers" => {
            let a = call.args(&["reservation_id", "passengers"], &[])?;
            let list = a.obj_list("passengers")?;
            let new = passengers(&list)?;
            let id = a.str("reservation_id")?;
            let r = reservation(db, &id)?;
            if new.len() != r.passengers.len() {
                return Err("Number of passengers does not match".into());
            }
            let r = Arc::make_mut(db.reservations.get_mut(&id).expect("checked"));
            r.passengers = new;
            Ok(Out::Json(to_json(&*r)))
        }
        "send_certificate" => {
            let a = call.args(&["user_id", "amount"], &[])?;
            let uid = a.str("user_id")?;
            let raw = a.raw("amount").expect("required");
            user(db, &uid)?;
            let amount = value_float(raw).ok_or_else(|| {
                field_error("Certificate", "amount", "Input should be a valid number")
            })?;
            let u = Arc::make_mut(db.users.get_mut(&uid).expect("checked"));
            for n in [3221322, 3221323, 3221324] {
                let pid = format!("certificate_{n}");
                if !u.payment_methods.contains_key(&pid) {
                    u.payment_methods.insert(
                        pid.clone(),
                        PaymentMethod::Certificate {
                            id: pid.clone(),
                            amount,
                        },
                    );
                    return Ok(Out::Str(format!(
                        "Certificate {pid} added to user {uid} with amount {}.",
                        pyjson::py_str_number(raw)
                    )));
                }
            }
            Err("Too many certificates".into())
        }
        _ => call.other(GENERIC_TOOLS),
    }
}

/// The read-only tools ([`call`] split by kind, to keep each short).
fn read_tool(db: &mut AirlineDb, call: &Invocation<'_>) -> ToolResult {
    match call.name {
        "get_user_details" => {
            let a = call.args(&["user_id"], &[])?;
            Ok(Out::Json(to_json(user(db, &a.str("user_id")?)?.as_ref())))
        }
        "get_reservation_details" => {
            let a = call.args(&["reservation_id"], &[])?;
            Ok(Out::Json(to_json(
                reservation(db, &a.str("reservation_id")?)?.as_ref(),
            )))
        }
        "get_flight_status" => {
            let a = call.args(&["flight_number", "date"], &[])?;
            let s = flight_instance(db, &a.str("flight_number")?, &a.str("date")?)?;
            Ok(Out::Str(s.status().to_string()))
        }
        "search_direct_flight" => {
            let a = call.args(&["origin", "destination", "date"], &[])?;
            let date = a.str("date")?;
            let res = search_direct(
                db,
                &date,
                Some(&a.str("origin")?),
                Some(&a.str("destination")?),
                None,
                None,
            );
            Ok(Out::Json(Value::Array(res)))
        }
        "search_onestop_flight" => {
            let a = call.args(&["origin", "destination", "date"], &[])?;
            let (origin, destination, date) =
                (a.str("origin")?, a.str("destination")?, a.str("date")?);
            let mut results = Vec::new();
            for f1 in db.flights.values() {
                let Some(first) = direct_entry(f1, &date, Some(&origin), None, None, Some(&date))
                else {
                    continue;
                };
                // Quirk kept from upstream: "+1" arrivals build the next day without zero
                // padding ("2024-05-6"), so such connections never match a DB date.
                let date2 = if f1.scheduled_arrival_time_est.contains("+1") {
                    let tail: String = date
                        .chars()
                        .rev()
                        .take(2)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    let day: i64 = tail
                        .trim()
                        .parse()
                        .map_err(|_| format!("invalid literal for int() with base 10: '{tail}'"))?;
                    format!("2024-05-{}", day + 1)
                } else {
                    date.clone()
                };
                for f2 in db.flights.values() {
                    if f2.origin != f1.destination {
                        continue;
                    }
                    if let Some(second) = direct_entry(
                        f2,
                        &date2,
                        None,
                        Some(&destination),
                        Some(&f1.scheduled_arrival_time_est),
                        Some(&date2),
                    ) {
                        results.push(Value::Array(vec![first.clone(), second]));
                    }
                }
            }
            Ok(Out::Json(Value::Array(results)))
        }
        "list_all_airports" => {
            call.args(&[], &[])?;
            let airports = [
                ("SFO", "San Francisco"),
                ("JFK", "New York"),
                ("LAX", "Los Angeles"),
                ("ORD", "Chicago"),
                ("DFW", "Dallas"),
                ("DEN", "Denver"),
                ("SEA", "Seattle"),
                ("ATL", "Atlanta"),
                ("MIA", "Miami"),
                ("BOS", "Boston"),
                ("PHX", "Phoenix"),
                ("IAH", "Houston"),
                ("LAS", "Las Vegas"),
                ("MCO", "Orlando"),
                ("EWR", "Newark"),
                ("CLT", "Charlotte"),
                ("MSP", "Minneapolis"),
                ("DTW", "Detroit"),
                ("PHL", "Philadelphia"),
                ("LGA", "LaGuardia"),
            ];
            Ok(Out::Json(Value::Array(
                airports
                    .iter()
                    .map(|(i, c)| json!({"iata": i, "city": c}))
                    .collect(),
            )))
        }
        _ => call.other(GENERIC_TOOLS),
    }
}

/// One `DirectFlight` dump when `f` is available on `date` and passes the filters.
fn direct_entry(
    f: &Flight,
    date: &str,
    origin: Option<&str>,
    destination: Option<&str>,
    leave_after: Option<&str>,
    set_date: Option<&str>,
) -> Option<Value> {
    if origin.is_some_and(|o| f.origin != o) || destination.is_some_and(|d| f.destination != d) {
        return None;
    }
    let FlightDateStatus::Available {
        available_seats,
        prices,
    } = f.dates.get(date)?
    else {
        return None;
    };
    if leave_after.is_some_and(|t| f.scheduled_departure_time_est.as_str() < t) {
        return None;
    }
    Some(json!({
        "flight_number": f.flight_number,
        "origin": f.origin,
        "destination": f.destination,
        "status": "available",
        "scheduled_departure_time_est": f.scheduled_departure_time_est,
        "scheduled_arrival_time_est": f.scheduled_arrival_time_est,
        "date": set_date,
        "available_seats": available_seats,
        "prices": prices,
    }))
}

fn search_direct(
    db: &AirlineDb,
    date: &str,
    origin: Option<&str>,
    destination: Option<&str>,
    leave_after: Option<&str>,
    set_date: Option<&str>,
) -> Vec<Value> {
    db.flights
        .values()
        .filter_map(|f| direct_entry(f, date, origin, destination, leave_after, set_date))
        .collect()
}
