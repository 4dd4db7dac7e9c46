//! Who a verified token says the caller is, and what it may do in which workspace.

use crate::error::{Error, Result};
use crate::index::{Producer, UserId, Workspace};

/// A verified caller.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: UserId,
    pub name: String,
    /// When the token stops being valid (its `exp`, seconds since the epoch): a live stream
    /// opened with it ends then.
    pub expires_at: u64,
    pub(super) workspaces: Vec<String>,
    pub(super) can_write: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl Caller {
    /// Membership of `ws` with the access asked for. The answer is the same 403 whether or not
    /// the workspace exists, so a non-member learns nothing.
    pub fn check(&self, ws: &Workspace, access: Access) -> Result<()> {
        if !self.workspaces.iter().any(|w| w == ws.as_str()) {
            return Err(Error::Forbidden("access"));
        }
        if access == Access::Write && !self.can_write {
            return Err(Error::Forbidden("write access (scope \"read write\")"));
        }
        Ok(())
    }

    /// The caller as the producer of the items it registers.
    pub fn producer(&self) -> Producer {
        Producer {
            user: self.user.clone(),
            name: self.name.clone(),
        }
    }
}
