//! Function schemas of the retail tools (descriptions in our own words; parameter names,
//! types and enums follow upstream's signatures).

use crate::domains::schemas::{en, generic, s, strs, tool};
use lrab_ollama::Tool;
use serde_json::Value;

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

/// The schema of one of its tools.
pub(crate) fn schema(name: &str) -> Option<Tool> {
    let order_id = || s("Order id including the leading '#', e.g. '#W0000000'.");
    let v = match name {
        "cancel_pending_order" => tool("cancel_pending_order", "Cancel a pending order after explicit user confirmation; payments are refunded (gift cards immediately).", &[("order_id", order_id()), ("reason", en("Cancellation reason.", &["no longer needed", "ordered by mistake"]))], &[]),
        "exchange_delivered_order_items" => tool("exchange_delivered_order_items", "Request an exchange of delivered items for other variants of the same products (once per order, after confirmation).", &[("order_id", order_id()), ("item_ids", strs("Item ids to exchange; duplicates allowed.")), ("new_item_ids", strs("Replacement item ids, position by position.")), ("payment_method_id", s("Payment method for the price difference."))], &[]),
        "find_user_id_by_email" => tool("find_user_id_by_email", "Find a user id by email.", &[("email", s("Email address."))], &[]),
        "find_user_id_by_name_zip" => tool("find_user_id_by_name_zip", "Find a user id by first name, last name and zip code (use when email is unavailable).", &[("first_name", s("First name.")), ("last_name", s("Last name.")), ("zip", s("Zip code."))], &[]),
        "get_item_details" => tool("get_item_details", "Details of one item (product variant).", &[("item_id", s("Item id."))], &[]),
        "get_order_details" => tool("get_order_details", "Status and details of an order.", &[("order_id", order_id())], &[]),
        "get_product_details" => tool("get_product_details", "Inventory details of a product and its variants.", &[("product_id", s("Product id (not an item id)."))], &[]),
        "get_user_details" => tool("get_user_details", "Details of a user, including orders and payment methods.", &[("user_id", s("User id."))], &[]),
        "list_all_product_types" => tool("list_all_product_types", "Names and product ids of all product types.", &[], &[]),
        "modify_pending_order_address" => tool("modify_pending_order_address", "Change the shipping address of a pending order (after confirmation).", &address_params(("order_id", order_id())), &[]),
        "modify_pending_order_items" => tool("modify_pending_order_items", "Swap items of a pending order for other variants of the same products (once per order, after confirmation).", &[("order_id", order_id()), ("item_ids", strs("Item ids to modify; duplicates allowed.")), ("new_item_ids", strs("Replacement item ids, position by position.")), ("payment_method_id", s("Payment method for the price difference."))], &[]),
        "modify_pending_order_payment" => tool("modify_pending_order_payment", "Change the payment method of a pending order (after confirmation).", &[("order_id", order_id()), ("payment_method_id", s("New payment method id."))], &[]),
        "modify_user_address" => tool("modify_user_address", "Change a user's default address (after confirmation).", &address_params(("user_id", s("User id."))), &[]),
        "return_delivered_order_items" => tool("return_delivered_order_items", "Request a return of delivered items (after confirmation); refund to the original method or a gift card.", &[("order_id", order_id()), ("item_ids", strs("Item ids to return; duplicates allowed.")), ("payment_method_id", s("Refund payment method."))], &[]),
        _ => return generic(name),
    };
    Some(v)
}
