//! The design Pickup replaces, kept only as a test comparator: one shared JSON list per
//! workspace that producers append to and readers prune by read-modify-write.

use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use std::sync::Arc;

pub struct NaiveList {
    pub store: Arc<dyn ObjectStore>,
    pub path: Path,
}

impl NaiveList {
    pub fn new(store: Arc<dyn ObjectStore>) -> Self {
        NaiveList {
            store,
            path: Path::from("naive/acme.json"),
        }
    }

    pub async fn read(&self) -> Vec<String> {
        match self.store.get(&self.path).await {
            Ok(got) => serde_json::from_slice(&got.bytes().await.unwrap()).unwrap_or_default(),
            Err(object_store::Error::NotFound { .. }) => Vec::new(),
            Err(e) => panic!("naive read: {e}"),
        }
    }

    pub async fn write(&self, ids: &[String]) {
        let body = serde_json::to_vec(ids).unwrap();
        self.store
            .put(&self.path, PutPayload::from(body))
            .await
            .unwrap();
    }

    /// Producer: read, prepend, write back.
    pub async fn register(&self, id: String) {
        let mut ids = self.read().await;
        ids.insert(0, id);
        self.write(&ids).await;
    }

    /// Reader: read, drop the dead, write back.
    pub async fn prune(&self, is_dead: impl Fn(&str) -> bool) {
        let ids: Vec<String> = self
            .read()
            .await
            .into_iter()
            .filter(|i| !is_dead(i))
            .collect();
        self.write(&ids).await;
    }
}
