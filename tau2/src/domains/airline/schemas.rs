//! Function schemas of the airline tools (descriptions in our own words; parameter names,
//! types and enums follow upstream's signatures).

use crate::domains::schemas::{en, generic, int, objs, s, tool};
use lrab_ollama::Tool;
use serde_json::json;

const CABIN: &[&str] = &["basic_economy", "economy", "business"];

/// The schema of one of its tools.
pub(crate) fn schema(name: &str) -> Option<Tool> {
    let v = match name {
        "book_reservation" => tool("book_reservation", "Book a new reservation for a user.", &[
            ("user_id", s("User id, e.g. 'sara_doe_496'.")),
            ("origin", s("IATA code of the trip origin, e.g. 'SFO'.")),
            ("destination", s("IATA code of the trip destination, e.g. 'JFK'.")),
            ("flight_type", en("Trip type.", &["round_trip", "one_way"])),
            ("cabin", en("Cabin class.", CABIN)),
            ("flights", objs("Every flight segment of the trip.", json!({"flight_number": s("Flight number, e.g. 'HAT001'."), "date": s("Date as 'YYYY-MM-DD'.")}), &["flight_number", "date"])),
            ("passengers", objs("Every passenger.", json!({"first_name": s("First name."), "last_name": s("Last name."), "dob": s("Date of birth as 'YYYY-MM-DD'.")}), &["first_name", "last_name", "dob"])),
            ("payment_methods", objs("Payments covering the total price.", json!({"payment_id": s("Payment method id from the user profile."), "amount": int("Amount charged to this method.")}), &["payment_id", "amount"])),
            ("total_baggages", int("Total number of bags.")),
            ("nonfree_baggages", int("Number of paid bags.")),
            ("insurance", en("Whether travel insurance is bought.", &["yes", "no"])),
        ], &[]),
        "cancel_reservation" => tool("cancel_reservation", "Cancel a whole reservation.", &[("reservation_id", s("Reservation id, e.g. 'ZFA04Y'."))], &[]),
        "get_reservation_details" => tool("get_reservation_details", "Look up a reservation.", &[("reservation_id", s("Reservation id, e.g. '8JX2WO'."))], &[]),
        "get_user_details" => tool("get_user_details", "Look up a user profile, including payment methods and reservations.", &[("user_id", s("User id, e.g. 'sara_doe_496'."))], &[]),
        "get_flight_status" => tool("get_flight_status", "Status of a flight on a date.", &[("flight_number", s("Flight number.")), ("date", s("Date as 'YYYY-MM-DD'."))], &[]),
        "list_all_airports" => tool("list_all_airports", "List the airports served, with their cities.", &[], &[]),
        "search_direct_flight" => tool("search_direct_flight", "Find bookable direct flights between two airports on a date.", &[("origin", s("Origin IATA code, e.g. 'JFK'.")), ("destination", s("Destination IATA code, e.g. 'LAX'.")), ("date", s("Date as 'YYYY-MM-DD'."))], &[]),
        "search_onestop_flight" => tool("search_onestop_flight", "Find bookable one-stop connections between two airports on a date; returns pairs of flights.", &[("origin", s("Origin IATA code, e.g. 'JFK'.")), ("destination", s("Destination IATA code, e.g. 'LAX'.")), ("date", s("Date as 'YYYY-MM-DD'."))], &[]),
        "send_certificate" => tool("send_certificate", "Issue a travel certificate of the given amount to a user. Use with care.", &[("user_id", s("User id.")), ("amount", int("Certificate amount."))], &[]),
        "update_reservation_baggages" => tool("update_reservation_baggages", "Change the bag counts of a reservation, paying for extra paid bags.", &[("reservation_id", s("Reservation id.")), ("total_baggages", int("New total number of bags.")), ("nonfree_baggages", int("New number of paid bags.")), ("payment_id", s("Payment method id from the user profile."))], &[]),
        "update_reservation_flights" => tool("update_reservation_flights", "Replace the flights (and cabin) of a reservation. List the ENTIRE new itinerary, unchanged segments included.", &[
            ("reservation_id", s("Reservation id.")),
            ("cabin", en("Cabin class.", CABIN)),
            ("flights", objs("Every flight segment of the new itinerary.", json!({"flight_number": s("Flight number."), "date": s("Date as 'YYYY-MM-DD'.")}), &["flight_number", "date"])),
            ("payment_id", s("Payment method id from the user profile, for the price difference.")),
        ], &[]),
        "update_reservation_passengers" => tool("update_reservation_passengers", "Replace the passenger details of a reservation (same number of passengers).", &[
            ("reservation_id", s("Reservation id.")),
            ("passengers", objs("Every passenger.", json!({"first_name": s("First name."), "last_name": s("Last name."), "dob": s("Date of birth as 'YYYY-MM-DD'.")}), &["first_name", "last_name", "dob"])),
        ], &[]),
        _ => return generic(name),
    };
    Some(v)
}
