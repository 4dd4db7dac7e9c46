//! What `pickup run` and `pickup item` share: the server they send items to, as whom, and
//! how a new item is named.

use crate::producer::Client;
use app::contract::{NewItem, Status};
use clap::Args;

/// Where producers send items, and as whom.
#[derive(Args, Clone)]
pub struct ServerArgs {
    /// The Pickup server, e.g. https://pickup.example.com.
    #[arg(long = "server", env = "PICKUP_URL")]
    pub server: String,
    /// A token with write access to the workspace (`pickup token --write`).
    #[arg(long, env = "PICKUP_TOKEN", hide_env_values = true)]
    pub token: String,
}

impl ServerArgs {
    pub(super) fn client(&self) -> anyhow::Result<Client> {
        Ok(Client::new(&self.server, &self.token)?)
    }
}

/// A new item, as `pickup run` and `pickup item start` name it.
#[derive(Args)]
pub struct NewItemArgs {
    /// The workspace.
    #[arg(long)]
    pub ws: String,
    /// The item's key: runs of one key are one card.
    #[arg(long)]
    pub key: String,
    /// What the card says (at most 200 characters).
    #[arg(long)]
    pub title: String,
    /// One line under the title (at most 120 characters).
    #[arg(long)]
    pub detail: Option<String>,
    /// Where the card links to: http(s) or a path starting with '/'.
    #[arg(long)]
    pub url: Option<String>,
}

impl NewItemArgs {
    /// The workspace, and the item these name with `status` and `progress`.
    pub(super) fn item(self, status: Status, progress: Option<f64>) -> (String, NewItem) {
        let item = NewItem {
            key: self.key,
            title: self.title,
            detail: self.detail,
            url: self.url,
            status: Some(status),
            progress,
        };
        (self.ws, item)
    }
}
