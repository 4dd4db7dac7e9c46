//! What a route needs of its caller ([`Grant`]), and the proof that it was checked
//! ([`Authorized`]).

use super::caller::{Access, Caller};
use crate::index::{UserId, Workspace};

/// What a route needs of its caller: [`Read`] or [`Write`] access to the workspace.
pub trait Grant: Send + Sync + 'static {
    const ACCESS: Access;
}

/// Read access: membership of the workspace.
pub struct Read;
/// Write access: membership and the `write` scope.
pub struct Write;

impl Grant for Read {
    const ACCESS: Access = Access::Read;
}
impl Grant for Write {
    const ACCESS: Access = Access::Write;
}

/// Proof that a token was verified and grants `A` on one workspace. Only
/// [`Auth::authorize`](super::Auth::authorize) makes one, so a service method that takes it
/// cannot be reached unchecked.
pub struct Authorized<A> {
    pub(super) caller: Caller,
    pub(super) ws: Workspace,
    pub(super) access: std::marker::PhantomData<A>,
}

impl<A> Clone for Authorized<A> {
    fn clone(&self) -> Self {
        Authorized {
            caller: self.caller.clone(),
            ws: self.ws.clone(),
            access: std::marker::PhantomData,
        }
    }
}

impl<A> Authorized<A> {
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    pub fn ws(&self) -> &Workspace {
        &self.ws
    }

    pub fn user(&self) -> &UserId {
        &self.caller.user
    }
}

impl From<Authorized<Write>> for Authorized<Read> {
    fn from(w: Authorized<Write>) -> Self {
        Authorized {
            caller: w.caller,
            ws: w.ws,
            access: std::marker::PhantomData,
        }
    }
}
