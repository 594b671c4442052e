pub mod permission_confirmation;
pub mod permission_judge;
pub mod permission_store;

pub use permission_confirmation::{Permission, PermissionConfirmation};
pub use permission_judge::detect_read_only_tools;
pub use permission_store::ToolPermissionStore;
