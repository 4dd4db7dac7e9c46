//! `pickup item`: one item registered, changed, read or removed, for scripts.

use super::producer::{NewItemArgs, ServerArgs};
use crate::producer::item::Changes;
use crate::producer::Console;
use app::contract::Status;
use clap::{Args, Subcommand};

#[derive(Args)]
pub struct ItemArgs {
    #[command(subcommand)]
    pub command: ItemCommand,
}

#[derive(Subcommand)]
pub enum ItemCommand {
    /// Register an item; prints its id.
    Start(ItemStartArgs),
    /// Change an item (only what is given); prints its record as JSON.
    Update(ItemUpdateArgs),
    /// Give an item its final status; prints its record as JSON.
    Finish(ItemFinishArgs),
    /// Print an item's record as JSON.
    Get(ItemIdArgs),
    /// Remove an item.
    Rm(ItemIdArgs),
}

#[derive(Args)]
pub struct ItemIdArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// The workspace.
    #[arg(long)]
    pub ws: String,
    /// The id `pickup item start` printed.
    pub id: String,
}

#[derive(Args)]
pub struct ItemStartArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub item: NewItemArgs,
    /// queued, running, succeeded, failed or cancelled.
    #[arg(long, default_value = "running", value_parser = status)]
    pub status: Status,
    /// A number from 0 to 1.
    #[arg(long)]
    pub progress: Option<f64>,
}

#[derive(Args)]
pub struct ItemUpdateArgs {
    #[command(flatten)]
    pub id: ItemIdArgs,
    /// queued, running, succeeded, failed or cancelled.
    #[arg(long, value_parser = status)]
    pub status: Option<Status>,
    #[command(flatten)]
    pub changes: Changes,
}

#[derive(Args)]
pub struct ItemFinishArgs {
    #[command(flatten)]
    pub id: ItemIdArgs,
    /// succeeded, failed or cancelled.
    #[arg(long, default_value = "succeeded", value_parser = finished_status)]
    pub status: Status,
    #[command(flatten)]
    pub changes: Changes,
}

fn status(s: &str) -> Result<Status, String> {
    Status::ALL
        .into_iter()
        .find(|st| st.as_str() == s)
        .ok_or_else(|| "one of queued, running, succeeded, failed, cancelled".to_string())
}

fn finished_status(s: &str) -> Result<Status, String> {
    status(s)
        .ok()
        .filter(|st| st.is_finished())
        .ok_or_else(|| "one of succeeded, failed, cancelled".to_string())
}

pub(super) async fn item(command: ItemCommand, console: &Console) -> anyhow::Result<()> {
    use crate::producer::item;
    let print = |record: app::contract::ItemRecord| -> anyhow::Result<()> {
        console.print(format_args!("{}", serde_json::to_string(&record)?));
        Ok(())
    };
    match command {
        ItemCommand::Start(a) => {
            let (ws, new) = a.item.item(a.status, a.progress);
            let id = item::start(&a.server.client()?, &ws, &new).await?;
            console.print(format_args!("{id}"));
            Ok(())
        }
        ItemCommand::Update(a) => {
            let c = a.id.server.client()?;
            print(item::update(&c, &a.id.ws, &a.id.id, a.status, a.changes).await?)
        }
        ItemCommand::Finish(a) => {
            let c = a.id.server.client()?;
            let status = Some(a.status);
            print(item::update(&c, &a.id.ws, &a.id.id, status, a.changes).await?)
        }
        ItemCommand::Get(a) => print(item::get(&a.server.client()?, &a.ws, &a.id).await?),
        ItemCommand::Rm(a) => item::remove(&a.server.client()?, &a.ws, &a.id).await,
    }
}
