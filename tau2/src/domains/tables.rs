//! The shape shared by the airline and retail DBs: a struct of `Table<_>` fields, a base
//! cache with one `TableCache` per field plus the hash resume points, and the hash over
//! all fields. One macro declares all of it from a single field list, so a table can never
//! be in the DB but missing from its hash or cache.

/// Declare `pub struct $db { $field: Table<$row>, … }` (serde, field names = JSON keys),
/// its `pub struct $cache` and `impl $db { build_cache, hash }`.
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
    };
}

pub(crate) use table_db;
