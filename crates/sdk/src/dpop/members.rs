//! The members of a DPoP proof's header and claims that [`super::verify_proof`] reads, taken
//! straight from the decoded JSON without building a `serde_json::Value` tree.
//!
//! A proof is parsed on every request that carries one, so this saves the dozen or so
//! allocations a `Map<String, Value>` of the header, its `jwk` and the claims would cost: strings
//! are borrowed from the decoded bytes unless they contain escapes, and members nobody reads are
//! skipped. The semantics are those of reading the same members from a `Value`: a member given
//! twice counts with its last value, a member of another JSON type than the one expected reads as
//! something other than what the check wants (the caller decides what that means), and only a
//! JSON object is a header, a `jwk` or a claims set.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// A JSON object read member by member.
pub(super) trait FromMap<'de>: Sized {
    /// The object whose members `map` yields.
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

/// An object nobody reads: its members are skipped.
#[derive(Debug, Default)]
pub(super) struct Skipped;

impl<'de> FromMap<'de> for Skipped {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Self)
    }
}

/// One member's value, as far as a proof's checks care; `T` is what an object value is read as.
#[derive(Debug, Default)]
pub(super) enum Member<'a, T = Skipped> {
    /// Not present.
    #[default]
    Absent,
    /// A string (borrowed unless it had escapes).
    Str(Cow<'a, str>),
    /// An integer that fits an `i64`.
    Int(i64),
    /// An object.
    Object(T),
    /// Any other value, `null` included.
    Other,
}

impl<T> Member<'_, T> {
    /// The string, when the member is one.
    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, when the member is one.
    pub(super) fn as_i64(&self) -> Option<i64> {
        match self {
            Self::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// Whether the member was given, whatever its value.
    pub(super) fn is_present(&self) -> bool {
        !matches!(self, Self::Absent)
    }
}

impl<'de: 'a, 'a, T: FromMap<'de>> Deserialize<'de> for Member<'a, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MemberVisitor(PhantomData))
    }
}

struct MemberVisitor<'a, T>(PhantomData<(&'a (), T)>);

impl<'de: 'a, 'a, T: FromMap<'de>> Visitor<'de> for MemberVisitor<'a, T> {
    type Value = Member<'a, T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Member::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Member::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Member::Str(Cow::Owned(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Member::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(i64::try_from(v).map_or(Member::Other, Member::Int))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Member::Other)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Member::Other)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Member::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Member::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::from_map(map).map(Member::Object)
    }
}

/// A top-level JSON object: anything else fails to deserialize.
pub(super) fn parse_object<'a, T: FromMap<'a>>(bytes: &'a [u8]) -> Option<T> {
    struct ObjectVisitor<T>(PhantomData<T>);

    impl<'de, T: FromMap<'de>> Visitor<'de> for ObjectVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::from_map(map)
        }
    }

    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let object = deserializer
        .deserialize_map(ObjectVisitor(PhantomData))
        .ok()?;
    deserializer.end().ok()?;
    Some(object)
}

/// Declares an object of named members (`field: Type`). With `flag = LIST`, `flag` records
/// whether any member named in `LIST` was given (its value is skipped).
macro_rules! object_of_members {
    ($(#[$doc:meta])* $name:ident { $($field:ident: $ty:ty),+ $(,)? } $(, $flag:ident = $flagged:expr)?) => {
        $(#[$doc])*
        #[derive(Debug, Default)]
        pub(super) struct $name<'a> {
            $(pub(super) $field: $ty,)+
            $(
                /// One of the flagged members was given.
                pub(super) $flag: bool,
            )?
        }

        impl<'de: 'a, 'a> FromMap<'de> for $name<'a> {
            fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
                let mut object = Self::default();
                while let Some(key) = map.next_key::<Member<'de>>()? {
                    match key.as_str() {
                        $(Some(stringify!($field)) => object.$field = map.next_value()?,)+
                        $(Some(name) if $flagged.contains(&name) => {
                            object.$flag = true;
                            map.next_value::<IgnoredAny>()?;
                        })?
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(object)
            }
        }
    };
}

object_of_members!(
    /// The members of the header's `jwk` the checks read: the public parts of EC, OKP and RSA
    /// keys, and whether any member only a private or symmetric key has was given.
    Jwk {
        kty: Member<'a>,
        crv: Member<'a>,
        x: Member<'a>,
        y: Member<'a>,
        n: Member<'a>,
        e: Member<'a>,
    },
    private = super::PRIVATE_MEMBERS
);

object_of_members!(
    /// The proof header's members (RFC 9449 §4.2).
    Header {
        typ: Member<'a>,
        alg: Member<'a>,
        crit: Member<'a>,
        jwk: Member<'a, Jwk<'a>>,
    }
);

object_of_members!(
    /// The proof's claims (RFC 9449 §4.2).
    Claims {
        jti: Member<'a>,
        htm: Member<'a>,
        htu: Member<'a>,
        iat: Member<'a>,
        ath: Member<'a>,
        nonce: Member<'a>,
    }
);
