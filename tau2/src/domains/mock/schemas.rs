//! Function schemas of the mock domain's agent and user tools.

use crate::domains::schemas::{en, generic, s, tool};
use lrab_ollama::Tool;

/// The schema of one of its tools.
pub(crate) fn schema(name: &str) -> Option<Tool> {
    let v = match name {
        "create_task" => tool(
            "create_task",
            "Create a task for a user.",
            &[
                ("user_id", s("User id.")),
                ("title", s("Task title.")),
                ("description", s("Optional description.")),
            ],
            &["description"],
        ),
        "update_task_status" => tool(
            "update_task_status",
            "Set a task's status.",
            &[
                ("task_id", s("Task id.")),
                ("status", en("New status.", &["pending", "completed"])),
            ],
            &[],
        ),
        "get_users" => tool("get_users", "List all users.", &[], &[]),
        "check_notifications" => tool("check_notifications", "List your notifications.", &[], &[]),
        "dismiss_notification" => tool(
            "dismiss_notification",
            "Dismiss (mark as read) a notification.",
            &[("notification_id", s("Notification id."))],
            &[],
        ),
        _ => return generic(name),
    };
    Some(v)
}
