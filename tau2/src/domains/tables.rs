//! The shape shared by the airline and retail DBs: a struct of `Table<_>` fields, a base
//! cache with one `TableCache` per field plus the hash resume points, and the hash over
//! all fields. One macro declares all of it from a single field list, so a table can never
//! be in the DB but missing from its hash or cache.

/// Declare `pub struct $db { $field: Table<$row>, … }` (serde, field names = JSON keys),
/// its `pub struct $cache`, `impl $db { build_cache, hash }` and the [`TableDb`] the
/// environment uses, whose tools are the function `$call`.
///
/// The hash names each table by its field name, which is also the key serde reads and
/// writes, so the hashed document is the DB's JSON as upstream dumps it.
macro_rules! table_db {
    (
        $(#[$db_meta:meta])*
        pub struct $db:ident;
        $(#[$cache_meta:meta])*
        pub struct $cache:ident;
        tables { $($field:ident: $row:ty),+ $(,)? }
        tools $call:path;
    ) => {
        $(#[$db_meta])*
        #[derive(Debug, Clone, ::serde::Serialize, ::serde::Deserialize)]
        pub struct $db {
            $(pub $field: $crate::canon::Table<$row>,)+
        }

        $(#[$cache_meta])*
        pub struct $cache {
            $(pub $field: $crate::canon::TableCache<$row>,)+
            pub hash: Option<$crate::canon::HashCache>,
        }

        impl $db {
            /// Canonical bytes of every record and the hash resume points of this DB.
            pub fn build_cache(&self) -> $cache {
                let mut c = $cache {
                    $($field: $crate::canon::TableCache::build(&self.$field),)+
                    hash: None,
                };
                c.hash = Some(self.with_views(Some(&c), $crate::canon::build_hash_cache));
                c
            }

            /// Hand every table, with its base cache when given, to `f` as the hasher's views.
            fn with_views<R>(
                &self,
                cache: Option<&$cache>,
                f: impl FnOnce(&mut [(&str, &dyn $crate::canon::TableView)]) -> R,
            ) -> R {
                $(
                    let $field = $crate::canon::View {
                        table: &self.$field,
                        cache: cache.map(|c| &c.$field),
                    };
                )+
                f(&mut [$((
                    stringify!($field),
                    &$field as &dyn $crate::canon::TableView,
                )),+])
            }

            /// Upstream's `get_db_hash`, resuming from the base cache when given.
            pub fn hash(&self, cache: Option<&$cache>) -> String {
                let hc = cache.and_then(|c| c.hash.as_ref());
                self.with_views(cache, |t| $crate::canon::hash_tables(t, hc))
            }
        }

        impl $crate::domains::tables::TableDb for $db {
            type Cache = $cache;
            fn cache(&self) -> $cache {
                self.build_cache()
            }
            fn hash_with(&self, cache: Option<&$cache>) -> String {
                self.hash(cache)
            }
            fn call(
                &mut self,
                name: &str,
                kw: &::serde_json::Map<String, ::serde_json::Value>,
            ) -> $crate::args::ToolResult {
                $call(self, name, kw)
            }
        }
    };
}

pub(crate) use table_db;

use super::registry::DomainState;

/// What the environment needs of a table DB beyond the macro's methods: its cache type and
/// hash, and its agent tools.
pub(crate) trait TableDb:
    Clone + serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static
{
    type Cache: Send + Sync + 'static;
    fn cache(&self) -> Self::Cache;
    fn hash_with(&self, cache: Option<&Self::Cache>) -> String;
    fn call(
        &mut self,
        name: &str,
        kw: &serde_json::Map<String, serde_json::Value>,
    ) -> crate::args::ToolResult;
}

/// A table DB's environment state: the DB and, until initialization data changes it, the
/// loaded DB's cache (which makes hashing an untouched DB cheap).
pub(crate) struct Cached<D: TableDb> {
    db: D,
    cache: Option<std::sync::Arc<D::Cache>>,
}

impl<D: TableDb> Clone for Cached<D> {
    fn clone(&self) -> Self {
        Cached {
            db: self.db.clone(),
            cache: self.cache.clone(),
        }
    }
}

impl<D: TableDb> Cached<D> {
    /// The pristine state from `db.json` in the domain's folder.
    pub fn load(dir: &std::path::Path) -> crate::error::Result<Box<dyn DomainState>> {
        let db: D = super::parse_json(&dir.join("db.json"))?;
        let cache = Some(std::sync::Arc::new(db.cache()));
        Ok(Box::new(Cached { db, cache }))
    }
}

impl<D: TableDb> DomainState for Cached<D> {
    fn fresh(&self) -> Box<dyn DomainState> {
        Box::new(self.clone())
    }
    fn call_agent(
        &mut self,
        name: &str,
        args: &serde_json::Map<String, serde_json::Value>,
    ) -> crate::args::ToolResult {
        self.db.call(name, args)
    }
    fn db_canonical(&self) -> String {
        crate::canon::canonical_text(&self.db)
    }
    fn db_hash(&self) -> String {
        self.db.hash_with(self.cache.as_deref())
    }
    fn merge_agent_data(&mut self, data: &serde_json::Value) -> crate::error::Result<()> {
        self.db = super::merged(&self.db, data, "agent_data")?;
        self.cache = None;
        Ok(())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
