//! The widget reads its answers from what the browser's `JSON.parse` made (`decode.rs`), not
//! with serde: a JSON parser and serde's code compiled into the wasm were a tenth of its bytes.
//! A shape declared with [`readable!`] gets its reader from its own fields, so a new field is
//! written once, and `cargo test` reads pages serde wrote (below) the way the widget does.
//!
//! Read whole or not at all, as serde would: a card with a missing or mistyped field makes the
//! page unreadable (`None`), never a page with that card silently left out.

use super::{ErrorCode, Status};

/// A parsed JSON object's fields, each `None` when missing or of another type.
pub trait Fields: Sized {
    fn string(&self, name: &str) -> Option<String>;
    fn bool(&self, name: &str) -> Option<bool>;
    fn number(&self, name: &str) -> Option<f64>;
    /// Null or missing (as serde reads an `Option`).
    fn absent(&self, name: &str) -> bool;
    fn object(&self, name: &str) -> Self;
    fn array(&self, name: &str) -> Option<Vec<Self>>;
}

/// A shape read from a parsed JSON object: what [`readable!`] writes.
pub trait Readable: Sized {
    fn read<F: Fields>(o: &F) -> Option<Self>;
}

/// A value read from one field of a parsed JSON object.
pub trait Field: Sized {
    fn field<F: Fields>(o: &F, name: &str) -> Option<Self>;
}

impl Field for String {
    fn field<F: Fields>(o: &F, name: &str) -> Option<Self> {
        o.string(name)
    }
}

impl Field for bool {
    fn field<F: Fields>(o: &F, name: &str) -> Option<Self> {
        o.bool(name)
    }
}

impl Field for f64 {
    fn field<F: Fields>(o: &F, name: &str) -> Option<Self> {
        o.number(name)
    }
}

/// Null or missing is `None`, as serde reads an `Option`; a value of another type is unreadable.
impl<T: Field> Field for Option<T> {
    fn field<F: Fields>(o: &F, name: &str) -> Option<Self> {
        if o.absent(name) {
            Some(None)
        } else {
            T::field(o, name).map(Some)
        }
    }
}

impl<T: Readable> Field for Vec<T> {
    fn field<F: Fields>(o: &F, name: &str) -> Option<Self> {
        o.array(name)?.iter().map(T::read).collect()
    }
}

/// A status this version does not know is `Unknown`, as serde reads it.
impl Field for Status {
    fn field<F: Fields>(o: &F, name: &str) -> Option<Self> {
        Some(Status::from_wire(&o.string(name)?))
    }
}

/// A code this version does not know is a failure of the call (the server's message is kept).
impl Field for ErrorCode {
    fn field<F: Fields>(o: &F, name: &str) -> Option<Self> {
        Some(ErrorCode::from_wire(&o.string(name)?).unwrap_or(ErrorCode::Transport))
    }
}

/// A struct, and its reader ([`Readable`]) from its fields as serde names them (no renames),
/// then `then`, when given, on what was read. A field of a readable struct is read as an
/// object.
macro_rules! readable {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)*
        }
        $(then $after:path)?
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty,)*
        }

        impl $crate::contract::read::Readable for $name {
            fn read<F: $crate::contract::read::Fields>(o: &F) -> Option<Self> {
                use $crate::contract::read::Field;
                let read = $name {
                    $($field: Field::field(o, stringify!($field))?,)*
                };
                $(let read = $after(read);)?
                Some(read)
            }
        }

        impl $crate::contract::read::Field for $name {
            fn field<F: $crate::contract::read::Fields>(o: &F, name: &str) -> Option<Self> {
                <$name as $crate::contract::read::Readable>::read(&o.object(name))
            }
        }
    };
}
pub(crate) use readable;

/// serde_json's parse, for the tests of the shapes' readers.
#[cfg(test)]
pub(crate) mod json {
    use super::Fields;

    /// serde_json's parse, read as the widget reads the browser's.
    pub(crate) struct Json(pub serde_json::Value);

    impl Fields for Json {
        fn string(&self, name: &str) -> Option<String> {
            self.0.get(name)?.as_str().map(str::to_string)
        }
        fn bool(&self, name: &str) -> Option<bool> {
            self.0.get(name)?.as_bool()
        }
        fn number(&self, name: &str) -> Option<f64> {
            self.0.get(name)?.as_f64()
        }
        fn absent(&self, name: &str) -> bool {
            self.0.get(name).is_none_or(serde_json::Value::is_null)
        }
        fn object(&self, name: &str) -> Json {
            Json(self.0.get(name).cloned().unwrap_or(serde_json::Value::Null))
        }
        fn array(&self, name: &str) -> Option<Vec<Json>> {
            Some(
                self.0
                    .get(name)?
                    .as_array()?
                    .iter()
                    .cloned()
                    .map(Json)
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::json::Json;
    use super::Readable;
    use crate::contract::{Card, RecentPage};

    #[test]
    fn a_card_missing_a_field_makes_the_page_unreadable() {
        let mut value = serde_json::to_value(RecentPage {
            cards: vec![Card::default()],
            more: false,
            partial: false,
            generated_at: "g".into(),
        })
        .unwrap();
        value["cards"][0].as_object_mut().unwrap().remove("key");
        assert_eq!(RecentPage::read(&Json(value)), None);
    }
}
