//! Mock domain (upstream's tiny test domain): a task list with users on the agent side and
//! a notification inbox on the user side. Our reference notes do not list its tools, so
//! their behaviour is inferred from the task files and checked against every mock hash
//! vector (see docs/tau2.md).

mod schemas;

use super::registry::{DomainDef, DomainState, ToolLists};
use super::{to_json, Invocation};
use crate::args::{terr, Out, ToolResult};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MockDb {
    pub tasks: IndexMap<String, MockTask>,
    pub users: IndexMap<String, MockUser>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MockTask {
    pub task_id: String,
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    pub status: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MockUser {
    pub user_id: String,
    pub name: String,
    pub tasks: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MockUserDb {
    pub notifications: IndexMap<String, Notification>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Notification {
    pub notification_id: String,
    pub message: String,
    pub status: String,
    #[serde(default)]
    pub task_id: Option<String>,
}

pub const WRITE_TOOLS: &[&str] = &["create_task", "update_task_status"];
pub const READ_TOOLS: &[&str] = &["get_users"];
pub const GENERIC_TOOLS: &[&str] = &["transfer_to_human_agents"];
pub const USER_WRITE_TOOLS: &[&str] = &["dismiss_notification"];
pub const USER_READ_TOOLS: &[&str] = &["check_notifications"];

const TOOLS: ToolLists = ToolLists::of(READ_TOOLS, WRITE_TOOLS, GENERIC_TOOLS);

/// The mock domain's row in the table: upstream's test domain, with user tools.
pub(crate) static DOMAIN: DomainDef =
    DomainDef::new("mock", TOOLS, MockState::load, schemas::schema)
        .with_user(ToolLists::of(USER_READ_TOOLS, USER_WRITE_TOOLS, &[]))
        .test_domain();

/// Both DBs of a mock environment. Like upstream, initialization data for the agent DB
/// leaves the user side sharing the agent DB (`aliased`) until user data is merged.
#[derive(Clone)]
struct MockState {
    db: MockDb,
    user: MockUserDb,
    aliased: bool,
}

impl MockState {
    fn load(dir: &std::path::Path) -> crate::error::Result<Box<dyn DomainState>> {
        Ok(Box::new(MockState {
            db: super::parse_json(&dir.join("db.json"))?,
            user: super::parse_json(&dir.join("user_db.json"))?,
            aliased: false,
        }))
    }
}

impl DomainState for MockState {
    fn fresh(&self) -> Box<dyn DomainState> {
        Box::new(self.clone())
    }
    fn call_agent(&mut self, name: &str, args: &Map<String, Value>) -> ToolResult {
        call(&mut self.db, name, args)
    }
    fn call_user(&mut self, name: &str, args: &Map<String, Value>) -> ToolResult {
        if self.aliased {
            return Err(terr!(
                "'MockDB' object has no attribute 'notifications' (calling {name})"
            ));
        }
        call_user(&mut self.user, name, args)
    }
    fn db_canonical(&self) -> String {
        crate::canon::canonical_text(&self.db)
    }
    fn user_db_canonical(&self) -> Option<String> {
        Some(if self.aliased {
            crate::canon::canonical_text(&self.db)
        } else {
            crate::canon::canonical_text(&self.user)
        })
    }
    fn merge_agent_data(&mut self, data: &Value) -> crate::error::Result<()> {
        self.db = super::merged(&self.db, data, "agent_data")?;
        self.aliased = true;
        Ok(())
    }
    fn merge_user_data(&mut self, data: &Value) -> Option<crate::error::Result<()>> {
        Some(super::merged(&self.user, data, "user_data").map(|u| {
            self.user = u;
            self.aliased = false;
        }))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

const CLASS: &str = "MockTools";
const USER_CLASS: &str = "MockUserTools";

/// Agent-side tools plus the non-tool functions tasks may call (`assert_task_status`).
pub fn call(db: &mut MockDb, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let call = Invocation::new(CLASS, name, kw);
    match name {
        "create_task" => {
            let a = call.args(&["user_id", "title"], &["description"])?;
            let uid = a.str("user_id")?;
            let title = a.str("title")?;
            let description = a.opt_str("description")?;
            if !db.users.contains_key(&uid) {
                return Err(terr!("User {uid} not found"));
            }
            let task_id = format!("task_{}", db.tasks.len() + 1);
            let t = MockTask {
                task_id: task_id.clone(),
                title,
                description,
                status: "pending".into(),
            };
            let out = to_json(&t);
            db.tasks.insert(task_id.clone(), t);
            db.users.get_mut(&uid).expect("checked").tasks.push(task_id);
            Ok(Out::Json(out))
        }
        "update_task_status" => {
            let a = call.args(&["task_id", "status"], &[])?;
            let id = a.str("task_id")?;
            let status = a.str("status")?;
            if status != "pending" && status != "completed" {
                return Err(terr!("Invalid status: {status}"));
            }
            let t = db
                .tasks
                .get_mut(&id)
                .ok_or_else(|| terr!("Task {id} not found"))?;
            t.status = status;
            Ok(Out::Json(to_json(&*t)))
        }
        "get_users" => {
            call.args(&[], &[])?;
            Ok(Out::Json(Value::Array(
                db.users.values().map(to_json).collect(),
            )))
        }
        "assert_task_status" => {
            let a = call.args(&["task_id", "expected_status"], &[])?;
            let id = a.str("task_id")?;
            let want = a.str("expected_status")?;
            let t = db
                .tasks
                .get(&id)
                .ok_or_else(|| terr!("Task {id} not found"))?;
            Ok(Out::Json(Value::Bool(t.status == want)))
        }
        _ => call.other(GENERIC_TOOLS),
    }
}

/// User-side tools plus `add_notification` / `assert_notification_status`.
pub fn call_user(db: &mut MockUserDb, name: &str, kw: &Map<String, Value>) -> ToolResult {
    let call = Invocation::new(USER_CLASS, name, kw);
    match name {
        "check_notifications" => {
            call.args(&[], &[])?;
            Ok(Out::Json(Value::Array(
                db.notifications.values().map(to_json).collect(),
            )))
        }
        "dismiss_notification" => {
            let a = call.args(&["notification_id"], &[])?;
            let id = a.str("notification_id")?;
            let n = db
                .notifications
                .get_mut(&id)
                .ok_or_else(|| terr!("Notification {id} not found"))?;
            n.status = "read".into();
            Ok(Out::Json(to_json(&*n)))
        }
        "add_notification" => {
            let a = call.args(&["notification_id", "message"], &["task_id"])?;
            let id = a.str("notification_id")?;
            let n = Notification {
                notification_id: id.clone(),
                message: a.str("message")?,
                status: "unread".into(),
                task_id: a.opt_str("task_id")?,
            };
            let out = to_json(&n);
            db.notifications.insert(id, n);
            Ok(Out::Json(out))
        }
        "assert_notification_status" => {
            let a = call.args(&["notification_id", "expected_status"], &[])?;
            let id = a.str("notification_id")?;
            let want = a.str("expected_status")?;
            let n = db
                .notifications
                .get(&id)
                .ok_or_else(|| terr!("Notification {id} not found"))?;
            Ok(Out::Json(Value::Bool(n.status == want)))
        }
        _ => call.other(&[]),
    }
}
