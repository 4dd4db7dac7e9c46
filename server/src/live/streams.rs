//! The live streams open on this server, counted where the limits apply: on the server, in one
//! workspace, of one viewer.

use crate::error::Error;
use crate::index::{UserId, Workspace};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Live streams open at once: on the server, of one workspace, of one viewer. Each holds a
/// connection for as long as it lasts; the shares keep one workspace, or one member, from
/// holding everyone else out.
#[derive(Debug, Clone, Copy)]
pub struct StreamLimits {
    pub server: usize,
    pub workspace: usize,
    pub viewer: usize,
}

/// Open streams, counted where the limits apply.
#[derive(Debug, Default)]
pub(super) struct Streams {
    server: usize,
    workspace: HashMap<Workspace, usize>,
    viewer: HashMap<(Workspace, UserId), usize>,
}

impl Streams {
    /// A place for one more stream of `viewer` in `ws`, or why there is none.
    pub(super) fn open(
        streams: &Arc<Mutex<Streams>>,
        limits: StreamLimits,
        ws: &Workspace,
        viewer: &UserId,
    ) -> Result<StreamSlot, Error> {
        let mut open = streams.lock().expect("live lock");
        let in_ws = open.workspace.get(ws).copied().unwrap_or(0);
        let of_viewer = open
            .viewer
            .get(&(ws.clone(), viewer.clone()))
            .copied()
            .unwrap_or(0);
        if open.server >= limits.server {
            return Err(Error::TooManyStreams(open.server));
        }
        if in_ws >= limits.workspace || of_viewer >= limits.viewer {
            return Err(Error::TooManyStreamsHere {
                workspace: in_ws,
                viewer: of_viewer,
            });
        }
        open.server += 1;
        *open.workspace.entry(ws.clone()).or_default() += 1;
        *open.viewer.entry((ws.clone(), viewer.clone())).or_default() += 1;
        Ok(StreamSlot {
            streams: streams.clone(),
            ws: ws.clone(),
            viewer: viewer.clone(),
        })
    }

    fn release(&mut self, ws: &Workspace, viewer: &UserId) {
        self.server = self.server.saturating_sub(1);
        release(&mut self.workspace, ws);
        release(&mut self.viewer, &(ws.clone(), viewer.clone()));
    }
}

/// One open stream's place in [`Streams`], shared by its subscriptions and given back when the
/// last of them is dropped.
pub(super) struct StreamSlot {
    streams: Arc<Mutex<Streams>>,
    ws: Workspace,
    viewer: UserId,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.streams
            .lock()
            .expect("live lock")
            .release(&self.ws, &self.viewer);
    }
}

fn release<K: std::hash::Hash + Eq + Clone>(counts: &mut HashMap<K, usize>, key: &K) {
    if let Some(n) = counts.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            counts.remove(key);
        }
    }
}
