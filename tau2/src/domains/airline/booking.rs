//! The airline tools that book and re-book: `book_reservation`, `update_reservation_flights`
//! and the payment check they share with the baggage update.

#[allow(unused_imports)]
use super::*;
use crate::args::{terr, Args, ToolError, ToolResult};

/// Upstream `_payment_for_update`: checks, then debits a gift card; returns the payment
/// entry to append (none when the amount is zero).
pub(super) fn payment_for_update(
    db: &mut AirlineDb,
    user_id: &str,
    payment_id: &str,
    total: i64,
) -> Result<Option<Payment>, ToolError> {
    let u = user(db, user_id)?;
    match u.payment_methods.get(payment_id) {
        None => return Err("Payment method not found".into()),
        Some(PaymentMethod::Certificate { .. }) => {
            return Err("Certificate cannot be used to update reservation".into())
        }
        Some(PaymentMethod::GiftCard { amount, .. }) if *amount < total as f64 => {
            return Err("Gift card balance is not enough".into())
        }
        _ => {}
    }
    if matches!(
        u.payment_methods.get(payment_id),
        Some(PaymentMethod::GiftCard { .. })
    ) {
        let u = Arc::make_mut(db.users.get_mut(user_id).expect("checked"));
        if let Some(PaymentMethod::GiftCard { amount, .. }) = u.payment_methods.get_mut(payment_id)
        {
            *amount -= total as f64;
        }
    }
    Ok((total != 0).then(|| Payment {
        payment_id: payment_id.to_string(),
        amount: total,
    }))
}

pub(super) fn book_reservation(db: &mut AirlineDb, a: &Args) -> ToolResult {
    let flights = flight_infos(&a.obj_list("flights")?)?;
    let pax = passengers(&a.obj_list("passengers")?)?;
    let payments = payment_list(a)?;
    let user_id = a.str("user_id")?;
    let u = user(db, &user_id)?.clone();
    let reservation_id = ["HATHAT", "HATHAU", "HATHAV"]
        .into_iter()
        .find(|id| !db.reservations.contains_key(*id))
        .ok_or_else(|| ToolError::from("Too many reservations"))?
        .to_string();
    let flight_type = a.str("flight_type")?;
    let cabin = a.str("cabin")?;
    let insurance = a.str("insurance")?;
    literal(
        "Reservation",
        "flight_type",
        &flight_type,
        &["round_trip", "one_way"],
    )?;
    literal("Reservation", "cabin", &cabin, CABINS)?;
    literal("Reservation", "insurance", &insurance, &["yes", "no"])?;
    let total_baggages = a.int("total_baggages")?;
    let nonfree_baggages = a.int("nonfree_baggages")?;
    let n = pax.len() as i64;

    let (res_flights, mut total_price) = price_flights(db, &flights, &cabin, n)?;
    if insurance == "yes" {
        total_price += 30 * n;
    }
    total_price += 50 * nonfree_baggages;
    check_balances(&u, &payments)?;
    let paid: i64 = payments.iter().map(|p| p.amount).sum();
    if paid != total_price {
        return Err(terr!(
            "Payment amount does not add up, total price is {total_price}, but paid {paid}"
        ));
    }
    // All checks passed: debit, consume certificates, take seats, store.
    {
        let u = Arc::make_mut(db.users.get_mut(&user_id).expect("checked"));
        for p in &payments {
            match u.payment_methods.get_mut(&p.payment_id) {
                Some(PaymentMethod::GiftCard { amount, .. }) => *amount -= p.amount as f64,
                Some(PaymentMethod::Certificate { .. }) => {
                    u.payment_methods.shift_remove(&p.payment_id);
                }
                _ => {}
            }
        }
        u.reservations.push(reservation_id.clone());
    }
    for (number, date) in &flights {
        let f = Arc::make_mut(db.flights.get_mut(number).expect("checked"));
        if let Some(FlightDateStatus::Available {
            available_seats, ..
        }) = f.dates.get_mut(date)
        {
            if let Some(s) = available_seats.get_mut(&cabin) {
                *s -= n;
            }
        }
    }
    let r = Reservation {
        reservation_id: reservation_id.clone(),
        user_id: user_id.clone(),
        origin: a.str("origin")?,
        destination: a.str("destination")?,
        flight_type,
        cabin,
        flights: res_flights,
        passengers: pax,
        payment_history: payments,
        created_at: "2024-05-15T15:00:00".into(),
        total_baggages,
        nonfree_baggages,
        insurance,
        status: None,
    };
    let out = to_json(&r);
    db.reservations.insert(reservation_id, Arc::new(r));
    Ok(Out::Json(out))
}

/// The `payment_methods` argument, each checked as upstream's `Payment` model checks it.
fn payment_list(a: &Args) -> Result<Vec<Payment>, ToolError> {
    let mut payments = Vec::new();
    for m in a.obj_list("payment_methods")? {
        let payment_id = obj_str(m, "Payment", "payment_id")?;
        let amount = match m.get("amount") {
            None => return Err(field_error("Payment", "amount", "Field required")),
            Some(v) => value_int(v).ok_or_else(|| {
                field_error("Payment", "amount", "Input should be a valid integer")
            })?,
        };
        payments.push(Payment { payment_id, amount });
    }
    Ok(payments)
}

/// The reservation's flights in `cabin` for `n` passengers and their total price; each
/// flight must be bookable on its date with enough seats.
fn price_flights(
    db: &AirlineDb,
    flights: &[(String, String)],
    cabin: &str,
    n: i64,
) -> Result<(Vec<ReservationFlight>, i64), ToolError> {
    let mut res_flights = Vec::new();
    let mut total_price: i64 = 0;
    for (number, date) in flights {
        let f = db
            .flights
            .get(number)
            .ok_or_else(|| terr!("Flight {number} not found"))?;
        let inst = flight_instance(db, number, date)?;
        let FlightDateStatus::Available {
            available_seats,
            prices,
        } = inst
        else {
            return Err(terr!("Flight {number} not available on date {date}"));
        };
        if available_seats.get(cabin).copied().unwrap_or(0) < n {
            return Err(terr!("Not enough seats on flight {number}"));
        }
        let price = prices
            .get(cabin)
            .copied()
            .ok_or_else(|| terr!("'{cabin}'"))?;
        res_flights.push(ReservationFlight {
            flight_number: number.clone(),
            origin: f.origin.clone(),
            destination: f.destination.clone(),
            date: date.clone(),
            price,
        });
        total_price += price * n;
    }
    Ok((res_flights, total_price))
}

/// Every payment method must be the user's, and a gift card or certificate must cover its
/// amount.
fn check_balances(u: &User, payments: &[Payment]) -> Result<(), ToolError> {
    for p in payments {
        let Some(m) = u.payment_methods.get(&p.payment_id) else {
            return Err(terr!("Payment method {} not found", p.payment_id));
        };
        if let PaymentMethod::GiftCard { amount, .. } | PaymentMethod::Certificate { amount, .. } =
            m
        {
            if *amount < p.amount as f64 {
                return Err(terr!(
                    "Not enough balance in payment method {}",
                    p.payment_id
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn update_reservation_flights(db: &mut AirlineDb, a: &Args) -> ToolResult {
    let flights = flight_infos(&a.obj_list("flights")?)?;
    let id = a.str("reservation_id")?;
    let cabin = a.str("cabin")?;
    let payment_id = a.str("payment_id")?;
    let r = reservation(db, &id)?.clone();
    user(db, &r.user_id)?;
    let n = r.passengers.len() as i64;
    let mut total: i64 = 0;
    let mut new_flights = Vec::new();
    for (number, date) in &flights {
        let f = db
            .flights
            .get(number)
            .ok_or_else(|| terr!("Flight {number} not found"))?;
        if let Some(existing) = r
            .flights
            .iter()
            .find(|rf| rf.flight_number == *number && rf.date == *date && cabin == r.cabin)
        {
            total += existing.price * n;
            new_flights.push(existing.clone());
            continue;
        }
        let inst = flight_instance(db, number, date)?;
        let FlightDateStatus::Available {
            available_seats,
            prices,
        } = inst
        else {
            return Err(terr!("Flight {number} not available on date {date}"));
        };
        let seats = available_seats
            .get(&cabin)
            .copied()
            .ok_or_else(|| terr!("'{cabin}'"))?;
        if seats < n {
            return Err(terr!("Not enough seats on flight {number}"));
        }
        let price = prices
            .get(&cabin)
            .copied()
            .ok_or_else(|| terr!("'{cabin}'"))?;
        total += price * n;
        new_flights.push(ReservationFlight {
            flight_number: number.clone(),
            origin: f.origin.clone(),
            destination: f.destination.clone(),
            date: date.clone(),
            price,
        });
    }
    total -= r.flights.iter().map(|f| f.price).sum::<i64>() * n;
    let payment = payment_for_update(db, &r.user_id, &payment_id, total)?;
    let r = Arc::make_mut(db.reservations.get_mut(&id).expect("checked"));
    if let Some(p) = payment {
        r.payment_history.push(p);
    }
    r.flights = new_flights;
    r.cabin = cabin;
    Ok(Out::Json(to_json(&*r)))
}
