//! Function schemas of the telecom tools (descriptions in our own words; names, parameters
//! and types follow upstream's signatures).

use crate::domains::schemas::{en, int, s, tool};
use lrab_ollama::Tool;
use serde_json::json;

fn none(name: &str, desc: &str) -> Tool {
    tool(name, desc, &[], &[])
}

/// The schema of a telecom agent or user tool.
pub(crate) fn schema(name: &str) -> Option<Tool> {
    let cust = || ("customer_id", s("Customer id, e.g. 'C1001'."));
    let line = || ("line_id", s("Line id, e.g. 'L1001'."));
    let app = || {
        (
            "app_name",
            s("App name as listed by check_installed_apps, e.g. 'messaging'."),
        )
    };
    let v = match name {
        // agent
        "get_customer_by_phone" => tool(name, "Find the customer whose contact number or one of whose lines has this phone number.", &[("phone_number", s("Phone number, e.g. '555-123-2002'."))], &[]),
        "get_customer_by_id" => tool(name, "Look up a customer by id.", &[cust()], &[]),
        "get_customer_by_name" => tool(name, "Find customers by full name and date of birth (both must match).", &[("full_name", s("Full name.")), ("dob", s("Date of birth as YYYY-MM-DD."))], &[]),
        "get_details_by_id" => tool(name, "Details of a line (L...), device (D...), bill (B...), customer (C...) or plan (P...) by id.", &[("id", s("The id."))], &[]),
        "suspend_line" => tool(name, "Suspend an active line (at most 6 months; a monthly holding fee applies).", &[cust(), line(), ("reason", s("Why the line is suspended."))], &[]),
        "resume_line" => tool(name, "Reactivate a suspended or pending line.", &[cust(), line()], &[]),
        "get_bills_for_customer" => tool(name, "A customer's bills, newest first.", &[cust(), ("limit", int("At most this many bills (default 12)."))], &["limit"]),
        "send_payment_request" => tool(name, "Ask the customer to pay a bill (only one request may be pending; check the bill is unpaid first).", &[cust(), ("bill_id", s("Bill id."))], &[]),
        "get_data_usage" => tool(name, "Data used, plan allowance and refuelled data of a line in the current cycle.", &[cust(), line()], &[]),
        "enable_roaming" => tool(name, "Allow international roaming on a line.", &[cust(), line()], &[]),
        "disable_roaming" => tool(name, "Stop international roaming on a line.", &[cust(), line()], &[]),
        "refuel_data" => tool(name, "Add extra data to a line; the plan's per-GB price is charged to the customer's next bill.", &[cust(), line(), ("gb_amount", json!({"type": "number", "description": "Gigabytes to add."}))], &[]),
        "transfer_to_human_agents" => tool(name, "Hand the conversation to a human agent with a summary. Only when the user asks for one, or the policy and tools cannot solve the issue.", &[("summary", s("Summary of the user's issue."))], &[]),
        // user (the phone)
        "check_status_bar" => none(name, "Read the icons in the phone's status bar: signal, network type, mobile data, Wi-Fi, VPN and battery."),
        "check_network_status" => none(name, "Show the phone's connection details: airplane mode, SIM, cellular signal and type, mobile data, data roaming and Wi-Fi."),
        "check_network_mode_preference" => none(name, "Show which cellular network type the phone prefers."),
        "set_network_mode_preference" => tool(name, "Choose which cellular network type the phone prefers.", &[("mode", en("Preferred network mode.", &["4g_5g_preferred", "4g_only", "3g_only", "2g_only"]))], &[]),
        "run_speed_test" => none(name, "Measure the current mobile internet download speed."),
        "toggle_airplane_mode" => none(name, "Switch airplane mode on or off (on cuts every radio: cellular, Wi-Fi, Bluetooth)."),
        "check_sim_status" => none(name, "Show whether the SIM card works, is missing, or is locked by a PIN or PUK."),
        "reseat_sim_card" => none(name, "Take the SIM card out and put it back in."),
        "toggle_data" => none(name, "Switch mobile (cellular) data on or off."),
        "toggle_roaming" => none(name, "Switch data roaming on or off (needed for mobile data abroad)."),
        "check_data_restriction_status" => none(name, "Show whether Data Saver mode is on."),
        "toggle_data_saver_mode" => none(name, "Switch Data Saver mode on or off (it limits data use and speed)."),
        "check_apn_settings" => none(name, "Show the APN name and the MMSC URL the phone uses for mobile data and picture messages."),
        "set_apn_settings" => tool(name, "Replace the phone's APN settings.", &[("apn_settings", json!({"type": "object", "description": "The new APN settings.", "properties": {
            "apn_name": {"type": "string", "enum": ["internet", "broken"], "description": "APN name."},
            "reset_at_reboot": {"type": "boolean", "description": "Reset to defaults at the next reboot."},
            "mms_apn": {"type": "string", "description": "APN used for MMS."},
            "mmsc_url": {"type": "string", "description": "MMS centre URL."},
            "mms_proxy": {"type": "string", "description": "MMS proxy address."},
            "mms_port": {"type": "integer", "description": "MMS proxy port."}}}))], &[]),
        "reset_apn_settings" => none(name, "Restore the default APN settings (takes effect at the next reboot)."),
        "check_wifi_status" => none(name, "Show whether Wi-Fi is on, which network it is connected to and its signal."),
        "toggle_wifi" => none(name, "Switch the Wi-Fi radio on or off."),
        "check_wifi_calling_status" => none(name, "Show whether Wi-Fi Calling is on."),
        "toggle_wifi_calling" => none(name, "Switch Wi-Fi Calling on or off."),
        "check_vpn_status" => none(name, "Show whether a VPN is configured or connected, with its details."),
        "connect_vpn" => none(name, "Connect the VPN."),
        "disconnect_vpn" => none(name, "Disconnect the active VPN."),
        "check_installed_apps" => none(name, "List the apps installed on the phone."),
        "check_app_status" => tool(name, "Show an app's details and permissions.", &[app()], &[]),
        "check_app_permissions" => tool(name, "List the permissions an app has.", &[app()], &[]),
        "grant_app_permission" => tool(name, "Give an app a permission.", &[app(), ("permission", s("Permission in lowercase: sms, storage, phone or network."))], &[]),
        "can_send_mms" => none(name, "Check whether the messaging app can send picture (MMS) messages."),
        "reboot_device" => none(name, "Restart the phone."),
        "check_payment_request" => none(name, "Check whether the carrier has sent you a payment request."),
        "make_payment" => none(name, "Pay the bill of the payment request the carrier sent you."),
        _ => return None,
    };
    Some(v)
}
