//! OpenAI-style function schemas for the tools (descriptions written in our own words;
//! parameter names, types and enums follow upstream's signatures).

use super::DomainKind;
use serde_json::{json, Value};

pub(crate) fn s(d: &str) -> Value {
    json!({"type": "string", "description": d})
}
pub(crate) fn int(d: &str) -> Value {
    json!({"type": "integer", "description": d})
}
pub(crate) fn en(d: &str, vals: &[&str]) -> Value {
    json!({"type": "string", "enum": vals, "description": d})
}
fn strs(d: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": d})
}
fn objs(d: &str, props: Value, req: &[&str]) -> Value {
    json!({"type": "array", "description": d, "items": {"type": "object", "properties": props, "required": req}})
}

pub(crate) fn tool(name: &str, desc: &str, params: &[(&str, Value)], optional: &[&str]) -> Value {
    let mut props = serde_json::Map::new();
    let mut req = Vec::new();
    for (n, v) in params {
        props.insert(n.to_string(), v.clone());
        if !optional.contains(n) {
            req.push(n.to_string());
        }
    }
    json!({"type": "function", "function": {"name": name, "description": desc,
        "parameters": {"type": "object", "properties": props, "required": req}}})
}

const CABIN: &[&str] = &["basic_economy", "economy", "business"];

fn address_params(first: (&'static str, Value)) -> Vec<(&'static str, Value)> {
    vec![
        first,
        ("address1", s("First address line, e.g. '123 Main St'.")),
        (
            "address2",
            s("Second address line, e.g. 'Apt 1', or an empty string."),
        ),
        ("city", s("City, e.g. 'San Francisco'.")),
        ("state", s("State, e.g. 'CA'.")),
        ("country", s("Country, e.g. 'USA'.")),
        ("zip", s("Zip code, e.g. '12345'.")),
    ]
}

pub fn schema(kind: DomainKind, name: &str) -> Option<Value> {
    let calc = || {
        tool("calculate", "Evaluate an arithmetic expression made of numbers, + - * /, parentheses and spaces; returns the result rounded to 2 decimals.", &[("expression", s("The expression, e.g. '2 + 2'."))], &[])
    };
    let transfer = || {
        tool("transfer_to_human_agents", "Hand the conversation to a human agent with a summary. Only when the user explicitly asks for a human, or the policy and tools cannot resolve the request.", &[("summary", s("Summary of the user's issue."))], &[])
    };
    let order_id = || s("Order id including the leading '#', e.g. '#W0000000'.");
    let v = match (kind, name) {
        (_, "calculate") if kind != DomainKind::Mock => calc(),
        (_, "transfer_to_human_agents") => transfer(),
        (DomainKind::Airline, "book_reservation") => tool("book_reservation", "Book a new reservation for a user.", &[
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
        (DomainKind::Airline, "cancel_reservation") => tool("cancel_reservation", "Cancel a whole reservation.", &[("reservation_id", s("Reservation id, e.g. 'ZFA04Y'."))], &[]),
        (DomainKind::Airline, "get_reservation_details") => tool("get_reservation_details", "Look up a reservation.", &[("reservation_id", s("Reservation id, e.g. '8JX2WO'."))], &[]),
        (DomainKind::Airline, "get_user_details") => tool("get_user_details", "Look up a user profile, including payment methods and reservations.", &[("user_id", s("User id, e.g. 'sara_doe_496'."))], &[]),
        (DomainKind::Airline, "get_flight_status") => tool("get_flight_status", "Status of a flight on a date.", &[("flight_number", s("Flight number.")), ("date", s("Date as 'YYYY-MM-DD'."))], &[]),
        (DomainKind::Airline, "list_all_airports") => tool("list_all_airports", "List the airports served, with their cities.", &[], &[]),
        (DomainKind::Airline, "search_direct_flight") => tool("search_direct_flight", "Find bookable direct flights between two airports on a date.", &[("origin", s("Origin IATA code, e.g. 'JFK'.")), ("destination", s("Destination IATA code, e.g. 'LAX'.")), ("date", s("Date as 'YYYY-MM-DD'."))], &[]),
        (DomainKind::Airline, "search_onestop_flight") => tool("search_onestop_flight", "Find bookable one-stop connections between two airports on a date; returns pairs of flights.", &[("origin", s("Origin IATA code, e.g. 'JFK'.")), ("destination", s("Destination IATA code, e.g. 'LAX'.")), ("date", s("Date as 'YYYY-MM-DD'."))], &[]),
        (DomainKind::Airline, "send_certificate") => tool("send_certificate", "Issue a travel certificate of the given amount to a user. Use with care.", &[("user_id", s("User id.")), ("amount", int("Certificate amount."))], &[]),
        (DomainKind::Airline, "update_reservation_baggages") => tool("update_reservation_baggages", "Change the bag counts of a reservation, paying for extra paid bags.", &[("reservation_id", s("Reservation id.")), ("total_baggages", int("New total number of bags.")), ("nonfree_baggages", int("New number of paid bags.")), ("payment_id", s("Payment method id from the user profile."))], &[]),
        (DomainKind::Airline, "update_reservation_flights") => tool("update_reservation_flights", "Replace the flights (and cabin) of a reservation. List the ENTIRE new itinerary, unchanged segments included.", &[
            ("reservation_id", s("Reservation id.")),
            ("cabin", en("Cabin class.", CABIN)),
            ("flights", objs("Every flight segment of the new itinerary.", json!({"flight_number": s("Flight number."), "date": s("Date as 'YYYY-MM-DD'.")}), &["flight_number", "date"])),
            ("payment_id", s("Payment method id from the user profile, for the price difference.")),
        ], &[]),
        (DomainKind::Airline, "update_reservation_passengers") => tool("update_reservation_passengers", "Replace the passenger details of a reservation (same number of passengers).", &[
            ("reservation_id", s("Reservation id.")),
            ("passengers", objs("Every passenger.", json!({"first_name": s("First name."), "last_name": s("Last name."), "dob": s("Date of birth as 'YYYY-MM-DD'.")}), &["first_name", "last_name", "dob"])),
        ], &[]),
        (DomainKind::Retail, "cancel_pending_order") => tool("cancel_pending_order", "Cancel a pending order after explicit user confirmation; payments are refunded (gift cards immediately).", &[("order_id", order_id()), ("reason", en("Cancellation reason.", &["no longer needed", "ordered by mistake"]))], &[]),
        (DomainKind::Retail, "exchange_delivered_order_items") => tool("exchange_delivered_order_items", "Request an exchange of delivered items for other variants of the same products (once per order, after confirmation).", &[("order_id", order_id()), ("item_ids", strs("Item ids to exchange; duplicates allowed.")), ("new_item_ids", strs("Replacement item ids, position by position.")), ("payment_method_id", s("Payment method for the price difference."))], &[]),
        (DomainKind::Retail, "find_user_id_by_email") => tool("find_user_id_by_email", "Find a user id by email.", &[("email", s("Email address."))], &[]),
        (DomainKind::Retail, "find_user_id_by_name_zip") => tool("find_user_id_by_name_zip", "Find a user id by first name, last name and zip code (use when email is unavailable).", &[("first_name", s("First name.")), ("last_name", s("Last name.")), ("zip", s("Zip code."))], &[]),
        (DomainKind::Retail, "get_item_details") => tool("get_item_details", "Details of one item (product variant).", &[("item_id", s("Item id."))], &[]),
        (DomainKind::Retail, "get_order_details") => tool("get_order_details", "Status and details of an order.", &[("order_id", order_id())], &[]),
        (DomainKind::Retail, "get_product_details") => tool("get_product_details", "Inventory details of a product and its variants.", &[("product_id", s("Product id (not an item id)."))], &[]),
        (DomainKind::Retail, "get_user_details") => tool("get_user_details", "Details of a user, including orders and payment methods.", &[("user_id", s("User id."))], &[]),
        (DomainKind::Retail, "list_all_product_types") => tool("list_all_product_types", "Names and product ids of all product types.", &[], &[]),
        (DomainKind::Retail, "modify_pending_order_address") => tool("modify_pending_order_address", "Change the shipping address of a pending order (after confirmation).", &address_params(("order_id", order_id())), &[]),
        (DomainKind::Retail, "modify_pending_order_items") => tool("modify_pending_order_items", "Swap items of a pending order for other variants of the same products (once per order, after confirmation).", &[("order_id", order_id()), ("item_ids", strs("Item ids to modify; duplicates allowed.")), ("new_item_ids", strs("Replacement item ids, position by position.")), ("payment_method_id", s("Payment method for the price difference."))], &[]),
        (DomainKind::Retail, "modify_pending_order_payment") => tool("modify_pending_order_payment", "Change the payment method of a pending order (after confirmation).", &[("order_id", order_id()), ("payment_method_id", s("New payment method id."))], &[]),
        (DomainKind::Retail, "modify_user_address") => tool("modify_user_address", "Change a user's default address (after confirmation).", &address_params(("user_id", s("User id."))), &[]),
        (DomainKind::Retail, "return_delivered_order_items") => tool("return_delivered_order_items", "Request a return of delivered items (after confirmation); refund to the original method or a gift card.", &[("order_id", order_id()), ("item_ids", strs("Item ids to return; duplicates allowed.")), ("payment_method_id", s("Refund payment method."))], &[]),
        (DomainKind::Mock, "create_task") => tool("create_task", "Create a task for a user.", &[("user_id", s("User id.")), ("title", s("Task title.")), ("description", s("Optional description."))], &["description"]),
        (DomainKind::Mock, "update_task_status") => tool("update_task_status", "Set a task's status.", &[("task_id", s("Task id.")), ("status", en("New status.", &["pending", "completed"]))], &[]),
        (DomainKind::Mock, "get_users") => tool("get_users", "List all users.", &[], &[]),
        (DomainKind::Mock, "check_notifications") => tool("check_notifications", "List your notifications.", &[], &[]),
        (DomainKind::Mock, "dismiss_notification") => tool("dismiss_notification", "Dismiss (mark as read) a notification.", &[("notification_id", s("Notification id."))], &[]),
        _ => return None,
    };
    Some(v)
}
